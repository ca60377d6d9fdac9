//! A set of ids that forgets its oldest members beyond a fixed size, so a checker following a
//! flood of ids keeps bounded memory; and the same bound for a queue of anything.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// At most `N` ids, oldest forgotten first. It keeps 64-bit hashes, not the ids (a false match
/// needs a hash collision: about 1 in 10^15 at these sizes), seeded at random per set so a
/// target cannot pick ids that collide.
#[derive(Debug, Default)]
pub struct RecentSet<const N: usize> {
    hasher: foldhash::quality::RandomState,
    order: VecDeque<u64>,
    members: HashSet<u64, BuildHasherDefault<AlreadyHashed>>,
}

/// The members are hashes already: the set's table uses them as they are.
#[derive(Debug, Default)]
struct AlreadyHashed(u64);

impl Hasher for AlreadyHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64s are hashed here; anything else is folded in byte by byte all the same.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Appends `item`, first forgetting the oldest when `queue` already holds `max`: a queue fed
/// by what a peer sends stays bounded however much it sends.
pub fn push_bounded<T>(queue: &mut VecDeque<T>, item: T, max: usize) {
    if queue.len() >= max {
        queue.pop_front();
    }
    queue.push_back(item);
}

impl<const N: usize> RecentSet<N> {
    fn key(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    /// Adds `id`; false when it was already there.
    pub fn insert(&mut self, id: &str) -> bool {
        let key = self.key(id);
        if !self.members.insert(key) {
            return false;
        }
        self.order.push_back(key);
        if self.order.len() > N {
            if let Some(old) = self.order.pop_front() {
                self.members.remove(&old);
            }
        }
        true
    }

    /// True when `id` is among the remembered.
    pub fn contains(&self, id: &str) -> bool {
        self.members.contains(&self.key(id))
    }

    /// True when nothing has been added (or everything was forgotten).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_queue_forgets_its_oldest() {
        let mut queue = VecDeque::new();
        for i in 0..5 {
            push_bounded(&mut queue, i, 3);
        }
        assert_eq!(queue, [2, 3, 4]);
    }

    #[test]
    fn forgets_the_oldest_beyond_its_size() {
        let mut set = RecentSet::<2>::default();
        assert!(set.insert("a") && set.insert("b") && !set.insert("a"));
        assert!(set.insert("c"));
        assert!(!set.contains("a") && set.contains("b") && set.contains("c"));
    }
}
