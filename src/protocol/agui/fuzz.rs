//! What the fuzzer gets for AG-UI: run inputs (plain messages, history, state, offered tools
//! and the README's directives), the mutators that make an input malformed — refused before any
//! run, by an HTTP error status or a stream opening with RUN_ERROR (AGUI-IN-001) — or only
//! unfamiliar, which must be served (AGUI-IN-002); and a probe showing the agent still runs.
//! Every event of every answer goes through the whole checker.

use super::schema::{schema, Flaw};
use crate::fuzz_profile::{mutate, Answer, FuzzProfile, Input, Mutator, Oracle, Probe};
use crate::rules::ids::{
    AGUI_HTTP_003, AGUI_HTTP_004, AGUI_IN_001, AGUI_IN_002, AGUI_RUN_001, AGUI_VER_002,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The AG-UI [`FuzzProfile`].
pub struct AguiFuzz;

/// Short text of any characters.
fn text() -> impl Strategy<Value = String> {
    crate::fuzz_profile::keeps::text(32)
}

/// A run input the session completes (thread, run id, version, message ids).
fn input(text: String) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

fn run_input() -> BoxedStrategy<Value> {
    prop_oneof![
        2 => text().prop_map(input),
        4 => prop_oneof![
            text().prop_map(|t| format!("wireprobe: say {t}")),
            text().prop_map(|t| format!("wireprobe: reason {t}")),
            any::<u8>().prop_map(|x| format!("wireprobe: tool echo {{\"x\":{x}}}")),
            text().prop_map(|t| format!("wireprobe: chunks {t}")),
            Just("wireprobe: step plan".to_owned()),
            Just("wireprobe: interrupt approval".to_owned()),
            Just("wireprobe: fail".to_owned()),
        ]
        .prop_map(input),
        1 => (text(), any::<i32>()).prop_map(|(t, n)| json!({
            "state": {"count": n, "note": t},
            "messages": [{"role": "user", "content": r#"wireprobe: state [{"op": "replace", "path": "/count", "value": 0}]"#}],
        })),
        1 => text().prop_map(|t| json!({
            "tools": [{"name": "wireprobe_pick", "description": "Asks the user to pick."}],
            "messages": [{"role": "user", "content": format!("wireprobe: frontend wireprobe_pick {{\"q\": {}}}", json!(t))}],
        })),
        1 => (text(), text()).prop_map(|(a, b)| json!({
            "messages": [
                {"role": "user", "content": a},
                {"role": "assistant", "content": b},
                {"role": "user", "content": "wireprobe: say again"},
            ],
        })),
    ]
    .boxed()
}

const MALFORMED: &str = AGUI_IN_001;
const UNFAMILIAR: &str = AGUI_IN_002;

macro_rules! malformed {
    ($name:literal, $apply:expr) => {
        Mutator {
            name: $name,
            breaks: MALFORMED,
            answer: Answer::Error(None),
            apply: $apply,
        }
    };
}

/// The first message of `e`'s list, as a pointer.
const FIRST_MESSAGE: &str = "/messages/0";

static MUTATORS: &[Mutator] = &[
    malformed!("invalid-json", |e, rng| Some(mutate::truncated(e, rng))),
    malformed!("not-an-object", |e, rng| Some(mutate::not_an_object(
        e, rng
    ))),
    malformed!("missing-thread-id", |e, _| mutate::set(
        e,
        "/threadId",
        json!(crate::protocol::OMIT)
    )
    .map(Input::Event)),
    malformed!("missing-run-id", |e, _| mutate::set(
        e,
        "/runId",
        json!(crate::protocol::OMIT)
    )
    .map(Input::Event)),
    malformed!("missing-messages", |e, _| mutate::set(
        e,
        "/messages",
        json!(crate::protocol::OMIT)
    )
    .map(Input::Event)),
    malformed!("messages-not-an-array", |e, rng| {
        mutate::set(e, "/messages", mutate::wrong_type(&json!([]), rng)).map(Input::Event)
    }),
    malformed!("id-not-a-string", |e, rng| {
        let key = rng.pick(&["/threadId", "/runId"]);
        let wrong = loop {
            let v = mutate::wrong_type(&json!(""), rng);
            if !v.is_null() {
                break v;
            }
        };
        mutate::set(e, key, wrong).map(Input::Event)
    }),
    malformed!("content-not-text", |e, _| {
        e.pointer(FIRST_MESSAGE)?;
        mutate::set(e, "/messages/0/content", json!(42)).map(Input::Event)
    }),
    malformed!("role-not-a-string", |e, rng| {
        e.pointer(FIRST_MESSAGE)?;
        let wrong = loop {
            let v = mutate::wrong_type(&json!(""), rng);
            if !v.is_null() {
                break v;
            }
        };
        mutate::set(e, "/messages/0/role", wrong).map(Input::Event)
    }),
    // Valid input a producer meets rarely: it is served (the oracle waits for the run).
    crate::sequence_mutator!("unknown-member", AGUI_IN_002, |e, rng| {
        let key = rng.pick(&["wireprobeFuture", "extensions", "x_client"]);
        mutate::set(e, &format!("/{key}"), json!({"enabled": true})).map(Input::Event)
    }),
    Mutator {
        name: "polluted-state",
        breaks: UNFAMILIAR,
        answer: Answer::Sequence,
        apply: |e, rng| {
            let key = rng.pick(&["__proto__", "constructor", "prototype"]);
            let base = mutate::set(e, "/state", json!({}))?;
            let base = match e.get("state") {
                Some(s) if s.is_object() => mutate::set(e, "/state", s.clone())?,
                _ => base,
            };
            mutate::pollute(&base, "/state", key, rng.below(3), rng.below(2) == 1).map(Input::Event)
        },
    },
];

impl FuzzProfile for AguiFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        const PROTOBUF: &str = "the fuzzer asks for SSE: a rule of the protobuf binding's answers";
        &[
            (
                AGUI_VER_002,
                "the fuzzer's inputs declare the version wireprobe speaks (the suite's case declares a newer one)",
            ),
            (AGUI_HTTP_003, PROTOBUF),
            (AGUI_HTTP_004, PROTOBUF),
        ]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        proptest::collection::vec(run_input(), len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    /// A settle ends once each run started has streamed whole (every answer came whole), up
    /// to the step timeout: the rules judged at a run's end then see every run a fuzz run
    /// started, however the agent paces it.
    fn settle_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }

    /// An unfamiliar input is served: its run starts (or reports its own failure).
    fn oracles(&self, _mutator: &Mutator, _input: &Input) -> Vec<Oracle> {
        vec![Oracle::Reply {
            patterns: vec![json!({"type": "RUN_STARTED"}), json!({"type": "RUN_ERROR"})],
            rule: UNFAMILIAR,
            scenario: false,
        }]
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![input("wireprobe: say still there?".into())],
            answers: vec![json!({"type": "RUN_STARTED"}), json!({"type": "RUN_ERROR"})],
            error: json!({"type": "RUN_ERROR"}),
            // A malformed input is refused, not the agent stopped: a refusal that leaves no
            // agent behind is no refusal the binding names.
            rule: MALFORMED,
            answered_by: AGUI_RUN_001,
            ended: Some(MALFORMED),
            scenario: false,
        }
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        let Some(body) = crate::fuzz_profile::input_json(input) else {
            return vec![MALFORMED];
        };
        // What the session sends: `$omit` leaves a member out; the rest it fills.
        let mut sent = body.into_owned();
        if let (Value::Object(m), Input::Event(_)) = (&mut sent, input) {
            let omitted: Vec<String> = m
                .iter()
                .filter(|(_, v)| v.as_str() == Some(crate::protocol::OMIT))
                .map(|(k, _)| k.clone())
                .collect();
            m.retain(|_, v| v.as_str() != Some(crate::protocol::OMIT));
            for (key, fill) in [
                ("threadId", json!("t")),
                ("runId", json!("r")),
                ("messages", json!([])),
            ] {
                if !omitted.iter().any(|o| o == key) {
                    m.entry(key).or_insert(fill);
                }
            }
            if let Some(Value::Array(messages)) = m.get_mut("messages") {
                for message in messages.iter_mut().filter_map(Value::as_object_mut) {
                    message.entry("id").or_insert(json!("m"));
                }
            }
        }
        let flaws = schema().input_flaws(&sent);
        if flaws.iter().any(|f| matches!(f, Flaw::Malformed { .. })) {
            vec![MALFORMED]
        } else {
            Vec::new()
        }
    }
}
