//! What the target owes the client on one connection, as far as HAIP's structure shows: the
//! runs it began and has not ended (§Lifecycles: "`run_id` UUID from `RUN_STARTED` to
//! `RUN_FINISHED` or `RUN_ERROR`"), and the tool calls the client made that it has not answered
//! with `TOOL_DONE` (the message table's "Tool completion") or with an `ERROR` whose
//! `related_id` names the call's message. [`OpenWork::settled`] tells a wait
//! when nothing more is owed, so what a target sends behind its work (a `TOOL_UPDATE` after
//! the `TOOL_DONE`) comes before the case ends, whatever the run's load.

use serde_json::Value;

/// At most this many open runs, and open calls, are remembered.
const MAX_OPEN: usize = 64;

/// Work begun and not yet ended, bounded (`None` once more was open than is remembered:
/// whether all ended can no longer be told).
#[derive(Debug, Clone)]
struct Open<T>(Option<Vec<T>>);

impl<T> Default for Open<T> {
    fn default() -> Self {
        Open(Some(Vec::new()))
    }
}

impl<T> Open<T> {
    fn begin(&mut self, work: T) {
        match &mut self.0 {
            Some(open) if open.len() >= MAX_OPEN => self.0 = None,
            Some(open) => open.push(work),
            None => {}
        }
    }

    fn end(&mut self, ended: impl Fn(&T) -> bool) {
        if let Some(open) = &mut self.0 {
            open.retain(|o| !ended(o));
        }
    }

    fn is_empty(&self) -> Option<bool> {
        self.0.as_ref().map(Vec::is_empty)
    }
}

/// A tool call the client made: its `call_id` and its message's `id`.
#[derive(Debug, Clone)]
struct Call {
    call_id: String,
    message_id: Option<String>,
}

/// See the module doc.
#[derive(Debug, Default, Clone)]
pub(super) struct OpenWork {
    runs: Open<String>,
    calls: Open<Call>,
}

impl OpenWork {
    /// Follows what the target sent.
    pub(super) fn received(&mut self, ty: Option<&str>, event: &Value) {
        let field = |at: &str| event.pointer(at).and_then(Value::as_str);
        match (ty, field("/run_id")) {
            (Some("RUN_STARTED"), Some(run)) => self.runs.begin(run.to_owned()),
            (Some("RUN_FINISHED" | "RUN_ERROR"), Some(run)) => self.runs.end(|r| r == run),
            _ => {}
        }
        match (ty, field("/payload/call_id"), field("/payload/related_id")) {
            (Some("TOOL_DONE"), Some(done), _) => self.calls.end(|c| c.call_id == done),
            (Some("ERROR"), _, Some(related)) => {
                self.calls.end(|c| c.message_id.as_deref() == Some(related))
            }
            _ => {}
        }
    }

    /// Follows what the client sent: a tool call it owes an answer to.
    pub(super) fn sent(&mut self, envelope: &Value) {
        let is_call = envelope.get("type").and_then(Value::as_str) == Some("TOOL_CALL");
        let call_id = envelope.pointer("/payload/call_id").and_then(Value::as_str);
        if let Some(call_id) = call_id.filter(|_| is_call) {
            self.calls.begin(Call {
                call_id: call_id.to_owned(),
                message_id: envelope
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
    }

    /// Every run begun has ended and every call made was answered; `None` when more were
    /// open than are remembered.
    pub(super) fn settled(&self) -> Option<bool> {
        Some(self.runs.is_empty()? && self.calls.is_empty()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn take(w: &mut OpenWork, event: Value) {
        let ty = event.get("type").and_then(Value::as_str).map(str::to_owned);
        w.received(ty.as_deref(), &event);
    }

    /// Settled once every run begun has ended and every call made had its TOOL_DONE.
    #[test]
    fn settled_once_runs_ended_and_calls_answered() {
        let mut w = OpenWork::default();
        assert_eq!(w.settled(), Some(true));
        w.sent(&json!({"type": "TOOL_CALL", "payload": {"call_id": "c1", "tool": "t"}}));
        take(
            &mut w,
            json!({"type": "RUN_STARTED", "run_id": "r1", "payload": {}}),
        );
        take(
            &mut w,
            json!({"type": "TOOL_UPDATE", "payload": {"call_id": "c1"}}),
        );
        assert_eq!(w.settled(), Some(false));
        take(
            &mut w,
            json!({"type": "TOOL_DONE", "payload": {"call_id": "c1"}}),
        );
        assert_eq!(w.settled(), Some(false), "r1 runs");
        take(
            &mut w,
            json!({"type": "RUN_FINISHED", "run_id": "r1", "payload": {}}),
        );
        assert_eq!(w.settled(), Some(true));
        // A call the client did not make, and a message that is not a call, owe nothing.
        take(
            &mut w,
            json!({"type": "TOOL_DONE", "payload": {"call_id": "c9"}}),
        );
        w.sent(&json!({"type": "TOOL_CANCEL", "payload": {"call_id": "c2"}}));
        assert_eq!(w.settled(), Some(true));
        // An ERROR naming the call's message answers it; one naming another does not.
        w.sent(&json!({"type": "TOOL_CALL", "id": "m3", "payload": {"call_id": "c3"}}));
        take(
            &mut w,
            json!({"type": "ERROR", "payload": {"code": "X", "related_id": "m9"}}),
        );
        assert_eq!(w.settled(), Some(false));
        take(
            &mut w,
            json!({"type": "ERROR", "payload": {"code": "X", "related_id": "m3"}}),
        );
        assert_eq!(w.settled(), Some(true));
    }

    /// Past what it remembers it can no longer tell.
    #[test]
    fn too_much_open_work_cannot_be_told() {
        let mut w = OpenWork::default();
        for i in 0..=MAX_OPEN {
            w.sent(&json!({"type": "TOOL_CALL", "payload": {"call_id": format!("c{i}")}}));
        }
        assert_eq!(w.settled(), None);
    }
}
