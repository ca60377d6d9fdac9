//! What the fuzzer gets for HPD: valid inputs (directives that reach text, reasoning, tools,
//! failing and slow turns, and interruptions), the mutators that make an input envelope a bad
//! request, and the input validator the checker uses. A bad request is answered HTTP 400
//! (HPD-IN-001, the fuzzer's transport is SSE + HTTP); the agent answering the next input with
//! a turn is HPD-IN-006; every event of every turn goes through the whole checker.

use super::checker::{classify, Sent};
use super::scenarios;
use super::session::route_of;
use super::INPUTS_ROUTE;
use crate::fuzz_profile::{mutate, Answer, FuzzProfile, Input, Mutator, Oracle, Probe};
use crate::rules::ids::{
    HPD_ENV_009, HPD_IN_001, HPD_IN_002, HPD_IN_005, HPD_IN_006, HPD_TURN_001,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// The HPD [`FuzzProfile`].
pub struct HpdFuzz;

/// Short text of any characters.
fn text() -> impl Strategy<Value = String> {
    crate::fuzz_profile::keeps::text(32)
}

fn input(text: String) -> Value {
    json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": text})
}

/// Valid inputs start short turns (no `slow`: the interruption scenario has its own): a turn an
/// agent runs after the ones queued before it must not still be queued when a scenario starts
/// and waits for its own.
fn client_event() -> BoxedStrategy<Value> {
    prop_oneof![
        2 => text().prop_map(input),
        // The README's directives: a deployment that does not know them just gets text.
        4 => prop_oneof![
            text().prop_map(|t| format!("wireprobe: say {t}")),
            text().prop_map(|t| format!("wireprobe: reason {t}")),
            any::<u8>().prop_map(|x| format!("wireprobe: tool echo {{\"x\":{x}}}")),
            Just("wireprobe: fail".to_owned()),
        ]
        .prop_map(input),
        1 => text().prop_map(|t| json!({
            "version": "1.0",
            "type": "USER_MESSAGES_INPUT",
            "messages": [{"role": "user", "content": t}],
        })),
        1 => Just(json!({"version": "1.0", "type": "INTERRUPTION_REQUEST", "reason": "fuzz", "source": "User"})),
    ]
    .boxed()
}

const BAD: &str = HPD_IN_001;
const BAD_REQUEST: Answer = Answer::Error(Some("400"));

macro_rules! mutator {
    ($name:literal, $apply:expr) => {
        Mutator {
            name: $name,
            breaks: BAD,
            answer: BAD_REQUEST,
            apply: $apply,
        }
    };
}

fn is_input(e: &Value) -> bool {
    route_of(e["type"].as_str().unwrap_or("")) == INPUTS_ROUTE
}

static MUTATORS: &[Mutator] = &[
    mutator!("invalid-json", |e, rng| Some(mutate::truncated(e, rng))),
    mutator!("invalid-utf8", |e, _| Some(mutate::invalid_utf8(e))),
    mutator!("not-an-object", |e, rng| Some(mutate::not_an_object(
        e, rng
    ))),
    // Without its type and its text: a bare {text} is an input the framework takes.
    mutator!("missing-type", |e, _| {
        if !is_input(e) {
            return None;
        }
        let e = mutate::remove(e, "/type")?;
        Some(Input::Event(mutate::remove(&e, "/text").unwrap_or(e)))
    }),
    mutator!("unknown-type", |e, rng| {
        if !is_input(e) {
            return None;
        }
        let kind = rng.pick(&["WIREPROBE_NOT_AN_EVENT", "USER_TEXT", "INPUT", ""]);
        mutate::set(e, "/type", json!(kind)).map(Input::Event)
    }),
    mutator!("type-not-a-string", |e, rng| {
        if !is_input(e) {
            return None;
        }
        mutate::set(e, "/type", mutate::wrong_type(&e["type"], rng)).map(Input::Event)
    }),
];

/// The bad-request mutators, then the scenarios.
static ALL_MUTATORS: LazyLock<Vec<Mutator>> =
    LazyLock::new(|| [MUTATORS, scenarios::MUTATORS].concat());

impl FuzzProfile for HpdFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        const WEBSOCKET: &str = "the fuzzer speaks SSE + HTTP: a WebSocket frame's rule (ws cases)";
        &[
            (HPD_ENV_009, WEBSOCKET),
            (HPD_IN_002, WEBSOCKET),
            (HPD_IN_005, WEBSOCKET),
        ]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        proptest::collection::vec(client_event(), len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        &ALL_MUTATORS
    }

    fn oracles(&self, mutator: &Mutator, _input: &Input) -> Vec<Oracle> {
        scenarios::oracles(mutator.name)
    }

    /// A settle (before a scenario, before a probe, at the run's end) ends once every input
    /// sent had its turn and every turn ended (the session tells), up to the step timeout: a
    /// model's turns take seconds, and the agent works through them one at a time. The rules
    /// judged at a turn's end (HPD-STREAM-002, HPD-TURN-002) then see every turn a run
    /// started, and a scenario or probe is not queued behind a backlog it cannot outwait.
    fn settle_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }

    /// The probe is an input, which the agent takes in its turn, after those still queued.
    fn probe_queues(&self) -> bool {
        true
    }

    /// An interruption when no turn runs is the agent's to ignore or answer.
    fn answer_open(&self, event: &Value) -> bool {
        event["type"] == "INTERRUPTION_REQUEST"
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![input("wireprobe: say still there?".into())],
            // A turn starts; or, from an agent that runs one turn at a time and refuses an
            // input while one runs (the framework answers 409), the refusal: either way it
            // still serves.
            answers: vec![
                json!({"type": "MESSAGE_TURN_STARTED"}),
                json!({"$http": {"path": "/inputs", "status": 409}}),
            ],
            error: json!({"$http": {"status": 400}}),
            rule: HPD_IN_006,
            answered_by: HPD_TURN_001,
            ended: Some(HPD_IN_006),
            scenario: false,
        }
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        // An event goes to its type's route; bytes as they are, to the inputs route.
        let route = match input {
            Input::Event(e) => e
                .get("type")
                .and_then(Value::as_str)
                .map_or(INPUTS_ROUTE, route_of),
            Input::Raw(_) => INPUTS_ROUTE,
        };
        let body = crate::fuzz_profile::input_json(input);
        match classify(body.as_deref().ok_or("not JSON"), route) {
            Sent::Invalid(_) => vec![BAD],
            _ => Vec::new(),
        }
    }
}
