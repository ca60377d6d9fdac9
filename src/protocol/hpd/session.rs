//! The client side of an HPD connection: envelopes filled with `version`, routed to the POST
//! route their type belongs to when the transport is SSE + HTTP, sent as they are over the
//! WebSocket.

use super::{INPUTS_ROUTE, INTERRUPT_ROUTE, RESPONSES_ROUTE};
use crate::protocol::{Decoded, ProtocolError, Session, TransportKind};
use crate::transport::{Body, Frame, Outgoing};
use serde_json::{json, Value};

/// The envelope version wireprobe sends.
pub const VERSION: &str = "1.0";

/// HPD state: which transport the envelopes go over, and which side fills them.
#[derive(Debug)]
pub struct HpdSession {
    transport: TransportKind,
    /// wireprobe plays the agent: every envelope is a live event on the stream (or a frame
    /// on the WebSocket), never a POST.
    serving: bool,
}

impl HpdSession {
    pub fn new(transport: TransportKind) -> Self {
        HpdSession {
            transport,
            serving: false,
        }
    }

    /// The agent's side, serving a client under test.
    pub fn serving(transport: TransportKind) -> Self {
        HpdSession {
            transport,
            serving: true,
        }
    }
}

/// The POST route an envelope of type `kind` goes to.
pub fn route_of(kind: &str) -> &'static str {
    let kind = kind.to_ascii_uppercase();
    if kind == "INTERRUPTION_REQUEST" {
        INTERRUPT_ROUTE
    } else if kind.ends_with("_RESPONSE") {
        RESPONSES_ROUTE
    } else {
        INPUTS_ROUTE
    }
}

/// The envelope as a lenient client reads it, which is what steps match: a built-in type in
/// its canonical case, snake_case or kebab-case names in camelCase. A case about one rule is
/// then not derailed by another rule's violation; the checker judges the frame as it came.
pub fn lenient(mut event: Value) -> Value {
    let Value::Object(m) = &mut event else {
        return event;
    };
    if let Some(Value::String(kind)) = m.get_mut("type") {
        if let Some(known) = super::events::known(kind) {
            *kind = known.name.to_owned();
        }
    }
    let renames: Vec<(String, String)> = m
        .keys()
        .filter_map(|k| super::validate::camel_form(k).map(|c| (k.clone(), c)))
        .filter(|(_, c)| !m.contains_key(c))
        .collect();
    for (from, to) in renames {
        if let Some(v) = m.remove(&from) {
            m.insert(to, v);
        }
    }
    event
}

impl Session for HpdSession {
    // HPD has no handshake (the trait's default): a client subscribes and posts.
    /// Fills `version` unless the event sets it (`"$omit"` leaves it out), and routes it.
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        let mut envelope = event.clone();
        if let Value::Object(m) = &mut envelope {
            crate::protocol::fill(m, "version", || json!(VERSION));
        }
        Ok(match self.transport {
            TransportKind::Sse if !self.serving => {
                let kind = envelope.get("type").and_then(Value::as_str).unwrap_or("");
                Outgoing::Post {
                    path: route_of(kind).to_owned(),
                    body: Body::Json(envelope),
                    headers: Vec::new(),
                }
            }
            _ => Frame::Text(envelope.to_string()).into(),
        })
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match Decoded::json_frame(frame) {
            Decoded::Event(v) => Decoded::Event(lenient(v)),
            other => other,
        }
    }

    /// HPD has no error event: a refusal is an HTTP status or a close code.
    fn error_code(&self, _event: &Value) -> Option<String> {
        None
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }
}
