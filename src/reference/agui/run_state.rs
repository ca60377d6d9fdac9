//! One run's stream as the reference client reads it: each event's data checked as a consumer
//! must (Processing Model › The rule; Runs and Steps › After a run closes), what the run
//! delivered gathered for the thread (text and tool messages, activity messages, tool calls,
//! the state). The client's faults that concern reading live here.

use crate::protocol::agui::patches::{apply, apply_partial};
use crate::protocol::agui::schema::{schema, Flaw};
use crate::reference::Faults;
use serde_json::{json, Value};

/// Content part types this version names; a tool result's part of another kind is dropped
/// before the result travels back (Processing Model › Outgoing material).
const KNOWN_PARTS: &[&str] = &["text", "image", "audio", "video", "document"];

/// A tool call the run streamed.
#[derive(Debug, Clone)]
pub struct StreamedCall {
    pub id: String,
    pub name: String,
    pub parent: Option<String>,
    pub args: String,
    pub ended: bool,
    /// The agent answered it (TOOL_CALL_RESULT).
    pub answered: bool,
}

/// What one run delivered.
pub struct RunState {
    /// The messages the run minted, in order (text, tool results, activity).
    pub messages: Vec<Value>,
    pub calls: Vec<StreamedCall>,
    pub state: Value,
    /// RUN_FINISHED came, with the success outcome or none, and the run did not fail after.
    pub succeeded: bool,
    /// The run closed: what follows but a new run is rejected.
    closed: bool,
    /// The run failed: nothing after counts.
    failed: bool,
    /// Text messages open, by id: role and text so far.
    texts: Vec<(String, String, String)>,
    accepts_after_close: bool,
    coerces: bool,
    stops_on_unknown: bool,
    partial_patch: bool,
    merges_snapshot: bool,
}

impl RunState {
    pub fn new(faults: &Faults, state: Value) -> RunState {
        RunState {
            messages: Vec::new(),
            calls: Vec::new(),
            state,
            succeeded: false,
            closed: false,
            failed: false,
            texts: Vec::new(),
            accepts_after_close: faults.has("accepts-after-close"),
            coerces: faults.has("coerces-malformed"),
            stops_on_unknown: faults.has("stops-on-unknown"),
            partial_patch: faults.has("partial-patch"),
            merges_snapshot: faults.has("merges-snapshot"),
        }
    }

