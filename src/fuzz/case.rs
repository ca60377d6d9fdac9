//! Generated runs as suite cases: how a run opens, its valid and mutated events, and the
//! oracles as steps — the error the spec requires, what a sequence input is owed, a liveness
//! probe after every adversarial input. Every rule of the protocol is the case's, so the
//! checker judges everything the target sends too.

use super::{Answer, FuzzProfile, Input, Opening, Oracle, Probe, Rng, PROBE_UUIDS};
use crate::matcher;
use crate::protocol::Protocol;
use crate::suite::model::{
    Action, Case, CloseWanted, ConnectSpec, Discard, ErrorWanted, Expect, ExpectClose, ExpectError,
    ExpectRefused, ExpectSilence, HandshakeMode, Patterns, RawFrame, Reconnect, Reconnection,
    Requirement, Restart, Send, SendRaw, Silence, Step, Times, Unblock, Wait,
};
use crate::suite::runner::RunConfig;
use crate::transport::TransportKind;
use proptest::prelude::*;
use serde_json::Value;

/// How long the answer to an input the spec leaves open (its fate and the connection's) is
/// watched for before the run goes on from a fresh connection.
const OPEN_ANSWER_MS: u64 = 100;

/// How long a probe answered by silence (no error, no disconnect) is watched.
const PROBE_SILENCE_MS: u64 = 300;

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

impl FuzzRun {
    /// The run with each mutation of an event in `bases` sent as that valid event.
    pub fn reverting(self, bases: &[Value]) -> FuzzRun {
        FuzzRun {
            opening: self.opening,
            steps: self
                .steps
                .into_iter()
                .map(|step| match step {
                    FuzzStep::Mutated { base, .. } if bases.contains(&base) => {
                        FuzzStep::Valid(base)
                    }
                    step => step,
                })
                .collect(),
        }
    }

    /// The events its mutations were made from, in order.
    pub fn mutated_bases(&self) -> Vec<&Value> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                FuzzStep::Mutated { base, .. } => Some(base),
                FuzzStep::Valid(_) => None,
            })
            .collect()
    }
}

