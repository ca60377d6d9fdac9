//! The client side of an HPD connection: envelopes filled with `version`, routed to the POST
//! route their type belongs to when the transport is SSE + HTTP, sent as they are over the
//! WebSocket.

use super::{INPUTS_ROUTE, INTERRUPT_ROUTE, RESPONSES_ROUTE};
use crate::protocol::{Decoded, ProtocolError, Session, TransportKind, OMIT};
use crate::transport::Frame;
use serde_json::{json, Value};

/// The envelope version wireprobe sends.
pub const VERSION: &str = "1.0";

/// Client-side HPD state: only which transport the envelopes go over.
#[derive(Debug)]
pub struct HpdSession {
    transport: TransportKind,
}

impl HpdSession {
    pub fn new(transport: TransportKind) -> Self {
        HpdSession { transport }
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

/// True for a frame that tells the SSE transport what to do (`$post`, `$stream`).
fn is_transport_request(event: &Value) -> bool {
    event.get("$post").is_some() || event.get("$stream").is_some()
}

impl Session for HpdSession {
    /// HPD has no handshake: a client subscribes and posts.
    fn handshake(
        &mut self,
        _with: Option<&Value>,
        _resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        Ok(Vec::new())
    }

    fn is_handshake_reply(&self, _event: &Value) -> bool {
        false
    }

    /// Fills `version` unless the event sets it (`"$omit"` leaves it out), and routes it.
    fn encode(&mut self, event: &Value) -> Result<Frame, ProtocolError> {
        if is_transport_request(event) {
            return match self.transport {
                TransportKind::Sse => Ok(Frame::Text(event.to_string())),
                _ => Err(ProtocolError::InvalidEvent(
                    "$post and $stream steps are for the SSE transport".into(),
                )),
            };
        }
        let mut envelope = event.clone();
        if let Value::Object(m) = &mut envelope {
            match m.get("version") {
                None => {
                    m.insert("version".into(), json!(VERSION));
                }
                Some(v) if v.as_str() == Some(OMIT) => {
                    m.remove("version");
                }
                Some(_) => {}
            }
        }
        Ok(Frame::Text(match self.transport {
            TransportKind::Sse => {
                let kind = envelope.get("type").and_then(Value::as_str).unwrap_or("");
                json!({"$post": route_of(kind), "body": envelope}).to_string()
            }
            _ => envelope.to_string(),
        }))
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match Decoded::json_frame(frame) {
            Decoded::Event(v) => Decoded::Event(lenient(v)),
            other => other,
        }
    }

    /// An HTTP answer of 400 or more is the error, its status the code (`"400"`).
    fn error_code(&self, event: &Value) -> Option<String> {
        let status = event.get("$http")?.get("status")?.as_u64()?;
        (status >= 400).then(|| status.to_string())
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }
}
