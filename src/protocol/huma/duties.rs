//! What the client owes the server, followed across a transcript (HUMA-CLI-*): each tool-call
//! answered once with its own id and name, a cancel answered with a canceled result and nothing
//! else after it, each message_sent confirmed with its index echoed.
//!
//! What the client fails to send at all (no result, no confirmation) is a case's to judge: a
//! transcript cut anywhere would otherwise blame a client for what it had no time to do.

use super::validate::message_index;
use crate::rules::ids::{HUMA_CLI_002, HUMA_CLI_004, HUMA_CLI_005, HUMA_CLI_006, HUMA_CLI_007};
use crate::rules::{Exercised, Violation};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Calls, bursts and confirmations remembered at most (a flood cannot grow memory).
const MAX_TRACKED: usize = 4096;

/// A result that lands this soon after wireprobe's cancel may have left the client before the
/// cancel arrived: not judged as "after the cancel".
const CANCEL_RACE_MS: u64 = 100;

/// A tool call the server issued, as the client's duties see it.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    /// When the server cancelled it, if it did.
    canceled_at: Option<u64>,
    answered: bool,
}

/// The client's duties towards what the server sent.
#[derive(Debug, Default)]
pub struct ClientDuties {
    calls: HashMap<String, Call>,
    /// (toolCallId, messageIndex) of every message_sent.
    sent: HashSet<(String, u64)>,
    /// A server frame was too long for the transcript to keep whole: what it issued is
    /// unknown, so an answer naming something unseen is not judged.
    unseen: bool,
    /// The HUMA-CLI-* rules judged since the checker last asked.
    exercised: Exercised,
}

fn str_field<'a>(event: &'a Value, name: &str) -> Option<&'a str> {
    event.get(name).and_then(Value::as_str)
}

impl ClientDuties {
    /// True when the server issued the call `id` and the client has not answered it.
    pub fn is_outstanding(&self, id: &str) -> bool {
        self.calls.get(id).is_some_and(|call| !call.answered)
    }