/// Runs of up to `max_len` steps, about one in four mutated. Shrinking removes steps, turns
/// mutated steps back into valid ones and the opening into the session's own handshake.
pub fn sequences(profile: &dyn FuzzProfile, max_len: usize) -> BoxedStrategy<FuzzRun> {
    // Each mutator's index, as often as its weight.
    let mut draw: Vec<usize> = profile
        .mutators()
        .iter()
        .enumerate()
        .flat_map(|(i, m)| std::iter::repeat_n(i, profile.weight(m)))
        .collect();
    if draw.is_empty() {
        draw.push(0);
    }
    let max_len = max_len.max(1);
    (
        profile.openings(),
        profile.valid_sequence(1..=max_len),
        proptest::collection::vec(
            (0u8..4, proptest::sample::select(draw), any::<u64>()),
            max_len,
        ),
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

/// What a run holds besides valid events, by name, sorted and each once: its opening when it
/// is not the session's own handshake, and each mutator it applied. Two findings of one rule
/// are told apart by this shape (empty: valid input alone broke the rule).
pub type Shape = Vec<&'static str>;

/// The name a run's opening has in its [`Shape`], when it is not the session's own handshake.
fn opening_name(opening: &Opening) -> Option<&'static str> {
    match opening {
        Opening::Handshake(None) => None,
        Opening::Handshake(Some(_)) => Some("a handshake with fields of its own"),
        Opening::Refused { .. } => Some("a handshake to refuse"),
        Opening::Unauthorized { .. } => Some("a bad token"),
    }
}

/// [`shaped_case`] without its shape.
pub fn case_for(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    id: &str,
    run: FuzzRun,
    on: &RunConfig,
) -> Case {
    shaped_case(protocol, profile, id, run, on).0
}

/// The suite case that plays `run` against a target as `on` runs it, with the oracles as
/// steps, and the run's [`Shape`]: each mutator named is the one that made its input (the one
/// drawn only when it applies to its event: see `mutation`), read as the case is built rather
/// than by applying every mutation again. Every rule of the protocol is the case's, so the
/// checker judges everything the target sends; the case ends once the target has answered
/// everything it sent (see [`end_settle`]).
pub fn shaped_case(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    id: &str,
    run: FuzzRun,
    on: &RunConfig,
) -> (Case, Shape) {
    let mut shape: Shape = opening_name(&run.opening).into_iter().collect();
    let credentials = &on.credentials;
    let step_ms = on.step_timeout.as_millis() as u64;
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
                    Reconnect {
                        how: Reconnection {
                            handshake: HandshakeMode::SendOnly,
                            handshake_with: None,
                            new_session: true,
                            token: Some(*token),
                        },
                    }
                    .into(),
                    None,
                ));
                out.push(step(
                    ExpectRefused {
                        wanted: Default::default(),
                    }
                    .into(),
                    Some(rule),
                ));
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
                ExpectError {
                    wanted: ErrorWanted {
                        code: code.map(str::to_owned),
                        ..ErrorWanted::default()
                    },
                }
                .into(),
                Some(rule),
            ));
            if *closes {
                out.push(step(
                    ExpectClose {
                        wanted: CloseWanted::default(),
                    }
                    .into(),
                    Some(rule),
                ));
            }
            out.push(step(restart(protocol), None));
            (HandshakeMode::SendOnly, Some(with.clone()))
        }
    };
    for oracle in profile.preamble() {
        let tag = out.len() as u64;
        out.extend(oracle_steps(protocol, profile, oracle, tag, step_ms));
    }
    let probe = profile.probe();
    // A probe answered by silence establishes nothing before the sequence.
    if !probe.answers.is_empty() {
        let tag = out.len();
        out.extend(probe_steps(
            profile,
            &probe,
            probe.answered_by,
            probe.scenario,
            tag,
        ));
    }
    // What the valid events sent so far hold open (see `FuzzProfile::opened_by`), and the rule
    // of a probe owed after a mutation, until the stream can take it.
    let mut open = 0i64;
    let mut owed: Option<&'static str> = None;
    let valid_probes = profile.probes_valid_input();
    // A valid event the spec lets the target answer with an error was sent since the last
    // time the connection settled.
    let mut unsettled = false;
    // Input that may have set work going was sent since the last time the target settled.
    let mut working = false;
    for s in run.steps {
        let (original, mutated) = match s {
            FuzzStep::Valid(e) => (e, None),
            FuzzStep::Mutated {
                base,
                mutator,
                seed,
            } => {
                let mutated = mutation(profile, &base, mutator, seed);
                shape.extend(mutated.as_ref().map(|(m, _)| m.name));
                (base, mutated)
            }
        };
        open += profile.opened_by(&original);
        let Some((m, input)) = mutated else {
            let answer_open = profile.answer_open(&original);
            let waits = profile.waits_for_idle(&original);
            let Some(action) = valid_action(profile, original) else {
                continue;
            };
            if waits && std::mem::replace(&mut working, true) {
                out.push(Step::new(Wait::settled(profile.settle_ms(step_ms))));
            }
            unsettled |= answer_open;
            out.push(step(action, None));
            if open == 0 {
                let rule = owed.take().or(valid_probes.then_some(probe.answered_by));
                out.extend(owed_probe(profile, &probe, rule, step_ms, out.len()));
            }
            continue;
        };
        let Some(action) = send_action(profile, &original, &input) else {
            continue;
        };
        // Only what this input provokes counts: an error owed to an earlier valid event (or a
        // late one for an orphaned message) must not pass for its answer, nor for a broken probe.
        if std::mem::take(&mut unsettled) || m.answer == Answer::Sequence {
            let tag = out.len() as u64;
            out.extend(settle(profile, tag, step_ms));
            // A settle without a sync message waits for the target to go idle.
            working &= profile.sync(tag).is_some();
        }
        // A scenario sets its own work going (a slow turn it may leave running).
        working |= m.answer == Answer::Sequence || profile.waits_for_idle(&original);
        out.push(step(action, None));
        match m.answer {
            Answer::Error(code) => out.push(step(
                ExpectError {
                    wanted: ErrorWanted {
                        code: code.map(str::to_owned),
                        code_rule: profile.code_rule(m).map(str::to_owned),
                        ..ErrorWanted::default()
                    },
                }
                .into(),
                Some(profile.answer_rule(m)),
            )),
            Answer::Accept | Answer::Survive => {}
            Answer::Unspecified => {
                // Whatever the target did, go on from a fresh connection, once it has shown it.
                out.extend(aftermath(profile, out.len() as u64));
                out.push(step(restart(protocol), None));
                continue;
            }
            Answer::Sequence => {
                let oracles = profile.oracles(m, &input);
                let restarts = oracles.contains(&Oracle::Restart);
                for oracle in oracles {
                    let tag = out.len() as u64;
                    out.extend(oracle_steps(protocol, profile, oracle, tag, step_ms));
                }
                if restarts {
                    continue;
                }
            }
        }
        // Still serving? Asked once the stream can take the probe (at once, but for a
        // profile whose events hold things open).
        owed = owed.or(Some(profile.probe_rule(m).unwrap_or(probe.rule)));
        if open == 0 {
            out.extend(owed_probe(profile, &probe, owed.take(), step_ms, out.len()));
        }
    }
    // The run ends once everything its input set going has run its course (each turn it
    // started has ended, each call was answered): the frames a rule judges at such an end (a
    // text block still open at its turn's end, an end naming another turn) are then the
    // case's own, and a replay alone waits for them as the campaign's loaded run happened to.
    let tag = out.len() as u64;
    out.extend(sync_steps(profile, tag, step_ms));
    if profile.sync(tag).is_some() && profile.work_outlasts_sync() {
        out.push(Step::new(Wait::settled(profile.settle_ms(step_ms))));
        // And a sync once it settled: what the target sent behind the end of its work (a
        // HAIP TOOL_UPDATE after its TOOL_DONE) comes before the answer to a message it read
        // after, so it is judged in every replay, not only where the run's load delayed the
        // settle.
        let tag = out.len() as u64;
        out.extend(sync_steps(profile, tag, step_ms));
    }
    shape.sort_unstable();
    shape.dedup();
    let case = Case {
        id: id.to_owned(),
        title: "a generated sequence of valid and mutated events".into(),
        rules: protocol.rules().iter().map(|r| r.id.to_owned()).collect(),
        // The transport the run went over, which its verdict depended on (an HPD bad input
        // is answered 400 over SSE + HTTP, closed 1007 over the WebSocket): its replay by
        // `run --suite` goes over that one alone.
        requires: vec![Requirement::Transport(on.transport_of(protocol))],
        handshake,
        handshake_with,
        connect: ConnectSpec::default(),
        timeout_ms: None,
        auto_answer: true,
        steps: out,
        fallback: Vec::new(),
        origin: "fuzz".into(),
    };
    (case, shape)
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
fn settle(profile: &dyn FuzzProfile, tag: u64, step_ms: u64) -> Vec<Step> {
    let mut out = sync_steps(profile, tag, step_ms);
    out.push(Step::new(Discard::default()));
    out
}

