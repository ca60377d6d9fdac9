//! What the fuzzer gets for UAE, one profile per role: the events wireprobe's party sends
//! (the UI's messages and actions to an agent; the agent's tool calls to an executor), a
//! mutator per envelope and payload rule, and the validator. The protocol has no error
//! event, so a bad input is owed nothing but survival: the next probe must still be answered
//! (UAE-ROB-001). An executor owes each valid call exactly one result, which a sequence oracle
//! waits for; a second result, or one for another call, the checker sees in passing.

use super::validate::check_event;
use crate::fuzz_profile::{mutate, Answer, FuzzProfile, Input, Mutator, Oracle, Probe, Rng};
use crate::rules::ids::{
    UAE_CALL_001, UAE_CALL_002, UAE_ENV_001, UAE_ENV_002, UAE_ENV_004, UAE_ENV_005, UAE_ENV_007,
    UAE_EXE_001, UAE_EXE_002, UAE_MSG_001, UAE_RES_001, UAE_RES_004, UAE_ROB_001, UAE_SES_001,
    UAE_UI_001, UAE_UI_002, UAE_VIEW_001, UAE_VIEW_002,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// The profile of a target playing the agent: wireprobe sends the UI's events.
pub struct AgentFuzz;
/// The profile of a target playing the executor: wireprobe sends the agent's tool calls.
pub struct ExecutorFuzz;

/// Short text of any characters.
fn text() -> impl Strategy<Value = String> {
    crate::fuzz_profile::keeps::text(32)
}

/// A full envelope, so what is generated is what is sent (the session fills nothing).
fn envelope(ty: &str, n: usize, payload: Value) -> Value {
    json!({
        "type": ty,
        "id": format!("evt_fuzz_{n}"),
        "ts": "2026-01-08T12:34:56.789Z",
        "trace_id": format!("tr_fuzz_{n}"),
        "session_id": "sess_fuzz",
        "payload": payload,
    })
}

/// Envelopes numbered in sequence order, so ids and traces are unique within a run.
fn numbered(
    payloads: impl Strategy<Value = (&'static str, Value)> + 'static,
    len: std::ops::RangeInclusive<usize>,
) -> BoxedStrategy<Vec<Value>> {
    proptest::collection::vec(payloads, len)
        .prop_map(|events| {
            events
                .into_iter()
                .enumerate()
                .map(|(n, (ty, payload))| envelope(ty, n, payload))
                .collect()
        })
        .boxed()
}

fn ui_event() -> impl Strategy<Value = (&'static str, Value)> {
    prop_oneof![
        2 => text().prop_map(|t| json!({"text": t})),
        // The README's directives: an agent that does not know them just gets text.
        4 => prop_oneof![
            text().prop_map(|t| format!("wireprobe: say {t}")),
            Just("wireprobe: view form".to_owned()),
            any::<u8>().prop_map(|x| format!("wireprobe: tool echo {{\"x\":{x}}}")),
            Just("wireprobe: fail".to_owned()),
        ]
        .prop_map(|t| json!({"text": t})),
    ]
    .prop_map(|p| ("ui.message", p))
}

fn tool_call() -> impl Strategy<Value = (&'static str, Value)> {
    prop_oneof![
        3 => any::<u16>().prop_map(|x| json!({"tool": "echo", "args": {"x": x}})),
        1 => Just(json!({"tool": "fail", "args": {}})),
        2 => (-5i32..300).prop_map(|w| json!({"tool": "weight_entry_save_batch",
            "args": {"rows": [{"measured_at": "2026-01-08T12:00:00-05:00", "weight_lbs": w, "notes": ""}]}})),
        1 => Just(json!({"tool": "wireprobe_no_such_tool", "args": {}})),
    ]
    .prop_map(|p| ("tool.call", p))
}

const ENVELOPE: &str = UAE_ENV_001;

macro_rules! survive {
    ($name:literal, $breaks:expr, $apply:expr) => {
        Mutator {
            name: $name,
            breaks: $breaks,
            answer: Answer::Survive,
            apply: $apply,
        }
    };
}

fn field_type(e: &Value, field: &str, rng: &mut Rng) -> Option<Input> {
    mutate::set(e, &format!("/{field}"), mutate::wrong_type(&e[field], rng)).map(Input::Event)
}

fn without(e: &Value, field: &str) -> Option<Input> {
    mutate::remove(e, &format!("/{field}")).map(Input::Event)
}

/// Mutators of the common envelope: both roles send envelopes.
static ENVELOPE_MUTATORS: &[Mutator] = &[
    survive!("invalid-json", UAE_ENV_001, |e, rng| Some(
        mutate::truncated(e, rng)
    )),
    // Over a WebSocket, RFC 6455 §8.1 has the connection fail on a text frame that is not
    // UTF-8: what happens next is open.
    Mutator {
        name: "invalid-utf8",
        breaks: UAE_ENV_001,
        answer: Answer::Unspecified,
        apply: |e, _| Some(mutate::invalid_utf8(e)),
    },
    survive!("not-an-object", UAE_ENV_001, |e, rng| Some(
        mutate::not_an_object(e, rng)
    )),
    survive!("missing-type", UAE_ENV_001, |e, _| without(e, "type")),
    survive!("missing-id", UAE_ENV_001, |e, _| without(e, "id")),
    survive!("missing-ts", UAE_ENV_001, |e, _| without(e, "ts")),
    survive!("missing-session", UAE_ENV_001, |e, _| without(
        e,
        "session_id"
    )),
    survive!("missing-payload", UAE_ENV_001, |e, _| without(e, "payload")),
    survive!("id-wrong-type", UAE_ENV_001, |e, rng| field_type(
        e, "id", rng
    )),
    survive!("ts-wrong-type", UAE_ENV_001, |e, rng| field_type(
        e, "ts", rng
    )),
    survive!("session-wrong-type", UAE_ENV_001, |e, rng| field_type(
        e,
        "session_id",
        rng
    )),
    survive!("trace-wrong-type", UAE_ENV_001, |e, rng| field_type(
        e, "trace_id", rng
    )),
    survive!("payload-not-object", UAE_ENV_001, |e, rng| {
        let bad = rng.pick(&[json!("payload"), json!([1]), json!(7)]).clone();
        mutate::set(e, "/payload", bad).map(Input::Event)
    }),
    survive!("unknown-type", UAE_ENV_007, |e, rng| {
        let ty = rng.pick(&["ui.typing", "UI.MESSAGE", "tool.cancel", ""]);
        mutate::set(e, "/type", json!(ty)).map(Input::Event)
    }),
    survive!("id-without-prefix", UAE_ENV_004, |e, _| {
        mutate::set(e, "/id", json!("17")).map(Input::Event)
    }),
    survive!("ts-not-rfc3339", UAE_ENV_005, |e, rng| {
        let ts = rng.pick(&["1736339696789", "2026-01-08 12:34", "yesterday"]);
        mutate::set(e, "/ts", json!(ts)).map(Input::Event)
    }),
];

static AGENT_MUTATORS: LazyLock<Vec<Mutator>> = LazyLock::new(|| {
    let own: &[Mutator] = &[
        survive!("text-wrong-type", UAE_UI_001, |e, rng| {
            let bad = rng
                .pick(&[json!(42), json!(null), json!({"text": "hi"})])
                .clone();
            mutate::set(e, "/payload/text", bad).map(Input::Event)
        }),
        survive!("deep-nesting", UAE_ENV_001, |e, _| mutate::deep_nesting(
            e,
            "/payload/text",
            10_000
        )),
        survive!("action-without-kind", UAE_UI_002, |e, _| {
            let action = json!({"view_id": "view_fuzz", "action": {"form_id": "weight_entry"}});
            mutate::set(e, "/type", json!("ui.action"))
                .and_then(|e| mutate::set(&e, "/payload", action))
                .map(Input::Event)
        }),
    ];
    [ENVELOPE_MUTATORS, own].concat()
});

static EXECUTOR_MUTATORS: LazyLock<Vec<Mutator>> = LazyLock::new(|| {
    let own: &[Mutator] = &[
        survive!("missing-trace", UAE_ENV_002, |e, _| without(e, "trace_id")),
        survive!("tool-wrong-type", UAE_CALL_001, |e, rng| {
            let bad = rng.pick(&[json!(""), json!(3), json!(null)]).clone();
            mutate::set(e, "/payload/tool", bad).map(Input::Event)
        }),
        survive!("args-not-object", UAE_CALL_002, |e, rng| {
            let bad = rng.pick(&[json!("rows"), json!([1, 2]), json!(5)]).clone();
            mutate::set(e, "/payload/args", bad).map(Input::Event)
        }),
        survive!("deep-nesting", UAE_ENV_001, |e, _| mutate::deep_nesting(
            e,
            "/payload/args",
            10_000
        )),
        // A valid call: the result it owes is the oracle's to wait for.
        crate::sequence_mutator!("call-answered", UAE_RES_001, |e, _| Some(Input::Event(
            e.clone()
        ))),
        // Calls an executor must refuse: a tool it cannot have, a row the spec's example rejects.
        crate::sequence_mutator!("unknown-tool", UAE_EXE_001, |e, _| {
            mutate::set(
                e,
                "/payload",
                json!({"tool": "wireprobe_no_such_tool", "args": {}}),
            )
            .map(Input::Event)
        }),
        crate::sequence_mutator!("rejected-row", UAE_EXE_002, |e, rng| {
            let weight = rng.pick(&[json!(-5), json!(0), json!(-0.1)]).clone();
            let row = json!({"measured_at": "2026-01-08T12:00:00-05:00", "weight_lbs": weight});
            mutate::set(
                e,
                "/payload",
                json!({"tool": "weight_entry_save_batch", "args": {"rows": [row]}}),
            )
            .map(Input::Event)
        }),
    ];
    [ENVELOPE_MUTATORS, own].concat()
});

/// The rules a client input breaks, by the same validator that judges the target (one event
/// on its own: what ties events together is the checker's). Generated
/// events are whole envelopes, sent as they are (see [`live`]).
fn violations(input: &Input) -> Vec<&'static str> {
    let Some(event) = crate::fuzz_profile::input_json(input) else {
        return vec![ENVELOPE];
    };
    let mut out = Vec::new();
    check_event(&event, &mut out);
    let mut rules: Vec<&'static str> = out.iter().map(|v| v.rule).collect();
    rules.dedup();
    rules
}

/// What goes out for a generated event: the session fills an envelope field a step leaves
/// out, so a field the mutation removed is sent as removed (`"$omit"`).
fn live(original: &Value, sent: &Value) -> Option<Value> {
    let mut live = sent.clone();
    if let (Some(before), Some(after)) = (original.as_object(), live.as_object_mut()) {
        for field in ["type", "id", "ts", "trace_id", "session_id", "payload"] {
            if before.contains_key(field) && !after.contains_key(field) {
                after.insert(field.to_owned(), json!(crate::protocol::OMIT));
            }
        }
    }
    Some(live)
}

/// The probe of each role: a plain message to an agent, an echo call to an executor.
fn probe(sends: Value, answers: Vec<Value>) -> Probe {
    Probe {
        sends: vec![sends],
        answers,
        error: json!({"type": "wireprobe.no-error-event"}),
        rule: UAE_ROB_001,
        answered_by: UAE_ROB_001,
        ended: Some(UAE_ROB_001),
        scenario: false,
    }
}

impl FuzzProfile for AgentFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        const EXECUTOR: &str =
            "an executor's answer: judged against a target playing the executor (--role executor)";
        &[
            (UAE_EXE_001, EXECUTOR),
            (UAE_EXE_002, EXECUTOR),
            (UAE_RES_004, EXECUTOR),
        ]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        numbered(ui_event(), len)
    }

    fn mutators(&self) -> &'static [Mutator] {
        &AGENT_MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        violations(input)
    }

    fn probe(&self) -> Probe {
        probe(
            json!({"type": "ui.message", "payload": {"text": "wireprobe: say still here"}}),
            vec![
                json!({"type": "assistant.message"}),
                json!({"type": "assistant.view"}),
                json!({"type": "tool.call"}),
            ],
        )
    }

    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        raw_frame(bytes)
    }

    fn live_event(&self, original: &Value, sent: &Value) -> Option<Value> {
        live(original, sent)
    }
}

