//! wireprobe's side of a UAE connection: it plays the Web UI and the API Executor of an agent
//! under test, or the Agent of an executor under test. It fills each outgoing envelope (a
//! fresh `evt_` id, the time, a fresh `tr_` trace, the connection's session), keeping what the
//! step sets itself, and answers each tool.call an agent makes with a successful tool.result.

use super::validate;
use crate::protocol::json::timestamp;
use crate::protocol::{merge, Decoded, ProtocolError, Session};
use crate::transport::{Frame, Outgoing};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::SystemTime;

/// One connection's session: the `session_id` every event wireprobe sends carries.
#[derive(Debug)]
pub struct UaeSession {
    session_id: String,
    /// wireprobe serves a client under test (a Web UI, or an agent calling its executor): the
    /// session is the one the client's first event names, once it has named one.
    adopts: bool,
    adopted: bool,
    /// wireprobe is the executor of an agent (under test as a server, or as a client calling
    /// it over stdio): each tool.call gets a result.
    answers_calls: bool,
    /// The valid calls wireprobe made (as the Agent of an executor under test) whose trace
    /// nothing the target sent has named yet; `None` until it made one.
    unanswered_calls: Option<HashSet<String>>,
}

/// Calls followed for [`Session::settled`] at most: past them, new ones are not followed.
const MAX_FOLLOWED_CALLS: usize = 4096;

impl Default for UaeSession {
    fn default() -> Self {
        UaeSession {
            session_id: fresh("sess"),
            adopts: false,
            adopted: false,
            answers_calls: true,
            unanswered_calls: None,
        }
    }
}

