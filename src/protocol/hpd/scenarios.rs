//! HPD flows the fuzzer drives through the README's directives, each ending in what the agent
//! owes: a failing turn still ends (HPD-TURN-001), a denied permission gets its outcome and the
//! call does not run (HPD-ASK-001, HPD-ASK-002 by the checker), an answered clarification lets
//! the turn end (HPD-ASK-003), an interruption ends a slow turn (HPD-INT-001), a response to a
//! request never issued is answered 404 (HPD-IN-004), and a stream resumed from the turn's
//! start delivers it again exactly (HPD-SSE-002, by the checker). Waits key on event types and
//! the ids the agent chose; a target that does not obey a directive ends the run as skipped.

use crate::fuzz_profile::{mutate, Input, Mutator, Oracle};
use crate::rules::ids::{
    HPD_ASK_001, HPD_ASK_003, HPD_INT_001, HPD_IN_004, HPD_SSE_002, HPD_TURN_001,
};
use crate::sequence_mutator;
use serde_json::{json, Value};

/// `e`, a text input, saying `text` instead.
fn saying(e: &Value, text: &str) -> Option<Input> {
    if e["type"] != "USER_TEXT_INPUT" {
        return None;
    }
    mutate::set(e, "/text", json!(text)).map(Input::Event)
}

fn reply(pattern: Value, rule: &'static str, scenario: bool) -> Oracle {
    Oracle::Reply {
        patterns: vec![pattern],
        rule,
        scenario,
    }
}

fn turn_end(rule: &'static str) -> Oracle {
    Oracle::Reply {
        patterns: vec![
            json!({"type": "MESSAGE_TURN_FINISHED"}),
            json!({"type": "MESSAGE_TURN_ERROR"}),
        ],
        rule,
        scenario: false,
    }
}

fn envelope(fields: Value) -> Value {
    let mut event = json!({"version": "1.0"});
    crate::protocol::merge(&mut event, &fields);
    event
}

pub static MUTATORS: &[Mutator] = &[
    sequence_mutator!("failing-turn", HPD_TURN_001, |e, _| saying(
        e,
        "wireprobe: fail"
    )),
    sequence_mutator!("permission-denied", HPD_ASK_001, |e, _| saying(
        e,
        "wireprobe: permission echo"
    )),
    sequence_mutator!("clarification", HPD_ASK_003, |e, _| saying(
        e,
        "wireprobe: clarify which one?"
    )),
    sequence_mutator!("interrupt-mid-turn", HPD_INT_001, |e, _| saying(
        e,
        "wireprobe: slow 6000"
    )),
    sequence_mutator!("resume-from-turn-start", HPD_SSE_002, |e, _| saying(
        e,
        "wireprobe: say again"
    )),
    sequence_mutator!("unknown-request-id", HPD_IN_004, |e, rng| {
        (e["type"] == "USER_TEXT_INPUT").then(|| {
            Input::Event(envelope(json!({
                "type": "PERMISSION_RESPONSE",
                "permissionId": format!("wireprobe-never-issued-{}", rng.next_u64()),
                "approved": true,
            })))
        })
    }),
];

/// What the agent owes after the input of scenario `name`.
pub fn oracles(name: &str) -> Vec<Oracle> {
    match name {
        "failing-turn" => vec![
            reply(json!({"type": "MESSAGE_TURN_STARTED"}), HPD_TURN_001, true),
            turn_end(HPD_TURN_001),
        ],
        // The call is made approved first: a denied call is told from one that ran by the
        // difference between their results (suites/hpd/ERRATA.md).
        "permission-denied" => vec![
            reply(
                json!({"type": "PERMISSION_REQUEST", "permissionId": "$capture:approved"}),
                HPD_ASK_001,
                true,
            ),
            Oracle::Send(envelope(json!({
                "type": "PERMISSION_RESPONSE", "permissionId": "${approved}", "approved": true,
            }))),
            turn_end(HPD_TURN_001),
            Oracle::Send(envelope(json!({
                "type": "USER_TEXT_INPUT", "text": "wireprobe: permission echo",
            }))),
            reply(
                json!({"type": "PERMISSION_REQUEST", "permissionId": "$capture:perm"}),
                HPD_ASK_001,
                true,
            ),
            Oracle::Send(envelope(json!({
                "type": "PERMISSION_RESPONSE", "permissionId": "${perm}", "approved": false,
            }))),
            reply(
                json!({"type": "PERMISSION_DENIED", "permissionId": "${perm}"}),
                HPD_ASK_001,
                false,
            ),
            turn_end(HPD_TURN_001),
        ],
        "clarification" => vec![
            reply(
                json!({"type": "CLARIFICATION_REQUEST", "requestId": "$capture:req"}),
                HPD_ASK_003,
                true,
            ),
            Oracle::Send(envelope(json!({
                "type": "CLARIFICATION_RESPONSE", "requestId": "${req}", "answer": "the first",
            }))),
            turn_end(HPD_ASK_003),
        ],
        "interrupt-mid-turn" => vec![
            // A block opened shows the turn under way: keyed on its start, not on a delta, so
            // an agent that sends the block's text whole at its end is interrupted too (it
            // waited out the step timeout before, 44 of 120 runs with `--variant whole-text`).
            Oracle::Reply {
                patterns: vec![
                    json!({"type": "TEXT_MESSAGE_START"}),
                    json!({"type": "TEXT_DELTA"}),
                ],
                rule: HPD_INT_001,
                scenario: true,
            },
            Oracle::Send(envelope(json!({
                "type": "INTERRUPTION_REQUEST", "reason": "fuzz", "source": "User",
            }))),
            Oracle::Reply {
                patterns: vec![
                    json!({"type": "MESSAGE_TURN_FINISHED"}),
                    json!({"type": "MESSAGE_TURN_ERROR"}),
                    json!({"type": "INTERRUPTION_HANDLED"}),
                ],
                rule: HPD_INT_001,
                scenario: false,
            },
        ],
        "resume-from-turn-start" => vec![
            reply(
                json!({"type": "MESSAGE_TURN_STARTED", "$sse": {"id": "$capture:from"}}),
                HPD_SSE_002,
                true,
            ),
            turn_end(HPD_TURN_001),
            Oracle::Send(json!({"$stream": {"after": "${from}"}})),
            turn_end(HPD_SSE_002),
        ],
        "unknown-request-id" => vec![reply(json!({"$http": {"status": 404}}), HPD_IN_004, false)],
        _ => Vec::new(),
    }
}
