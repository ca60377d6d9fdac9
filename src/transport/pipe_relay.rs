//! The stdio half of `wireprobe proxy -- CMD`: wireprobe stands where a host's agent would,
//! starts the agent itself, and copies the host's stdin to the agent's, the agent's stdout
//! and stderr to its own, byte for byte; a copy of each is read as NDJSON lines (stderr as
//! lines of text) for the judge. It knows no protocol.

use super::line_tap::LineTap;
use super::process::{spawn_piped, Piped};
use super::relayed::{copy_tapped, hand_over, Peer, Relayed, StreamReader};
use super::tap::TapSender;
use super::{Frame, Received, TransportError};
use std::process::ExitStatus;
use tokio::io::{AsyncRead, AsyncWrite};

/// Stderr lines handed to the judge at most (the rest are still passed on).
const MAX_STDERR_LINES: usize = 1000;

/// The one session a stdio relay carries.
const SESSION: usize = 1;

/// Stderr read as lines of text, up to [`MAX_STDERR_LINES`].
struct StderrLines {
    lines: LineTap,
    kept: usize,
}

impl StderrLines {
    /// The lines `out[from..]` holds, as stderr lines, while fewer than the cap were kept.
    fn keep(&mut self, from: usize, out: &mut Vec<Received>) {
        let fresh: Vec<Received> = out.drain(from..).collect();
        for received in fresh {
            if self.kept >= MAX_STDERR_LINES {
                break;
            }
            if let Received::Frame(frame) = received {
                let text = match frame {
                    Frame::Text(t) => t,
                    Frame::RawText(b) | Frame::Binary(b) => {
                        String::from_utf8_lossy(&b).into_owned()
                    }
                };
                out.push(Received::Stderr(text));
                self.kept += 1;
            }
        }
    }
}

impl StreamReader for StderrLines {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Received>) {
        let from = out.len();
        self.lines.feed(bytes, out);
        self.keep(from, out);
    }
    fn end(&mut self, out: &mut Vec<Received>) {
        let from = out.len();
        self.lines.end(out);
        self.keep(from, out);
    }
}

/// The host's input, read as lines, ending with the close of the agent's stdin (which a
/// checker judges the agent's exit against).
struct HostInput(LineTap);

impl StreamReader for HostInput {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Received>) {
        self.0.feed(bytes, out);
    }
    fn end(&mut self, out: &mut Vec<Received>) {
        self.0.end(out);
        out.push(Received::Closed {
            code: None,
            reason: "the host closed the agent's stdin".into(),
        });
    }
}

/// Starts `argv` and relays between it and the host (`host_in`, `host_out`, `host_err`)
/// until the agent's stdout and stderr end; its exit status. The host closing its end of
/// stdin closes the agent's.
pub async fn relay_child<I, O, E>(
    argv: &[String],
    max_line: usize,
    host_in: I,
    host_out: O,
    host_err: E,
    tap: TapSender<Relayed>,
) -> Result<ExitStatus, TransportError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    E: AsyncWrite + Unpin,
{
    // The agent stays in the host's process group: a Ctrl-C reaches it as it would have.
    let Piped {
        mut child,
        stdin,
        stdout,
        stderr,
        shown,
    } = spawn_piped(argv, None, false)?;
    let opened = Relayed::Opened {
        conn: SESSION,
        peer: None,
        target: shown,
    };
    tap.send(opened, 0).await;
    let lines = || LineTap::new(max_line);
    let input = HostInput(lines());
    let input = copy_tapped(host_in, stdin, input, SESSION, Peer::Client, &tap);
    let output = copy_tapped(stdout, host_out, lines(), SESSION, Peer::Upstream, &tap);
    let errors = StderrLines {
        lines: LineTap::new(max_line),
        kept: 0,
    };
    let errors = copy_tapped(stderr, host_err, errors, SESSION, Peer::Upstream, &tap);
    // The agent's output ending is the end; a host still holding stdin open does not keep it.
    let agent_done = async { tokio::join!(output, errors) };
    tokio::pin!(input, agent_done);
    tokio::select! {
        _ = &mut agent_done => {}
        _ = &mut input => { agent_done.await; }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| TransportError::Protocol(format!("cannot wait for the agent: {e}")))?;
    let ended = super::stdio::exit_of(status);
    hand_over(
        &tap,
        SESSION,
        Peer::Upstream,
        ended,
        std::time::Instant::now(),
    )
    .await;
    tap.send(Relayed::Ended { conn: SESSION }, 0).await;
    Ok(status)
}
