//! Work slots: how many of a campaign's runs work at once, apart from how many are under way.
//!
//! A run holds a slot while it works and lends it out while it waits on the target for longer
//! than a round trip (a spec's 500 ms before REPLAY_REQUEST, a silence window), so that the runs
//! waiting on a target's timers do not keep the others from the cores. It takes a slot back
//! before it looks at what came: at most `working` runs ever build, send or judge at once,
//! which keeps their memory in the caches (more runs working at once make each event dearer).
//! Waits are judged as before: what a wait returns is bounded by its deadline, and when a run
//! gets its slot back later than that changes nothing that was received.

use crate::transport::{Connection, Received};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The slots a campaign's runs share (the engine holds them; each run's [`Slot`] a clone).
#[derive(Debug, Clone)]
pub struct WorkSlots {
    slots: Arc<Semaphore>,
    /// How many times a run lent its slot.
    lent: Arc<AtomicU64>,
    /// How long a wait goes before its run lends its slot: longer than an answer takes on a
    /// busy machine, so a run's ordinary round trips keep it.
    patience: Duration,
}

/// A run's hold on one of the [`WorkSlots`]; `None` inside while lent out.
#[derive(Debug)]
pub struct Slot {
    slots: WorkSlots,
    held: Option<OwnedSemaphorePermit>,
}

impl WorkSlots {
    /// `working` slots (at least one); runs lend theirs after waiting `patience`.
    pub fn new(working: usize, patience: Duration) -> Self {
        WorkSlots {
            slots: Arc::new(Semaphore::new(working.max(1))),
            lent: Arc::default(),
            patience,
        }
    }

    /// Waits for a free slot.
    pub async fn take(&self) -> Slot {
        let mut slot = Slot {
            slots: self.clone(),
            held: None,
        };
        slot.take_back().await;
        slot
    }

    /// A free slot, if there is one now.
    pub fn try_take(&self) -> Option<Slot> {
        let held = self.slots.clone().try_acquire_owned().ok()?;
        Some(Slot {
            slots: self.clone(),
            held: Some(held),
        })
    }

    /// How many times a run has lent its slot while waiting.
    pub fn lent(&self) -> u64 {
        self.lent.load(Ordering::Relaxed)
    }
}

impl Slot {
    /// [`Connection::recv`], lending the slot out if nothing comes within the patience.
    pub async fn recv(
        &mut self,
        conn: &mut Connection,
        deadline: Instant,
    ) -> Option<(Received, std::time::Instant)> {
        let soon = (Instant::now() + self.slots.patience).min(deadline);
        if let Some(got) = conn.recv(soon).await {
            return Some(got);
        }
        if soon >= deadline || conn.is_finished() {
            return None;
        }
        self.lend();
        let got = conn.recv(deadline).await;
        self.take_back().await;
        got
    }

    /// Sleeps until `deadline`, the slot lent out meanwhile when the sleep is a long one.
    pub async fn sleep_until(&mut self, deadline: Instant) {
        if deadline <= Instant::now() + self.slots.patience {
            tokio::time::sleep_until(deadline).await;
            return;
        }
        self.lend();
        tokio::time::sleep_until(deadline).await;
        self.take_back().await;
    }

    fn lend(&mut self) {
        self.held = None;
        self.slots.lent.fetch_add(1, Ordering::Relaxed);
    }

    async fn take_back(&mut self) {
        // The semaphore is never closed (the slots own it), so this always succeeds.
        self.held = self.slots.slots.clone().acquire_owned().await.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_long_sleep_lends_its_slot_and_takes_it_back() {
        let slots = WorkSlots::new(1, Duration::from_millis(5));
        let mut sleeper = slots.take().await;
        let sleeping = tokio::spawn(async move {
            sleeper
                .sleep_until(Instant::now() + Duration::from_millis(200))
                .await;
            sleeper
        });
        // The one slot is free while the other sleeps: a second run gets it at once.
        let other = tokio::time::timeout(Duration::from_millis(150), slots.take()).await;
        let other = other.expect("the sleeping run lent its slot");
        // And the sleeper, done, waits for it before going on.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!sleeping.is_finished(), "went on without a slot");
        drop(other);
        let sleeper = sleeping.await.expect("the sleeper finished");
        assert!(sleeper.held.is_some());
        assert_eq!(slots.lent(), 1);
    }

    #[tokio::test]
    async fn a_short_sleep_keeps_its_slot() {
        let slots = WorkSlots::new(1, Duration::from_millis(500));
        let mut run = slots.take().await;
        let sleeping = tokio::spawn(async move {
            run.sleep_until(Instant::now() + Duration::from_millis(100))
                .await;
            run
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(slots.slots.available_permits(), 0, "lent for a short sleep");
        let run = sleeping.await.expect("the sleeper finished");
        assert!(run.held.is_some());
        assert_eq!(slots.lent(), 0);
    }
}
