//! Live fuzzing: generated runs become suite cases ([`super::case`]), run against the target
//! over its real transport by the suite runner, several at once. A campaign goes on past what
//! it finds: each failure not already accounted for by a finding (the same rule, on input
//! holding that finding's shape) pauses the campaign while it is replayed alone, shrunk with
//! proptest's value trees and confirmed ([`super::confirm`]), and kept as a case that
//! `wireprobe run --suite` replays. It ends with its budget, or once `max_findings` findings
//! reproduced.

use super::aim::Sequences;
use super::case::{shaped_case, FuzzRun};
use super::company::{companions, RunLog};
use super::config::run_id;
pub use super::config::{FuzzConfig, FuzzError, Progress};
use super::confirm::{absorb, accounted_for, confirm, Candidate};
pub use super::failure::{failure_of, Failure};
pub use super::finding::Finding;
use super::{gen, FuzzProfile};
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::suite::model::{Action, Case};
use crate::suite::runner::{self, RunConfig};
use crate::suite::slots::{Slot, WorkSlots};
use crate::transcript::Direction;
use crate::verdict::Verdict;
use crate::workers::{self, Workers};
use futures_util::stream::{FuturesUnordered, StreamExt};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::collections::BTreeSet;

/// What a fuzz run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub runs: u64,
    /// Frames sent (every event, mutation and probe).
    pub events: u64,
    /// What the campaign found, each distinct (by rule and shape), in the order of their runs:
    /// those that [`Finding::reproduces`] and those that never did.
    pub findings: Vec<Finding>,
    /// Runs the harness could not complete (`error` verdicts).
    pub errors: u64,
    /// Why the last of them could not (with its run's case id).
    pub last_error: Option<String>,
    /// Runs skipped: the target never answered the probe a test mode owes (a Web UI that
    /// submits no view), so nothing after it could be judged.
    pub skipped: u64,
    /// Why the last of them was skipped (with its run's case id).
    pub last_skip: Option<String>,
    /// How often a run waiting on the target lent its place to one that could work
    /// (`--waiting`).
    pub lent: u64,
    /// Runs that broke only rules known to fail (`--known-failing`): no finding.
    pub known_only: u64,
    /// The rules of the judged side the campaign's runs exercised ([`CaseResult::exercised`]).
    pub exercised: BTreeSet<&'static str>,
    /// The rules no live campaign of its profile reaches, with why
    /// ([`FuzzProfile::out_of_reach`]).
    pub out_of_reach: &'static [(&'static str, &'static str)],
}

impl Outcome {
    /// How many of its findings reproduced (the ones `--max-findings` counts).
    pub fn reproduced(&self) -> usize {
        self.findings.iter().filter(|f| f.reproduces()).count()
    }
}

/// How long a run waits on the target before it lends its work slot to a run that can work:
/// well past a round trip on a loaded machine (a few milliseconds), well short of the waits
/// worth lending for (HAIP's 500 ms before REPLAY_REQUEST, silence windows of 50 ms and more).
const LEND_AFTER: std::time::Duration = std::time::Duration::from_millis(25);

