//! What a relay hands its judge (`proxy`), and the copy loop every relay shares: bytes go to
//! the other side first, then a reader made for the stream (WebSocket frames, NDJSON lines)
//! turns a copy of them into what a runner would have received.

use super::tap::TapSender;
use super::Received;
use std::net::SocketAddr;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Which peer sent what passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The client that connected to the proxy.
    Client,
    /// The upstream server.
    Upstream,
}

/// What the relay hands the judge, in the order it saw it.
#[derive(Debug)]
pub enum Relayed {
    /// A client opened a session (connection `conn`, from `peer`, asking for `target`).
    Opened {
        conn: usize,
        peer: Option<SocketAddr>,
        target: String,
    },
    /// What one side sent, or what was observed of it, at `at`.
    Item {
        conn: usize,
        from: Peer,
        received: Received,
        at: Instant,
    },
    /// Session `conn` is over: both directions ended.
    Ended { conn: usize },
}

impl Relayed {
    /// Bytes it holds, for the tap's budget.
    pub fn len(&self) -> usize {
        match self {
            Relayed::Item { received, .. } => received.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Hands what `from` sent on session `conn` (or what was observed of it) at `at` to `tap`.
pub async fn hand_over(
    tap: &TapSender<Relayed>,
    conn: usize,
    from: Peer,
    received: Received,
    at: Instant,
) {
    let bytes = received.len();
    let item = Relayed::Item {
        conn,
        from,
        received,
        at,
    };
    tap.send(item, bytes).await;
}

/// Hands everything in `out` over, emptying it (one buffer serves every chunk of a stream).
async fn hand_all(
    tap: &TapSender<Relayed>,
    conn: usize,
    from: Peer,
    out: &mut Vec<Received>,
    at: Instant,
) {
    for received in out.drain(..) {
        hand_over(tap, conn, from, received, at).await;
    }
}

/// Reads a stream's bytes as they pass, sans-IO.
pub trait StreamReader {
    /// The next bytes; `out` gets what they complete.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Received>);
    /// The stream ended.
    fn end(&mut self, out: &mut Vec<Received>);
}

/// Bytes read per copy.
const CHUNK: usize = 16 * 1024;

/// Copies what `from` sends on `rx` to `tx` until `rx` ends or `tx` fails, flushing each
/// chunk, and hands what `reader` makes of each chunk to `tap` (after it went on); then
/// shuts `tx` down.
pub async fn copy_tapped<R, W>(
    mut rx: R,
    mut tx: W,
    mut reader: impl StreamReader,
    conn: usize,
    from: Peer,
    tap: &TapSender<Relayed>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; CHUNK];
    let mut out = Vec::new();
    loop {
        let n = match rx.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let at = Instant::now();
        let delivered = async {
            tx.write_all(&buf[..n]).await?;
            tx.flush().await
        }
        .await
        .is_ok();
        reader.feed(&buf[..n], &mut out);
        hand_all(tap, conn, from, &mut out, at).await;
        if !delivered {
            break;
        }
    }
    let _ = tx.shutdown().await;
    reader.end(&mut out);
    hand_all(tap, conn, from, &mut out, Instant::now()).await;
}
