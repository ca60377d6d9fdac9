//! Stdio transport: the target is a child process speaking NDJSON on stdin and stdout.
//!
//! The command is split into words like a shell would (quotes, backslashes) but run without
//! one; `{tmp}` in it becomes a per-case directory. Each stdout line is a frame; blank lines,
//! CRLF endings and over-long lines are reported as notices and reading goes on; stderr lines
//! are kept (bounded); the exit status ends the connection. The child is killed when the
//! connection is dropped, so none outlives its case.

use super::{Command as RunnerCommand, Connection, Frame, Inbox, Received, TransportError};
use crate::ndjson::{AsyncLines, Line};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufRead, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

/// Default longest stdout line.
pub const DEFAULT_MAX_LINE: usize = crate::ndjson::DEFAULT_MAX_LINE;
/// Longest stderr line kept, and how many stderr lines are kept at most.
const MAX_STDERR_LINE: usize = 4096;
const MAX_STDERR_LINES: usize = 1000;

/// How to start a target process.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// The command and its arguments, already split.
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub max_line: usize,
}

/// Splits `cmd` into words like a POSIX shell (without expansions): whitespace separates,
/// `'...'` is literal, `"..."` allows `\"` and `\\`, a backslash outside quotes escapes.
pub fn split_command(cmd: &str) -> Result<Vec<String>, TransportError> {
    let bad = |reason: &str| TransportError::BadTarget {
        target: cmd.to_owned(),
        reason: reason.to_owned(),
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(bad("unterminated single quote")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(bad("unterminated double quote")),
                        },
                        Some(c) => word.push(c),
                        None => return Err(bad("unterminated double quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or_else(|| bad("trailing backslash"))?);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(bad("empty command"));
    }
    Ok(words)
}

/// `argv` with every `{tmp}` replaced by `tmp`.
pub fn expand_tmp(argv: &[String], tmp: &Path) -> Vec<String> {
    let tmp = tmp.display().to_string();
    argv.iter().map(|a| a.replace("{tmp}", &tmp)).collect()
}

/// Starts the process and returns its connection.
pub async fn spawn(opts: &StdioOptions) -> Result<Connection, TransportError> {
    // Whatever the target starts goes with it when the case is done with it.
    let super::process::Piped {
        child,
        stdin,
        stdout,
        stderr,
        ..
    } = super::process::spawn_piped(&opts.argv, opts.cwd.as_deref(), true)?;
    let group = super::process::GroupKill::of(&child);
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(pump(
        (child, group),
        stdin,
        BufReader::new(stdout),
        BufReader::new(stderr),
        inbox,
        commands,
        opts.max_line,
    ));
    Ok(Connection::from_parts(parts, task))
}

/// How long a process closed politely has to end on its own before it is killed.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// One stdout read, as the transport reports it.
pub(super) enum Read {
    Line(Vec<u8>),
    Notice(String),
    Eof,
}

/// The next stdout (or stderr) line; blank and over-long lines are notices.
pub(super) async fn next_read<R: AsyncBufRead + Unpin>(
    lines: &mut AsyncLines<R>,
    max: usize,
) -> std::io::Result<Read> {
    Ok(match lines.next().await? {
        Line::Eof => Read::Eof,
        Line::TooLong(n) => Read::Notice(format!(
            "a line of {n} bytes, over the {max}-byte limit (skipped)"
        )),
        Line::Complete if lines.line().is_empty() => Read::Notice("a blank line".into()),
        Line::Complete => Read::Line(lines.take_line()),
    })
}

/// What an outgoing frame writes on a line-based stream: a text frame and its newline; a raw
/// frame exactly as given, no newline added.
pub(super) fn line_bytes(out: super::Outgoing) -> Result<Vec<u8>, TransportError> {
    Ok(match super::frame_only(out)? {
        Frame::Text(mut t) => {
            t.push('\n');
            t.into_bytes()
        }
        Frame::RawText(b) | Frame::Binary(b) => b,
    })
}

pub(crate) fn frame_of(line: Vec<u8>) -> Frame {
    match String::from_utf8(line) {
        Ok(text) => Frame::Text(text),
        Err(e) => Frame::RawText(e.into_bytes()),
    }
}

async fn pump(
    // The group is dropped when the pump ends or is aborted: the target's whole group goes.
    (mut child, _group): (Child, super::process::GroupKill),
    mut stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    stderr: BufReader<tokio::process::ChildStderr>,
    inbox: Inbox,
    mut commands: mpsc::Receiver<RunnerCommand>,
    max_line: usize,
) {
    let mut stdout = AsyncLines::new(stdout, max_line);
    let mut stderr = AsyncLines::new(stderr, MAX_STDERR_LINE);
    let mut stderr_lines = 0usize;
    let mut stderr_open = true;
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(RunnerCommand::Send(out, done)) => {
                    let bytes = match line_bytes(out) {
                        Ok(bytes) => bytes,
                        Err(e) => { let _ = done.send(Err(e)); continue; }
                    };
                    let result = async { stdin.write_all(&bytes).await?; stdin.flush().await }.await;
                    // A closed stdin means the process is gone or going: its exit is reported as the end.
                    let _ = done.send(result.map_err(|e| match e.kind() {
                        std::io::ErrorKind::BrokenPipe => TransportError::Closed,
                        _ => TransportError::Protocol(format!("cannot write to the process: {e}")),
                    }));
                }
                // Not a pinging connection: never asked.
                Some(RunnerCommand::Ping) => {}
                // The runner is done: close stdin, and the drop below kills what is left.
                None => {
                    let _ = stdin.shutdown().await;
                    break;
                }
                // Closed politely: an agent ends when its input does, so it is given a moment
                // to (its output read meanwhile, so it cannot block on a full pipe).
                Some(RunnerCommand::Close(_)) => {
                    let _ = stdin.shutdown().await;
                    // Only closing the pipe ends the agent's input.
                    drop(stdin);
                    let ends = async {
                        while let Ok(Read::Line(_) | Read::Notice(_)) = next_read(&mut stdout, max_line).await {}
                        let _ = child.wait().await;
                    };
                    let _ = tokio::time::timeout(CLOSE_GRACE, ends).await;
                    break;
                }
            },
            line = next_read(&mut stdout, max_line) => {
                let observed = match line {
                    Ok(Read::Line(bytes)) => Received::Frame(frame_of(bytes)),
                    Ok(Read::Notice(what)) => Received::Notice(what),
                    Ok(Read::Eof) | Err(_) => {
                        // What the process wrote to stderr before it went belongs before its end.
                        let drain = async {
                            while stderr_open && stderr_lines < MAX_STDERR_LINES {
                                match next_read(&mut stderr, MAX_STDERR_LINE).await {
                                    Ok(Read::Line(bytes)) => {
                                        stderr_lines += 1;
                                        inbox.push(Received::Stderr(String::from_utf8_lossy(&bytes).into_owned())).await;
                                    }
                                    Ok(Read::Notice(_)) => {}
                                    Ok(Read::Eof) | Err(_) => stderr_open = false,
                                }
                            }
                        };
                        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), drain).await;
                        let ended = match tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await {
                            Ok(Ok(status)) => exit_of(status),
                            _ => Received::Closed { code: None, reason: "stdout closed; the process did not exit".into() },
                        };
                        inbox.push(ended).await;
                        return;
                    }
                };
                if !inbox.push(observed).await {
                    return;
                }
            },
            line = next_read(&mut stderr, MAX_STDERR_LINE), if stderr_open => match line {
                Ok(Read::Line(bytes)) if stderr_lines < MAX_STDERR_LINES => {
                    stderr_lines += 1;
                    if !inbox.push(Received::Stderr(String::from_utf8_lossy(&bytes).into_owned())).await {
                        return;
                    }
                }
                Ok(Read::Line(_) | Read::Notice(_)) => {}
                Ok(Read::Eof) | Err(_) => stderr_open = false,
            },
        }
    }
    let _ = child.kill().await;
}

