//! Runs a suite against a live target: filters, capability gates, parallel cases, passive
//! checks of everything the target sent, and one verdict per case.

pub use super::config::{Credentials, RunConfig, SharedListener, ToolOffer, CASE_SCOPE};
use super::model::{Case, Requirement, Suite};
use super::outcome::Outcome;
pub use super::outcome::RunError;
use super::slots::Slot;
use super::steps::CaseRun;
use super::verdicts::{case_level, judge_case};
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::verdict::Verdict;
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Runs every case of `suite` that `cfg.filter` selects (in parallel up to `cfg.jobs`);
/// results come in suite order, one per selected case. `on_result` sees each result as it
/// completes. A run over several transports runs the suite over each in turn, and each
/// case's id says which (`ID@sse`); a case written for one transport runs only over it.
pub async fn run_suite(
    protocol: &'static dyn Protocol,
    suite: &Suite,
    cfg: &RunConfig,
    on_result: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    let kinds = cfg.transports(protocol);
    let labelled = kinds.len() > 1;
    let failures = AtomicUsize::new(0);
    let mut all = Vec::new();
    for kind in kinds {
        let over = RunConfig {
            transport: Some(kind),
            ..cfg.clone()
        };
        let selected = suite
            .cases
            .iter()
            .filter(|c| cfg.selects(protocol, c, kind));
        let label = labelled.then(|| kind.name());
        all.extend(run_cases(protocol, selected, &over, label, &failures, on_result).await?);
    }
    match super::probe::never_spoke(protocol, &all, cfg.judged) {
        Some(why) => Err(RunError::NeverSpoke { why, results: all }),
        None => Ok(all),
    }
}

/// Runs `cases` over one transport, in parallel up to [`RunConfig::parallel_jobs`]; with a
/// `label`, each result's id says which transport (`ID@label`).
async fn run_cases<'a>(
    protocol: &'static dyn Protocol,
    cases: impl Iterator<Item = &'a Case> + Clone,
    cfg: &RunConfig,
    label: Option<&str>,
    failures: &AtomicUsize,
    on_result: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    // A served client is started per case: there is no target to reach before the cases.
    if cases.clone().next().is_some() && cfg.judged == crate::transcript::Direction::Server {
        super::probe::probe(protocol, cfg).await?;
    }
    let shared = std::sync::Arc::new(cfg.clone());
    let mut results: Vec<(usize, CaseResult)> = futures_util::stream::iter(cases.enumerate())
        .map(|(i, case)| {
            let shared = shared.clone();
            async move {
                let stopped = cfg
                    .max_failures
                    .filter(|max| failures.load(Ordering::Relaxed) >= *max);
                let mut result = match stopped {
                    Some(max) => not_run(
                        protocol,
                        case,
                        format!("not run: --max-failures {max} reached"),
                    ),
                    None => spawned_case(protocol, case, shared).await,
                };
                if matches!(result.verdict, Verdict::Fail | Verdict::Error) {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
                if let Some(label) = label {
                    result.id = format!("{}@{label}", result.id);
                }
                on_result(&result);
                (i, result)
            }
        })
        .buffer_unordered(cfg.parallel_jobs(protocol))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

/// Runs one case as a task of its own: the cases of a run use every worker thread, and each is
/// woken by its own timers and sockets rather than through the task that collects the results.
/// A panic in the harness is the case's `error`, never the run's end.
pub async fn spawned_case(
    protocol: &'static dyn Protocol,
    case: &Case,
    cfg: std::sync::Arc<RunConfig>,
) -> CaseResult {
    let owned = case.clone();
    match tokio::spawn(async move { run_case(protocol, &owned, &cfg).await }).await {
        Ok(result) => result,
        Err(e) => {
            let mut result = not_run(protocol, case, String::new());
            result.verdict = Verdict::Error;
            result.message = task_failed(&e);
            result
        }
    }
}

/// The message of a case whose task panicked or was cancelled.
pub fn task_failed(e: &tokio::task::JoinError) -> String {
    format!("the case's task failed (a wireprobe bug: please report it): {e}")
}

/// A case that did not run, skipped for `why`.
fn not_run(protocol: &dyn Protocol, case: &Case, why: String) -> CaseResult {
    CaseResult {
        message: why,
        steps: step_lines(case),
        ..unjudged(protocol, case)
    }
}

/// Each step of `case` as its report line, its fallback's after.
pub fn step_lines(case: &Case) -> Vec<String> {
    case.steps
        .iter()
        .map(super::model::Step::describe)
        .chain(
            case.fallback
                .iter()
                .map(|s| format!("fallback: {}", s.describe())),
        )
        .collect()
}

/// `case`'s result before it runs: skipped, with no step lines yet.
fn unjudged(protocol: &dyn Protocol, case: &Case) -> CaseResult {
    CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        rules: case.rules.clone(),
        level: case_level(protocol, case),
        verdict: Verdict::Skip,
        message: String::new(),
        duration_ms: 0,
        judged: BTreeMap::new(),
        violations: Vec::new(),
        transcript: Vec::new(),
        steps: Vec::new(),
        stopped_at: None,
        exercised: Vec::new(),
    }
}

/// Runs one case to a verdict (never panics on target input; every wait is bounded).
pub async fn run_case(protocol: &dyn Protocol, case: &Case, cfg: &RunConfig) -> CaseResult {
    run_case_holding(protocol, case, cfg, None).await
}