/// Steps after which every answer owed to earlier input has arrived (and is still there to
/// judge): the profile's sync message and its own answer, or a short wait that ends once the
/// target has settled, when its session can tell.
fn sync_steps(profile: &dyn FuzzProfile, tag: u64, step_ms: u64) -> Vec<Step> {
    match profile.sync(tag) {
        Some(sync) => vec![
            send_step(sync.send),
            reply_step(vec![sync.answer], sync.rule, false),
        ],
        None => vec![Step::new(Wait::settled(profile.settle_ms(step_ms)))],
    }
}

/// Steps that let the target show what it makes of an input whose answer the spec leaves open,
/// judging nothing of it: the profile's sync message sent behind it, and a wait that ends with
/// the sync's answer (the input came first, so its answer, if any, has come) or the
/// connection's end, at most [`OPEN_ANSWER_MS`] and the connection's round trip; for a
/// protocol without a sync, [`OPEN_ANSWER_MS`] (what it shows then is judged nothing, and a
/// restart follows).
fn aftermath(profile: &dyn FuzzProfile, tag: u64) -> Vec<Step> {
    match profile.sync(tag) {
        Some(sync) => vec![
            send_step(sync.send),
            Step::new(Wait::until(OPEN_ANSWER_MS, vec![sync.answer])),
        ],
        None => vec![Step::new(Wait::ms(OPEN_ANSWER_MS))],
    }
}

