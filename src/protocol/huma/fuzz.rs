//! What the fuzzer gets for HUMA: valid client events (context-update, tool-result,
//! addon-tool-event, boundary sizes included), the mutators that break each validation rule,
//! and the client-event validator. Malformed JSON inside an emit is HUMA-TR-002: the spec
//! names no answer, not even whether the connection survives (Socket.IO servers close on a
//! packet they cannot parse), so the fuzzer only records it and reconnects.

use super::scenarios;
use super::validate::{self, FORBIDDEN_KEYS, MAX_NAME, MAX_RESULT, OUTCOMES};
use crate::fuzz_profile::{mutate, Answer, FuzzProfile, Input, Mutator, Oracle, Probe};
use crate::rules::ids::{
    HUMA_ERR_002, HUMA_ERR_003, HUMA_LC_003, HUMA_TR_002, HUMA_VAL_001, HUMA_VAL_002, HUMA_VAL_003,
    HUMA_VAL_004, HUMA_VAL_005, HUMA_VAL_006, HUMA_VAL_008,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::LazyLock;

/// The HUMA [`FuzzProfile`].
pub struct HumaFuzz;

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..max).prop_map(String::from_iter)
}

fn ident() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::char::range('a', 'z'), 1..10).prop_map(String::from_iter)
}

