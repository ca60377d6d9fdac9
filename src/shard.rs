//! `--shard I/N`: a deterministic split of a run's cases (by id) or a campaign's fuzz runs (by
//! number), so the N jobs of a CI matrix cover the whole once. Which shard holds what depends
//! only on the id or number and N, never on the machine, the order cases finish in or the
//! Rust version (the hash is FNV-1a, written out here, not std's).

use serde::{Deserialize, Serialize};

/// One of `count` shards (`index` from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// `--shard` that is not `I/N` with 1 ≤ I ≤ N.
#[derive(Debug, Clone, thiserror::Error)]
#[error("--shard takes I/N with 1 <= I <= N (the 2nd of 4 jobs is 2/4), got {0:?}")]
pub struct BadShard(pub String);

impl std::str::FromStr for Shard {
    type Err = BadShard;
    fn from_str(s: &str) -> Result<Self, BadShard> {
        let bad = || BadShard(s.to_owned());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// True when this shard runs the case `id`.
    pub fn holds_case(&self, id: &str) -> bool {
        fnv1a(id.as_bytes()) % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// True when this shard makes fuzz run `number` (from 0): runs go round the shards in
    /// turn, so each job's share of a campaign is the same size.
    pub fn holds_run(&self, number: u64) -> bool {
        number % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// How many of runs `0..total` this shard holds.
    pub fn runs_of(&self, total: u64) -> u64 {
        let (n, i) = (u64::from(self.count), u64::from(self.index - 1));
        total / n + u64::from(i < total % n)
    }

    /// What a report of this shard says of it: `cases` is every case id the whole run selects
    /// (all shards together), and names the run so shards of different runs are not merged.
    pub fn of_run<'a>(&self, protocol: &str, cases: impl IntoIterator<Item = &'a str>) -> ShardOf {
        let mut ids: Vec<&str> = cases.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        let mut text = format!("{protocol}\n{}\n{}\n", crate::VERSION, self.count);
        for id in &ids {
            text.push_str(id);
            text.push('\n');
        }
        ShardOf {
            index: self.index,
            count: self.count,
            run: format!("{:016x}", fnv1a(text.as_bytes())),
            cases: ids.len(),
        }
    }
}

/// A report's place in a sharded run: shard `index` of `count`, of the run whose selection
/// `run` names (a digest of the protocol, wireprobe's version, the count and every selected
/// case id), which selects `cases` cases over all its shards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardOf {
    pub index: u32,
    pub count: u32,
    pub run: String,
    pub cases: usize,
}

/// 64-bit FNV-1a: stable across platforms and releases, which a split kept in CI must be.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_is_not_i_of_n() {
        let s: Shard = "2/4".parse().expect("parses");
        assert_eq!((s.index(), s.count(), s.to_string()), (2, 4, "2/4".into()));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    /// Every case lands in exactly one shard, the split is fixed, and shards are near even.
    #[test]
    fn each_case_and_run_is_in_exactly_one_shard() {
        let shards: Vec<Shard> = (1..=4)
            .map(|i| format!("{i}/4").parse().expect("s"))
            .collect();
        let ids: Vec<String> = (0..400).map(|n| format!("haip.case-{n}")).collect();
        let mut sizes = [0usize; 4];
        for id in &ids {
            let holders: Vec<_> = shards.iter().filter(|s| s.holds_case(id)).collect();
            assert_eq!(holders.len(), 1, "{id}");
            sizes[holders[0].index() as usize - 1] += 1;
        }
        assert!(sizes.iter().all(|n| (70..=130).contains(n)), "{sizes:?}");
        for run in 0..100u64 {
            assert_eq!(shards.iter().filter(|s| s.holds_run(run)).count(), 1);
        }
        for total in [0u64, 1, 3, 4, 5, 99] {
            for s in &shards {
                let held = (0..total).filter(|&r| s.holds_run(r)).count() as u64;
                assert_eq!(s.runs_of(total), held, "{s} of {total}");
            }
        }
        // The published FNV-1a test vectors: the split is fixed for good, so CI jobs built
        // by different releases agree.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn shards_of_one_run_name_it_alike() {
        let a = "1/2"
            .parse::<Shard>()
            .expect("s")
            .of_run("haip", ["b", "a"]);
        let b = "2/2"
            .parse::<Shard>()
            .expect("s")
            .of_run("haip", ["a", "b"]);
        assert_eq!((a.run.clone(), a.cases), (b.run.clone(), 2));
        let other = "2/2".parse::<Shard>().expect("s").of_run("haip", ["a"]);
        assert_ne!(a.run, other.run);
    }
}
