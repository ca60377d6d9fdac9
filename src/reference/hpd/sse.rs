//! `GET {prefix}/events/live`: the hosted SSE stream. Each event is `id: N` + `data: JSON`;
//! `?after=N` or `Last-Event-ID: N` first replays the history after N, then goes live.

use super::http::Body;
use super::hub::Published;
use super::session::{switched_on, Session};
use super::Config;
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// Chunks a stream may have written but the client not yet read; a client slower than that
/// falls behind the broadcast and its stream is closed.
const BUFFERED: usize = 32;

/// How SSE ids relate to sequence numbers: sparse in `sparse-ids`, out of order in the
/// `non-monotonic-ids` fault. Both are one-to-one, so a resume point is still exact.
pub struct Ids<'a>(pub &'a Config);

impl Ids<'_> {
    /// The `id:` of the event numbered `seq`.
    pub fn of(&self, seq: u64) -> u64 {
        if self.0.variants.has("sparse-ids") {
            1000 + 7 * seq.saturating_sub(1)
        } else if self.0.faults.has("non-monotonic-ids") {
            swap_thirds(seq)
        } else {
            seq
        }
    }

    /// The last sequence number a client that saw id `id` has seen: replay from the next.
    pub fn seen(&self, id: u64) -> u64 {
        if self.0.faults.has("resume-from-start") {
            0
        } else if self.0.variants.has("sparse-ids") {
            match id.checked_sub(1000) {
                Some(over) => over / 7 + 1,
                None => 0,
            }
        } else if self.0.faults.has("non-monotonic-ids") {
            swap_thirds(id)
        } else {
            id
        }
    }
}

/// 1, 3, 2, 4, 6, 5, ...: every third number goes down (its own inverse).
fn swap_thirds(n: u64) -> u64 {
    match n.saturating_sub(1) % 3 {
        1 => n.saturating_add(1),
        2 => n - 1,
        _ => n,
    }
}

/// Starts a subscriber resuming after SSE id `after` (live only when `None`). It subscribes
/// before the response goes out, so every event after the headers reaches it; the body is
/// fed by a task of its own, through a small bounded channel.
pub fn subscribe(session: Arc<Session>, after: Option<u64>) -> Body {
    let seen = after.map(|id| Ids(&session.config).seen(id));
    let (replay, live) = session.hub.subscribe(seen);
    let (tx, mut rx) = mpsc::channel::<Bytes>(BUFFERED);
    tokio::spawn(feed(session, seen.unwrap_or(0), replay, live, tx));
    let chunks = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok::<_, Infallible>(Frame::data(b))))
    });
    StreamBody::new(chunks).boxed()
}

/// Writes the replay, then live events and heartbeats, until the client leaves, falls
/// behind, or the server stops.
async fn feed(
    session: Arc<Session>,
    mut last: u64,
    replay: Vec<Arc<Published>>,
    mut live: broadcast::Receiver<Arc<Published>>,
    tx: mpsc::Sender<Bytes>,
) {
    let config = &session.config;
    let ids = Ids(config);
    let chatty = config.variants.has("chatty-stream");
    let nl = if chatty { "\r\n" } else { "\n" };
    let mut shutdown = session.shutdown.clone();
    if chatty
        && tx
            .send(Bytes::from(format!("retry: 3000{nl}{nl}")))
            .await
            .is_err()
    {
        return;
    }
    for event in replay {
        last = event.seq;
        if tx.send(frame(&ids, &event, chatty)).await.is_err() {
            return;
        }
    }
    let every = if chatty {
        Duration::from_millis(100)
    } else {
        config.heartbeat
    };
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        let chunk = tokio::select! {
            _ = switched_on(&mut shutdown) => return,
            _ = tx.closed() => return,
            _ = beat.tick() => Bytes::from(format!(": heartbeat{nl}{nl}")),
            got = live.recv() => match got {
                // Already replayed (the hub makes this impossible; kept as a guard).
                Ok(event) if event.seq <= last => continue,
                Ok(event) => {
                    last = event.seq;
                    frame(&ids, &event, chatty)
                }
                // A lagging client loses its stream rather than growing a buffer.
                Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => return,
            },
        };
        if tx.send(chunk).await.is_err() {
            return;
        }
    }
}

fn frame(ids: &Ids<'_>, event: &Published, chatty: bool) -> Bytes {
    let id = ids.of(event.seq);
    let text = if chatty {
        format!(
            "id: {id}\r\nevent: {}\r\ndata: {}\r\n\r\n",
            event.ty, event.json
        )
    } else {
        format!("id: {id}\ndata: {}\n\n", event.json)
    };
    Bytes::from(text)
}

#[cfg(test)]
mod tests {
    use super::swap_thirds;

    #[test]
    fn swapped_ids_are_their_own_inverse() {
        let ids: Vec<u64> = (1..=6).map(swap_thirds).collect();
        assert_eq!(ids, [1, 3, 2, 4, 6, 5]);
        assert!((1..100).all(|n| swap_thirds(swap_thirds(n)) == n));
    }
}
