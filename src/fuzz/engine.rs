//! Live fuzzing: generated sequences of valid and mutated events become suite cases, run
//! against the target over its real transport by the suite runner. The oracles are steps
//! (the error the spec requires, a liveness probe after every adversarial input) plus the
//! protocol's checker judging every frame the target sends. A failure is shrunk with
//! proptest's value trees, re-run to see whether it reproduces, and kept as a case that
//! `wireprobe run --suite` replays.

use super::{gen, Answer, FuzzProfile, Input, Opening, Oracle, Probe, Rng};
use crate::matcher;
use crate::protocol::{Protocol, TransportKind};
use crate::rules;
use crate::suite::model::{
    Action, Case, ConnectSpec, HandshakeMode, RawFrame, Step, Times, Unanswered,
};
use crate::suite::runner::{self, CaseResult, Credentials, RunConfig};
use crate::transcript::Direction;
use crate::verdict::Verdict;
use futures_util::stream::{FuturesUnordered, StreamExt};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::Value;

/// How long an answer the spec leaves open may take to arrive before it is forgotten.
const SETTLE_MS: u64 = 200;

/// One generated step: a valid event, or a mutation of one.
#[derive(Debug, Clone, PartialEq)]
pub enum FuzzStep {
    Valid(Value),
    /// `mutator` (an index into the profile's list) applied to `base` with `seed`.
    Mutated {
        base: Value,
        mutator: usize,
        seed: u64,
    },
}

/// One generated run: how it opens, then its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzRun {
    pub opening: Opening,
    pub steps: Vec<FuzzStep>,
}

/// Runs of up to `max_len` steps, about one in four mutated. Shrinking removes steps, turns
/// mutated steps back into valid ones and the opening into the session's own handshake.
pub fn sequences(profile: &dyn FuzzProfile, max_len: usize) -> BoxedStrategy<FuzzRun> {
    let mutators = profile.mutators().len().max(1);
    let max_len = max_len.max(1);
    (
        profile.openings(),
        profile.valid_sequence(1..=max_len),
        proptest::collection::vec((0u8..4, 0..mutators, any::<u64>()), max_len),
    )
        .prop_map(|(opening, events, choices)| FuzzRun {
            opening,
            steps: events
                .into_iter()
                .zip(choices)
                .map(|(event, (roll, mutator, seed))| match roll {
                    3 => FuzzStep::Mutated {
                        base: event,
                        mutator,
                        seed,
                    },
                    _ => FuzzStep::Valid(event),
                })
                .collect(),
        })
        .boxed()
}