    /// Moves the rules judged since last asked into `into`.
    pub fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
    }

    /// A server frame the transcript did not keep whole.
    pub fn on_unreadable_server_frame(&mut self) {
        self.unseen = true;
    }

    /// A server event on the `event` channel.
    pub fn on_server(&mut self, at_ms: u64, event: &Value) {
        let id = str_field(event, "toolCallId").unwrap_or("").to_owned();
        match str_field(event, "type") {
            Some("tool-call") => {
                // Full: answered calls go first (only a second answer to one is then missed),
                // so a long run of answered calls never crowds out the outstanding ones.
                if self.calls.len() >= MAX_TRACKED {
                    self.calls.retain(|_, call| !call.answered);
                }
                if self.calls.len() >= MAX_TRACKED {
                    return;
                }
                let name = str_field(event, "toolName").unwrap_or("").to_owned();
                self.calls.insert(
                    id,
                    Call {
                        name,
                        canceled_at: None,
                        answered: false,
                    },
                );
            }
            Some("cancel-tool-call") => {
                if let Some(call) = self.calls.get_mut(&id).filter(|c| !c.answered) {
                    call.canceled_at.get_or_insert(at_ms);
                }
            }
            Some("messaging") if str_field(event, "event") == Some("message_sent") => {
                if let Some(index) = message_index(event.get("messageIndex")) {
                    if self.sent.len() < MAX_TRACKED {
                        self.sent.insert((id, index));
                    }
                }
            }
            _ => {}
        }
    }

    /// A client event emitted on `message` that passed the field checks.
    pub fn on_client(&mut self, at_ms: u64, event: &Value, out: &mut Vec<Violation>) {
        match str_field(event, "type") {
            Some("tool-result") => self.on_result(at_ms, event, out),
            Some("addon-tool-event") => self.on_confirmation(event, out),
            _ => {}
        }
    }

    fn on_result(&mut self, at_ms: u64, event: &Value, out: &mut Vec<Violation>) {
        let id = str_field(event, "toolCallId").unwrap_or("");
        let name = str_field(event, "toolName").unwrap_or("");
        let outcome = str_field(event, "outcome").unwrap_or("");
        // Each outcome's own rule is judged on results with that outcome only.
        match outcome {
            "failure" => self.exercised.hit(HUMA_CLI_004),
            "canceled" => self.exercised.hit(HUMA_CLI_006),
            _ => {}
        }
        if outcome == "failure" && str_field(event, "error").is_none() {
            out.push(Violation::new(
                HUMA_CLI_004,
                format!("the failure result for {id:?} carries no error message"),
            ));
        }
        if outcome == "canceled" && event.get("triggering") == Some(&Value::Bool(true)) {
            out.push(Violation::new(
                HUMA_CLI_006,
                format!("the canceled result for {id:?} has triggering true"),
            ));
        }
        let Some(call) = self.calls.get_mut(id) else {
            // A call issued in a frame the transcript did not keep: nothing to judge against.
            if self.unseen {
                return;
            }
            self.exercised.hit(HUMA_CLI_002);
            out.push(Violation::new(
                HUMA_CLI_002,
                format!("a tool-result names toolCallId {id:?}, which no tool-call issued"),
            ));
            return;
        };
        // A result for a call the server issued: once, with its name.
        self.exercised.hit(HUMA_CLI_002);
        if call.answered {
            out.push(Violation::new(
                HUMA_CLI_002,
                format!("a second tool-result for toolCallId {id:?} ({outcome})"),
            ));
            return;
        }
        call.answered = true;
        if call.name != name {
            out.push(Violation::new(
                HUMA_CLI_002,
                format!(
                    "the tool-result for {id:?} names tool {name:?}; the tool-call named {:?}",
                    call.name
                ),
            ));
        }
        if let Some(canceled_at) = call.canceled_at {
            // The result to a cancelled call: its outcome is judged.
            self.exercised.hit(HUMA_CLI_005);
            let after_race = at_ms.saturating_sub(canceled_at) > CANCEL_RACE_MS;
            if outcome != "canceled" && after_race {
                out.push(Violation::new(
                    HUMA_CLI_005,
                    format!(
                        "after the cancel-tool-call, the result for {id:?} has outcome {outcome:?}, not canceled"
                    ),
                ));
            }
        }
    }

    fn on_confirmation(&mut self, event: &Value, out: &mut Vec<Violation>) {
        let id = str_field(event, "toolCallId").unwrap_or("");
        let data = event.get("data");
        let index = data.and_then(|d| d.get("messageIndex"));
        // An addon event that is not a messaging confirmation is the addon's business.
        let Some(index) = index else {
            return;
        };
        self.exercised.hit(HUMA_CLI_007);
        let mut wrong = |why: String| out.push(Violation::new(HUMA_CLI_007, why));
        match message_index(Some(index)) {
            Some(i) if self.unseen || self.sent.contains(&(id.to_owned(), i)) => {}
            Some(i) => wrong(format!(
                "a confirmation names toolCallId {id:?} and messageIndex {i}, which no message_sent carried"
            )),
            None => wrong(format!("a confirmation's messageIndex is {index}, not an index")),
        }
        let field = |name: &str| data.and_then(|d| d.get(name));
        if !field("success").is_some_and(Value::is_boolean) {
            wrong(format!(
                "the confirmation for {id:?} has no boolean success"
            ));
        }
        if field("context").is_some_and(|c| !c.is_object()) {
            wrong(format!(
                "the confirmation for {id:?} has a context that is not an object"
            ));
        }
        if field("error").is_some_and(|e| !e.is_string()) {
            wrong(format!(
                "the confirmation for {id:?} has an error that is not a string"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(out: &[Violation]) -> Vec<&str> {
        out.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn each_call_is_answered_once_with_its_own_name() {
        let mut duties = ClientDuties::default();
        duties.on_server(
            0,
            &json!({"type": "tool-call", "toolCallId": "a", "toolName": "t", "arguments": {}}),
        );
        let mut out = Vec::new();
        let result = json!({"type": "tool-result", "triggering": true, "toolCallId": "a", "toolName": "t", "outcome": "success"});
        duties.on_client(1, &result, &mut out);
        assert!(out.is_empty(), "{out:?}");
        duties.on_client(2, &result, &mut out);
        let stranger = json!({"type": "tool-result", "triggering": true, "toolCallId": "zz", "toolName": "t", "outcome": "success"});
        duties.on_client(3, &stranger, &mut out);
        assert_eq!(rules(&out), ["HUMA-CLI-002", "HUMA-CLI-002"]);
        duties.on_server(
            4,
            &json!({"type": "tool-call", "toolCallId": "b", "toolName": "t"}),
        );
        out.clear();
        duties.on_client(5, &json!({"type": "tool-result", "triggering": true, "toolCallId": "b", "toolName": "other", "outcome": "failure"}), &mut out);
        assert_eq!(rules(&out), ["HUMA-CLI-004", "HUMA-CLI-002"]);
    }

    #[test]
    fn answered_calls_make_room_for_new_ones() {
        let mut duties = ClientDuties::default();
        let mut out = Vec::new();
        for i in 0..=MAX_TRACKED {
            let id = format!("c{i}");
            duties.on_server(
                0,
                &json!({"type": "tool-call", "toolCallId": id, "toolName": "t"}),
            );
            assert!(duties.is_outstanding(&id), "call {i} is known");
            duties.on_client(1, &json!({"type": "tool-result", "triggering": true, "toolCallId": id, "toolName": "t", "outcome": "success"}), &mut out);
            assert!(!duties.is_outstanding(&id));
        }
        assert!(out.is_empty(), "{:?}", out.first());
    }

    #[test]
    fn a_cancel_wants_a_canceled_result_unless_the_answer_crossed_it() {
        let mut duties = ClientDuties::default();
        for id in ["a", "b", "c"] {
            duties.on_server(
                0,
                &json!({"type": "tool-call", "toolCallId": id, "toolName": "t"}),
            );
            duties.on_server(
                1000,
                &json!({"type": "cancel-tool-call", "toolCallId": id, "toolName": "t"}),
            );
        }
        let mut out = Vec::new();
        let result = |id: &str, outcome: &str, triggering: bool| json!({"type": "tool-result", "triggering": triggering, "toolCallId": id, "toolName": "t", "outcome": outcome});
        duties.on_client(1050, &result("a", "success", true), &mut out);
        assert!(out.is_empty(), "crossed the cancel: {out:?}");
        duties.on_client(1500, &result("b", "success", true), &mut out);
        duties.on_client(1500, &result("c", "canceled", true), &mut out);
        assert_eq!(rules(&out), ["HUMA-CLI-005", "HUMA-CLI-006"]);
    }

    #[test]
    fn confirmations_echo_a_sent_index() {
        let mut duties = ClientDuties::default();
        duties.on_server(0, &json!({"type": "messaging", "event": "message_sent", "toolCallId": "m", "message": "hi", "messageIndex": 0, "messageCount": 1}));
        let mut out = Vec::new();
        let confirm = |index: Value, data: Value| {
            let mut data = data;
            data["messageIndex"] = index;
            json!({"type": "addon-tool-event", "toolCallId": "m", "data": data})
        };
        duties.on_client(
            1,
            &confirm(json!(0.0), json!({"success": true, "context": {}})),
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        duties.on_client(2, &confirm(json!(1), json!({"success": true})), &mut out);
        duties.on_client(
            3,
            &confirm(json!(0), json!({"success": "yes", "error": 5})),
            &mut out,
        );
        assert_eq!(
            rules(&out),
            ["HUMA-CLI-007", "HUMA-CLI-007", "HUMA-CLI-007"]
        );
        out.clear();
        // Another addon's in-flight data is not a messaging confirmation.
        duties.on_client(
            4,
            &json!({"type": "addon-tool-event", "toolCallId": "x", "data": {"progress": 1}}),
            &mut out,
        );
        assert!(out.is_empty());
    }
}
