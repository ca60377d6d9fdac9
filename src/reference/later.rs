//! What a reference client sends later: a tool still running, an answer a variant holds back.
//! One queue, soonest first, that its receive loop wakes for.

use tokio::time::Instant;

/// Items due at a time, soonest first (items due at the same time in the order they came).
#[derive(Debug)]
pub struct Later<T> {
    items: Vec<(Instant, T)>,
}

impl<T> Default for Later<T> {
    fn default() -> Self {
        Later { items: Vec::new() }
    }
}

impl<T> Later<T> {
    /// Holds `item` until `at`.
    pub fn push(&mut self, at: Instant, item: T) {
        let place = self.items.partition_point(|(due, _)| *due <= at);
        self.items.insert(place, (at, item));
    }

    /// When the receive loop must wake: the soonest item's time, or `give_up`, if sooner.
    pub fn wake(&self, give_up: Instant) -> Instant {
        self.items
            .first()
            .map_or(give_up, |(at, _)| (*at).min(give_up))
    }

    /// The items whose time has come, soonest first.
    pub fn take_due(&mut self) -> Vec<T> {
        let now = Instant::now();
        let due = self.items.partition_point(|(at, _)| *at <= now);
        self.items.drain(..due).map(|(_, item)| item).collect()
    }

    /// Nothing is held.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Takes out the first item `matches` picks, whenever it is due.
    pub fn take_first(&mut self, matches: impl Fn(&T) -> bool) -> Option<T> {
        let at = self.items.iter().position(|(_, item)| matches(item))?;
        Some(self.items.remove(at).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn items_come_out_soonest_first_when_due() {
        let now = Instant::now();
        let mut later = Later::default();
        later.push(now + Duration::from_secs(60), "late");
        later.push(now, "first");
        later.push(now, "second");
        assert_eq!(later.wake(now + Duration::from_secs(1)), now);
        assert_eq!(later.take_due(), ["first", "second"]);
        assert_eq!(later.take_first(|i| *i == "late"), Some("late"));
        assert!(later.take_due().is_empty());
        let give_up = now + Duration::from_secs(1);
        assert_eq!(later.wake(give_up), give_up);
    }
}