/// The suite case that plays `run` against a target, with the oracles as steps. Every rule
/// of the protocol is the case's, so the checker judges everything the target sends.
pub fn case_for(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    id: &str,
    run: &FuzzRun,
    credentials: &Credentials,
) -> Case {
    let mut out = Vec::new();
    let step = |action: Action, rule: Option<&str>| Step {
        action,
        rule: rule.map(str::to_owned),
    };
    let (handshake, handshake_with) = match &run.opening {
        Opening::Handshake(with) => (HandshakeMode::Full, with.clone()),
        Opening::Unauthorized {
            token,
            needs_secret,
            rule,
        } => {
            if credentials.any() && (!needs_secret || credentials.jwt_secret.is_some()) {
                out.push(step(
                    Action::Reconnect {
                        handshake: HandshakeMode::SendOnly,
                        handshake_with: None,
                        new_session: true,
                        token: Some(*token),
                    },
                    None,
                ));
                out.push(step(Action::ExpectRefused { within_ms: None }, Some(rule)));
                out.push(step(restart(protocol), None));
            }
            (HandshakeMode::Full, None)
        }
        Opening::Refused {
            with,
            code,
            closes,
            rule,
        } => {
            out.push(step(
                Action::ExpectError {
                    code: code.map(str::to_owned),
                    code_rule: None,
                    unless: None,
                    within_ms: None,
                },
                Some(rule),
            ));
            if *closes {
                out.push(step(
                    Action::ExpectClose {
                        code: None,
                        within_ms: None,
                    },
                    Some(rule),
                ));
            }
            out.push(step(restart(protocol), None));
            (HandshakeMode::SendOnly, Some(with.clone()))
        }
    };
    let probe = profile.probe();
    // A probe answered by silence establishes nothing before the sequence.
    if probe.answer.is_some() {
        out.extend(probe_steps(&probe, probe.answered_by));
    }
    // A valid event the spec lets the target answer with an error was sent since the last
    // time the connection settled.
    let mut unsettled = false;
    for s in &run.steps {
        let (original, input, mutator) = match s {
            FuzzStep::Valid(e) => (e, Input::Event(e.clone()), None),
            FuzzStep::Mutated {
                base,
                mutator,
                seed,
            } => match mutation(profile, base, *mutator, *seed) {
                Some((m, input)) => (base, input, Some(m)),
                None => (base, Input::Event(base.clone()), None),
            },
        };
        let Some(action) = send_action(profile, original, input.clone()) else {
            continue;
        };
        let Some(m) = mutator else {
            unsettled |= profile.answer_open(original);
            out.push(step(action, None));
            continue;
        };
        // Only what this input provokes counts: an error owed to an earlier valid event (or a
        // late one for an orphaned message) must not pass for its answer, nor for a broken probe.
        if std::mem::take(&mut unsettled) || m.answer == Answer::Sequence {
            let tag = out.len() as u64;
            out.extend(settle(profile, tag));
        }
        out.push(step(action, None));
        match m.answer {
            Answer::Error(code) => out.push(step(
                Action::ExpectError {
                    code: code.map(str::to_owned),
                    code_rule: profile.code_rule(m).map(str::to_owned),
                    unless: None,
                    within_ms: None,
                },
                Some(profile.answer_rule(m)),
            )),
            Answer::Accept | Answer::Survive => {}
            Answer::Unspecified => {
                // Whatever the target did, go on from a fresh connection.
                out.push(step(Action::Wait { ms: 100 }, None));
                out.push(step(restart(protocol), None));
                continue;
            }
            Answer::Sequence => {
                let oracles = profile.oracles(m, &input);
                let restarts = oracles.contains(&Oracle::Restart);
                out.extend(oracles.into_iter().map(|o| oracle_step(protocol, o)));
                if restarts {
                    continue;
                }
            }
        }
        // Still serving? Answers to the bad input are forgotten first, so they cannot pass for
        // the probe's.
        out.push(step(Action::Discard, None));
        out.extend(probe_steps(&probe, probe.rule));
    }
    Case {
        id: id.to_owned(),
        title: "a generated sequence of valid and mutated events".into(),
        rules: protocol.rules().iter().map(|r| r.id.to_owned()).collect(),
        requires: Vec::new(),
        handshake,
        handshake_with,
        connect: ConnectSpec::default(),
        timeout_ms: None,
        steps: out,
        origin: "fuzz".into(),
    }
}

/// The mutator at `index` applied to `base`, or when it does not apply to that event, the next
/// one that does (so a mutation step is rarely wasted on a mutator for another event type).
fn mutation<'p>(
    profile: &'p dyn FuzzProfile,
    base: &Value,
    index: usize,
    seed: u64,
) -> Option<(&'p super::Mutator, Input)> {
    let all = profile.mutators();
    (0..all.len()).find_map(|i| {
        let m = &all[(index + i) % all.len()];
        (m.apply)(base, &mut Rng::new(seed)).map(|input| (m, input))
    })
}

/// Steps after which every answer owed to earlier input has arrived and been forgotten: the
/// profile's sync message and its own answer, or a short wait.
fn settle(profile: &dyn FuzzProfile, tag: u64) -> Vec<Step> {
    let mut out = match profile.sync(tag) {
        Some(sync) => vec![
            Step {
                action: Action::Send {
                    event: sync.send,
                    times: Times::Fixed(1),
                },
                rule: None,
            },
            Step {
                action: Action::Expect {
                    patterns: vec![sync.answer],
                    count: 1,
                    within_ms: None,
                    unanswered: Unanswered::Fails,
                },
                rule: Some(sync.rule.to_owned()),
            },
        ],
        None => vec![Step {
            action: Action::Wait { ms: SETTLE_MS },
            rule: None,
        }],
    };
    out.push(Step {
        action: Action::Discard,
        rule: None,
    });
    out
}

