//! A set of ids that forgets its oldest members beyond a fixed size, so a checker following a
//! flood of ids keeps bounded memory.

use std::collections::{HashSet, VecDeque};

/// At most `N` ids, oldest forgotten first. It keeps 64-bit hashes, not the ids (a false match
/// needs a hash collision: about 1 in 10^15 at these sizes).
#[derive(Debug, Default)]
pub struct RecentSet<const N: usize> {
    order: VecDeque<u64>,
    members: HashSet<u64>,
}

impl<const N: usize> RecentSet<N> {
    fn key(id: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut h);
        h.finish()
    }

    /// Adds `id`; false when it was already there.
    pub fn insert(&mut self, id: &str) -> bool {
        let key = Self::key(id);
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
        self.members.contains(&Self::key(id))
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
    fn forgets_the_oldest_beyond_its_size() {
        let mut set = RecentSet::<2>::default();
        assert!(set.insert("a") && set.insert("b") && !set.insert("a"));
        assert!(set.insert("c"));
        assert!(!set.contains("a") && set.contains("b") && set.contains("c"));
    }
}