/// How the fuzzer goes on from a fresh start: a new process, or a new connection and session
/// (the target may have forgotten the old one, and a refused resume is not what a run is about).
fn restart(protocol: &dyn Protocol) -> Action {
    if protocol.transport() == TransportKind::Stdio {
        Restart::default().into()
    } else {
        Reconnect {
            how: Reconnection {
                new_session: true,
                ..Reconnection::default()
            },
        }
        .into()
    }
}

/// The steps that check an [`Oracle`] (`tag` makes a sync message unique in the run).
fn oracle_steps(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    oracle: Oracle,
    tag: u64,
    step_ms: u64,
) -> Vec<Step> {
    let plain = |action| vec![Step { action, rule: None }];
    match oracle {
        Oracle::Send(event) => vec![send_step(event)],
        Oracle::Silence {
            matching,
            ms,
            rule,
            answer,
        } => vec![silence_step(
            Silence {
                ms,
                matching: Patterns(matching),
                answer,
            },
            rule,
        )],
        Oracle::Reply {
            patterns,
            rule,
            scenario,
        } => vec![reply_step(patterns, rule, scenario)],
        Oracle::ReplyUnlessRefused {
            patterns,
            rule,
            scenario,
            refused,
        } => vec![refusable_reply_step(patterns, rule, scenario, refused)],
        Oracle::Sync => sync_steps(profile, tag, step_ms),
        Oracle::Restart => plain(restart(protocol)),
        Oracle::Unblock => plain(Unblock::default().into()),
        Oracle::Resume(with) => plain(
            Reconnect {
                how: Reconnection {
                    handshake_with: Some(with),
                    ..Reconnection::default()
                },
            }
            .into(),
        ),
    }
}

/// Sends `event` through the session.
fn send_step(event: Value) -> Step {
    Step::new(Send {
        event,
        times: Times::Fixed(1),
    })
}

/// One of `patterns` arrives within the step timeout, else `rule` is broken (or, for a
/// `scenario`, the run is skipped).
fn reply_step(patterns: Vec<Value>, rule: &str, scenario: bool) -> Step {
    refusable_reply_step(patterns, rule, scenario, Vec::new())
}

/// [`reply_step`], except that one of `refused` arriving first skips the run as not reached.
fn refusable_reply_step(
    patterns: Vec<Value>,
    rule: &str,
    scenario: bool,
    refused: Vec<Value>,
) -> Step {
    Step {
        action: Expect {
            scenario,
            otherwise_skips: !refused.is_empty(),
            otherwise: Patterns(refused),
            ..Expect::new(patterns, Times::Fixed(1), None)
        }
        .into(),
        rule: Some(rule.to_owned()),
    }
}

/// `silence` holds, else `rule` is broken.
fn silence_step(silence: Silence, rule: &str) -> Step {
    Step {
        action: ExpectSilence {
            silence,
            scenario: false,
            probe: false,
        }
        .into(),
        rule: Some(rule.to_owned()),
    }
}

