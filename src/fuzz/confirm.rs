//! What a campaign makes of a run that failed. A run fails under the campaign's load, beside
//! other runs; what it found is the target's own only if the case fails the same way again
//! alone. So the failing case is first replayed alone, as it ran: one that never fails again
//! is a flaky finding, reported with its replay and counted for nothing. One that does is
//! shrunk, and the shrunk case replayed to confirm it; when shrinking lost the failure, the
//! case as it ran is what is reported.

use super::case::FuzzRun;
use super::engine::{failure_of, Failure, Finding, FuzzConfig, FuzzError, Progress};
use super::failure::fails_again;
use super::FuzzProfile;
use crate::protocol::json::bounded;
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::suite::model::Case;
use crate::suite::runner::{self, RunConfig};
use proptest::strategy::{BoxedStrategy, Strategy};
use proptest::test_runner::TestRunner;

/// A failed run waiting to be confirmed.
pub(super) struct Candidate {
    pub run: u64,
    /// The generator as it was before the run's draw: it draws the run's tree again.
    pub draw: TestRunner,
    pub case: Case,
    pub result: CaseResult,
    pub failure: Failure,
    /// The run's [`FuzzRun::shape`].
    pub shape: Vec<&'static str>,
}

/// Replays `candidate` alone on `found_on` (where its run failed), then shrinks and confirms
/// what fails again; see the module's words.
pub(super) async fn confirm(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    strategy: &BoxedStrategy<FuzzRun>,
    cfg: &FuzzConfig,
    found_on: &RunConfig,
    candidate: Candidate,
    progress: &mut dyn FnMut(Progress),
) -> Result<Finding, FuzzError> {
    let Candidate {
        run,
        mut draw,
        case,
        result,
        failure,
        shape,
    } = candidate;
    let fails_the_same = |again: &CaseResult| {
        fails_again(
            protocol,
            profile,
            again,
            found_on.judged,
            &cfg.known_failing,
            &failure,
        )
    };
    // No confirming asked for (`confirm` 0): the failure stands as the campaign saw it.
    let mut alone = 0;
    let mut failed_again = cfg.confirm == 0;
    let mut missed_alone = None;
    while alone < cfg.confirm && !failed_again {
        alone += 1;
        let again = runner::run_case(protocol, &case, found_on).await;
        failed_again = fails_the_same(&again);
        if !failed_again {
            missed_alone.get_or_insert_with(|| how_it_ended(&again));
        }
    }
    let mut tree = strategy
        .new_tree(&mut draw)
        .map_err(|e| FuzzError::Strategy(e.to_string()))?;
    let steps_before = tree.current().steps.len();
    let finding =
        |case: Case, result: CaseResult, steps_after, shape, (reproduced, attempts), missed| {
            let mut result: CaseResult = result;
            if result.steps.is_empty() {
                result.steps = runner::step_lines(&case);
            }
            Finding {
                failure: failure_of(
                    protocol,
                    profile,
                    &result,
                    found_on.judged,
                    &cfg.known_failing,
                )
                .filter(|f| f.rule == failure.rule)
                .unwrap_or_else(|| failure.clone()),
                run,
                case,
                result,
                steps_before,
                steps_after,
                reproduced,
                attempts,
                shape,
                repeats: 0,
                missed,
            }
        };
    if !failed_again {
        return Ok(finding(
            case,
            result,
            steps_before,
            shape,
            (0, alone),
            missed_alone,
        ));
    }
    let (shrunk, shrunk_result, steps_after, shrunk_shape) = super::shrink::shrink(
        protocol,
        profile,
        cfg,
        found_on,
        &mut *tree,
        &case.id.clone(),
        &failure,
        (case.clone(), result.clone()),
        progress,
    )
    .await;
    let (reproduced, missed) =
        replayed(cfg.confirm, &shrunk, protocol, found_on, &fails_the_same).await;
    if reproduced > 0 || cfg.confirm == 0 {
        return Ok(finding(
            shrunk,
            shrunk_result,
            steps_after,
            shrunk_shape,
            (reproduced, cfg.confirm),
            missed,
        ));
    }
    // The shrunk case failed in none of its replays (shrinking kept something that fails only
    // now and then, or the failure is rare): the case as it ran is the finding, and the replay
    // alone that failed counts among its tries, or a case that did fail alone would be called
    // flaky.
    let (again, missed) = replayed(cfg.confirm, &case, protocol, found_on, &fails_the_same).await;
    Ok(finding(
        case,
        result,
        steps_before,
        shape,
        (again + 1, cfg.confirm + alone),
        // Its tries count the replays alone before it: one of those may be the one missed.
        missed.or(missed_alone),
    ))
}