/// How the fuzzer goes on from a fresh start: a new process, or a new connection and session
/// (the target may have forgotten the old one, and a refused resume is not what a run is about).
fn restart(protocol: &dyn Protocol) -> Action {
    if protocol.transport() == TransportKind::Stdio {
        Action::Restart
    } else {
        Action::Reconnect {
            handshake: HandshakeMode::Full,
            handshake_with: None,
            new_session: true,
            token: None,
        }
    }
}

/// The step that checks an [`Oracle`].
fn oracle_step(protocol: &dyn Protocol, oracle: Oracle) -> Step {
    let (action, rule) = match oracle {
        Oracle::Silence { matching, ms, rule } => (
            Action::ExpectSilence {
                ms,
                matching,
                unanswered: Unanswered::Fails,
            },
            Some(rule),
        ),
        Oracle::Reply {
            patterns,
            rule,
            scenario,
        } => (
            Action::Expect {
                patterns,
                count: 1,
                within_ms: None,
                unanswered: if scenario {
                    Unanswered::ScenarioNotReached
                } else {
                    Unanswered::Fails
                },
            },
            Some(rule),
        ),
        Oracle::Send(event) => (
            Action::Send {
                event,
                times: Times::Fixed(1),
            },
            None,
        ),
        Oracle::Restart => (restart(protocol), None),
        Oracle::Resume(with) => (
            Action::Reconnect {
                handshake: HandshakeMode::Full,
                handshake_with: Some(with),
                new_session: false,
                token: None,
            },
            None,
        ),
    };
    Step {
        action,
        rule: rule.map(str::to_owned),
    }
}

/// The probe's messages, then its answer (or silence) judged under `rule`.
fn probe_steps(probe: &Probe, rule: &str) -> Vec<Step> {
    let mut out: Vec<Step> = probe
        .sends
        .iter()
        .map(|event| Step {
            action: Action::Send {
                event: event.clone(),
                times: Times::Fixed(1),
            },
            rule: None,
        })
        .collect();
    out.push(Step {
        action: match &probe.answer {
            Some(answer) => Action::Expect {
                patterns: vec![answer.clone()],
                count: 1,
                within_ms: None,
                unanswered: Unanswered::Fails,
            },
            None => Action::ExpectSilence {
                ms: 300,
                matching: vec![probe.error.clone()],
                unanswered: Unanswered::Fails,
            },
        },
        rule: Some(rule.to_owned()),
    });
    out
}

/// How an input goes out: an event through the session, anything else as exact bytes.
fn send_action(profile: &dyn FuzzProfile, original: &Value, input: Input) -> Option<Action> {
    let raw = |bytes: Vec<u8>| Action::SendRaw {
        frame: RawFrame::TextBytes(profile.raw_frame(&bytes)),
        times: Times::Fixed(1),
    };
    Some(match input {
        Input::Event(event @ Value::Object(_)) => Action::Send {
            event: matcher::literal(&profile.live_event(original, &event)?),
            times: Times::Fixed(1),
        },
        // A session encodes objects only: other JSON goes out as its text.
        Input::Event(other) => raw(other.to_string().into_bytes()),
        Input::Raw(bytes) => raw(bytes),
    })
}

/// A rule broken by a run, with the runner's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub rule: String,
    pub verdict: Verdict,
    pub message: String,
}

