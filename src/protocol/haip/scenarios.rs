//! HAIP inputs whose answer depends on the sequence around them. Out of order
//! (§Sequencing and Replay): a gap is answered by REPLAY_REQUEST after the 500 ms wait
//! (HAIP-SEQ-003/004), a duplicate is dropped silently (HAIP-SEQ-005), a resume resends what
//! came after `last_rx_seq` (HAIP-SEQ-008). Scenarios through the
//! README's directives: a run cancelled mid-way ends (HAIP-RUN-004),
//! a tool call cancelled mid-way ends with TOOL_DONE CANCELLED (HAIP-TOOL-003); a target that
//! does not obey the directive ends the run as skipped, never failed.

use super::fuzz::{counter, of_types, uuid_from};
use super::model::USER_CHANNEL;
use crate::fuzz::{input_json, mutate, Input, Mutator, Oracle};
use crate::sequence_mutator;
use serde_json::{json, Value};

/// `e` numbered `delta` away from its own place in the sequence (never the HAI, which the live
/// session sends itself). Live, the session turns the shift into `$skip` or `$repeat`.
fn renumbered(e: &Value, delta: i64) -> Option<Value> {
    if of_types(e, &["HAI"]) {
        return None;
    }
    let seq = counter(e, "seq")?
        .checked_add_signed(delta)
        .filter(|s| *s >= 1)?;
    mutate::set(e, "/seq", json!(seq.to_string()))
}

/// `e`, a user TEXT_MESSAGE_START, with `text` as its text.
fn user_text(e: &Value, text: &str) -> Option<Input> {
    if !of_types(e, &["TEXT_MESSAGE_START"]) {
        return None;
    }
    let e = mutate::set(e, "/payload/author", json!("user"))?;
    mutate::set(&e, "/payload/text", json!(text)).map(Input::Event)
}

pub static MUTATORS: &[Mutator] = &[
    sequence_mutator!("seq-gap", "HAIP-SEQ-003", |e, _| renumbered(e, 1)
        .map(Input::Event)),
    sequence_mutator!("seq-duplicate", "HAIP-SEQ-005", |e, rng| {
        // A PING whose own nonce shows whether the duplicate was processed (a PONG).
        if !of_types(e, &["PING"]) {
            return None;
        }
        let nonce = format!("wireprobe-duplicate-{:016x}", rng.next_u64());
        mutate::set(&renumbered(e, -1)?, "/payload/nonce", json!(nonce)).map(Input::Event)
    }),
    sequence_mutator!("resume", "HAIP-SEQ-008", |e, rng| {
        if !of_types(e, &["PING"]) {
            return None;
        }
        let nonce = format!("wireprobe-resume-{:016x}", rng.next_u64());
        mutate::set(e, "/payload/nonce", json!(nonce)).map(Input::Event)
    }),
    sequence_mutator!("cancel-run", "HAIP-RUN-004", |e, _| user_text(
        e,
        "wireprobe: slow 30000"
    )),
    // A tool call in place of a call or a PING (tool calls are rare in generated sequences).
    sequence_mutator!("cancel-tool", "HAIP-TOOL-003", |e, rng| {
        if !of_types(e, &["TOOL_CALL", "PING"]) {
            return None;
        }
        let call_id = uuid_from(rng);
        let e = mutate::set(e, "/type", json!("TOOL_CALL"))?;
        let e = mutate::set(&e, "/channel", json!(USER_CHANNEL))?;
        mutate::set(
            &e,
            "/payload",
            json!({"call_id": call_id, "tool": "wireprobe.slow", "params": {"ms": 4000}}),
        )
        .map(Input::Event)
    }),
];

/// A message of ours the scenario must have taken, with an id of its own (named after `key`,
/// the scenario's message or call id, unique in the run), and the refusal naming it that ends
/// the scenario as not reached: what consumes credit is open (suites/haip/ERRATA.md item 9),
/// so a target counting more than we do, or a long run that spent the credit, may refuse it.
/// The reply it is owed, unless so refused.
fn taken(
    mut message: Value,
    key: Option<&Value>,
    reply: Vec<Value>,
    rule: &'static str,
) -> [Oracle; 2] {
    let key = key.and_then(Value::as_str).unwrap_or("");
    let id = format!("${{uuid:fuzz-cancel-{key}}}");
    message["id"] = json!(id);
    let refused = json!({"type": "ERROR",
        "payload": {"code": "FLOW_CONTROL_VIOLATION", "related_id": id}});
    [
        Oracle::Send(message),
        Oracle::ReplyUnlessRefused {
            patterns: reply,
            rule,
            refused: vec![refused],
        },
    ]
}