/// A raw input is one frame or one line: it ends with a newline, which over stdio ends the
/// line and over a WebSocket is whitespace after the text.
fn raw_frame(bytes: &[u8]) -> Vec<u8> {
    let mut line = bytes.to_vec();
    line.push(b'\n');
    line
}

impl FuzzProfile for ExecutorFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        const AGENT: &str =
            "what an agent sends its Web UI: judged against a target playing the agent (--role agent)";
        &[
            (UAE_SES_001, AGENT),
            (UAE_MSG_001, AGENT),
            (UAE_VIEW_001, AGENT),
            (UAE_VIEW_002, AGENT),
        ]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        numbered(tool_call(), len)
    }

    fn mutators(&self) -> &'static [Mutator] {
        &EXECUTOR_MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        violations(input)
    }

    /// An executor may answer calls one at a time, and a sequence sends many: before a call
    /// whose result is judged, the backlog is let drain (the session tells when).
    fn settle_ms(&self, _step_ms: u64) -> u64 {
        5_000
    }

    /// The one oracle that waits for a result is drawn as often as the envelope mutators
    /// together: the calls that fail are the ones a careless executor leaves unanswered.
    fn weight(&self, mutator: &Mutator) -> usize {
        match mutator.name {
            "call-answered" => ENVELOPE_MUTATORS.len(),
            _ => 1,
        }
    }

    fn oracles(&self, mutator: &Mutator, input: &Input) -> Vec<Oracle> {
        let trace = match input {
            Input::Event(e) => e.get("trace_id").cloned(),
            Input::Raw(_) => None,
        };
        let Some(trace) = trace else {
            return Vec::new();
        };
        let result = json!({"type": "tool.result", "trace_id": trace});
        let refused = json!({"type": "tool.result", "trace_id": trace, "payload": {"ok": false}});
        // A rejected row is only owed a refusal by an executor that has the tool: one without
        // it refuses the call as unknown, which holds too.
        let (pattern, scenario) = match mutator.name {
            "call-answered" => (result, false),
            "unknown-tool" | "rejected-row" => (refused, false),
            _ => return Vec::new(),
        };
        vec![Oracle::Reply {
            patterns: vec![pattern],
            rule: mutator.breaks,
            scenario,
        }]
    }

    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        raw_frame(bytes)
    }

    fn live_event(&self, original: &Value, sent: &Value) -> Option<Value> {
        live(original, sent)
    }

    fn probe(&self) -> Probe {
        probe(
            json!({"type": "tool.call", "trace_id": "tr_wp_probe", "payload": {"tool": "echo", "args": {}}}),
            vec![json!({"type": "tool.result"})],
        )
    }
}
