//! The host side of a Nuum session: nothing to send on start (the process announces itself with
//! system/init, which is the handshake reply), events written as one JSON line each, exactly as
//! the case gives them, and stdout lines decoded as JSON.

use crate::protocol::{Decoded, ProtocolError, Session};
use crate::transport::{Frame, Outgoing};
use serde_json::Value;

/// Nuum state: none on the host's side; standing in for the agent (judging a host), the
/// session id its init announced, which its assistant, result and system lines carry.
#[derive(Debug, Default)]
pub struct NuumSession {
    serving: Option<String>,
}

impl NuumSession {
    /// The agent's side, for a host under test.
    pub fn serving() -> Self {
        NuumSession {
            serving: Some(format!("nuum_{}", uuid::Uuid::new_v4().simple())),
        }
    }
}

/// The lines that carry the session id (the spec's §Session Identity and examples).
fn carries_session(event: &Value) -> bool {
    match event.get("type").and_then(Value::as_str) {
        Some("assistant" | "result") => true,
        Some("system") => matches!(
            event.get("subtype").and_then(Value::as_str),
            Some("init" | "turn_accepted" | "tasks" | "status_response")
        ),
        _ => false,
    }
}

/// True for `{"type":"system","subtype":SUBTYPE}`.
pub fn is_system(event: &Value, subtype: &str) -> bool {
    event.get("type").and_then(Value::as_str) == Some("system")
        && event.get("subtype").and_then(Value::as_str) == Some(subtype)
}

impl Session for NuumSession {
    fn handshake(
        &mut self,
        _with: Option<&Value>,
        _resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        // The agent announces itself once it starts (§Init Message).
        Ok(match &self.serving {
            Some(session) => {
                let init = serde_json::json!({"type": "system", "subtype": "init",
                    "session_id": session, "version": "0.1.0", "tools": ["read", "write"]});
                vec![Frame::Text(init.to_string())]
            }
            None => Vec::new(),
        })
    }

    fn is_handshake_reply(&self, event: &Value) -> bool {
        is_system(event, "init")
    }

    /// The line as the case gives it; standing in for the agent, with the session id filled
    /// where the line carries one and the case set none.
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        if let (Some(session), Value::Object(m)) = (&self.serving, event) {
            if carries_session(event) && !m.contains_key("session_id") {
                let mut filled = m.clone();
                filled.insert("session_id".into(), Value::String(session.clone()));
                return Ok(Frame::Text(Value::Object(filled).to_string()).into());
            }
        }
        Ok(Frame::Text(event.to_string()).into())
    }

    /// A frame is one JSON event.
    fn decodes_verbatim(&self) -> bool {
        true
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match frame {
            Frame::Text(text) => serde_json::from_str(text)
                .map_or_else(|_| Decoded::Garbage(text.clone()), Decoded::Event),
            Frame::Binary(b) | Frame::RawText(b) => {
                Decoded::Garbage(String::from_utf8_lossy(b).into_owned())
            }
        }
    }

    /// Nuum errors have no codes: every system/error is `"error"`.
    fn error_code(&self, event: &Value) -> Option<String> {
        is_system(event, "error").then(|| "error".to_owned())
    }

    /// A field of the init line (`${capability.tools}`).
    fn capability(&self, reply: &Value, name: &str) -> Option<Value> {
        reply.get(name).cloned()
    }
}
