//! The event hub: numbers every event, keeps a bounded history for SSE resumption and fans
//! events out to every subscriber (SSE and WebSocket) through one broadcast channel.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

/// How many events a subscriber may fall behind before its stream is closed: the broadcast
/// ring is fixed, so a slow reader costs no memory, only its own stream.
const LIVE_CAPACITY: usize = 1024;

/// One event as sent: its sequence number, its (possibly faulted) type and envelope JSON.
#[derive(Debug)]
pub struct Published {
    /// Starts at 1, +1 per event, shared by all subscribers.
    pub seq: u64,
    pub ty: String,
    pub json: String,
}

/// See the module doc.
pub struct Hub {
    inner: Mutex<Inner>,
    live: broadcast::Sender<Arc<Published>>,
}

struct Inner {
    next_seq: u64,
    history: VecDeque<Arc<Published>>,
    limit: usize,
}

impl Hub {
    /// A hub keeping the last `limit` events.
    pub fn new(limit: usize) -> Hub {
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        Hub {
            inner: Mutex::new(Inner {
                next_seq: 1,
                history: VecDeque::with_capacity(limit.min(LIVE_CAPACITY)),
                limit: limit.max(1),
            }),
            live,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked mid-publish; the history is
        // still a valid queue.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers and sends one event.
    pub fn publish(&self, ty: String, json: String) {
        let mut inner = self.lock();
        let event = Arc::new(Published {
            seq: inner.next_seq,
            ty,
            json,
        });
        inner.next_seq += 1;
        let limit = inner.limit;
        crate::protocol::recent::push_bounded(&mut inner.history, event.clone(), limit);
        // Sent under the lock, so the broadcast order is the sequence order. No receiver is
        // not an error: events are kept in the history.
        let _ = self.live.send(event);
    }

    /// Subscribes to live events and, when `after` is given, snapshots the history events
    /// with a greater sequence number. Both happen under the publish lock, so replay and
    /// live neither overlap nor leave a gap.
    pub fn subscribe(
        &self,
        after: Option<u64>,
    ) -> (Vec<Arc<Published>>, broadcast::Receiver<Arc<Published>>) {
        let inner = self.lock();
        let live = self.live.subscribe();
        let replay = match after {
            Some(after) => inner
                .history
                .iter()
                .filter(|e| e.seq > after)
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        (replay, live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_bounded_and_replay_exact() {
        let hub = Hub::new(3);
        for i in 0..5 {
            hub.publish("T".into(), format!("{i}"));
        }
        let (replay, mut live) = hub.subscribe(Some(3));
        assert_eq!(replay.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
        let (all, _) = hub.subscribe(Some(0));
        assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4, 5]);
        hub.publish("T".into(), "x".into());
        assert_eq!(live.try_recv().map(|e| e.seq).ok(), Some(6));
    }
}
