//! Standing in for a host's agent: a host under test starts its agent as a child and speaks
//! NDJSON on the child's stdin and stdout. wireprobe hands the host a command (`{agent}`)
//! that starts `wireprobe relay ADDR`, a process that copies its stdin to a loopback TCP
//! connection and the connection to its stdout, byte for byte; the judging run accepts that
//! connection and gets the host's lines as frames, as if it were the agent's own stdio.
//!
//! The relay knows no protocol and adds nothing: what the host wrote reaches the run as it
//! was written (a line cut short, a blank line, CRLF), and what the run sends reaches the host
//! the same way.

use super::stdio::{frame_of, line_bytes, next_read, Read};
use super::{Command, Connection, Inbox, Received, TransportError};
use crate::ndjson::AsyncLines;
use std::net::SocketAddr;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The relay's end: copies stdin to `addr` and `addr` to stdout until the connection ends.
/// A host closing the relay's stdin (stopping its agent) half-closes the connection, so the
/// run sees it end.
pub async fn relay(addr: &str) -> Result<(), TransportError> {
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| TransportError::Unreachable {
            target: addr.to_owned(),
            reason: e.to_string(),
        })?;
    let _ = tcp.set_nodelay(true);
    let (mut from_run, mut to_run) = tcp.into_split();
    let up = async {
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut to_run).await;
        let _ = to_run.shutdown().await;
        // The host is done writing; what the run still sends is delivered below.
        std::future::pending::<()>().await;
    };
    let down = async {
        let mut stdout = tokio::io::stdout();
        let _ = tokio::io::copy(&mut from_run, &mut stdout).await;
        let _ = stdout.flush().await;
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    Ok(())
}

/// The run's end of a relay that connected over `tcp`: each line the host wrote is a frame,
/// each frame sent is a line to the host.
pub fn accepted(tcp: TcpStream, max_line: usize) -> (Connection, Option<SocketAddr>) {
    let _ = tcp.set_nodelay(true);
    let peer = tcp.peer_addr().ok();
    let (reader, writer) = tcp.into_split();
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(pump(
        BufReader::new(reader),
        writer,
        inbox,
        commands,
        max_line,
    ));
    (Connection::from_parts(parts, task), peer)
}

async fn pump<R, W>(
    reader: R,
    mut writer: W,
    inbox: Inbox,
    mut commands: mpsc::Receiver<Command>,
    max_line: usize,
) where
    R: tokio::io::AsyncBufRead + AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = AsyncLines::new(reader, max_line);
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(out, done)) => {
                    let bytes = match line_bytes(out) {
                        Ok(bytes) => bytes,
                        Err(e) => { let _ = done.send(Err(e)); continue; }
                    };
                    let result = async { writer.write_all(&bytes).await?; writer.flush().await }.await;
                    let _ = done.send(result.map_err(|_| TransportError::Closed));
                }
                // Not a pinging connection: never asked.
                Some(Command::Ping) => {}
                Some(Command::Close(_)) | None => {
                    let _ = writer.shutdown().await;
                    return;
                }
            },
            line = next_read(&mut lines, max_line) => {
                let observed = match line {
                    Ok(Read::Line(bytes)) => Received::Frame(frame_of(bytes)),
                    Ok(Read::Notice(what)) => Received::Notice(what),
                    Ok(Read::Eof) | Err(_) => Received::Closed {
                        code: None,
                        reason: "the host closed its agent's stdin".into(),
                    },
                };
                let last = observed.is_terminal();
                if !inbox.push(observed).await || last {
                    return;
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Frame;
    use tokio::io::AsyncBufReadExt;

    fn soon() -> tokio::time::Instant {
        tokio::time::Instant::now() + std::time::Duration::from_secs(5)
    }

    /// The run's end of a relay: the host's lines in as frames (a blank one a notice), frames
    /// out as lines, and the host closing its agent's stdin the end.
    #[tokio::test]
    async fn lines_cross_a_relayed_connection_both_ways() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let host = TcpStream::connect(addr).await.expect("connects");
        let (tcp, _) = listener.accept().await.expect("accepts");
        let (mut run, peer) = accepted(tcp, 1024);
        assert!(peer.is_some());
        let (from_run, mut to_run) = host.into_split();
        to_run
            .write_all(b"{\"type\":\"user\"}\n\nnot json\n")
            .await
            .expect("writes");
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(run.recv(soon()).await.expect("a line").0);
        }
        assert!(matches!(&got[0], Received::Frame(Frame::Text(t)) if t == "{\"type\":\"user\"}"));
        assert!(matches!(&got[1], Received::Notice(n) if n.contains("blank")));
        assert!(matches!(&got[2], Received::Frame(Frame::Text(t)) if t == "not json"));
        run.send(Frame::Text("{\"type\":\"result\"}".into()), soon())
            .await
            .expect("sends");
        let mut line = String::new();
        BufReader::new(from_run)
            .read_line(&mut line)
            .await
            .expect("reads");
        assert_eq!(line, "{\"type\":\"result\"}\n");
        to_run.shutdown().await.expect("closes");
        assert!(run.recv(soon()).await.expect("the end").0.is_terminal());
    }
}
