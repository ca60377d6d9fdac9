//! A campaign's settings, what it tells its caller as it goes, why it can stop, and the ids
//! of its runs: what the campaign's parts share, below all of them.

use crate::protocol::Protocol;
use crate::workers::{LocalTarget, WorkersError};
use std::collections::BTreeSet;

/// How to fuzz.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub seed: u64,
    pub runs: u64,
    /// Stop after this long, whatever `runs` says.
    pub duration: Option<std::time::Duration>,
    /// Longest generated sequence.
    pub max_len: usize,
    /// Most shrinking steps tried.
    pub shrink_budget: u32,
    /// Longest time spent shrinking (a failure that is a timeout costs one per attempt).
    pub shrink_time: std::time::Duration,
    /// How often a failure is re-run to confirm it (alone, as it ran; then shrunk).
    pub confirm: u32,
    /// The campaign starts no run once this many findings reproduced (`--max-findings`).
    pub max_findings: usize,
    /// `--shard I/N`: only the runs this shard holds are made (every run's sequence is still
    /// drawn, in order, so run K is the same sequence in a shard as in the whole campaign).
    pub shard: Option<crate::shard::Shard>,
    /// `--waiting N`: runs that may be under way beyond the `--jobs` that work at once, so
    /// that runs waiting on the target's own timers (a spec's 500 ms, a silence window) leave
    /// the cores to others. Each holds its connection: the target sees up to jobs + N.
    pub waiting: usize,
    /// `--known-failing`: rules the target is known to break; a run that breaks only these is
    /// no finding, so a campaign looks past a deviation every run shows.
    pub known_failing: BTreeSet<String>,
    /// Threads the runs go to, each with its own single-threaded runtime (0: one per core, or
    /// one per run under way when fewer; see [`crate::workers`]).
    pub threads: usize,
    /// A target each of those threads starts for its own runs (the builtin reference, started
    /// as the one at `RunConfig::target_url` was, and addressed as
    /// [`RunConfig::scoped_per_case`] says): a run and the target's side of it then share a
    /// thread. A finding is shrunk and confirmed on the copy its run failed on.
    pub local_target: Option<LocalTarget>,
    /// Each run aims at a rule the mutators break, the rules in turn ([`super::aim`]); false:
    /// every mutator drawn at random by weight, as campaigns did before (to compare the two).
    pub guided: bool,
}

impl Default for FuzzConfig {
    fn default() -> Self {
        FuzzConfig {
            seed: 0,
            runs: 100,
            duration: None,
            max_len: 12,
            shrink_budget: 64,
            shrink_time: std::time::Duration::from_secs(30),
            confirm: 3,
            max_findings: 5,
            shard: None,
            waiting: 0,
            known_failing: BTreeSet::new(),
            threads: 0,
            local_target: None,
            guided: true,
        }
    }
}

/// Progress a caller can show.
#[derive(Debug, Clone)]
pub enum Progress {
    /// A run finished (`failed`: it found something).
    Run {
        run: u64,
        failed: bool,
        events: usize,
        /// Messages the run's transport carried, both ways: what it sent (handshakes
        /// included) and what the target sent back.
        carried: usize,
    },
    /// Shrinking tried a smaller sequence.
    Shrink { steps: usize, still_fails: bool },
}

/// Why fuzzing could not go on.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error("{0} cannot be fuzzed yet")]
    NotFuzzable(String),
    #[error("the generator failed: {0}")]
    Strategy(String),
    #[error("the target never completed a run: {0}")]
    Unusable(String),
    #[error(transparent)]
    Workers(#[from] WorkersError),
}

/// The case id of a campaign's run `run`.
pub(super) fn run_id(protocol: &dyn Protocol, run: u64, seed: u64) -> String {
    format!("fuzz.{}.{}.s{}", protocol.id(), run, seed)
}