/// A fresh id with the prefix the spec's envelope shows (`evt_…`, `tr_…`, `sess_…`).
pub fn fresh(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

impl UaeSession {
    /// The Agent's side, serving a Web UI under test.
    pub fn serving() -> Self {
        UaeSession {
            adopts: true,
            answers_calls: false,
            ..UaeSession::default()
        }
    }

    /// The API Executor's side, serving an agent under test that calls it over stdio.
    pub fn executor_serving() -> Self {
        UaeSession {
            adopts: true,
            ..UaeSession::default()
        }
    }

    /// The full envelope of `event`: every field the common envelope lists, then the event's
    /// own fields over them (`"$omit"` removes one).
    pub fn fill(&self, event: &Value) -> Value {
        let mut full = json!({
            "id": fresh("evt"),
            "ts": timestamp(SystemTime::now()),
            "trace_id": fresh("tr"),
            "session_id": self.session_id,
            "payload": {},
        });
        merge(&mut full, event);
        full
    }
}

/// The successful result wireprobe, as the executor, gives an agent's `call`: the call's
/// trace, session and tool, and its args back as the result.
pub fn success_for(call: &Value) -> Value {
    let args = call.pointer("/payload/args").cloned();
    let mut result = json!({
        "type": "tool.result",
        "payload": {
            "tool": call.pointer("/payload/tool").cloned().unwrap_or(Value::Null),
            "ok": true,
            "result": {"echo": args.unwrap_or(Value::Null)},
            "error": null,
        },
    });
    for field in ["trace_id", "session_id"] {
        if let Some(v) = call.get(field) {
            result[field] = v.clone();
        }
    }
    result
}

impl Session for UaeSession {
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        let full = self.fill(event);
        // Only a call that breaks nothing is owed an answer; a broken one may get none.
        let call_trace = (full.get("type").and_then(Value::as_str) == Some("tool.call"))
            .then(|| full.get("trace_id").and_then(Value::as_str))
            .flatten()
            .filter(|_| {
                let mut broken = Vec::new();
                validate::check_event(&full, &mut broken);
                broken.is_empty()
            });
        if let Some(trace) = call_trace {
            let calls = self.unanswered_calls.get_or_insert_with(HashSet::new);
            if calls.len() < MAX_FOLLOWED_CALLS {
                calls.insert(trace.to_owned());
            }
        }
        Ok(Frame::Text(full.to_string()).into())
    }

    fn decodes_verbatim(&self) -> bool {
        true
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        let decoded = Decoded::json_frame(frame);
        if let (Some(calls), Decoded::Event(event)) = (self.unanswered_calls.as_mut(), &decoded) {
            if let Some(trace) = event.get("trace_id").and_then(Value::as_str) {
                calls.remove(trace);
            }
        }
        if let (true, false, Decoded::Event(event)) = (self.adopts, self.adopted, &decoded) {
            if let Some(session) = event.get("session_id").and_then(Value::as_str) {
                self.session_id = session.to_owned();
                self.adopted = true;
            }
        }
        decoded
    }

    /// An agent's tool.call gets a successful tool.result (when wireprobe is its executor),
    /// when the call names what a result
    /// must copy (a string trace_id and session_id, a tool): a result built from a call
    /// without them would break the envelope itself, and is not sent (the call is the
    /// agent's to get right: its own rules judge it).
    fn answer(&mut self, event: &Value) -> Option<Value> {
        let text = |field: &str| event.get(field).is_some_and(Value::is_string);
        let tool = event
            .pointer("/payload/tool")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty());
        let answerable = self.answers_calls
            && event.get("type").and_then(Value::as_str) == Some("tool.call")
            && text("trace_id")
            && text("session_id")
            && tool;
        answerable.then(|| success_for(event))
    }

    /// The code of a failed tool.result.
    fn error_code(&self, event: &Value) -> Option<String> {
        let failed = event.get("type").and_then(Value::as_str) == Some("tool.result")
            && event.pointer("/payload/ok") == Some(&Value::Bool(false));
        failed.then(|| {
            event
                .pointer("/payload/error/code")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        })
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }

    /// Settled once every call wireprobe made has been answered: something the target sent
    /// named its trace (a result, or whatever else answers it). An executor working through
    /// calls one at a time may owe a backlog; a call of the fuzzer's judged after it then
    /// measures its own answer, not the queue's. `None` before wireprobe made a call (playing
    /// the Web UI, it makes none).
    fn settled(&self) -> Option<bool> {
        self.unanswered_calls.as_ref().map(HashSet::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settled once every valid call made has had something name its trace; unknown before
    /// any.
    #[test]
    fn settled_once_every_call_made_was_answered() {
        let mut s = UaeSession::default();
        assert_eq!(s.settled(), None);
        let call = |trace: &str| json!({"type": "tool.call", "trace_id": trace, "payload": {"tool": "echo", "args": {}}});
        // A broken call may go unanswered: it is not waited for.
        let broken = json!({"type": "tool.call", "trace_id": "tr_0", "payload": {}});
        assert!(s.encode(&broken).is_ok());
        assert_eq!(s.settled(), None);
        for trace in ["tr_1", "tr_2"] {
            assert!(s.encode(&call(trace)).is_ok());
        }
        assert_eq!(s.settled(), Some(false));
        let result = |trace: &str| {
            Frame::Text(json!({"type": "tool.result", "trace_id": trace}).to_string())
        };
        s.decode(&result("tr_2"));
        s.decode(&result("tr_other"));
        assert_eq!(s.settled(), Some(false));
        s.decode(&result("tr_1"));
        assert_eq!(s.settled(), Some(true));
    }

    #[test]
    fn the_envelope_is_filled_under_the_steps_fields() {
        let s = UaeSession::default();
        let e =
            s.fill(&json!({"type": "ui.message", "trace_id": "$omit", "payload": {"text": "hi"}}));
        assert!(e["id"].as_str().is_some_and(|id| id.starts_with("evt_")));
        assert!(e.get("trace_id").is_none());
        assert_eq!(e["payload"]["text"], "hi");
        let call = json!({"type":"tool.call","trace_id":"tr_1","session_id":"s","payload":{"tool":"t","args":{"a":1}}});
        let r = success_for(&call);
        assert_eq!(
            (r["trace_id"].as_str(), r["payload"]["tool"].as_str()),
            (Some("tr_1"), Some("t"))
        );
    }
}