/// The failure a case result shows, if any (`fail`, or `warn` for a should rule). A target
/// that ended where the profile's probe says it must stay breaks that rule, whatever step
/// noticed it.
pub fn failure_of(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    result: &CaseResult,
) -> Option<Failure> {
    if !matches!(result.verdict, Verdict::Fail | Verdict::Warn) {
        return None;
    }
    if let Some(rule) = profile.probe().ended.filter(|_| target_ended(result)) {
        return Some(Failure {
            rule: rule.to_owned(),
            verdict: Verdict::Fail,
            message: format!(
                "{rule}: the target ended after an adversarial input ({})",
                result.message
            ),
        });
    }
    // The first rule named that is more than a note: an `info` finding rides along in the
    // message but never fails a run.
    let named = result
        .message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|w| rules::find(protocol.rules(), w).is_some_and(|r| r.level > rules::Level::May));
    Some(Failure {
        rule: named.unwrap_or("?").to_owned(),
        verdict: result.verdict,
        message: result.message.clone(),
    })
}

/// True when the target ended a connection (or its process exited) that we were not closing.
fn target_ended(result: &CaseResult) -> bool {
    let mut closing = false;
    for entry in &result.transcript {
        let Some(frame) = entry.frame.as_object() else {
            continue;
        };
        match entry.from {
            Direction::Client if frame.contains_key("$close") => closing = true,
            Direction::Client if frame.contains_key("$connect") => closing = false,
            Direction::Server
                if !closing && (frame.contains_key("$close") || frame.contains_key("$error")) =>
            {
                return true
            }
            _ => {}
        }
    }
    false
}

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
    /// How often the shrunk case failed the same way when re-run.
    pub reproduced: u32,
    pub attempts: u32,
}

impl Finding {
    /// True when the shrunk case did not fail every time it was re-run.
    pub fn is_flaky(&self) -> bool {
        self.reproduced < self.attempts
    }
}

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
    /// How often a shrunk failure is re-run to confirm it.
    pub confirm: u32,
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
}

/// What a fuzz run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub runs: u64,
    /// Frames sent (every event, mutation and probe).
    pub events: u64,
    pub finding: Option<Finding>,
    /// Runs the harness could not complete (`error` verdicts).
    pub errors: u64,
    /// Why the last of them could not (with its run's case id).
    pub last_error: Option<String>,
}

