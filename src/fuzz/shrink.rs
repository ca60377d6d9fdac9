//! Shrinking a live fuzz finding: proptest's value tree made simpler while each smaller
//! sequence, run against the target again, still fails the same rule.

use super::case::{shaped_case, FuzzRun, Shape};
use super::config::{FuzzConfig, Progress};
use super::failure::fails_again;
use super::failure::Failure;
use super::FuzzProfile;
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::suite::model::Case;
use crate::suite::runner::{self, RunConfig};
use proptest::strategy::ValueTree;

/// Shrinks a failing sequence while it fails the same rule; returns the smallest case found,
/// its result, its number of generated steps and its [`Shape`] (`found`: the failing case, its
/// result and shape, what is returned when nothing smaller fails the same). Each run tried
/// is [`FuzzRun::reverting`] `reverted` (mutations the finding was shown not to need).
#[allow(clippy::too_many_arguments)]
pub(super) async fn shrink(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    cfg: &FuzzConfig,
    run_cfg: &RunConfig,
    tree: &mut dyn ValueTree<Value = FuzzRun>,
    id: &str,
    failure: &Failure,
    (case, result, shape): (Case, CaseResult, Shape),
    reverted: &[serde_json::Value],
    progress: &mut dyn FnMut(Progress),
) -> (Case, CaseResult, usize, Shape) {
    let current = |tree: &dyn ValueTree<Value = FuzzRun>| tree.current().reverting(reverted);
    let mut best = (case, result, current(&*tree).steps.len(), shape);
    let mut budget = cfg.shrink_budget;
    let started = std::time::Instant::now();
    if budget == 0 || cfg.shrink_time.is_zero() || !tree.simplify() {
        return best;
    }
    while budget > 0 && started.elapsed() < cfg.shrink_time {
        budget -= 1;
        let run = current(&*tree);
        let steps = run.steps.len();
        let (candidate, shape) = shaped_case(protocol, profile, id, run, run_cfg);
        let result = runner::run_case(protocol, &candidate, run_cfg).await;
        let same = fails_again(
            protocol,
            profile,
            &result,
            run_cfg.judged,
            &cfg.known_failing,
            failure,
        );
        progress(Progress::Shrink {
            steps,
            still_fails: same,
        });
        let more = if same {
            // Simpler to proptest is not always shorter (HAIP draws actions that expand to one
            // or more messages, and a simpler action may expand to more): a finding is only
            // replaced by one of no more steps, so shrinking never lengthens what is reported.
            if steps <= best.2 {
                best = (candidate, result, steps, shape);
            }
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !more {
            break;
        }
    }
    best
}