/// How a process exit is reported: its code, or the signal that ended it.
pub(crate) fn exit_of(status: std::process::ExitStatus) -> Received {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Received::Closed {
                code: None,
                reason: format!("the process was killed by signal {signal}"),
            };
        }
    }
    let code = status.code();
    Received::Closed {
        code: code.and_then(|c| u16::try_from(c).ok()),
        reason: format!(
            "the process exited with status {}",
            code.map_or("?".into(), |c| c.to_string())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_command("nuum --stdio --db {tmp}/agent.db").unwrap(),
            ["nuum", "--stdio", "--db", "{tmp}/agent.db"]
        );
        assert_eq!(
            split_command(r#"sh -c 'echo "hi there"' a\ b "x\"y""#).unwrap(),
            ["sh", "-c", "echo \"hi there\"", "a b", "x\"y"]
        );
        assert_eq!(split_command(r#"a '' "" b"#).unwrap(), ["a", "", "", "b"]);
        assert!(split_command("'open").is_err());
        assert!(split_command("   ").is_err());
        assert_eq!(
            expand_tmp(&["--db".into(), "{tmp}/a.db".into()], Path::new("/t")),
            ["--db", "/t/a.db"]
        );
    }

    /// A target's own children go with it when the case drops its connection.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_targets_children_do_not_outlive_its_connection() {
        let opts = StdioOptions {
            argv: split_command("sh -c 'sleep 30 & echo $!; cat'").expect("splits"),
            cwd: None,
            max_line: DEFAULT_MAX_LINE,
        };
        let mut conn = spawn(&opts).await.expect("starts");
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        let pid: i32 = match conn.recv(deadline).await {
            Some((Received::Frame(Frame::Text(line)), _)) => line.trim().parse().expect("a pid"),
            other => panic!("no pid line: {other:?}"),
        };
        drop(conn);
        assert!(
            super::super::process::tests::gone_within(pid, std::time::Duration::from_secs(2)).await,
            "the target's child outlived its connection"
        );
    }
}