/// Fuzzes `protocol`'s target (`run_cfg` says where it is, and how many runs go at once) until
/// a failure or the budget ends.
pub async fn fuzz(
    protocol: &'static dyn Protocol,
    cfg: &FuzzConfig,
    run_cfg: &RunConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, FuzzError> {
    let profile = protocol
        .fuzzing()
        .ok_or_else(|| FuzzError::NotFuzzable(protocol.id().to_owned()))?;
    let strategy = sequences(profile, cfg.max_len);
    let mut runner = gen::runner(cfg.seed);
    let started = std::time::Instant::now();
    let mut outcome = Outcome::default();
    let mut last_error = String::new();
    let mut trees = std::collections::HashMap::new();
    let mut running = FuturesUnordered::new();
    let mut next_run = 0u64;
    let shared_cfg = std::sync::Arc::new(run_cfg.clone());
    // The lowest-numbered failing run, once one fails: no new runs start, and the ones already
    // running with lower numbers finish first, so a seed always reports the same run.
    let mut first_failure: Option<(u64, Case, CaseResult, Failure)> = None;
    loop {
        while first_failure.is_none()
            && running.len() < run_cfg.jobs.max(1)
            && next_run < cfg.runs
            && cfg.duration.is_none_or(|d| started.elapsed() < d)
        {
            let tree = strategy
                .new_tree(&mut runner)
                .map_err(|e| FuzzError::Strategy(e.to_string()))?;
            let run = next_run;
            next_run += 1;
            let id = format!("fuzz.{}.{}.s{}", protocol.id(), run, cfg.seed);
            let case = case_for(
                protocol,
                profile,
                &id,
                &tree.current(),
                &run_cfg.credentials,
            );
            trees.insert(run, tree);
            // Each run is a task of its own, so the runner and checker use every core.
            let shared = shared_cfg.clone();
            let handle = tokio::spawn(async move {
                let result = runner::run_case(protocol, &case, &shared).await;
                (case, result)
            });
            running.push(async move { (run, handle.await) });
        }
        let Some((run, joined)) = running.next().await else {
            break;
        };
        let (case, result) = match joined {
            Ok(done) => done,
            Err(e) => {
                // A panic in the harness is a wireprobe bug: count it, keep going.
                outcome.runs += 1;
                outcome.errors += 1;
                last_error = format!("run {run} panicked: {e}");
                trees.remove(&run);
                continue;
            }
        };
        outcome.runs += 1;
        outcome.events += sends(&case) as u64;
        if result.verdict == Verdict::Error {
            outcome.errors += 1;
            last_error = format!("{}: {}", case.id, result.message);
        }
        let failure = failure_of(protocol, profile, &result);
        progress(Progress::Run {
            run,
            failed: failure.is_some(),
            events: sends(&case),
        });
        match failure {
            Some(failure) if first_failure.as_ref().is_none_or(|(r, ..)| run < *r) => {
                // A later-numbered failure it replaces needs its sequence no more.
                if let Some((later, ..)) = first_failure.replace((run, case, result, failure)) {
                    trees.remove(&later);
                }
            }
            _ => {
                trees.remove(&run);
            }
        }
    }
    drop(running);
    if outcome.errors > 0 {
        outcome.last_error = Some(last_error.clone());
    }
    let Some((run, case, result, failure)) = first_failure else {
        if outcome.runs > 0 && outcome.errors == outcome.runs {
            return Err(FuzzError::Unusable(last_error));
        }
        return Ok(outcome);
    };
    let Some(mut tree) = trees.remove(&run) else {
        return Err(FuzzError::Strategy(format!("run {run} lost its sequence")));
    };
    let steps_before = tree.current().steps.len();
    let (case, result, steps_after) = shrink(
        protocol,
        profile,
        cfg,
        run_cfg,
        &mut *tree,
        &case.id.clone(),
        &failure,
        case,
        result,
        progress,
    )
    .await;
    let mut reproduced = 0;
    for _ in 0..cfg.confirm {
        let again = runner::run_case(protocol, &case, run_cfg).await;
        if failure_of(protocol, profile, &again).is_some_and(|f| f.rule == failure.rule) {
            reproduced += 1;
        }
    }
    outcome.finding = Some(Finding {
        failure: failure_of(protocol, profile, &result).unwrap_or(failure),
        run,
        steps_after,
        case,
        result,
        steps_before,
        reproduced,
        attempts: cfg.confirm,
    });
    Ok(outcome)
}

/// Shrinks a failing sequence while it fails the same rule; returns the smallest case found,
/// its result and its number of generated steps.
#[allow(clippy::too_many_arguments)]
async fn shrink(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    cfg: &FuzzConfig,
    run_cfg: &RunConfig,
    tree: &mut dyn ValueTree<Value = FuzzRun>,
    id: &str,
    failure: &Failure,
    case: Case,
    result: CaseResult,
    progress: &mut dyn FnMut(Progress),
) -> (Case, CaseResult, usize) {
    let mut best = (case, result, tree.current().steps.len());
    let mut budget = cfg.shrink_budget;
    let started = std::time::Instant::now();
    if budget == 0 || cfg.shrink_time.is_zero() || !tree.simplify() {
        return best;
    }
    while budget > 0 && started.elapsed() < cfg.shrink_time {
        budget -= 1;
        let run = tree.current();
        let candidate = case_for(protocol, profile, id, &run, &run_cfg.credentials);
        let result = runner::run_case(protocol, &candidate, run_cfg).await;
        let same = failure_of(protocol, profile, &result).is_some_and(|f| f.rule == failure.rule);
        progress(Progress::Shrink {
            steps: run.steps.len(),
            still_fails: same,
        });
        let more = if same {
            best = (candidate, result, run.steps.len());
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

/// How many frames a case sends.
pub fn sends(case: &Case) -> usize {
    case.steps
        .iter()
        .filter(|s| matches!(s.action, Action::Send { .. } | Action::SendRaw { .. }))
        .count()
}
