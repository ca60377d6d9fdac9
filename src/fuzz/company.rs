//! The company a campaign run kept: the run that ended last on its target before it began
//! (what that one left there is where this one started) and the runs under way on that target
//! beside it. A failure is replayed among them, as it ran, before it is replayed alone
//! ([`super::confirm`]): a bug that shows only when sessions overlap, or only after what a
//! predecessor did to a shared conversation, is then not called flaky.
//!
//! The log keeps each run's generator as it was before its draw (a few hundred bytes; never
//! the value tree, see the engine), so a companion's sequence is drawn again only when a
//! failure needs it.

use super::case::case_for;
use super::config::{run_id, FuzzError};
use super::FuzzProfile;
use crate::protocol::Protocol;
use crate::suite::model::Case;
use crate::suite::runner::RunConfig;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::collections::VecDeque;

/// One run as the log keeps it.
struct Logged {
    run: u64,
    draw: TestRunner,
    /// When it began and ended, in the log's ticks (one per start and per end).
    began: u64,
    ended: Option<u64>,
    /// The target it ran on (the worker whose copy it reached); known once it ended.
    target: Option<usize>,
}

/// The runs of a campaign, under way and lately ended.
pub(super) struct RunLog {
    runs: VecDeque<Logged>,
    tick: u64,
    /// Runs at most under way at once: how much company a run can have had.
    at_once: usize,
}

/// A run's company, by run number: the one before it and those beside it, in the order they
/// began.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Company {
    pub before: Option<u64>,
    pub beside: Vec<u64>,
}

impl Company {
    pub fn is_empty(&self) -> bool {
        self.before.is_none() && self.beside.is_empty()
    }
}

/// A run's company as the cases that replay it.
#[derive(Debug, Clone, Default)]
pub struct Companions {
    pub who: Company,
    pub before: Option<Case>,
    pub beside: Vec<Case>,
}

impl RunLog {
    pub(super) fn new(at_once: usize) -> RunLog {
        RunLog {
            runs: VecDeque::new(),
            tick: 0,
            at_once: at_once.max(1),
        }
    }

    /// Notes that `run` began, drawn from `draw`.
    pub(super) fn began(&mut self, run: u64, draw: TestRunner) {
        self.tick += 1;
        self.runs.push_back(Logged {
            run,
            draw,
            began: self.tick,
            ended: None,
            target: None,
        });
    }

    /// Notes that `run` ended on `target` (none: its task failed, and it is no one's
    /// company). Ended runs past those a later failure could have kept company with are
    /// forgotten.
    pub(super) fn ended(&mut self, run: u64, target: Option<usize>) {
        self.tick += 1;
        if let Some(logged) = self.runs.iter_mut().find(|l| l.run == run) {
            logged.ended = Some(self.tick);
            logged.target = target;
        }
        // A failure is confirmed before any run begins after it; what it overlapped began
        // within the last few rounds of runs.
        let keep = 4 * self.at_once + 1;
        while self.runs.iter().filter(|l| l.ended.is_some()).count() > keep {
            let first_ended = self
                .runs
                .iter()
                .enumerate()
                .filter_map(|(at, l)| l.ended.map(|e| (e, at)))
                .min()
                .map(|(_, at)| at);
            match first_ended {
                Some(at) => {
                    self.runs.remove(at);
                }
                None => break,
            }
        }
    }

    /// The generator `run` was drawn from, while the log holds it.
    pub(super) fn draw(&self, run: u64) -> Option<TestRunner> {
        self.runs
            .iter()
            .find(|l| l.run == run)
            .map(|l| l.draw.clone())
    }

