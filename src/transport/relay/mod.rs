//! Standing in for a host's agent: a host under test starts its agent as a child and speaks
//! NDJSON on the child's stdin and stdout. wireprobe hands the host a command (`{agent}`)
//! that starts `wireprobe relay ADDR`, a process that copies its stdin to a loopback TCP
//! connection and the connection to its stdout; the judging run accepts that connection and
//! gets the host's lines as frames, as if it were the agent's own stdio.
//!
//! The relay knows no protocol and changes nothing: what the host wrote reaches the run as it
//! was written (a line cut short, a blank line, CRLF), and what the run sends reaches the host
//! the same way. It adds one thing, up only ([`records`]): how far the run's bytes had been
//! written to the host when the host wrote each of its own, so a line the host wrote before
//! one of ours reached it is recorded before ours, though it crossed the relay after.

#[cfg(unix)]
mod host_side;
pub mod records;

use super::line_tap::LineTap;
use super::relayed::StreamReader;
use super::stdio::line_bytes;
use super::{Command, Connection, Inbox, Received, TransportError};
use records::{Record, RecordReader, MAX_DATA};
use std::collections::VecDeque;
use std::net::SocketAddr;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

/// The relay's end: relays between this process's stdio and the run at `addr` until either
/// side is gone. A host closing the relay's stdin (stopping its agent) half-closes the
/// connection, so the run sees it end; the run's lines still come down.
pub fn relay(addr: &str) -> Result<(), TransportError> {
    let tcp = std::net::TcpStream::connect(addr).map_err(|e| TransportError::Unreachable {
        target: addr.to_owned(),
        reason: e.to_string(),
    })?;
    relay_stdio(tcp)
}

#[cfg(unix)]
fn relay_stdio(tcp: std::net::TcpStream) -> Result<(), TransportError> {
    // Either side going away ends the relay, as the agent's stdio would end: nothing to report.
    let _ = host_side::relay(tcp);
    Ok(())
}

#[cfg(not(unix))]
fn relay_stdio(_: std::net::TcpStream) -> Result<(), TransportError> {
    Err(TransportError::Protocol(
        "the relay polls its stdio, which needs a Unix system".into(),
    ))
}

/// The run's end of a relay that connected over `tcp`: each line the host wrote is a frame,
/// each frame sent is a line to the host, and a send returns once the relay wrote it.
pub fn accepted(tcp: TcpStream, max_line: usize) -> (Connection, Option<SocketAddr>) {
    let _ = tcp.set_nodelay(true);
    let peer = tcp.peer_addr().ok();
    let (reader, writer) = tcp.into_split();
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(pump(reader, writer, inbox, commands, max_line));
    let conn = Connection::from_parts(parts, task).confirming_delivery();
    (conn, peer)
}

/// The run's sends the relay has not yet said it wrote: where each ends in the run's bytes.
#[derive(Default)]
struct Unwritten {
    /// The run's bytes sent to the relay so far.
    sent: u64,
    /// The run's bytes the relay has written to the host so far.
    written: u64,
    waiting: VecDeque<(u64, oneshot::Sender<Result<(), TransportError>>)>,
    /// Sends the relay wrote whole.
    delivered: u64,
}

impl Unwritten {
    /// A send of `len` bytes went to the relay; `done` hears when the relay wrote it.
    fn push(&mut self, len: usize, done: oneshot::Sender<Result<(), TransportError>>) {
        self.sent += len as u64;
        self.waiting.push_back((self.sent, done));
        // An empty send is written as soon as those before it are.
        self.written_to(self.written);
    }

    /// The relay wrote the run's bytes up to `total`: the sends ending there are delivered.
    fn written_to(&mut self, total: u64) {
        self.written = self.written.max(total);
        while let Some((_, done)) = self.waiting.pop_front_if(|(end, _)| *end <= self.written) {
            self.delivered += 1;
            let _ = done.send(Ok(()));
        }
    }
}

/// The runner dropped the connection, or it ended: the pump stops.
struct Stop;

async fn pump<R, W>(
    mut reader: R,
    mut writer: W,
    inbox: Inbox,
    mut commands: mpsc::Receiver<Command>,
    max_line: usize,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut up = Up {
        records: RecordReader::new(MAX_DATA),
        lines: LineTap::skipping(max_line),
        unwritten: Unwritten::default(),
        inbox,
        out: Vec::new(),
    };
    let mut buf = vec![0u8; MAX_DATA];
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(frame, done)) => {
                    let bytes = match line_bytes(frame) {
                        Ok(bytes) => bytes,
                        Err(e) => { let _ = done.send(Err(e)); continue; }
                    };
                    match async { writer.write_all(&bytes).await?; writer.flush().await }.await {
                        Ok(()) => up.unwritten.push(bytes.len(), done),
                        Err(_) => { let _ = done.send(Err(TransportError::Closed)); }
                    }
                }
                // Not a pinging connection: never asked.
                Some(Command::Ping) => {}
                Some(Command::Close(_)) | None => {
                    let _ = writer.shutdown().await;
                    return;
                }
            },
            read = reader.read(&mut buf) => {
                let n = read.unwrap_or(0);
                let went_on = match n {
                    0 => up.end().await,
                    n => up.take(&buf[..n]).await,
                };
                if went_on.is_err() {
                    return;
                }
            },
        }
    }
}