/// Fuzzes `protocol`'s target (`run_cfg` says where it is, and how many runs go at once) until
/// the budget ends or `max_findings` findings reproduced.
pub async fn fuzz(
    protocol: &'static dyn Protocol,
    cfg: &FuzzConfig,
    run_cfg: &RunConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, FuzzError> {
    let profile = match run_cfg.judged {
        Direction::Server => protocol
            .fuzzing_as(run_cfg.role_of(protocol))
            .ok_or_else(|| FuzzError::NotFuzzable(protocol.id().to_owned()))?,
        Direction::Client => {
            let transport = run_cfg.transport_of(protocol);
            protocol.client_fuzzing(transport).ok_or_else(|| {
                let what = format!("{} as a client over {}", protocol.id(), transport.name());
                FuzzError::NotFuzzable(what)
            })?
        }
    };
    let working = run_cfg.parallel_jobs(protocol);
    // A target that is one conversation takes one run at a time, waiting or not.
    let waiting = match working < run_cfg.jobs.max(1) {
        true => 0,
        false => cfg.waiting,
    };
    // No more threads than runs under way at once: a thread more would only sit idle.
    let threads = match cfg.threads {
        0 => workers::per_core().min(working + waiting),
        n => n,
    };
    let workers = Workers::start(threads, cfg.local_target.as_ref()).await?;
    let found = campaign(
        protocol,
        profile,
        cfg,
        run_cfg,
        &workers,
        (working, waiting),
        progress,
    )
    .await;
    // Whatever ended the campaign, runs still under way end with their workers (a run's
    // process is killed as its task is dropped).
    workers.shutdown().await;
    found
}

/// The campaign itself, its runs on `workers`, `working` of them at once and up to `waiting`
/// more waiting on the target; each failure not yet accounted for confirmed as it comes.
async fn campaign(
    protocol: &'static dyn Protocol,
    profile: &'static dyn FuzzProfile,
    cfg: &FuzzConfig,
    run_cfg: &RunConfig,
    workers: &Workers,
    (working, waiting): (usize, usize),
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, FuzzError> {
    let sequences = Sequences::guided(profile, cfg.max_len, cfg.seed, cfg.guided);
    let mut runner = gen::runner(cfg.seed);
    let mut outcome = Outcome {
        out_of_reach: profile.out_of_reach(),
        ..Outcome::default()
    };
    let mut last_error = String::new();
    // Each run under way keeps the generator as it was before the run's draw, not the value tree
    // drawn: a tree holds a couple of hundred KB, which dozens of runs in flight made a cost
    // of every run's work (the cache), and only a failing run's tree is ever needed again.
    let mut log = RunLog::new(working + waiting);
    let mut running = FuturesUnordered::new();
    let mut next_run = 0u64;
    let known = std::sync::Arc::new(cfg.known_failing.clone());
    // `--duration` counts from here (the workers' targets have started), less the time spent
    // confirming findings: the budget is the runs'.
    let started = std::time::Instant::now();
    let mut confirming = std::time::Duration::ZERO;
    // Each worker's runs reach the target it started, if it started one.
    let shared_cfgs: std::sync::Arc<[_]> = (0..workers.len())
        .map(|i| {
            std::sync::Arc::new(RunConfig {
                step_lines: false,
                record_exercised: true,
                target_url: workers.target_url(i).map_or_else(
                    || run_cfg.target_url.clone(),
                    |url| RunConfig::scoped_per_case(protocol, url),
                ),
                ..run_cfg.clone()
            })
        })
        .collect();
    // With `--waiting`, a run starts only into a free work slot, taken here: a run coming back
    // from a wait then queues behind at most this one take, never behind every run not yet
    // started (whose whole work would count against its case's budget).
    let slots = (waiting > 0).then(|| WorkSlots::new(working, LEND_AFTER));
    let mut free: Option<Slot> = None;
    // Failed runs no finding accounts for yet, with the generator each was drawn from. While
    // there are any, no new run starts: the runs under way finish, then these are confirmed
    // (with their company, now every run beside them is over), lowest run first, so a seed
    // reports the same runs whatever finished first.
    let mut pending: Vec<(u64, TestRunner, Failed)> = Vec::new();
    // Workers whose runs reach one target: their runs kept each other company.
    let same_target = |a: usize, b: usize| shared_cfgs[a].target_url == shared_cfgs[b].target_url;
    loop {
        let counted = outcome.reproduced();
        let can_start = |pending: usize, running: usize, next_run: u64| {
            pending == 0
                && counted < cfg.max_findings
                && running < working + waiting
                && next_run < cfg.runs
                && cfg
                    .duration
                    .is_none_or(|d| started.elapsed().saturating_sub(confirming) < d)
        };
        while can_start(pending.len(), running.len(), next_run) {
            let slot = match &slots {
                None => None,
                Some(slots) => match free.take().or_else(|| slots.try_take()) {
                    Some(slot) => Some(slot),
                    None => break,
                },
            };
            let before = runner.clone();
            let run = next_run;
            let tree = sequences
                .of_run(run)
                .new_tree(&mut runner)
                .map_err(|e| FuzzError::Strategy(e.to_string()))?;
            next_run += 1;
            if cfg.shard.is_some_and(|s| !s.holds_run(run)) {
                free = slot;
                continue;
            }
            let id = run_id(protocol, run, cfg.seed);
            let sequence = tree.current();
            log.began(run, before);
            let job = Job {
                protocol,
                profile,
                configs: shared_cfgs.clone(),
                known: known.clone(),
            };
            running.push(job.run(workers, run, id, sequence, slot));
        }
        if running.is_empty() && !pending.is_empty() {
            let began = std::time::Instant::now();
            pending.sort_by_key(|(run, _, _)| *run);
            for (run, draw, failed) in std::mem::take(&mut pending) {
                let counted = outcome.reproduced();
                let (rule, shape) = (&failed.failure.rule, &failed.shape);
                if accounted_for(&mut outcome.findings, rule, shape) {
                    continue;
                }
                if counted >= cfg.max_findings {
                    break;
                }
                // Confirming goes to the target the run failed on: the copy its worker
                // started, if the workers started copies.
                let found_on = RunConfig {
                    target_url: shared_cfgs[failed.worker].target_url.clone(),
                    ..run_cfg.clone()
                };
                // The runs it ran among, drawn again (every run before it is over).
                let who = log.company(run, &same_target);
                let found_after = failed.ended_after;
                let candidate = Candidate {
                    run,
                    draw,
                    case: failed.case,
                    result: failed.result,
                    failure: failed.failure,
                    shape: failed.shape,
                    company: companions(
                        protocol, profile, &sequences, &log, who, cfg.seed, &found_on,
                    )?,
                };
                let mut finding = confirm(
                    protocol, profile, &sequences, cfg, &found_on, candidate, progress,
                )
                .await?;
                finding.found_after = found_after;
                absorb(&mut outcome.findings, finding);
            }
            outcome.findings.sort_by_key(|f| f.run);
            confirming += began.elapsed();
            continue;
        }
        let ran = match &slots {
            Some(slots) if can_start(pending.len(), running.len(), next_run) => {
                tokio::select! {
                    biased;
                    ran = running.next() => ran,
                    slot = slots.take() => {
                        free = Some(slot);
                        continue;
                    }
                }
            }
            _ => {
                // No run starts any more: a slot kept for one goes back to the runs.
                free = None;
                running.next().await
            }
        };
        let Some(ran) = ran else {
            break;
        };
        let run = ran.run;
        outcome.runs += 1;
        outcome.events += ran.sends as u64;
        outcome.exercised.extend(ran.exercised);
        if ran.verdict == Verdict::Error {
            outcome.errors += 1;
            last_error = format!("{}: {}", ran.id, ran.message);
        }
        if ran.verdict == Verdict::Skip {
            outcome.skipped += 1;
            outcome.last_skip = Some(format!("{}: {}", ran.id, ran.message));
        }
        if ran.verdict.is_broken() && ran.failed.is_none() {
            outcome.known_only += 1;
        }
        progress(Progress::Run {
            run,
            failed: ran.failed.is_some(),
            events: ran.sends,
            carried: ran.carried,
        });
        log.ended(run, ran.worker);
        let Some(mut failed) = ran.failed else {
            continue;
        };
        failed.ended_after = started.elapsed().saturating_sub(confirming);
        if accounted_for(&mut outcome.findings, &failed.failure.rule, &failed.shape) {
            continue;
        }
        let Some(draw) = log.draw(run) else {
            return Err(FuzzError::Strategy(format!("run {run} lost its sequence")));
        };
        pending.push((run, draw, failed));
    }
    drop(running);
    outcome.lent = slots.as_ref().map_or(0, WorkSlots::lent);
    if outcome.errors > 0 {
        outcome.last_error = Some(last_error.clone());
    }
    if outcome.findings.is_empty() {
        if outcome.runs > 0 && outcome.errors == outcome.runs {
            return Err(FuzzError::Unusable(last_error));
        }
        // Not one run judged: saying "nothing found" would pass a target never tested.
        if outcome.runs > 0 && outcome.errors + outcome.skipped == outcome.runs {
            let why = outcome.last_skip.clone().unwrap_or(last_error);
            return Err(FuzzError::Unusable(format!(
                "no run could be judged: {} skipped, {} could not complete (the last skip: {why})",
                outcome.skipped, outcome.errors
            )));
        }
    }
    Ok(outcome)
}

/// What one campaign run needs besides its sequence.
struct Job {
    protocol: &'static dyn Protocol,
    profile: &'static dyn FuzzProfile,
    /// The run's configuration on each worker (where that worker's runs reach the target).
    configs: std::sync::Arc<[std::sync::Arc<RunConfig>]>,
    /// Rules the target is known to break ([`FuzzConfig::known_failing`]).
    known: std::sync::Arc<BTreeSet<String>>,
}

/// What the campaign keeps of a run: its verdict and message, and all of it when it failed.
struct Ran {
    run: u64,
    /// The worker it ran on (whose target it reached); none when its task failed.
    worker: Option<usize>,
    id: String,
    sends: usize,
    carried: usize,
    verdict: Verdict,
    message: String,
    /// The rules it exercised ([`CaseResult::exercised`]).
    exercised: Vec<&'static str>,
    failed: Option<Failed>,
}

/// A run that failed: its case, its result, the failure, and the worker it ran on.
struct Failed {
    case: Case,
    result: CaseResult,
    failure: Failure,
    /// The run's [`super::case::Shape`].
    shape: Vec<&'static str>,
    worker: usize,
    /// How far into the budget the run ended.
    ended_after: std::time::Duration,
}

impl Job {
    /// Builds the run's case, runs it and judges it in a task of its own on one of the
    /// workers: the runs use every core, and a panic in the harness is that run's `error`. A
    /// run that found nothing is dropped in its task, by the thread that made it: cases built
    /// on the engine's thread and results dropped there left most memory to be freed by
    /// another thread than made it (the allocator's allocate and free paths were 14% of
    /// fuzzing's CPU at 32 jobs, 31% at 64).
    fn run(
        self,
        workers: &Workers,
        run: u64,
        id: String,
        sequence: FuzzRun,
        slot: Option<Slot>,
    ) -> impl std::future::Future<Output = Ran> {
        let task_id = id.clone();
        let task = workers.spawn(move |worker| async move {
            let Job {
                protocol,
                profile,
                configs,
                known,
            } = self;
            let cfg = configs[worker].clone();
            let (case, shape) = shaped_case(protocol, profile, &task_id, sequence, &cfg);
            let mut result = runner::run_case_holding(protocol, &case, &cfg, slot).await;
            let exercised = std::mem::take(&mut result.exercised)
                .iter()
                .filter_map(|rule| crate::rules::find(protocol.rules(), rule).map(|r| r.id))
                .collect();
            let failure = failure_of(protocol, profile, &result, cfg.judged, &known);
            Ran {
                run,
                worker: Some(worker),
                sends: sends(&case),
                carried: carried(&result),
                verdict: result.verdict,
                message: result.message.clone(),
                exercised,
                failed: failure.map(|failure| Failed {
                    case,
                    result,
                    failure,
                    shape,
                    worker,
                    ended_after: std::time::Duration::ZERO,
                }),
                id: task_id,
            }
        });
        async move {
            match task.await {
                Ok(ran) => ran,
                Err(e) => Ran {
                    run,
                    worker: None,
                    id,
                    sends: 0,
                    carried: 0,
                    verdict: Verdict::Error,
                    message: runner::task_failed(&e),
                    exercised: Vec::new(),
                    failed: None,
                },
            }
        }
    }
}

/// How many messages a run's transcript shows on the wire, either way.
fn carried(result: &CaseResult) -> usize {
    result
        .transcript
        .iter()
        .filter(|e| e.record.was_sent())
        .count()
}

/// How many frames a case sends.
pub fn sends(case: &Case) -> usize {
    case.steps
        .iter()
        .filter(|s| matches!(s.action, Action::Send { .. } | Action::SendRaw { .. }))
        .count()
}
