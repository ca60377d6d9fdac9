//! The scripted agent: it answers the UI's `wireprobe:` directives (say, view, tool, fail),
//! acknowledges actions on its views, and calls tools through the executor wireprobe plays.

use super::stamp::Stamp;
use crate::reference::directive::Directive;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// Views and calls remembered at most per connection.
const MAX_REMEMBERED: usize = 1024;

/// A tool call waiting for its result.
struct Pending {
    tool: String,
    session: String,
}

/// One connection's agent.
#[derive(Default)]
pub struct Agent {
    views: HashSet<String>,
    /// Calls awaiting a result, by trace_id.
    pending: HashMap<String, Pending>,
}

/// What the agent made of one event: output, or an input it cannot use.
pub type Handled = Option<Vec<Value>>;

impl Agent {
    pub fn handle(&mut self, stamp: &mut Stamp, event: &Value) -> Handled {
        let ty = event.get("type").and_then(Value::as_str)?;
        let session = event.get("session_id").and_then(Value::as_str)?;
        let session = match stamp.faults().has("session-drift") {
            true => format!("{session}_agent"),
            false => session.to_owned(),
        };
        let trace = match event.get("trace_id").and_then(Value::as_str) {
            Some(t) => t.to_owned(),
            None => stamp.fresh("tr"),
        };
        let mut turn = Turn {
            stamp,
            session,
            trace,
            out: Vec::new(),
        };
        match ty {
            "ui.message" => {
                let text = event.pointer("/payload/text").and_then(Value::as_str)?;
                if turn.stamp.faults().has("echoes-ui") {
                    let echo =
                        turn.stamp
                            .event("ui.message", &turn.session, None, json!({"text": text}));
                    turn.out.push(echo);
                }
                self.message(&mut turn, text);
            }
            "ui.action" => {
                let view = event.pointer("/payload/view_id").and_then(Value::as_str)?;
                let kind = event
                    .pointer("/payload/action/kind")
                    .and_then(Value::as_str)?;
                let text = match (
                    self.views.contains(view),
                    turn.stamp.variants().has("other-words"),
                ) {
                    (true, false) => format!("Received {kind} on {view}."),
                    (true, true) => "Thanks, your entry is saved.".to_owned(),
                    (false, _) => format!("{view} is not a view I sent."),
                };
                turn.say(&text);
            }
            "tool.result" => {
                let trace = event.get("trace_id").and_then(Value::as_str)?;
                let pending = self.pending.remove(trace)?;
                let ok = event.pointer("/payload/ok").and_then(Value::as_bool) == Some(true);
                let text = match ok {
                    true => format!("{} is done.", pending.tool),
                    false => format!(
                        "{} failed: {}",
                        pending.tool,
                        event
                            .pointer("/payload/error/code")
                            .and_then(Value::as_str)
                            .unwrap_or("no code")
                    ),
                };
                turn.trace = trace.to_owned();
                turn.session = pending.session;
                turn.say(&text);
            }
            _ => return None,
        }
        Some(turn.out)
    }

    fn message(&mut self, turn: &mut Turn<'_>, text: &str) {
        let chatty = turn.stamp.variants().has("chatty");
        if chatty {
            turn.say("Working on it.");
        }
        let other_words = turn.stamp.variants().has("other-words");
        match Directive::parse(text) {
            Directive::Say(words) => turn.say(&words),
            Directive::View => {
                if turn.stamp.variants().has("view-with-message") {
                    turn.say("Please confirm the entry:");
                }
                let view_id = turn.stamp.fresh("view");
                if self.views.len() < MAX_REMEMBERED {
                    self.views.insert(view_id.clone());
                }
                let view = json!({
                    "kind": "a2ui.v1",
                    "view_id": view_id,
                    "tree": {"type": "form", "id": "weight_entry", "children": [
                        {"type": "date", "name": "measured_at", "label": "Date"},
                        {"type": "number", "name": "weight_lbs", "label": "Weight (lbs)"},
                        {"type": "submit", "label": "Save"},
                    ]},
                });
                turn.emit("assistant.view", json!({"view": view}));
            }
            Directive::Tool { name, args } => {
                if chatty {
                    turn.say(&format!("Calling {name}."));
                }
                self.call(turn, &name, args);
            }
            Directive::Fail if other_words => turn.say("Sorry, something went wrong."),
            Directive::Fail => turn.say("The turn failed, as asked."),
            _ if other_words => turn.say(&format!("Noted: {text}")),
            _ => turn.say(&format!("You said: {text}")),
        }
    }

    fn call(&mut self, turn: &mut Turn<'_>, name: &str, args: Value) {
        if turn.stamp.variants().has("fresh-trace-per-call") {
            turn.trace = turn.stamp.fresh("tr");
        }
        if self.pending.len() < MAX_REMEMBERED {
            self.pending.insert(
                turn.trace.clone(),
                Pending {
                    tool: name.to_owned(),
                    session: turn.session.clone(),
                },
            );
        }
        turn.emit("tool.call", json!({"tool": name, "args": args}));
    }
}

/// The output of one inbound event, in one session and trace.
struct Turn<'a> {
    stamp: &'a mut Stamp,
    session: String,
    trace: String,
    out: Vec<Value>,
}

impl Turn<'_> {
    fn emit(&mut self, ty: &str, payload: Value) {
        let event = self
            .stamp
            .event(ty, &self.session, Some(&self.trace), payload);
        self.out.push(event);
    }

    fn say(&mut self, text: &str) {
        self.emit("assistant.message", json!({"text": text}));
    }
}
