//! HAIP inputs whose answer depends on the sequence around them. Out of order
//! (§Sequencing and Replay): a gap is answered by REPLAY_REQUEST after the 500 ms wait
//! (HAIP-SEQ-003/004), a duplicate is dropped silently (HAIP-SEQ-005), a resume resends what
//! came after `last_rx_seq` (HAIP-SEQ-008). Scenarios through the
//! README's directives: a run cancelled mid-way ends (HAIP-RUN-004),
//! a tool call cancelled mid-way ends with TOOL_DONE CANCELLED (HAIP-TOOL-003); a target that
//! does not obey the directive ends the run as skipped, never failed.

use super::model::USER_CHANNEL;
use super::values::{counter, of_types, uuid_from};
use crate::fuzz_profile::{input_json, mutate, Input, Mutator, Oracle, Rng};
use crate::rules::ids::{
    HAIP_PING_002, HAIP_RUN_004, HAIP_SEQ_003, HAIP_SEQ_004, HAIP_SEQ_005, HAIP_SEQ_008,
    HAIP_TOOL_003,
};
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
fn user_text(e: &Value, text: &str) -> Option<Value> {
    if !of_types(e, &["TEXT_MESSAGE_START"]) {
        return None;
    }
    let e = mutate::set(e, "/payload/author", json!("user"))?;
    mutate::set(&e, "/payload/text", json!(text))
}

/// `e`, a scenario's input, with an id of its own, which the live session keeps (it fills in
/// only what was left as generated): a refusal naming it tells the scenario at once that its
/// input was not taken, where waiting for the answer would take the whole step timeout.
fn own_id(e: Value, rng: &mut Rng) -> Option<Input> {
    mutate::set(&e, "/id", json!(uuid_from(rng))).map(Input::Event)
}

pub static MUTATORS: &[Mutator] = &[
    sequence_mutator!("seq-gap", HAIP_SEQ_003, |e, _| renumbered(e, 1)
        .map(Input::Event)),
    sequence_mutator!("seq-duplicate", HAIP_SEQ_005, |e, rng| {
        // A PING whose own nonce shows whether the duplicate was processed (a PONG).
        if !of_types(e, &["PING"]) {
            return None;
        }
        let nonce = format!("wireprobe-duplicate-{:016x}", rng.next_u64());
        mutate::set(&renumbered(e, -1)?, "/payload/nonce", json!(nonce)).map(Input::Event)
    }),
    sequence_mutator!("resume", HAIP_SEQ_008, |e, rng| {
        if !of_types(e, &["PING"]) {
            return None;
        }
        let nonce = format!("wireprobe-resume-{:016x}", rng.next_u64());
        mutate::set(e, "/payload/nonce", json!(nonce)).map(Input::Event)
    }),
    sequence_mutator!("cancel-run", HAIP_RUN_004, |e, rng| own_id(
        user_text(e, "wireprobe: slow 30000")?,
        rng
    )),
    // A tool call in place of a call or a PING (tool calls are rare in generated sequences).
    sequence_mutator!("cancel-tool", HAIP_TOOL_003, |e, rng| {
        if !of_types(e, &["TOOL_CALL", "PING"]) {
            return None;
        }
        let call_id = uuid_from(rng);
        let e = mutate::set(e, "/type", json!("TOOL_CALL"))?;
        let e = mutate::set(&e, "/channel", json!(USER_CHANNEL))?;
        let e = mutate::set(
            &e,
            "/payload",
            json!({"call_id": call_id, "tool": "wireprobe.slow", "params": {"ms": 4000}}),
        )?;
        own_id(e, rng)
    }),
];

/// The refusal, for credit, of our message whose id is `id`: what consumes credit is open
/// (suites/haip/ERRATA.md item 9), so a target counting more than we do, or a long run that
/// spent the credit, may refuse a scenario's message, which then ends as not reached.
fn refusal(id: &Value) -> Value {
    json!({"type": "ERROR", "payload": {"code": "FLOW_CONTROL_VIOLATION", "related_id": id}})
}

/// Any ERROR naming one of our messages whose ids are `ids`: however refused, a scenario's
/// own message not taken cannot start what the scenario is about (whether the ERROR was right
/// is the frame rules' to judge).
fn errors_naming<'v>(ids: impl IntoIterator<Item = Option<&'v Value>>) -> Vec<Value> {
    ids.into_iter()
        .flatten()
        .map(|id| json!({"type": "ERROR", "payload": {"related_id": id}}))
        .collect()
}

/// The id of a message of ours a scenario sends, named after `what` it is and `key` (the
/// scenario's message or call id, unique in the run).
fn named_id(what: &str, key: Option<&Value>) -> Value {
    let key = key.and_then(Value::as_str).unwrap_or("");
    json!(format!("${{uuid:fuzz-{what}-{key}}}"))
}