/// [`run_case`] for a run that holds one of a campaign's work slots, lent while it waits on
/// the target and given back when its result is judged.
pub async fn run_case_holding(
    protocol: &dyn Protocol,
    case: &Case,
    cfg: &RunConfig,
    slot: Option<Slot>,
) -> CaseResult {
    let started = Instant::now();
    if !cfg.filter.selects_case(case) {
        return not_run(
            protocol,
            case,
            "filtered out by --case/--skip/--rule".into(),
        );
    }
    let mut result = unjudged(protocol, case);
    if cfg.step_lines {
        result.steps = step_lines(case);
    }
    if let Some(why) = unmet_run_requirement(case, cfg) {
        let judged = judge_case(protocol, case, Err(Outcome::Skip(why)), &[], cfg.judged);
        result.verdict = judged.verdict;
        result.message = judged.message;
        result.judged = judged.rules;
        return result;
    }

    let mut run = CaseRun::new(protocol, cfg, case);
    run.link.slot = slot;
    // Every step is bounded on its own; the watchdog is the backstop that turns a harness bug
    // into an `error` verdict instead of a hung run.
    let budget = case_budget(case, cfg);
    let port_waits = run.port_waits.clone();
    let outcome = match watchdog(budget, &port_waits, run.execute()).await {
        Some(outcome) => outcome,
        None => Err(Outcome::Error(format!(
            "the case overran its {} ms budget (a wireprobe bug: please report it with this transcript)",
            budget.as_millis()
        ))),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), run.finish()).await;
    result.stopped_at = run.at_step.filter(|_| outcome.is_err());
    // Judging is the run's work too: its slot goes back once that is done.
    let slot = run.link.slot.take();
    let steps_exercised = std::mem::take(&mut run.exercised);
    let transcript = run.into_transcript();
    let judged = judge_case(protocol, case, outcome, &transcript, cfg.judged);
    drop(slot);
    result.verdict = judged.verdict;
    result.message = judged.message;
    result.judged = judged.rules;
    result.violations = judged.violations;
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.transcript = transcript;
    if cfg.record_exercised {
        result.exercised = judged.exercised.into_iter().map(Into::into).collect();
        for rule in steps_exercised {
            if !result.exercised.contains(&rule.into()) {
                result.exercised.push(rule.into());
            }
        }
    }
    result
}

/// `work`, unless it outlasts `budget` and the milliseconds `port_waits` counts (the case's
/// connects waiting for a local port to connect from: this machine's time, not the target's).
async fn watchdog<T>(
    budget: Duration,
    port_waits: &AtomicU64,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    let mut deadline = tokio::time::Instant::now() + budget;
    let mut counted = 0;
    let mut work = std::pin::pin!(work);
    loop {
        if let Ok(done) = tokio::time::timeout_at(deadline, &mut work).await {
            return Some(done);
        }
        let waited = port_waits.load(Ordering::Relaxed);
        if waited <= counted {
            return None;
        }
        deadline += Duration::from_millis(waited - counted);
        counted = waited;
    }
}

/// Generous upper bound on a case's run time: every step's own limit, plus slack.
fn case_budget(case: &Case, cfg: &RunConfig) -> Duration {
    use super::vocabulary::StepKind as _;
    let step_ms = case
        .timeout_ms
        .unwrap_or(cfg.step_timeout.as_millis() as u64);
    let steps: u64 = case
        .steps
        .iter()
        .chain(&case.fallback)
        .map(|s| s.action.budget_ms(step_ms))
        .sum();
    Duration::from_millis(step_ms * 3 + steps * 2 + 5_000)
}

fn unmet_run_requirement(case: &Case, cfg: &RunConfig) -> Option<String> {
    case.requires.iter().find_map(|r| match r {
        Requirement::Credentials if !cfg.credentials.any() => Some(
            match cfg.judged {
                crate::transcript::Direction::Client => {
                    "needs --token or --jwt-secret: the token the client is handed as {token}"
                }
                crate::transcript::Direction::Server => {
                    "needs --token or --jwt-secret: auth cases run only against a target that requires tokens"
                }
            }
            .into(),
        ),
        Requirement::JwtSecret if cfg.credentials.jwt_secret.is_none() => {
            Some("needs --jwt-secret to mint tokens".into())
        }
        Requirement::Transport(kind) if cfg.transport.is_some_and(|t| t != *kind) => {
            Some(format!("runs over the {} transport only", kind.name()))
        }
        Requirement::Role(role) if cfg.role.as_deref().is_some_and(|r| r != role) => {
            Some(format!("runs only against a target playing the {role} role"))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The watchdog lets a case run past its budget by as long as its connects waited for a
    /// local port, and no longer.
    #[tokio::test]
    async fn the_watchdog_adds_the_wait_for_a_port_and_nothing_else() {
        let budget = Duration::from_millis(100);
        let slow = || tokio::time::sleep(Duration::from_millis(300));
        let none = AtomicU64::new(0);
        assert!(watchdog(budget, &none, slow()).await.is_none());

        let waits = Arc::new(AtomicU64::new(0));
        let told = waits.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            told.fetch_add(250, Ordering::Relaxed);
        });
        assert!(watchdog(budget, &waits, slow()).await.is_some());

        let short = AtomicU64::new(50);
        assert!(watchdog(budget, &short, slow()).await.is_none());
    }
}
