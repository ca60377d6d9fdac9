//! The host side of a Nuum session: nothing to send on start (the process announces itself with
//! system/init, which is the handshake reply), events written as one JSON line each, exactly as
//! the case gives them, and stdout lines decoded as JSON.

use crate::protocol::{Decoded, ProtocolError, Session};
use crate::transport::{Frame, Outgoing};
use serde_json::Value;

/// Host-side Nuum state (there is none beyond the process itself).
#[derive(Debug, Default)]
pub struct NuumSession;

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
        Ok(Vec::new())
    }

    fn is_handshake_reply(&self, event: &Value) -> bool {
        is_system(event, "init")
    }

    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
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