/// What the target owes after the input of `name`.
pub fn oracles(name: &str, input: &Input) -> Vec<Oracle> {
    let sent = input_json(input)
        .map(|e| e.into_owned())
        .unwrap_or_default();
    let replay = json!({"type": "REPLAY_REQUEST"});
    match name {
        "seq-gap" => vec![
            Oracle::Silence {
                matching: vec![replay.clone()],
                ms: 400,
                rule: "HAIP-SEQ-004",
            },
            Oracle::Reply {
                patterns: vec![replay],
                rule: "HAIP-SEQ-003",
                scenario: false,
            },
            // The target holds everything after the gap: go on from a new session.
            Oracle::Restart,
        ],
        // The sync PING is answered after the duplicate would have been: by then neither the
        // duplicate's PONG nor an ERROR may be there.
        "seq-duplicate" => vec![
            Oracle::Sync,
            Oracle::Silence {
                matching: vec![
                    json!({"type": "PONG", "payload": {"nonce": sent.pointer("/payload/nonce")}}),
                    json!({"type": "ERROR"}),
                ],
                ms: 50,
                rule: "HAIP-SEQ-005",
            },
        ],
        "resume" => {
            // Two PONGs; a resume from the first one's seq must resend the second.
            let nonce = sent.pointer("/payload/nonce").cloned();
            let pong = |nonce: Value, seq: &str| json!({"type": "PONG", "seq": seq, "payload": {"nonce": nonce}});
            let second = json!(format!(
                "{}-again",
                nonce.as_ref().and_then(Value::as_str).unwrap_or("")
            ));
            vec![
                Oracle::Reply {
                    patterns: vec![pong(nonce.clone().unwrap_or_default(), "$capture:fuzz_s0")],
                    // A PONG without the nonce breaks HAIP-PING-002 (it may not find this one).
                    rule: "HAIP-PING-002",
                    scenario: false,
                },
                Oracle::Send(json!({"type": "PING", "payload": {"nonce": second}})),
                Oracle::Reply {
                    patterns: vec![pong(second, "$capture:fuzz_s1")],
                    rule: "HAIP-PING-002",
                    scenario: false,
                },
                Oracle::Resume(json!({"payload": {"last_rx_seq": "${fuzz_s0}"}})),
                Oracle::Reply {
                    patterns: vec![json!({"type": "PONG", "seq": "${fuzz_s1}"})],
                    rule: "HAIP-SEQ-008",
                    scenario: false,
                },
            ]
        }
        "cancel-run" => {
            let message_id = sent.pointer("/payload/message_id").cloned();
            vec![
                Oracle::Send(
                    json!({"type": "TEXT_MESSAGE_END", "payload": {"message_id": message_id}}),
                ),
                // A run may have opened with little credit, or paused a channel and not resumed
                // it: the answer owed must not wait for a grant that never comes.
                Oracle::Unblock,
                Oracle::Reply {
                    patterns: vec![json!({"type": "RUN_STARTED", "run_id": "$capture:fuzz_run"})],
                    rule: "HAIP-RUN-004",
                    scenario: true,
                },
                // Now for the channel the run came on too, whose credit its own messages spend.
                Oracle::Unblock,
            ]
            .into_iter()
            .chain(taken(
                json!({"type": "RUN_CANCEL", "run_id": "${fuzz_run}",
                    "payload": {"run_id": "${fuzz_run}"}}),
                message_id.as_ref(),
                // The run started may be an earlier one whose RUN_STARTED was held back (by
                // credit, say) and which may have ended on its own: any end of the run the
                // cancel named answers. Ours streams for 30 s, so one that ignores the cancel
                // does not end within the step timeout.
                vec![
                    json!({"type": "RUN_FINISHED", "run_id": "${fuzz_run}"}),
                    json!({"type": "RUN_ERROR", "run_id": "${fuzz_run}"}),
                ],
                "HAIP-RUN-004",
            ))
            .collect()
        }
        "cancel-tool" => {
            let call_id = sent.pointer("/payload/call_id").cloned();
            vec![
                Oracle::Unblock,
                Oracle::Reply {
                    patterns: vec![json!({"type": "TOOL_UPDATE", "payload": {"call_id": call_id}})],
                    rule: "HAIP-TOOL-003",
                    scenario: true,
                },
                Oracle::Unblock,
            ]
            .into_iter()
            .chain(taken(
                json!({"type": "TOOL_CANCEL",
                    "payload": {"call_id": call_id, "reason": "wireprobe cancels"}}),
                call_id.as_ref(),
                vec![json!({"type": "TOOL_DONE",
                    "payload": {"call_id": call_id, "status": "CANCELLED"}})],
                "HAIP-TOOL-003",
            ))
            .collect()
        }
        _ => Vec::new(),
    }
}