/// A message of ours the scenario must have taken, with an id of its own (see
/// [`named_id`]), and the reply it is owed, unless refused for credit.
fn taken(
    mut message: Value,
    key: Option<&Value>,
    reply: Vec<Value>,
    rule: &'static str,
) -> [Oracle; 2] {
    let id = named_id("cancel", key);
    message["id"] = id.clone();
    [
        Oracle::Send(message),
        Oracle::ReplyUnlessRefused {
            patterns: reply,
            rule,
            scenario: false,
            refused: vec![refusal(&id)],
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
                rule: HAIP_SEQ_004,
                // The spec's 500 ms timer ends it: a round trip measured long on a busy
                // machine would stretch it past the timer (a false HAIP-SEQ-004, seen).
                answer: false,
            },
            Oracle::Reply {
                patterns: vec![replay],
                rule: HAIP_SEQ_003,
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
                rule: HAIP_SEQ_005,
                // Counted from the sync's answer, by which the duplicate's has come.
                answer: false,
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
                    rule: HAIP_PING_002,
                    scenario: false,
                },
                Oracle::Send(json!({"type": "PING", "payload": {"nonce": second}})),
                Oracle::Reply {
                    patterns: vec![pong(second, "$capture:fuzz_s1")],
                    rule: HAIP_PING_002,
                    scenario: false,
                },
                Oracle::Resume(json!({"payload": {"last_rx_seq": "${fuzz_s0}"}})),
                Oracle::Reply {
                    patterns: vec![json!({"type": "PONG", "seq": "${fuzz_s1}"})],
                    rule: HAIP_SEQ_008,
                    scenario: false,
                },
            ]
        }
        "cancel-run" => {
            let message_id = sent.pointer("/payload/message_id").cloned();
            let end_id = named_id("end", message_id.as_ref());
            vec![
                Oracle::Send(json!({"type": "TEXT_MESSAGE_END", "id": end_id,
                    "payload": {"message_id": message_id}})),
                // A run may have opened with little credit, or paused a channel and not resumed
                // it: the answer owed must not wait for a grant that never comes.
                Oracle::Unblock,
                // No run starts from a message refused (its start or its end).
                Oracle::ReplyUnlessRefused {
                    patterns: vec![json!({"type": "RUN_STARTED", "run_id": "$capture:fuzz_run"})],
                    rule: HAIP_RUN_004,
                    scenario: true,
                    refused: errors_naming([sent.get("id"), Some(&end_id)]),
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
                HAIP_RUN_004,
            ))
            .collect()
        }
        "cancel-tool" => {
            let call_id = sent.pointer("/payload/call_id").cloned();
            vec![
                Oracle::Unblock,
                Oracle::ReplyUnlessRefused {
                    patterns: vec![json!({"type": "TOOL_UPDATE", "payload": {"call_id": call_id}})],
                    rule: HAIP_TOOL_003,
                    scenario: true,
                    // Or the call ended before any update (a target without the tool, say):
                    // there is nothing left to cancel.
                    refused: errors_naming([sent.get("id")])
                        .into_iter()
                        .chain([json!({"type": "TOOL_DONE", "payload": {"call_id": call_id}})])
                        .collect(),
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
                HAIP_TOOL_003,
            ))
            .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_profile::FuzzProfile;

    fn mutator(name: &str) -> &'static Mutator {
        MUTATORS
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no mutator {name}"))
    }

    /// The refusals a scenario's answer step gives way to, by the rule it judges.
    fn refusals_of(oracles: &[Oracle]) -> Vec<(&'static str, bool, Vec<Value>)> {
        oracles
            .iter()
            .filter_map(|o| match o {
                Oracle::ReplyUnlessRefused {
                    rule,
                    scenario,
                    refused,
                    ..
                } => Some((*rule, *scenario, refused.clone())),
                _ => None,
            })
            .collect()
    }

    fn related_ids(refused: &[Value]) -> Vec<Value> {
        refused
            .iter()
            .map(|r| r["payload"]["related_id"].clone())
            .collect()
    }

    /// A scenario whose input is refused for credit ends at once (it waited out the step
    /// timeout before, 2 s a run: 12 of 200 runs against `--variant little-credit`): the input
    /// goes out with an id of its own, which the answer step knows a refusal by.
    #[test]
    fn a_scenario_input_refused_for_credit_is_known_by_its_own_id() {
        let start = json!({"type": "TEXT_MESSAGE_START", "id": "00000000-0000-4000-8000-000000000001",
            "seq": "3", "channel": "USER",
            "payload": {"message_id": "m1", "author": "agent", "text": "hi"}});
        let ping = json!({"type": "PING", "id": "00000000-0000-4000-8000-000000000002",
            "seq": "4", "channel": "SYSTEM", "payload": {"nonce": "n"}});
        for (name, original) in [("cancel-run", &start), ("cancel-tool", &ping)] {
            let m = mutator(name);
            let input = (m.apply)(original, &mut Rng::new(5)).expect("applies");
            let Input::Event(sent) = &input else {
                panic!("{name}: an event")
            };
            let id = sent["id"].clone();
            assert_ne!(id, original["id"], "{name}: an id of its own");
            // The live session keeps it, filling in what was left as generated.
            let live = super::super::fuzz::HaipFuzz
                .live_event(original, sent)
                .expect("goes live");
            assert_eq!(live["id"], id, "{name}");

            let oracles = oracles(name, &input);
            let steps = refusals_of(&oracles);
            let (rule, scenario, refused) = &steps[0];
            assert!(scenario, "{name}: the scenario's own answer");
            let ids = related_ids(refused);
            assert!(ids.contains(&id), "{name} ({rule}): {ids:?}");
            if name == "cancel-tool" {
                // A call done before any update has nothing left to cancel.
                let done = json!({"type": "TOOL_DONE", "payload": {"call_id": sent["payload"]["call_id"]}});
                assert!(refused.contains(&done), "{refused:?}");
            }
            // Then the cancel, refusable by its own id.
            let (_, scenario, refused) = &steps[1];
            assert!(!scenario, "{name}: the cancel's answer is judged");
            assert_eq!(related_ids(refused).len(), 1, "{name}");
        }
        // The run's message ends with an id of its own too, which a refusal may name.
        let input = (mutator("cancel-run").apply)(&start, &mut Rng::new(5)).expect("applies");
        let oracles = oracles("cancel-run", &input);
        let Some(Oracle::Send(end)) = oracles.first() else {
            panic!("the run's message ends first: {oracles:?}")
        };
        let refused = &refusals_of(&oracles)[0].2;
        assert!(related_ids(refused).contains(&end["id"]), "{refused:?}");
    }
}
