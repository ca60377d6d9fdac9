//! What a campaign makes of a run that failed. A run fails under the campaign's load, beside
//! other runs; what it found is the target's own only if the case fails the same way again.
//! So the failing case is first replayed as it ran (after the run before it on its target,
//! beside the runs that overlapped it: [`super::company`]), then alone. One that fails again
//! alone is shrunk, and the shrunk case replayed to confirm it; when shrinking lost the
//! failure, the case as it ran is what is reported. One that failed again only as it ran, in a
//! frame the target sent, needs its company and is reported so; one that never failed again
//! is a flaky finding, reported with its replays and counted for nothing.

use super::case::FuzzRun;
use super::company::Companions;
use super::config::{FuzzConfig, FuzzError, Progress};
use super::failure::fails_again;
use super::failure::{failure_of, Failure};
use super::finding::Finding;
use super::replays::{self, Replay, ReplayKind};
use super::FuzzProfile;
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::suite::model::Case;
use crate::suite::runner::{self, RunConfig};
use proptest::strategy::Strategy;
use proptest::test_runner::TestRunner;

/// A failed run waiting to be confirmed.
pub(super) struct Candidate {
    pub run: u64,
    /// The generator as it was before the run's draw: it draws the run's tree again.
    pub draw: TestRunner,
    pub case: Case,
    pub result: CaseResult,
    pub failure: Failure,
    /// The run's [`super::case::Shape`].
    pub shape: Vec<&'static str>,
    /// The runs it ran among, as cases.
    pub company: Companions,
}

