//! The HPD agent's turn faults (listed in `faults.rs`) at work: each drops, reorders, renames or
//! re-ids an event of a turn as it goes out ([`TurnFaults::on_event`]), so the turn logic
//! (`turn.rs`) writes its events as the spec has them and knows none of these faults. The
//! envelope faults apply where an event is rendered ([`super::envelope::render`]); the faults
//! of behaviour (a permission outcome never sent, a denied call that runs, an interrupt
//! ignored) act where the agent decides.

use super::session::Session;
use serde_json::{json, Map, Value};

/// One event: its type and its fields.
pub type Event = (String, Map<String, Value>);

/// The state the turn faults keep over one turn.
#[derive(Default)]
pub struct TurnFaults {
    /// `delta-before-start`: the text block's START, held until its first delta has gone.
    held_start: Option<Map<String, Value>>,
}

impl TurnFaults {
    /// What the event `ty` with `fields` becomes under the configured turn faults: none, one
    /// or several events.
    pub fn on_event(
        &mut self,
        s: &Session,
        ty: &str,
        mut fields: Map<String, Value>,
    ) -> Vec<Event> {
        let faults = &s.config.faults;
        // Every event a turn sends comes here: without a fault on, it goes as it is.
        if faults.is_empty() {
            return vec![(ty.to_owned(), fields)];
        }
        let on = |name: &str| faults.has(name);
        let mut out = Vec::new();
        // A block's START goes out behind its first delta, or before anything else.
        if ty != "TEXT_DELTA" {
            if let Some(start) = self.held_start.take() {
                out.push(("TEXT_MESSAGE_START".to_owned(), start));
            }
        }
        match ty {
            "MESSAGE_TURN_FINISHED" | "MESSAGE_TURN_ERROR" => {
                if on("turn-id-drift") {
                    fields.insert("messageTurnId".into(), json!(s.fresh_id("turn")));
                }
                if !on("turn-never-finished") {
                    out.push((ty.to_owned(), fields));
                }
                if on("output-after-finish") {
                    let id = json!(s.fresh_id("msg"));
                    out.extend([
                        event(
                            "TEXT_MESSAGE_START",
                            json!({"messageId": id, "role": "assistant"}),
                        ),
                        event(
                            "TEXT_DELTA",
                            json!({"messageId": id, "text": "one more thing"}),
                        ),
                        event("TEXT_MESSAGE_END", json!({"messageId": id})),
                    ]);
                }
                return out;
            }
            "TEXT_MESSAGE_START" => {
                if on("shared-block-id") {
                    if let Some(Value::String(id)) = fields.get("messageId") {
                        *last_text_block(s) = id.clone();
                    }
                }
                if on("delta-before-start") {
                    self.held_start = Some(fields);
                    return out;
                }
            }
            "TEXT_DELTA" => {
                // With the fault, the block another conversation started since names this
                // one's deltas: only conversations streaming at once show it.
                if on("shared-block-id") {
                    fields.insert("messageId".into(), json!(last_text_block(s).clone()));
                }
                out.push((ty.to_owned(), fields));
                if let Some(start) = self.held_start.take() {
                    out.push(("TEXT_MESSAGE_START".to_owned(), start));
                }
                return out;
            }
            "TEXT_MESSAGE_END" if on("missing-end") => return out,
            "TOOL_CALL_ARGS" => {
                // END and RESULT keep START's id: with theirs changed too, the started call
                // would also never end (HPD-TOOL-003), a second broken rule.
                if on("wrong-call-id") {
                    fields.insert("callId".into(), json!(s.fresh_id("call")));
                }
                if on("bad-args-json") {
                    let args = fields.get("argsJson").and_then(Value::as_str);
                    let args: Value = args
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or_default();
                    fields.insert("argsJson".into(), json!(format!("{args:?}")));
                }
            }
            "TOOL_CALL_RESULT" if on("tool-without-result") => return out,
            "AGENT_TURN_FINISHED" if on("agent-turn-unfinished") => return out,
            "AGENT_TURN_STARTED" | "AGENT_TURN_FINISHED" if on("string-iterations") => {
                if let Some(iteration) = fields.get("iteration").map(Value::to_string) {
                    fields.insert("iteration".into(), json!(iteration));
                }
            }
            _ => {}
        }
        out.push((ty.to_owned(), fields));
        out
    }
}

fn event(ty: &str, fields: Value) -> Event {
    let fields = match fields {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    (ty.to_owned(), fields)
}

/// The server's one text block id (the `shared-block-id` fault's).
fn last_text_block(s: &Session) -> std::sync::MutexGuard<'_, String> {
    // A poisoned lock only means another conversation panicked while naming a block.
    s.config
        .last_text_block
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
