//! `GET {prefix}/events/live`: the hosted SSE stream. Each event is `id: N` + `data: JSON`;
//! `?after=N` or `Last-Event-ID: N` first replays the history after N, then goes live.

use super::hub::Published;
use super::session::{switched_on, Session};
use super::Config;
use crate::reference::http_body::Body;
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
    // Set when the client fell behind while its chunk was gathered: that chunk is its last.
    let mut lagged = false;
    loop {
        let chunk = tokio::select! {
            _ = switched_on(&mut shutdown) => return,
            _ = tx.closed() => return,
            _ = beat.tick() => Bytes::from(format!(": heartbeat{nl}{nl}")),
            got = live.recv() => match got {
                // Already replayed (the hub makes this impossible; kept as a guard).
                Ok(event) if event.seq <= last => continue,
                Ok(event) => {
                    let (chunk, behind) = gather(&ids, &event, &mut live, &mut last, chatty);
                    lagged = behind;
                    chunk
                }
                // A lagging client loses its stream rather than growing a buffer.
                Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => return,
            },
        };
        if tx.send(chunk).await.is_err() || lagged {
            return;
        }
    }
}

/// Most bytes of events written at once.
const COALESCED: usize = 64 * 1024;

/// `event`'s frame and those of the events already published behind it, up to [`COALESCED`]
/// bytes, as one write (a turn publishes its events together; a write each cost both sides a
/// system call each); `true` when the client fell behind meanwhile, so this is its last.
fn gather(
    ids: &Ids<'_>,
    event: &Published,
    live: &mut broadcast::Receiver<Arc<Published>>,
    last: &mut u64,
    chatty: bool,
) -> (Bytes, bool) {
    *last = event.seq;
    let mut out = Vec::new();
    frame_into(&mut out, ids, event, chatty);
    let mut behind = false;
    while out.len() < COALESCED {
        match live.try_recv() {
            Ok(next) if next.seq <= *last => {}
            Ok(next) => {
                *last = next.seq;
                frame_into(&mut out, ids, &next, chatty);
            }
            Err(broadcast::error::TryRecvError::Lagged(_)) => {
                behind = true;
                break;
            }
            Err(_) => break,
        }
    }
    (out.into(), behind)
}

fn frame(ids: &Ids<'_>, event: &Published, chatty: bool) -> Bytes {
    let mut out = Vec::new();
    frame_into(&mut out, ids, event, chatty);
    out.into()
}

/// Appends `event`'s frame to `out`, room made for it at once: `format!` grew its string two or
/// three times for a frame of some hundred bytes (3% of fuzzing HPD's instructions).
fn frame_into(out: &mut Vec<u8>, ids: &Ids<'_>, event: &Published, chatty: bool) {
    use std::io::Write as _;
    let id = ids.of(event.seq);
    out.reserve(event.json.len() + event.ty.len() + 48);
    // Writing to a `Vec` cannot fail.
    let _ = match chatty {
        true => write!(out, "id: {id}\r\nevent: {}\r\ndata: ", event.ty),
        false => write!(out, "id: {id}\ndata: "),
    };
    out.extend_from_slice(event.json.as_bytes());
    out.extend_from_slice(if chatty { b"\r\n\r\n" } else { b"\n\n" });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::ServeOptions;

    fn published(seq: u64) -> Arc<Published> {
        Arc::new(Published {
            seq,
            ty: "TEXT_DELTA".into(),
            json: format!("{{\"n\":{seq}}}"),
        })
    }

    #[test]
    fn events_already_published_go_in_one_write() {
        let config = Config::new(&ServeOptions::default()).expect("config");
        let (tx, mut live) = broadcast::channel(8);
        for seq in 2..=3 {
            tx.send(published(seq)).expect("a subscriber");
        }
        let (chunk, behind) = gather(&Ids(&config), &published(1), &mut live, &mut 0, false);
        let text = String::from_utf8(chunk.to_vec()).expect("text");
        assert_eq!(
            text,
            "id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\nid: 3\ndata: {\"n\":3}\n\n"
        );
        assert!(!behind);
    }

    #[test]
    fn a_client_that_fell_behind_gets_what_came_before_and_no_more() {
        let config = Config::new(&ServeOptions::default()).expect("config");
        let (tx, mut live) = broadcast::channel(2);
        for seq in 2..=5 {
            tx.send(published(seq)).expect("a subscriber");
        }
        let mut last = 0;
        let (chunk, behind) = gather(&Ids(&config), &published(1), &mut live, &mut last, false);
        assert!(behind, "the stream ends: events 2 and 3 were lost");
        assert_eq!(chunk, Bytes::from("id: 1\ndata: {\"n\":1}\n\n"));
        assert_eq!(last, 1);
    }

    #[test]
    fn swapped_ids_are_their_own_inverse() {
        let ids: Vec<u64> = (1..=6).map(swap_thirds).collect();
        assert_eq!(ids, [1, 3, 2, 4, 6, 5]);
        assert!((1..100).all(|n| swap_thirds(swap_thirds(n)) == n));
    }
}
