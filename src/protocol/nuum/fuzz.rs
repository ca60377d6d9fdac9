//! What the fuzzer gets for Nuum: valid host lines (user messages and control actions), the
//! mutators that make them bad input, and the input validator. Every bad line breaks
//! NUUM-BAD-002 (answered with system/error); the process surviving it is NUUM-BAD-001, which
//! the fuzzer's liveness oracle judges for every input.

use super::input;
use super::scenarios;
use crate::fuzz_profile::{mutate, Answer, FuzzProfile, Input, Mutator, Oracle, Probe};
use crate::rules::ids::{NUUM_BAD_001, NUUM_BAD_002, NUUM_CTL_003, NUUM_CTL_004, NUUM_TR_002};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// The Nuum [`FuzzProfile`].
pub struct NuumFuzz;

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..48).prop_map(String::from_iter)
}

fn host_line() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => text().prop_map(|t| json!({"type": "user", "message": {"role": "user", "content": t}})),
        2 => proptest::collection::vec(text(), 1..4).prop_map(|ts| {
            let blocks: Vec<Value> = ts.into_iter().map(|t| json!({"type": "text", "text": t})).collect();
            json!({"type": "user", "message": {"role": "user", "content": blocks}})
        }),
        // Tools, tasks, failing and slow turns, through the README's directives: a target that
        // does not know them just gets a user message.
        3 => prop_oneof![
            any::<u8>().prop_map(|x| format!("wireprobe: tool echo {{\"x\":{x}}}")),
            Just("wireprobe: task research fuzzing".to_owned()),
            (1u8..3).prop_map(|s| format!("wireprobe: alarm {s} fuzz")),
            Just("wireprobe: fail".to_owned()),
            (50u32..300).prop_map(|ms| format!("wireprobe: slow {ms}")),
        ]
        .prop_map(|t| json!({"type": "user", "message": {"role": "user", "content": t}})),
        2 => Just(json!({"type": "control", "action": "heartbeat"})),
        1 => Just(json!({"type": "control", "action": "status"})),
        1 => Just(json!({"type": "control", "action": "interrupt"})),
    ]
    .boxed()
}

fn is_user(e: &Value) -> bool {
    e["type"] == "user"
}

fn is_control(e: &Value) -> bool {
    e["type"] == "control"
}

const BAD: &str = NUUM_BAD_002;
const ERROR: Answer = Answer::Error(None);

macro_rules! mutator {
    ($name:literal, $apply:expr) => {
        Mutator {
            name: $name,
            breaks: BAD,
            answer: ERROR,
            apply: $apply,
        }
    };
}

static MUTATORS: &[Mutator] = &[
    mutator!("invalid-json", |e, rng| Some(mutate::truncated(e, rng))),
    mutator!("invalid-utf8", |e, _| Some(mutate::invalid_utf8(e))),
    mutator!("not-an-object", |e, rng| Some(mutate::not_an_object(
        e, rng
    ))),
    mutator!("missing-type", |e, _| mutate::remove(e, "/type")
        .map(Input::Event)),
    mutator!("wrong-type-value", |e, rng| {
        let bad = match rng.below(3) {
            0 => json!("telemetry"),
            1 => json!(e["type"].as_str().unwrap_or("user").to_uppercase()),
            _ => mutate::wrong_type(&e["type"], rng),
        };
        mutate::set(e, "/type", bad).map(Input::Event)
    }),
    mutator!("unknown-action", |e, rng| {
        if !is_control(e) {
            return None;
        }
        let bad = match rng.below(3) {
            0 => json!("reboot"),
            1 => json!(e["action"].as_str().unwrap_or("status").to_uppercase()),
            _ => mutate::wrong_type(&e["action"], rng),
        };
        mutate::set(e, "/action", bad).map(Input::Event)
    }),
    mutator!("wrong-role", |e, rng| {
        if !is_user(e) {
            return None;
        }
        let role = rng.pick(&["assistant", "system", "User", ""]);
        mutate::set(e, "/message/role", json!(role)).map(Input::Event)
    }),
    mutator!("missing-message", |e, _| {
        is_user(e)
            .then(|| mutate::remove(e, "/message"))
            .flatten()
            .map(Input::Event)
    }),
    mutator!("content-wrong-type", |e, rng| {
        if !is_user(e) {
            return None;
        }
        let bad = rng
            .pick(&[json!(42), json!(true), Value::Null, json!({"text": "hi"})])
            .clone();
        mutate::set(e, "/message/content", bad).map(Input::Event)
    }),
    mutator!("deep-nesting", |e, _| {
        is_user(e)
            .then(|| mutate::deep_nesting(e, "/message/content", 10_000))
            .flatten()
    }),
    mutator!("huge-number", |e, rng| {
        if !is_user(e) {
            return None;
        }
        let n = rng.pick(&["1e400", "18446744073709551616", "-1e400"]);
        mutate::raw_token(e, "/message/content", n)
    }),
    mutator!("line-break", |e, rng| Some(mutate::line_break(
        e,
        rng.below(2) == 0
    ))),
    // Megabytes of garbage on one line, past any sensible line limit (the suite's huge line):
    // a reader that gives up on it must still read the next one.
    mutator!("huge-line", |_, rng| {
        Some(Input::Raw(vec![b'x'; HUGE_LINE + rng.below(1024)]))
    }),
];