    /// `run`'s company on its target (`same_target` says which targets are one): the last
    /// run there that ended before it began, and of those that overlapped it there as many as
    /// were under way beside it at once at the most, those that began nearest it first.
    pub(super) fn company(&self, run: u64, same_target: &dyn Fn(usize, usize) -> bool) -> Company {
        let Some(me) = self.runs.iter().find(|l| l.run == run) else {
            return Company::default();
        };
        let (Some(target), Some(ended)) = (me.target, me.ended) else {
            return Company::default();
        };
        let on_mine =
            |l: &&Logged| l.run != run && l.target.is_some_and(|t| same_target(t, target));
        let mut beside: Vec<&Logged> = self
            .runs
            .iter()
            .filter(on_mine)
            .filter(|l| l.began < ended && l.ended.is_some_and(|e| e > me.began))
            .collect();
        // No more than were under way beside it there at once, at the most: a replay with
        // more would be a heavier load than the run had.
        let peak = (me.began..=ended)
            .map(|tick| {
                beside
                    .iter()
                    .filter(|l| l.began <= tick && l.ended.is_some_and(|e| e >= tick))
                    .count()
            })
            .max()
            .unwrap_or(0);
        beside.sort_by_key(|l| l.began.abs_diff(me.began));
        beside.truncate(peak.min(self.at_once - 1));
        beside.sort_by_key(|l| l.began);
        let before = self
            .runs
            .iter()
            .filter(on_mine)
            .filter(|l| l.ended.is_some_and(|e| e < me.began))
            .max_by_key(|l| l.ended)
            .map(|l| l.run);
        Company {
            before,
            beside: beside.iter().map(|l| l.run).collect(),
        }
    }
}

/// `who`'s runs as cases on `on`, their sequences drawn again from the generators `log` kept.
pub(super) fn companions(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    sequences: &super::aim::Sequences,
    log: &RunLog,
    who: Company,
    seed: u64,
    on: &RunConfig,
) -> Result<Companions, FuzzError> {
    let case_of = |run: u64| -> Result<Option<Case>, FuzzError> {
        let Some(mut draw) = log.draw(run) else {
            return Ok(None);
        };
        let tree = sequences
            .of_run(run)
            .new_tree(&mut draw)
            .map_err(|e| FuzzError::Strategy(e.to_string()))?;
        let id = run_id(protocol, run, seed);
        Ok(Some(case_for(protocol, profile, &id, tree.current(), on)))
    };
    let before = who.before.map(case_of).transpose()?.flatten();
    let beside = who
        .beside
        .iter()
        .filter_map(|&run| case_of(run).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Companions {
        who,
        before,
        beside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(at_once: usize, events: &[(char, u64, usize)]) -> RunLog {
        let mut log = RunLog::new(at_once);
        for &(what, run, target) in events {
            match what {
                'b' => log.began(run, TestRunner::deterministic()),
                _ => log.ended(run, Some(target)),
            }
        }
        log
    }

    /// A run's company is the run that ended before it on its target and those that
    /// overlapped it there; runs on another target are no company.
    #[test]
    fn company_is_the_run_before_and_those_beside_on_the_same_target() {
        let log = log_of(
            4,
            &[
                ('b', 0, 0),
                ('e', 0, 0),
                ('b', 1, 0),
                ('b', 2, 0),
                ('b', 3, 0),
                ('e', 2, 1),
                ('b', 4, 0),
                ('e', 3, 0),
                ('e', 1, 0),
                ('e', 4, 0),
            ],
        );
        let same = |a: usize, b: usize| a == b;
        assert_eq!(
            log.company(3, &same),
            Company {
                before: Some(0),
                beside: vec![1, 4]
            }
        );
        assert_eq!(
            log.company(0, &same),
            Company {
                before: None,
                beside: vec![]
            }
        );
        // One target for all: run 2 is company too, and no more than two were ever under way
        // beside run 3 at once (1 and 2, then 1 and 4): the two that began nearest it.
        let one = |_: usize, _: usize| true;
        assert_eq!(log.company(3, &one).beside, vec![1, 2]);
    }

    /// No more company than ran at once, the nearest kept; old runs are forgotten.
    #[test]
    fn company_is_bounded_by_what_ran_at_once() {
        let mut events = vec![('b', 100, 0)];
        for r in 0..20 {
            events.extend([('b', r, 0), ('e', r, 0)]);
        }
        events.push(('e', 100, 0));
        let log = log_of(2, &events);
        let company = log.company(100, &|a, b| a == b);
        // Of those it overlapped, the log still holds 12 to 19: the one that began nearest it.
        assert_eq!(company.beside, vec![12]);
        assert!(log.runs.len() <= 4 * 2 + 1);
        assert!(log.draw(1).is_none(), "an old run is forgotten");
    }
}