/// Replays `candidate` as it ran and alone on `found_on` (where its run failed), then shrinks
/// and confirms what fails again alone; see the module's words.
pub(super) async fn confirm(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    sequences: &super::aim::Sequences,
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
        company,
    } = candidate;
    // Whether a replay fails as `failure` did (the candidate's, then what pruning left).
    let fails_like = |failure: &Failure, again: &CaseResult| {
        fails_again(
            protocol,
            profile,
            again,
            found_on.judged,
            &cfg.known_failing,
            failure,
        )
    };
    let fails_the_same = |again: &CaseResult| fails_like(&failure, again);
    let mut replays: Vec<Replay> = Vec::new();
    // No confirming asked for (`confirm` 0): the failure stands as the campaign saw it.
    let mut failed_among_company = false;
    if cfg.confirm > 0 {
        if let Some((replay, again)) =
            replays::among_company(protocol, &case, &company, found_on, &fails_the_same).await
        {
            failed_among_company =
                replay.failed_the_same && replays::broken_in_a_frame(&again, &failure.rule);
            replays.push(replay);
        }
    }
    let mut failed_again = cfg.confirm == 0;
    while tally_alone(&replays).1 < cfg.confirm && !failed_again {
        let replay = replays::once_alone(
            ReplayKind::Alone,
            &case,
            protocol,
            found_on,
            &fails_the_same,
        )
        .await;
        failed_again = replay.failed_the_same;
        replays.push(replay);
    }
    let mut tree = sequences
        .of_run(run)
        .new_tree(&mut draw)
        .map_err(|e| FuzzError::Strategy(e.to_string()))?;
    let steps_before = tree.current().steps.len();
    // A target that stopped is not blamed on a mutation it did not need: each mutation the
    // probe still goes unanswered without is sent as its valid event, and the finding is
    // named by the run that is left (another mutation's rule, or the probe's on valid input).
    let pruned = match failed_again {
        true => {
            prune_mutations(
                protocol,
                profile,
                cfg,
                found_on,
                tree.current(),
                &case.id,
                &failure,
            )
            .await
        }
        false => None,
    };
    let (case, result, failure, shape, reverted) = match pruned {
        Some(pruned) => pruned,
        None => (case, result, failure, shape, Vec::new()),
    };
    let fails_the_same = |again: &CaseResult| fails_like(&failure, again);
    let Companions {
        who,
        before,
        beside,
    } = company;
    let finding = |case: Case,
                   result: CaseResult,
                   steps_after,
                   shape,
                   (reproduced, attempts),
                   replays,
                   needs_company| {
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
            replays,
            company: who.clone(),
            needs_company,
            found_after: std::time::Duration::ZERO,
        }
    };
    if !failed_again {
        let attempts = tally_alone(&replays).1;
        let needs_company =
            failed_among_company.then(|| before.into_iter().chain(beside).collect());
        return Ok(finding(
            case,
            result,
            steps_before,
            shape,
            (0, attempts),
            replays,
            needs_company,
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
        (case.clone(), result.clone(), shape.clone()),
        &reverted,
        progress,
    )
    .await;
    // `confirm` replays of a case alone.
    let confirming =
        |kind, case| replays::alone(kind, cfg.confirm, case, protocol, found_on, &fails_the_same);
    replays.extend(confirming(ReplayKind::Shrunk, &shrunk).await);
    let (reproduced, _) = replays::tally(&replays, ReplayKind::Shrunk);
    if reproduced > 0 || cfg.confirm == 0 {
        return Ok(finding(
            shrunk,
            shrunk_result,
            steps_after,
            shrunk_shape,
            (reproduced, cfg.confirm),
            replays,
            None,
        ));
    }
    // The shrunk case failed in none of its replays (shrinking kept something that fails only
    // now and then, or the failure is rare): the case as it ran is the finding, and its
    // replays alone, the one that failed among them, are its tries; a case that did fail
    // alone would otherwise be called flaky.
    replays.extend(confirming(ReplayKind::Alone, &case).await);
    let tries = tally_alone(&replays);
    Ok(finding(
        case,
        result,
        steps_before,
        shape,
        tries,
        replays,
        None,
    ))
}

/// What a finding whose probe went unanswered is left with once each mutation it does not
/// need is sent as its valid event: tried one at a time, each kept reverted when the run alone
/// still leaves a probe unanswered. Only for a profile that probes valid input too (without a
/// probe after valid events, a run without its mutation shows nothing). `None` when every
/// mutation was needed; else the case, result, failure and shape left, and the reverted
/// mutations' events.
async fn prune_mutations(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    cfg: &FuzzConfig,
    found_on: &RunConfig,
    run: FuzzRun,
    id: &str,
    failure: &Failure,
) -> Option<Pruned> {
    let probe = profile.probe();
    let mutators = profile.mutators();
    // The rules an unanswered probe is judged under (`case_for`'s probes).
    let probed = |rule: &str| {
        rule == probe.rule
            || rule == probe.answered_by
            || mutators.iter().any(|m| profile.probe_rule(m) == Some(rule))
    };
    if !profile.probes_valid_input() || !probed(&failure.rule) {
        return None;
    }
    let bases: Vec<serde_json::Value> = run.mutated_bases().into_iter().cloned().collect();
    let mut reverted: Vec<serde_json::Value> = Vec::new();
    let mut left = None;
    for base in bases {
        let mut trying = reverted.clone();
        trying.push(base);
        let trial = run.clone().reverting(&trying);
        let (case, shape) = super::case::shaped_case(protocol, profile, id, trial, found_on);
        let result = runner::run_case(protocol, &case, found_on).await;
        let failed = failure_of(
            protocol,
            profile,
            &result,
            found_on.judged,
            &cfg.known_failing,
        );
        if let Some(failed) = failed.filter(|f| probed(&f.rule)) {
            reverted = trying;
            left = Some((case, result, failed, shape));
        }
    }
    left.map(|(case, result, failed, shape)| (case, result, failed, shape, reverted))
}

/// What [`prune_mutations`] leaves.
type Pruned = (
    Case,
    CaseResult,
    Failure,
    super::case::Shape,
    Vec<serde_json::Value>,
);

/// How many replays of the case as it ran, alone, failed the same way, of how many.
fn tally_alone(replays: &[Replay]) -> (u32, u32) {
    replays::tally(replays, ReplayKind::Alone)
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
            replays: Vec::new(),
            company: Default::default(),
            needs_company: None,
            found_after: std::time::Duration::ZERO,
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