/// How many of `times` replays of `case` failed the same way, and how the first that did not
/// ended ([`how_it_ended`]).
async fn replayed(
    times: u32,
    case: &Case,
    protocol: &dyn Protocol,
    found_on: &RunConfig,
    fails_the_same: &dyn Fn(&CaseResult) -> bool,
) -> (u32, Option<String>) {
    let mut reproduced = 0;
    let mut missed = None;
    for _ in 0..times {
        let again = runner::run_case(protocol, case, found_on).await;
        match fails_the_same(&again) {
            true => reproduced += 1,
            false => {
                missed.get_or_insert_with(|| how_it_ended(&again));
            }
        }
    }
    (reproduced, missed)
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

/// Adds `found` to `findings`, taking in each finding of its rule it is more general than (a
/// shape that holds all of `found`'s: shrinking can stop short of the simplest input, and a
/// later run then shows the rule broken by less). Flaky findings keep their own.
pub(super) fn absorb(findings: &mut Vec<Finding>, mut found: Finding) {
    if found.reproduces() {
        findings.retain(|f| {
            let narrower = f.reproduces()
                && f.failure.rule == found.failure.rule
                && found.shape.iter().all(|s| f.shape.contains(s));
            if narrower {
                found.repeats += f.repeats + 1;
            }
            !narrower
        });
    }
    findings.push(found);
}

/// Counts a run failing `rule` on input of `shape` under the finding that accounts for it
/// ([`covering`]), if one does: true when one did.
pub(super) fn accounted_for(findings: &mut [Finding], rule: &str, shape: &[&str]) -> bool {
    match covering(findings, rule, shape) {
        Some(at) => {
            findings[at].repeats += 1;
            true
        }
        None => false,
    }
}

/// Flaky findings of one rule past which a run failing it is put down to the last of them
/// rather than replayed: a rule the campaign's load breaks now and then (a timeout) would
/// otherwise spend the campaign on replays.
const MAX_FLAKY_PER_RULE: usize = 3;

/// The finding that already accounts for a run failing `rule` on input of `shape`: one of the
/// same rule that reproduced and whose shape the run's holds (the run had every kind of input
/// the finding needed), or, once the rule has [`MAX_FLAKY_PER_RULE`] flaky findings, the last
/// of them. A flaky finding accounts for nothing by its shape: one from valid input alone
/// would otherwise take every later failure of its rule, a real one too.
fn covering(findings: &[Finding], rule: &str, shape: &[&str]) -> Option<usize> {
    let of_rule = || {
        findings
            .iter()
            .enumerate()
            .filter(move |(_, f)| f.failure.rule == rule)
    };
    if let Some((at, _)) =
        of_rule().find(|(_, f)| f.reproduces() && f.shape.iter().all(|s| shape.contains(s)))
    {
        return Some(at);
    }
    let flaky: Vec<usize> = of_rule()
        .filter(|(_, f)| !f.reproduces())
        .map(|(at, _)| at)
        .collect();
    (flaky.len() >= MAX_FLAKY_PER_RULE)
        .then(|| flaky.last().copied())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn found(rule: &str, shape: &[&'static str], reproduced: u32) -> Finding {
        Finding {
            failure: Failure {
                rule: rule.into(),
                verdict: Verdict::Fail,
                message: String::new(),
            },
            run: 0,
            case: serde_json::from_value(
                serde_json::json!({"id": "c", "title": "", "rules": [rule], "steps": []}),
            )
            .expect("a case"),
            result: crate::fuzz::failure::tests::run_result(&[(rule, Verdict::Fail)], ""),
            steps_before: 1,
            steps_after: 1,
            reproduced,
            attempts: 3,
            shape: shape.to_vec(),
            repeats: 0,
            missed: None,
        }
    }

    /// A run is accounted for by a finding of its rule whose shape it holds; a rule with
    /// enough flaky findings puts the next failure down to the last of them.
    #[test]
    fn a_run_holding_a_findings_shape_is_that_finding() {
        let findings = vec![found("R-A-001", &["m1"], 3), found("R-B-001", &[], 3)];
        assert_eq!(covering(&findings, "R-A-001", &["m1", "m2"]), Some(0));
        assert_eq!(covering(&findings, "R-A-001", &["m2"]), None);
        assert_eq!(covering(&findings, "R-B-001", &["m9"]), Some(1));
        assert_eq!(covering(&findings, "R-C-001", &[]), None);
        let flaky: Vec<Finding> = ["a", "b", "c"]
            .map(|m| found("R-T-001", &[m], 0))
            .into_iter()
            .collect();
        assert_eq!(covering(&flaky[..2], "R-T-001", &["d"]), None);
        assert_eq!(covering(&flaky, "R-T-001", &["d"]), Some(2));
        // A flaky finding from valid input alone takes no later failure of its rule.
        let once = [found("R-T-001", &[], 0)];
        assert_eq!(covering(&once, "R-T-001", &["m1"]), None);
        assert_eq!(covering(&once, "R-T-001", &[]), None);
    }

    /// A finding broken by less takes in those of its rule broken by more; a flaky one takes
    /// in nothing, and is taken in by nothing.
    #[test]
    fn a_more_general_finding_takes_in_the_narrower_ones() {
        let mut findings = vec![
            found("R-A-001", &["m1", "m2"], 3),
            found("R-A-001", &["m3"], 0),
            found("R-B-001", &["m1"], 3),
        ];
        absorb(&mut findings, found("R-A-001", &["m1"], 2));
        let left: Vec<(&str, Vec<&str>, u64)> = findings
            .iter()
            .map(|f| (f.failure.rule.as_str(), f.shape.clone(), f.repeats))
            .collect();
        assert_eq!(
            left,
            vec![
                ("R-A-001", vec!["m3"], 0),
                ("R-B-001", vec!["m1"], 0),
                ("R-A-001", vec!["m1"], 1),
            ]
        );
        absorb(&mut findings, found("R-B-001", &[], 0));
        assert_eq!(findings.len(), 4);
    }
}