fn record() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        text(16).prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
    ];
    proptest::collection::btree_map(ident(), leaf, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

fn call_id() -> impl Strategy<Value = String> {
    any::<u128>().prop_map(|n| {
        uuid::Builder::from_random_bytes(n.to_le_bytes())
            .into_uuid()
            .to_string()
    })
}

/// A scenario directive (README: `context.wireprobe`), so server flows are fuzzed too: a tool
/// call, one left outstanding for the next triggering event to cancel, a messaging burst. A
/// target that does not know them just sees context.
fn directive() -> impl Strategy<Value = Value> {
    prop_oneof![
        (ident(), record()).prop_map(|(tool, arguments)| {
            json!({"do": "tool-call", "tool": tool, "arguments": arguments})
        }),
        ident().prop_map(|tool| json!({"do": "hold-tool", "tool": tool})),
        proptest::collection::vec(text(16), 1..4)
            .prop_map(|messages| json!({"do": "say", "messages": messages})),
    ]
}

fn context_update() -> impl Strategy<Value = Value> {
    let name = prop_oneof![Just(1usize), Just(MAX_NAME), 1..MAX_NAME,]
        .prop_flat_map(|n| proptest::collection::vec(any::<char>(), n).prop_map(String::from_iter));
    (
        any::<bool>(),
        name,
        record(),
        text(40),
        proptest::option::weighted(0.3, directive()),
    )
        .prop_map(|(triggering, name, mut context, description, directive)| {
            // Only a triggering event makes the agent act on a directive.
            if let Some(d) = directive.filter(|_| triggering) {
                context["wireprobe"] = d;
            }
            json!({"type": "context-update", "triggering": triggering, "name": name,
            "context": context, "description": description})
        })
}

fn tool_result() -> impl Strategy<Value = Value> {
    // The largest result the spec allows: 65,534 characters, 65,536 with its quotes.
    let result = prop_oneof![
        4 => text(32).prop_map(Value::from),
        4 => record(),
        1 => Just(Value::from("r".repeat(MAX_RESULT - 2))),
    ];
    (
        any::<bool>(),
        call_id(),
        ident(),
        proptest::sample::select(&OUTCOMES[..]),
        proptest::option::of(result),
        proptest::option::of(text(24)),
    )
        .prop_map(|(triggering, id, name, outcome, result, error)| {
            let mut e = json!({"type": "tool-result", "triggering": triggering, "toolCallId": id,
                "toolName": name, "outcome": outcome});
            if let Some(r) = result {
                e["result"] = r;
            }
            if let Some(err) = error.filter(|_| outcome == "failure") {
                e["error"] = json!(err);
            }
            e
        })
}

fn addon_event() -> impl Strategy<Value = Value> {
    (call_id(), 0u32..8, any::<bool>()).prop_map(|(id, index, success)| {
        json!({"type": "addon-tool-event", "toolCallId": id,
            "data": {"messageIndex": index, "success": success}})
    })
}

fn of_type(e: &Value, ty: &str) -> bool {
    e["type"] == ty
}

/// Removes one of `fields` from events of type `ty`.
fn drop_field(
    e: &Value,
    ty: &str,
    fields: &[&str],
    rng: &mut crate::fuzz_profile::Rng,
) -> Option<Input> {
    of_type(e, ty)
        .then(|| mutate::remove(e, &format!("/{}", rng.pick(fields))))
        .flatten()
        .map(Input::Event)
}

/// Gives one of `fields` of events of type `ty` a value of the wrong JSON type.
fn retype_field(
    e: &Value,
    ty: &str,
    fields: &[&str],
    rng: &mut crate::fuzz_profile::Rng,
) -> Option<Input> {
    if !of_type(e, ty) {
        return None;
    }
    let field = *rng.pick(fields);
    // The only optional field retyped, `error`, is a string when present.
    let current = e.get(field).cloned().unwrap_or_else(|| json!(""));
    let bad = mutate::wrong_type(&current, rng);
    mutate::set(e, &format!("/{field}"), bad).map(Input::Event)
}

const CU: [&str; 4] = ["triggering", "name", "context", "description"];
const TR: [&str; 4] = ["triggering", "toolCallId", "toolName", "outcome"];
const AE: [&str; 2] = ["toolCallId", "data"];
/// The spec's error example names `INVALID_EVENT` for a validation error (HUMA-ERR-002, a
/// should: another code is a `warn`, no error at all fails the validation rule).
const REJECT: Answer = Answer::Error(Some(INVALID_EVENT));
const INVALID_EVENT: &str = "INVALID_EVENT";

static MUTATORS: &[Mutator] = &[
    Mutator {
        name: "not-an-object",
        breaks: HUMA_VAL_001,
        answer: REJECT,
        apply: |e, rng| {
            Some(Input::Event(match rng.below(3) {
                0 => json!([e]),
                1 => json!("message"),
                _ => Value::Null,
            }))
        },
    },
    Mutator {
        name: "unknown-type",
        breaks: HUMA_VAL_001,
        answer: REJECT,
        apply: |e, rng| {
            let ty = e["type"].as_str().unwrap_or("context-update");
            let bad = match rng.below(4) {
                0 => "message".to_owned(),
                1 => ty.to_uppercase(),
                2 => ty.replace('-', "_"),
                _ => String::new(),
            };
            mutate::set(e, "/type", json!(bad)).map(Input::Event)
        },
    },
    Mutator {
        name: "context-update-missing-field",
        breaks: HUMA_VAL_002,
        answer: REJECT,
        apply: |e, rng| drop_field(e, "context-update", &CU, rng),
    },
    Mutator {
        name: "context-update-wrong-type",
        breaks: HUMA_VAL_002,
        answer: REJECT,
        apply: |e, rng| retype_field(e, "context-update", &CU, rng),
    },
    Mutator {
        name: "name-length",
        breaks: HUMA_VAL_002,
        answer: REJECT,
        apply: |e, rng| {
            // Mostly just past the limit: an empty name is refused by more servers.
            let len = if rng.below(4) == 0 { 0 } else { MAX_NAME + 1 };
            of_type(e, "context-update")
                .then(|| mutate::set(e, "/name", mutate::string_of(len)))
                .flatten()
                .map(Input::Event)
        },
    },
    Mutator {
        name: "tool-result-missing-field",
        breaks: HUMA_VAL_003,
        answer: REJECT,
        apply: |e, rng| drop_field(e, "tool-result", &TR, rng),
    },
    Mutator {
        name: "tool-result-wrong-type",
        breaks: HUMA_VAL_003,
        answer: REJECT,
        apply: |e, rng| {
            retype_field(
                e,
                "tool-result",
                &["triggering", "toolCallId", "toolName", "outcome", "error"],
                rng,
            )
        },
    },
    Mutator {
        name: "outcome-off-list",
        breaks: HUMA_VAL_003,
        answer: REJECT,
        apply: |e, rng| {
            let bad = rng.pick(&["succeeded", "Success", "cancelled", "error", ""]);
            of_type(e, "tool-result")
                .then(|| mutate::set(e, "/outcome", json!(bad)))
                .flatten()
                .map(Input::Event)
        },
    },
    Mutator {
        name: "result-too-long",
        breaks: HUMA_VAL_004,
        answer: REJECT,
        apply: |e, rng| {
            // 65,535 characters (65,537 serialised, just past the limit), or far past it but
            // under the 1,000,000 bytes Node's socket.io takes by default: a message over
            // that is refused by the transport (close 1009) before the rule could be judged.
            let len = match rng.below(4) {
                0 => 512 * 1024,
                _ => MAX_RESULT - 1 + rng.below(3),
            };
            of_type(e, "tool-result")
                .then(|| mutate::set(e, "/result", mutate::string_of(len)))
                .flatten()
                .map(Input::Event)
        },
    },
    Mutator {
        name: "addon-missing-field",
        breaks: HUMA_VAL_005,
        answer: REJECT,
        apply: |e, rng| drop_field(e, "addon-tool-event", &AE, rng),
    },
    Mutator {
        name: "addon-wrong-type",
        breaks: HUMA_VAL_005,
        answer: REJECT,
        apply: |e, rng| retype_field(e, "addon-tool-event", &AE, rng),
    },
    Mutator {
        name: "proto-pollution",
        breaks: HUMA_VAL_006,
        answer: REJECT,
        apply: |e, rng| {
            let path = match e["type"].as_str() {
                Some("context-update") => "/context",
                Some("addon-tool-event") => "/data",
                _ => return None,
            };
            let key = *rng.pick(&FORBIDDEN_KEYS);
            mutate::pollute(e, path, key, rng.below(6), rng.below(2) == 0).map(Input::Event)
        },
    },
    // A result is typed "any": a forbidden key there is rejected at should (ERRATA 8).
    Mutator {
        name: "proto-in-result",
        breaks: HUMA_VAL_008,
        answer: REJECT,
        apply: |e, rng| {
            if e["type"] != "tool-result" || !e["result"].is_object() {
                return None;
            }
            let key = *rng.pick(&FORBIDDEN_KEYS);
            mutate::pollute(e, "/result", key, rng.below(6), rng.below(2) == 0).map(Input::Event)
        },
    },
    Mutator {
        name: "invalid-json",
        breaks: HUMA_TR_002,
        answer: Answer::Unspecified,
        apply: |e, rng| Some(mutate::truncated(e, rng)),
    },
    Mutator {
        name: "invalid-utf8",
        breaks: HUMA_TR_002,
        answer: Answer::Unspecified,
        apply: |e, _| Some(mutate::invalid_utf8(e)),
    },
    Mutator {
        name: "lone-surrogate",
        breaks: HUMA_TR_002,
        answer: Answer::Unspecified,
        apply: |e, _| {
            // JSON text a JavaScript server parses and a strict parser refuses.
            of_type(e, "context-update")
                .then(|| mutate::raw_token(e, "/description", r#""a\ud800b""#))
                .flatten()
        },
    },
    Mutator {
        name: "deep-nesting",
        breaks: HUMA_TR_002,
        answer: Answer::Unspecified,
        apply: |e, _| mutate::deep_nesting(e, "/type", 10_000),
    },
];

/// The validation mutators, then the server-flow scenarios.
static ALL_MUTATORS: LazyLock<Vec<Mutator>> =
    LazyLock::new(|| [MUTATORS, scenarios::MUTATORS].concat());

impl FuzzProfile for HumaFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            HUMA_LC_003,
            "needs the spec's 30-second confirmation timeout to pass (messaging cases)",
        )]
    }
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        let event = prop_oneof![3 => context_update(), 2 => tool_result(), 1 => addon_event()];
        proptest::collection::vec(event, len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        &ALL_MUTATORS
    }

    fn oracles(&self, mutator: &Mutator, _input: &Input) -> Vec<Oracle> {
        scenarios::oracles(mutator.name)
    }

    /// A non-triggering context-update needs no answer: silence (no error, no disconnect)
    /// shows the connection is still usable.
    fn probe(&self) -> Probe {
        Probe {
            sends: vec![
                json!({"type": "context-update", "triggering": false, "name": "wireprobe-probe",
                "context": {}, "description": "liveness probe"}),
            ],
            answers: Vec::new(),
            error: json!({"channel": "error"}),
            rule: HUMA_ERR_003,
            answered_by: HUMA_ERR_003,
            ended: None,
            scenario: false,
        }
    }

    /// Generated tool-results and confirmations name calls and bursts the target never
    /// started; what it does with those the spec leaves open (HUMA-LC-006).
    fn answer_open(&self, event: &Value) -> bool {
        matches!(
            event["type"].as_str(),
            Some("tool-result" | "addon-tool-event")
        )
    }

    fn code_rule(&self, mutator: &Mutator) -> Option<&'static str> {
        matches!(mutator.answer, Answer::Error(Some(INVALID_EVENT))).then_some(HUMA_ERR_002)
    }

    /// Raw bytes go out as the argument of a `message` emit.
    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        let mut frame = b"42[\"message\",".to_vec();
        frame.extend_from_slice(bytes);
        frame.push(b']');
        frame
    }

    /// An input that is not JSON at all is HUMA-TR-002 (malformed Socket.IO input).
    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        let Some(event) = crate::fuzz_profile::input_json(input) else {
            return vec![HUMA_TR_002];
        };
        let event = event.as_ref();
        let mut rules: Vec<&'static str> = validate::client_event_violations(event)
            .into_iter()
            .map(|v| v.rule)
            .collect();
        rules.dedup();
        rules
    }
}
