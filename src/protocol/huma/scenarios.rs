//! HUMA server flows the fuzzer drives through the README's directives, each ending in what the
//! spec says the server owes: a held tool call cancelled by the next triggering event
//! (HUMA-LC-004) and its canceled result accepted (HUMA-VAL-007), a burst that waits for each confirmation (HUMA-LC-002), an aborted burst
//! closed with `typing_end` reason `canceled` (HUMA-LC-005). Each turns a generated
//! context-update into the triggering one that starts the flow; a target that does not obey
//! the directive ends the run as skipped, never failed.

use crate::fuzz_profile::{mutate, Input, Mutator, Oracle};
use crate::rules::ids::{HUMA_LC_002, HUMA_LC_004, HUMA_LC_005, HUMA_VAL_007};
use crate::sequence_mutator;
use serde_json::{json, Value};

/// `e`, a context-update, made triggering with `directive` in its context.
fn directing(e: &Value, directive: Value) -> Option<Input> {
    if e["type"] != "context-update" {
        return None;
    }
    let e = mutate::set(e, "/triggering", json!(true))?;
    let mut context = e["context"].clone();
    context
        .as_object_mut()?
        .insert("wireprobe".into(), directive);
    mutate::set(&e, "/context", context).map(Input::Event)
}

/// A server emit on the `event` channel matching `event`.
fn server_event(event: Value) -> Value {
    json!({"channel": "event", "event": event})
}

/// A triggering context-update that directs nothing: it interrupts the agent.
fn interruption() -> Value {
    json!({"type": "context-update", "triggering": true, "name": "wireprobe-interrupt",
        "context": {}, "description": "a new triggering event"})
}

pub static MUTATORS: &[Mutator] = &[
    sequence_mutator!("interrupt-held-tool", HUMA_LC_004, |e, _| directing(
        e,
        json!({"do": "hold-tool", "tool": "wireprobe_held"})
    )),
    sequence_mutator!("unconfirmed-message", HUMA_LC_002, |e, _| directing(
        e,
        json!({"do": "say", "messages": ["first", "second"]})
    )),
    sequence_mutator!("abort-burst", HUMA_LC_005, |e, _| directing(
        e,
        json!({"do": "say", "messages": ["a", "b", "c"]})
    )),
];

/// How long the second message of a burst must wait for a confirmation that never comes: well
/// under the spec's 30 s (and the builtin target's 2 s).
const UNCONFIRMED_MS: u64 = 500;

/// What the server owes after the input of scenario `name`.
pub fn oracles(name: &str) -> Vec<Oracle> {
    let message = |index: u64| {
        server_event(json!({"type": "messaging", "event": "message_sent", "messageIndex": index}))
    };
    match name {
        "interrupt-held-tool" => vec![
            Oracle::Reply {
                patterns: vec![server_event(json!({"type": "tool-call",
                    "toolName": "wireprobe_held", "toolCallId": "$capture:fuzz_call"}))],
                rule: HUMA_LC_004,
                scenario: true,
            },
            Oracle::Send(interruption()),
            Oracle::Reply {
                patterns: vec![server_event(
                    json!({"type": "cancel-tool-call", "toolName": "wireprobe_held"}),
                )],
                rule: HUMA_LC_004,
                scenario: false,
            },
            // The canceled result for that call is a valid event: no error answers it.
            Oracle::Send(json!({"type": "tool-result", "triggering": false,
                "toolCallId": "${fuzz_call}", "toolName": "wireprobe_held", "outcome": "canceled"})),
            Oracle::Silence {
                matching: vec![json!({"channel": "error"})],
                ms: 300,
                rule: HUMA_VAL_007,
                answer: true,
            },
        ],
        "unconfirmed-message" => vec![
            Oracle::Reply {
                patterns: vec![message(0)],
                rule: HUMA_LC_002,
                scenario: true,
            },
            Oracle::Silence {
                matching: vec![message(1)],
                ms: UNCONFIRMED_MS,
                rule: HUMA_LC_002,
                // The confirmation timeout ends it.
                answer: false,
            },
        ],
        "abort-burst" => vec![
            Oracle::Reply {
                patterns: vec![message(0)],
                rule: HUMA_LC_005,
                scenario: true,
            },
            Oracle::Send(interruption()),
            Oracle::Reply {
                patterns: vec![server_event(
                    json!({"type": "messaging", "event": "typing_end", "reason": "canceled"}),
                )],
                rule: HUMA_LC_005,
                scenario: false,
            },
        ],
        _ => Vec::new(),
    }
}