    /// Takes one SSE event's data; false when the client stops reading the stream.
    pub fn take(&mut self, data: &str) -> bool {
        if self.failed {
            return false;
        }
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            // Not one JSON event: malformed transport material, fatal to the run.
            return self.fail();
        };
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
        if !schema().knows(ty) {
            if self.stops_on_unknown {
                return self.fail();
            }
            return true;
        }
        if self.closed && !matches!(ty, "RUN_STARTED" | "RUN_ERROR") && !self.accepts_after_close {
            // Rejected: it belongs to no run.
            return true;
        }
        let malformed = schema()
            .event_flaws(ty, &event)
            .is_some_and(|f| f.iter().any(|f| matches!(f, Flaw::Malformed { .. })));
        if malformed && !self.coerces {
            return self.fail();
        }
        self.event(ty, &event);
        true
    }

    /// The run fails here: nothing after counts, and it finished nothing.
    pub fn fail(&mut self) -> bool {
        self.failed = true;
        self.succeeded = false;
        false
    }

    fn event(&mut self, ty: &str, event: &Value) {
        let text = |field: &str| event.get(field).and_then(Value::as_str).map(str::to_owned);
        // A coerced value: a number read as its text.
        let loose = |field: &str| match event.get(field) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        match ty {
            "RUN_STARTED" => {
                self.closed = false;
                self.succeeded = false;
            }
            "RUN_FINISHED" => {
                self.closed = true;
                let outcome = event.pointer("/outcome/type").and_then(Value::as_str);
                self.succeeded = matches!(outcome, None | Some("success"));
            }
            "RUN_ERROR" => {
                self.closed = true;
                self.succeeded = false;
            }
            "TEXT_MESSAGE_START" => {
                if let Some(id) = text("messageId") {
                    let role = text("role").unwrap_or_else(|| "assistant".into());
                    self.texts.push((id, role, String::new()));
                }
            }
            "TEXT_MESSAGE_CONTENT" => {
                let id = text("messageId");
                if let Some(open) = self.texts.iter_mut().find(|t| Some(&t.0) == id.as_ref()) {
                    open.2.push_str(&loose("delta"));
                }
            }
            "TEXT_MESSAGE_END" => {
                let id = text("messageId");
                if let Some(at) = self.texts.iter().position(|t| Some(&t.0) == id.as_ref()) {
                    let (id, role, content) = self.texts.remove(at);
                    self.messages
                        .push(json!({"id": id, "role": role, "content": content}));
                }
            }
            "TOOL_CALL_START" => {
                if let (Some(id), Some(name)) = (text("toolCallId"), text("toolCallName")) {
                    self.calls.push(StreamedCall {
                        id,
                        name,
                        parent: text("parentMessageId"),
                        args: String::new(),
                        ended: false,
                        answered: false,
                    });
                }
            }
            "TOOL_CALL_ARGS" => {
                let id = text("toolCallId");
                if let Some(call) = self.calls.iter_mut().find(|c| Some(&c.id) == id.as_ref()) {
                    call.args.push_str(&loose("delta"));
                }
            }
            "TOOL_CALL_END" => {
                let id = text("toolCallId");
                if let Some(call) = self.calls.iter_mut().find(|c| Some(&c.id) == id.as_ref()) {
                    call.ended = true;
                }
            }
            "TOOL_CALL_RESULT" => self.result(event),
            "ACTIVITY_SNAPSHOT" => {
                if let Some(id) = text("messageId") {
                    self.messages.retain(|m| m["id"] != id.as_str());
                    self.messages.push(json!({"id": id, "role": "activity",
                        "activityType": event["activityType"], "content": event["content"]}));
                }
            }
            "STATE_SNAPSHOT" => {
                let snapshot = event.get("snapshot").cloned().unwrap_or(Value::Null);
                match (&mut self.state, snapshot) {
                    (Value::Object(had), Value::Object(new)) if self.merges_snapshot => {
                        had.extend(new);
                    }
                    (state, snapshot) => *state = snapshot,
                }
            }
            "STATE_DELTA" => {
                let delta = event.get("delta").cloned().unwrap_or(Value::Null);
                match self.partial_patch {
                    true => apply_partial(&mut self.state, &delta),
                    // A patch that does not apply leaves the state as it was.
                    false => {
                        let _ = apply(&mut self.state, &delta);
                    }
                }
            }
            _ => {}
        }
    }

    /// A backend call's result: a tool message for the history, unknown parts dropped.
    fn result(&mut self, event: &Value) {
        let Some(call) = event.get("toolCallId").and_then(Value::as_str) else {
            return;
        };
        if let Some(c) = self.calls.iter_mut().find(|c| c.id == call) {
            c.answered = true;
        }
        let content = match event.get("content") {
            Some(Value::Array(parts)) => Value::Array(
                parts
                    .iter()
                    .filter(|p| {
                        p.get("type")
                            .and_then(Value::as_str)
                            .is_some_and(|t| KNOWN_PARTS.contains(&t))
                    })
                    .cloned()
                    .collect(),
            ),
            Some(other) => other.clone(),
            None => json!(""),
        };
        self.messages
            .push(json!({"id": event["messageId"], "role": "tool",
            "toolCallId": call, "content": content}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_read_as_a_consumer_must() {
        let none = Faults::default();
        let mut run = RunState::new(&none, json!({}));
        for e in [
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "WIREPROBE_FUTURE", "x": 1}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}}),
            json!({"type": "STATE_DELTA", "delta": [
                {"op": "add", "path": "/b", "value": 2},
                {"op": "test", "path": "/a", "value": 9}]}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "t"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "late", "toolCallName": "t"}),
        ] {
            assert!(run.take(&e.to_string()), "{e}");
        }
        assert!(run.succeeded);
        assert_eq!(run.state, json!({"a": 1}));
        assert_eq!(run.calls.len(), 1, "the call after the close is rejected");
        let mut run = RunState::new(&none, json!({}));
        assert!(run.take(r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#));
        let malformed = r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":42}"#;
        assert!(
            !run.take(malformed),
            "a malformed known value fails the run"
        );
        assert!(!run.succeeded);
    }
}
