//! What a campaign found: the failure, its shrunk case, and every replay of it.

use super::company::Company;
use super::failure::Failure;
use super::replays::Replay;
use crate::results::CaseResult;
use crate::suite::model::Case;

/// What a fuzz run found.
#[derive(Debug, Clone)]
pub struct Finding {
    pub failure: Failure,
    /// The run (0-based) whose sequence failed first.
    pub run: u64,
    /// The shrunk sequence, as a replayable case, and its last result.
    pub case: Case,
    pub result: CaseResult,
    /// Steps before and after shrinking.
    pub steps_before: usize,
    pub steps_after: usize,
    /// How often the reported case failed the same way when re-run alone: a finding that
    /// never did (`reproduced` 0) was the campaign's load, or chance, as far as anyone can
    /// show, unless it [`Finding::needs_company`].
    pub reproduced: u32,
    pub attempts: u32,
    /// What the input that broke the rule held besides valid events ([`super::case::Shape`]).
    pub shape: Vec<&'static str>,
    /// Later runs that failed the same rule on input holding this shape, accounted for here.
    pub repeats: u64,
    /// Every replay, in order (as it ran, alone, shrunk): which reproduced it, and how those
    /// that did not ended.
    pub replays: Vec<Replay>,
    /// The runs it ran among ([`super::company`]): its replay as it ran.
    pub company: Company,
    /// When it failed again as it ran, in a frame the target sent, and never alone: the cases
    /// of the runs it ran among (the one before it first), which are part of what breaks the
    /// target and are written beside it. Counted.
    pub needs_company: Option<Vec<Case>>,
    /// How far into the campaign's budget its run ended (the time spent confirming earlier
    /// findings not counted): how soon the campaign found it.
    pub found_after: std::time::Duration,
}

impl Finding {
    /// True when the case did not fail every time it was re-run.
    pub fn is_flaky(&self) -> bool {
        self.reproduced < self.attempts
    }

    /// True when the case failed again at least once alone, or was not re-run (no confirming
    /// asked for), or [`Finding::needs_company`]: a finding that counts (fails the campaign).
    /// One that never failed again is reported, apart, and counts for nothing.
    pub fn reproduces(&self) -> bool {
        self.reproduced > 0 || self.attempts == 0 || self.needs_company.is_some()
    }

    /// How the first replay that did not fail the same way ended (its verdict and message),
    /// when one did not: what a flaky finding's report shows of why.
    pub fn missed(&self) -> Option<&str> {
        self.replays
            .iter()
            .find(|r| !r.failed_the_same)
            .map(|r| r.ended.as_str())
    }
}