/// The probe owed after a mutation (`rule`: what an unanswered one breaks; `None`: none owed).
/// Answers to the bad input are forgotten first, so they cannot pass for the probe's; a probe
/// the target queues waits for what it is still working on first. `tag` is where the steps go.
fn owed_probe(
    profile: &dyn FuzzProfile,
    probe: &Probe,
    rule: Option<&str>,
    step_ms: u64,
    tag: usize,
) -> Vec<Step> {
    let Some(rule) = rule else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if profile.probe_queues() {
        out.extend(sync_steps(profile, tag as u64, step_ms));
    }
    out.push(Step::new(Discard::default()));
    let tag = tag + out.len();
    out.extend(probe_steps(profile, probe, rule, false, tag));
    out
}

/// The probe's messages, then its answer (or silence) judged under `rule` (unanswered, the run
/// is skipped as not reached when `scenario`), then what the profile sends once it is answered.
/// `tag` gives this probe's uuids ([`PROBE_UUIDS`]) their own values.
fn probe_steps(
    profile: &dyn FuzzProfile,
    probe: &Probe,
    rule: &str,
    scenario: bool,
    tag: usize,
) -> Vec<Step> {
    let own = |v: &Value| numbered(v, tag);
    let answer = match probe.answers.is_empty() {
        false => reply_step(probe.answers.iter().map(own).collect(), rule, scenario),
        // No error answers the probe's valid event.
        true => silence_step(
            Silence {
                ms: PROBE_SILENCE_MS,
                matching: Patterns(vec![probe.error.clone()]),
                answer: true,
            },
            rule,
        ),
    };
    let after = profile.after_probe();
    probe
        .sends
        .iter()
        .map(|event| send_step(own(event)))
        .chain([answer])
        .chain(after.iter().map(|event| send_step(own(event))))
        .collect()
}

/// `value` with each probe uuid in its strings (see [`PROBE_UUIDS`]) numbered `tag`: a copy
/// when none holds one (a copy keeps each object's table, where rebuilding one hashes every key
/// again).
fn numbered(value: &Value, tag: usize) -> Value {
    match matcher::mentions(value, PROBE_UUIDS) {
        true => {
            let with = format!("{PROBE_UUIDS}{tag}");
            matcher::map_strings(value, &|s| s.replace(PROBE_UUIDS, &with))
        }
        false => value.clone(),
    }
}

/// How an input goes out: an event through the session, anything else as exact bytes.
fn send_action(profile: &dyn FuzzProfile, original: &Value, input: &Input) -> Option<Action> {
    match input {
        Input::Event(event) => event_action(profile, original, event),
        Input::Raw(bytes) => Some(raw_action(profile, bytes)),
    }
}

/// How `event` (a mutation of `original`) goes out: through the session as the profile lets
/// it go live, or as its text when it is not an object (a session encodes objects only).
fn event_action(profile: &dyn FuzzProfile, original: &Value, event: &Value) -> Option<Action> {
    if !event.is_object() {
        return Some(raw_action(profile, event.to_string().as_bytes()));
    }
    profile.live_event(original, event).map(literal_send)
}

/// [`event_action`] for a valid event sent as generated.
fn valid_action(profile: &dyn FuzzProfile, event: Value) -> Option<Action> {
    if !event.is_object() {
        return Some(raw_action(profile, event.to_string().as_bytes()));
    }
    profile.live_valid(event).map(literal_send)
}

/// Sends `event` as it is: a `${` in it is text, not a template.
fn literal_send(mut event: Value) -> Action {
    matcher::make_literal(&mut event);
    Send {
        event,
        times: Times::Fixed(1),
    }
    .into()
}

/// `bytes` as one frame of exact bytes.
fn raw_action(profile: &dyn FuzzProfile, bytes: &[u8]) -> Action {
    SendRaw {
        frame: RawFrame::TextBytes(profile.raw_frame(bytes)),
        times: Times::Fixed(1),
    }
    .into()
}

#[cfg(test)]
#[path = "case_tests.rs"]
mod tests;
