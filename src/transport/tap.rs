//! A bounded queue from a relay's pumps to whoever judges what passes (`proxy`): counted in
//! items and in bytes, so a judge that falls behind slows the pumps that feed it instead of
//! letting a flood fill memory. The pumps forward first and tap after, so a frame reaches its
//! peer before it waits here.

use std::sync::Arc;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// Items queued at most.
const MAX_ITEMS: usize = 4096;
/// Bytes queued at most (an item larger than this still fits: it takes the whole budget).
const MAX_BYTES: usize = 64 * 1024 * 1024;

/// An item and its share of the byte budget, released when it is taken.
struct Held<T> {
    item: T,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The pumps' end (cloned for each).
pub struct TapSender<T> {
    tx: mpsc::Sender<Held<T>>,
    budget: Arc<Semaphore>,
}

impl<T> Clone for TapSender<T> {
    fn clone(&self) -> Self {
        TapSender {
            tx: self.tx.clone(),
            budget: self.budget.clone(),
        }
    }
}

/// The judge's end.
pub struct TapReceiver<T> {
    rx: mpsc::Receiver<Held<T>>,
}

/// A new queue.
pub fn tap<T>() -> (TapSender<T>, TapReceiver<T>) {
    let (tx, rx) = mpsc::channel(MAX_ITEMS);
    let budget = Arc::new(Semaphore::new(MAX_BYTES));
    (TapSender { tx, budget }, TapReceiver { rx })
}

impl<T> TapSender<T> {
    /// Queues `item` of `bytes`, waiting while the queue is full; false once the judge has
    /// gone.
    pub async fn send(&self, item: T, bytes: usize) -> bool {
        let bytes = bytes.min(MAX_BYTES);
        let permit = match bytes {
            0 => None,
            n => match self.budget.clone().acquire_many_owned(n as u32).await {
                Ok(p) => Some(p),
                Err(_) => return false,
            },
        };
        self.tx
            .send(Held {
                item,
                _permit: permit,
            })
            .await
            .is_ok()
    }
}

impl<T> TapReceiver<T> {
    /// The next item; `None` once every sender has gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<T> {
        self.rx.recv().await.map(|h| h.item)
    }

    /// An item already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        self.rx.try_recv().ok().map(|h| h.item)
    }
}