/// Bytes of the `huge-line` mutator's line: 4 MiB, as the suite's case.
const HUGE_LINE: usize = 4 << 20;

/// The bad-input mutators, then the turn and control scenarios.
static ALL_MUTATORS: LazyLock<Vec<Mutator>> =
    LazyLock::new(|| [MUTATORS, scenarios::MUTATORS].concat());

impl FuzzProfile for NuumFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                NUUM_TR_002,
                "judged when the process exits while its stdin is open; one that stays up between turns is judged by the transport cases",
            ),
            (
                NUUM_CTL_004,
                "needs a status asked while a turn is known to run (control cases)",
            ),
        ]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        proptest::collection::vec(host_line(), len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        &ALL_MUTATORS
    }

    fn oracles(&self, mutator: &Mutator, _input: &Input) -> Vec<Oracle> {
        scenarios::oracles(mutator.name)
    }

    /// A settle ends once the agent is idle (the session tells, from `turn_accepted`, `queued`
    /// and `result`), so it may wait out the longest turn a sequence starts (a scenario's
    /// `wireprobe: slow 2000`): a scenario sent while a turn still runs is queued behind it and
    /// never starts the turn it is about. Fixed at 200 ms, one run in fourteen skipped so.
    fn settle_ms(&self, _step_ms: u64) -> u64 {
        2_500
    }

    /// What a process does with an interrupt when no turn runs is open (NUUM-CTL-005).
    fn answer_open(&self, event: &Value) -> bool {
        event["type"] == "control" && event["action"] == "interrupt"
    }

    /// A user line: a turn of its own when the agent is idle, injected into one that runs
    /// (§Mid-Turn Message Injection), where its directive is never obeyed. An interrupt:
    /// whether it cancels the turn before it, or meets none, is the turn's race with it (the
    /// scenario `interrupt-mid-turn` sends one mid-turn on purpose).
    fn waits_for_idle(&self, event: &Value) -> bool {
        is_user(event) || (is_control(event) && event["action"] == "interrupt")
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![json!({"type": "control", "action": "heartbeat"})],
            answers: vec![json!({"type": "system", "subtype": "heartbeat_ack"})],
            error: json!({"type": "system", "subtype": "error"}),
            rule: NUUM_BAD_001,
            answered_by: NUUM_CTL_003,
            // "Stays alive between turns, accepts ongoing messages" (suites/nuum/ERRATA.md).
            ended: Some(NUUM_BAD_001),
            scenario: false,
        }
    }

    /// A raw input is one stdin line: it gets its newline here.
    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        line
    }

    /// A raw input is judged line by line, as the process reads it: one bad line is enough.
    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        let bytes = match input {
            Input::Event(e) => e.to_string().into_bytes(),
            Input::Raw(b) => b.clone(),
        };
        let bad = bytes.split(|&b| b == b'\n').any(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            input::parse(line).is_err()
        });
        if bad {
            vec![BAD]
        } else {
            Vec::new()
        }
    }
}