/// What comes up the relay's connection, read into what the runner receives.
struct Up {
    records: RecordReader,
    lines: LineTap,
    unwritten: Unwritten,
    inbox: Inbox,
    out: Vec<Received>,
}

impl Up {
    /// Reads the records `bytes` complete, in order: each of the host's lines is pushed
    /// marked with the sends delivered before it, and a send is confirmed only after every
    /// line written before it was pushed.
    async fn take(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.records.feed(bytes);
        loop {
            match self.records.next_record() {
                Ok(None) => return Ok(()),
                Ok(Some(Record::Data(data))) => self.lines.feed(data, &mut self.out),
                Ok(Some(Record::Written(total))) => self.unwritten.written_to(total),
                Err(e) => {
                    let failed = Received::Failed(TransportError::Protocol(e.to_string()));
                    self.out.push(failed);
                    self.push_out().await?;
                    return Err(Stop);
                }
            }
            self.push_out().await?;
        }
    }

    /// The relay's connection ended: the host closed its agent's stdin (or the relay died).
    async fn end(&mut self) -> Result<(), Stop> {
        self.lines.end(&mut self.out);
        let reason = match self.records.holds_partial() {
            true => "the relay's connection ended mid-record",
            false => "the host closed its agent's stdin",
        };
        self.out.push(Received::Closed {
            code: None,
            reason: reason.into(),
        });
        self.push_out().await?;
        Err(Stop)
    }

    async fn push_out(&mut self) -> Result<(), Stop> {
        for received in self.out.drain(..) {
            if !self
                .inbox
                .push_after(received, self.unwritten.delivered)
                .await
            {
                return Err(Stop);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::records::{data_head, written};
    use super::*;
    use crate::transport::Frame;
    use tokio::io::AsyncBufReadExt;

    fn soon() -> tokio::time::Instant {
        tokio::time::Instant::now() + std::time::Duration::from_secs(5)
    }

    /// `bytes` as the relay sends the host's bytes up.
    fn data(bytes: &[u8]) -> Vec<u8> {
        [&data_head(bytes.len())[..], bytes].concat()
    }

    fn text(received: &Received) -> String {
        match received {
            Received::Frame(Frame::Text(t)) => t.clone(),
            Received::Notice(n) => format!("notice: {n}"),
            other => format!("{other:?}"),
        }
    }

    /// The run's end of a relay: the host's lines in as frames (a blank one a notice), however
    /// the relay cut them; frames out as lines, a send returning once the relay wrote it; a
    /// line the host wrote before that is told from one it wrote after; the host closing its
    /// agent's stdin the end.
    #[tokio::test]
    async fn lines_cross_a_relay_both_ways_in_the_order_written() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let relay = TcpStream::connect(addr).await.expect("connects");
        let (tcp, _) = listener.accept().await.expect("accepts");
        let (mut run, peer) = accepted(tcp, 1024);
        assert!(peer.is_some());
        let (from_run, mut to_run) = relay.into_split();
        let up = [data(b"{\"type\":\"us"), data(b"er\"}\n\nnot json\n")].concat();
        to_run.write_all(&up).await.expect("writes");
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(text(&run.recv(soon()).await.expect("a line").0));
        }
        assert_eq!(
            got,
            ["{\"type\":\"user\"}", "notice: a blank line", "not json"]
        );

        let line = "{\"type\":\"result\"}";
        let send = run.send(Frame::Text(line.into()), soon());
        let relay_side = async {
            let mut down = String::new();
            let mut from_run = tokio::io::BufReader::new(from_run);
            from_run.read_line(&mut down).await.expect("reads");
            assert_eq!(down, format!("{line}\n"));
            // The host wrote one line before ours reached it, one after.
            let up = [
                data(b"early\n"),
                written(down.len() as u64).to_vec(),
                data(b"late\n"),
            ];
            to_run.write_all(&up.concat()).await.expect("writes");
            to_run
        };
        let (sent, mut to_run) = tokio::join!(send, relay_side);
        sent.expect("sent once the relay wrote it");
        let before = run.try_recv_written_before().expect("written before");
        assert_eq!(text(&before.0), "early");
        assert!(run.try_recv_written_before().is_none());
        assert_eq!(text(&run.recv(soon()).await.expect("a line").0), "late");

        to_run.shutdown().await.expect("closes");
        assert!(run.recv(soon()).await.expect("the end").0.is_terminal());
    }
}
