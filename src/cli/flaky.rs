//! `--known-flaky`: a case listed there that fails is run again, up to `--flaky-retries` times;
//! what it did each time is reported on the case, and it never fails the run.

use std::collections::BTreeSet;
use wireprobe::protocol::Protocol;
use wireprobe::results::CaseResult;
use wireprobe::suite::runner::{run_case, RunConfig};
use wireprobe::suite::Suite;

/// Re-runs the failing known-flaky cases of `results` in place; the ids whose verdicts
/// flipped, each with what it did (`ID: fail → pass`).
pub async fn rerun(
    p: &dyn Protocol,
    suite: &Suite,
    cfg: &RunConfig,
    results: &mut [CaseResult],
    flaky: &BTreeSet<String>,
    retries: usize,
    strict: bool,
) -> Vec<String> {
    let mut flips = Vec::new();
    for result in results.iter_mut() {
        if !flaky.contains(&result.id) || !result.verdict.is_failing(strict) {
            continue;
        }
        // A run over several transports labels the id (`ID@ws`): rerun over that one.
        let (base, label) = match result.id.split_once('@') {
            Some((base, label)) => (base, label.parse().ok()),
            None => (result.id.as_str(), None),
        };
        let Some(case) = suite.cases.iter().find(|c| c.id == base) else {
            continue;
        };
        let over = RunConfig {
            transport: label.or(cfg.transport),
            ..cfg.clone()
        };
        let mut seen = vec![result.verdict.to_string()];
        for _ in 0..retries {
            let mut again = run_case(p, case, &over).await;
            seen.push(again.verdict.to_string());
            let passed = !again.verdict.is_failing(strict);
            if passed {
                again.id = result.id.clone();
                *result = again;
                break;
            }
        }
        let history = seen.join(" → ");
        result.message = format!("known flaky ({history}): {}", result.message);
        flips.push(format!("{}: {history}", result.id));
    }
    flips
}
