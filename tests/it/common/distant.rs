//! A target far away, as far as timing goes, without leaving this machine: a TCP proxy on a
//! free loopback port that holds every chunk a while before passing it on, each way.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Relays every connection to `upstream`, each chunk `each_way` late, in order; a round trip
/// through it takes twice that. It runs until the test ends.
pub async fn proxy(upstream: SocketAddr, each_way: Duration) -> SocketAddr {
    slow_for(upstream, each_way, Duration::ZERO, Duration::MAX).await
}

/// As [`proxy`], but only for the chunks read in the first `for_first` of each connection;
/// later ones pass at once: a connection opened while the machine was busy, whose opening
/// round trip says it is farther than it is.
pub async fn slow_to_open(
    upstream: SocketAddr,
    each_way: Duration,
    for_first: Duration,
) -> SocketAddr {
    slow_for(upstream, each_way, Duration::ZERO, for_first).await
}

/// As [`proxy`], but only for the chunks read once a connection is `after` old: a target
/// whose answers come late though it opened at once (its machine got busy), so its opening
/// round trip says it is nearer than its later answers are.
pub async fn late_after_open(
    upstream: SocketAddr,
    each_way: Duration,
    after: Duration,
) -> SocketAddr {
    slow_for(upstream, each_way, after, Duration::MAX).await
}

/// Relays every connection to `upstream`, holding each chunk read between `from` and `until`
/// after the connection opened `each_way`; every chunk passes in order.
async fn slow_for(
    upstream: SocketAddr,
    each_way: Duration,
    from: Duration,
    until: Duration,
) -> SocketAddr {
    super::hostile::listen(move |client: TcpStream| async move {
        let Ok(server) = TcpStream::connect(upstream).await else {
            return;
        };
        let opened = Instant::now();
        let delay = Delay {
            each_way,
            slow_from: opened + from,
            slow_until: opened.checked_add(until),
        };
        let (from_client, to_client) = client.into_split();
        let (from_server, to_server) = server.into_split();
        tokio::join!(
            late(from_client, to_server, delay),
            late(from_server, to_client, delay)
        );
    })
    .await
}

/// How late a chunk read at some moment is passed on.
#[derive(Clone, Copy)]
struct Delay {
    each_way: Duration,
    /// Chunks read before this pass at once.
    slow_from: Instant,
    /// Chunks read after this pass at once (`None`: never).
    slow_until: Option<Instant>,
}

impl Delay {
    fn due(&self, read_at: Instant) -> Instant {
        let slow = read_at >= self.slow_from && self.slow_until.is_none_or(|u| read_at < u);
        match slow {
            true => read_at + self.each_way,
            false => read_at,
        }
    }
}

/// Copies `from` to `to`, each chunk as late as `delay` says; the end of `from` ends `to`.
async fn late(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, delay: Delay) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).await.unwrap_or(0);
            // An empty chunk is the end, passed on as late as the rest.
            if tx
                .send((delay.due(Instant::now()), buf[..n].to_vec()))
                .is_err()
                || n == 0
            {
                return;
            }
        }
    };
    let write = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if chunk.is_empty() || to.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}
