//! Replaying a failed run, and what each replay showed: among the company it ran in, alone,
//! or shrunk. A finding keeps every replay, so its report says which reproduced it.

use super::company::Companions;
use crate::protocol::json::bounded;
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::suite::model::Case;
use crate::suite::runner::{self, RunConfig};

/// How a case was replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayKind {
    /// As it ran: after the run before it on its target, beside the runs that overlapped it.
    AsItRan,
    /// The case as it ran, alone.
    Alone,
    /// The shrunk case, alone.
    Shrunk,
}

/// One replay and what it showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub kind: ReplayKind,
    /// It failed the way the finding did.
    pub failed_the_same: bool,
    /// Its verdict and the start of its message ([`how_it_ended`]).
    pub ended: String,
}

impl Replay {
    fn of(kind: ReplayKind, result: &CaseResult, failed_the_same: bool) -> Replay {
        Replay {
            kind,
            failed_the_same,
            ended: how_it_ended(result),
        }
    }
}

/// Replays `case` as it ran: the run before it first, to its end, then `case` with the runs
/// beside it all at once, on the same target. Only `case`'s result is judged; its company's
/// are dropped.
async fn as_it_ran(
    protocol: &dyn Protocol,
    case: &Case,
    company: &Companions,
    found_on: &RunConfig,
) -> CaseResult {
    if let Some(before) = &company.before {
        runner::run_case(protocol, before, found_on).await;
    }
    let beside = futures_util::future::join_all(
        company
            .beside
            .iter()
            .map(|c| runner::run_case(protocol, c, found_on)),
    );
    let (result, _) = tokio::join!(runner::run_case(protocol, case, found_on), beside);
    result
}

/// The replay of `case` as it ran, when it had company: `None` when it had none (a replay
/// alone is then the same thing).
pub(super) async fn among_company(
    protocol: &dyn Protocol,
    case: &Case,
    company: &Companions,
    found_on: &RunConfig,
    fails_the_same: &dyn Fn(&CaseResult) -> bool,
) -> Option<(Replay, CaseResult)> {
    if company.who.is_empty() {
        return None;
    }
    let again = as_it_ran(protocol, case, company, found_on).await;
    let replay = Replay::of(ReplayKind::AsItRan, &again, fails_the_same(&again));
    Some((replay, again))
}

/// `times` replays of `case` alone, each recorded as `kind`.
pub(super) async fn alone(
    kind: ReplayKind,
    times: u32,
    case: &Case,
    protocol: &dyn Protocol,
    found_on: &RunConfig,
    fails_the_same: &dyn Fn(&CaseResult) -> bool,
) -> Vec<Replay> {
    let mut replays = Vec::new();
    for _ in 0..times {
        replays.push(once_alone(kind, case, protocol, found_on, fails_the_same).await);
    }
    replays
}

/// One replay of `case` alone.
pub(super) async fn once_alone(
    kind: ReplayKind,
    case: &Case,
    protocol: &dyn Protocol,
    found_on: &RunConfig,
    fails_the_same: &dyn Fn(&CaseResult) -> bool,
) -> Replay {
    let again = runner::run_case(protocol, case, found_on).await;
    Replay::of(kind, &again, fails_the_same(&again))
}

/// How many of `replays` of `kind` failed the same way, of how many.
pub fn tally(replays: &[Replay], kind: ReplayKind) -> (u32, u32) {
    replays
        .iter()
        .filter(|r| r.kind == kind)
        .fold((0, 0), |(same, all), r| {
            (same + u32::from(r.failed_the_same), all + 1)
        })
}

/// A replay's verdict and the start of its message: what a report shows of a replay that did
/// not fail the way its finding did.
fn how_it_ended(result: &CaseResult) -> String {
    const SHOWN: usize = 300;
    match result.message.is_empty() {
        true => result.verdict.to_string(),
        false => bounded(
            format_args!("{}: {}", result.verdict, result.message),
            SHOWN,
        ),
    }
}

/// True when `result` shows `rule` broken in a frame the target sent (a rule the judge pinned
/// to the transcript), not only by a wait that ran out: a load on this machine can make a
/// target late, or bring about an overlap it mishandles (a Nuum agent that does not inject
/// the messages queued mid-turn: more turns overlap input under load), but never make a
/// correct target send a frame that breaks a rule.
pub(super) fn broken_in_a_frame(result: &CaseResult, rule: &str) -> bool {
    result.violations.iter().any(|v| v.rule == rule)
}
