//! A program wireprobe starts and watches but does not speak through: a client under test that
//! dials wireprobe. It runs in a process group of its own, so stopping it stops everything it
//! started (a shell's children, a Node client's workers); its stdout and stderr come back as
//! bounded lines, for the transcript; dropping the handle kills the group, so no child of a
//! case outlives it.

use crate::ndjson::{AsyncLines, Line};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::TransportError;

/// Longest output line kept (longer ones are cut), and most lines kept per stream.
const MAX_LINE: usize = 4096;
const MAX_LINES: usize = 1000;

/// How long a stopped program gets to exit after SIGTERM before its group is killed.
const GRACE: Duration = Duration::from_millis(500);

/// Which of the program's output streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line the program wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLine {
    pub stream: Stream,
    pub text: String,
}

/// A running program and what it has written so far.
pub struct Launched {
    child: Child,
    group: GroupKill,
    lines: mpsc::Receiver<OutputLine>,
}

/// Puts the program `command` starts in a process group of its own (it leads it), so that
/// [`GroupKill`] can stop everything it starts in turn.
pub(crate) fn own_group(command: &mut Command) {
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(not(unix))]
    let _ = command;
}

/// The process group a started program leads (see [`own_group`]): killed when this is
/// dropped, however the task holding it ends, so no child of a case outlives it.
pub(crate) struct GroupKill(Option<i32>);

impl GroupKill {
    /// The group `child` leads.
    pub(crate) fn of(child: &Child) -> GroupKill {
        GroupKill(child.id().and_then(|pid| i32::try_from(pid).ok()))
    }

    fn signal(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(group) = self.0 {
            let number = match signal {
                Signal::Terminate => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            };
            // SAFETY: kill(2) with a negative pid signals a process group; it takes no
            // pointers and its failure (the group is gone) is harmless here.
            unsafe {
                libc::kill(-group, number);
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.signal(Signal::Kill);
    }
}

/// Starts `argv` with `env` added to wireprobe's environment, in `cwd` when given.
pub fn launch(
    argv: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> Result<Launched, TransportError> {
    let (mut command, shown) = command_of(argv)?;
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    own_group(&mut command);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|e| TransportError::Unreachable {
        target: shown,
        reason: format!("cannot start the program: {e}"),
    })?;
    let group = GroupKill::of(&child);
    let (tx, lines) = mpsc::channel(256);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(forward(out, Stream::Stdout, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(forward(err, Stream::Stderr, tx));
    }
    Ok(Launched {
        child,
        group,
        lines,
    })
}

/// The command `argv` runs (its first word the program), and the line that shows it.
pub(crate) fn command_of(argv: &[String]) -> Result<(Command, String), TransportError> {
    let shown = argv.join(" ");
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| TransportError::BadTarget {
            target: shown.clone(),
            reason: "empty command".into(),
        })?;
    let mut command = Command::new(program);
    command.args(args);
    Ok((command, shown))
}

/// A program started with its three standard streams piped to wireprobe.
pub(crate) struct Piped {
    pub child: Child,
    pub stdin: tokio::process::ChildStdin,
    pub stdout: tokio::process::ChildStdout,
    pub stderr: tokio::process::ChildStderr,
    /// The command line, as shown in messages.
    pub shown: String,
}

/// Starts `argv` (in `cwd` when given, leading a process group of its own when `group`),
/// its standard streams piped; it is killed when its [`Child`] is dropped.
pub(crate) fn spawn_piped(
    argv: &[String],
    cwd: Option<&Path>,
    group: bool,
) -> Result<Piped, TransportError> {
    let (mut command, shown) = command_of(argv)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if group {
        own_group(&mut command);
    }
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|e| TransportError::Unreachable {
        target: shown.clone(),
        reason: format!("cannot start the process: {e}"),
    })?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(TransportError::Protocol(
            "the child's standard streams are missing".into(),
        ));
    };
    Ok(Piped {
        child,
        stdin,
        stdout,
        stderr,
        shown,
    })
}

/// Sends each line of `reader` on, up to [`MAX_LINES`]; the rest is read and dropped, so a
/// chatty program never blocks on a full pipe.
async fn forward(reader: impl AsyncRead + Unpin, stream: Stream, tx: mpsc::Sender<OutputLine>) {
    let mut lines = AsyncLines::new(BufReader::new(reader), MAX_LINE);
    let mut kept = 0usize;
    loop {
        let text = match lines.next().await {
            Ok(Line::Complete) => String::from_utf8_lossy(lines.line()).into_owned(),
            Ok(Line::TooLong(len)) => format!("(a line of {len} bytes, not kept)"),
            Ok(Line::Eof) | Err(_) => return,
        };
        if kept < MAX_LINES {
            kept += 1;
            // The receiver gone means the run is done with the program: keep draining.
            let _ = tx.try_send(OutputLine { stream, text });
        }
    }
}

impl Launched {
    /// The lines written since the last call.
    pub fn new_lines(&mut self) -> Vec<OutputLine> {
        let mut out = Vec::new();
        while let Ok(line) = self.lines.try_recv() {
            out.push(line);
        }
        out
    }

    /// The program's exit status once it has exited (its children may live on).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the program and everything in its group: SIGTERM, then SIGKILL after a grace
    /// period. Returns the lines written before it ended.
    pub async fn stop(mut self) -> Vec<OutputLine> {
        self.group.signal(Signal::Terminate);
        let exited = tokio::time::timeout(GRACE, self.child.wait()).await;
        self.group.signal(Signal::Kill);
        if exited.is_err() {
            let _ = self.child.kill().await;
        }
        // Output written just before the end is still in the pipes: give it a moment.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.new_lines()
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}

#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::*;

    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only asks whether the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[tokio::test]
    async fn its_output_comes_back_and_stopping_it_stops_its_children() {
        let script = "echo \"$WIREPROBE_URL\"; echo oops >&2; sleep 30 & echo $!; wait";
        let env = [("WIREPROBE_URL".to_owned(), "ws://127.0.0.1:1/".to_owned())];
        let mut launched = launch(&sh(script), &env, None).expect("starts");
        let mut lines = Vec::new();
        for _ in 0..100 {
            lines.extend(launched.new_lines());
            if lines.len() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let stdout: Vec<&str> = lines
            .iter()
            .filter(|l| l.stream == Stream::Stdout)
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(stdout.first(), Some(&"ws://127.0.0.1:1/"), "{lines:?}");
        assert!(lines
            .iter()
            .any(|l| l.stream == Stream::Stderr && l.text == "oops"));
        let grandchild: i32 = stdout[1].parse().expect("a pid");
        assert!(alive(grandchild));
        assert!(launched.exited().is_none());
        launched.stop().await;
        // The background sleep was in the group: it is gone too (reaped by init shortly).
        assert!(
            gone_within(grandchild, Duration::from_secs(1)).await,
            "the program's child outlived it"
        );
    }

    /// True once process `pid` has ended (gone, or a zombie) within `wait`.
    pub(crate) async fn gone_within(pid: i32, wait: Duration) -> bool {
        for _ in 0..wait.as_millis() / 20 {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            if state.map_or(true, |s| s.contains(") Z ")) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    #[tokio::test]
    async fn a_program_that_cannot_start_says_why() {
        let result = launch(&["/nonexistent/client".into()], &[], None);
        assert!(matches!(result, Err(TransportError::Unreachable { .. })));
        assert!(matches!(
            launch(&[], &[], None),
            Err(TransportError::BadTarget { .. })
        ));
    }
}
