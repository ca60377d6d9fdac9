//! wireprobe's side of an AG-UI exchange: a `send` is a `RunAgentInput`, filled with the case's
//! thread, a fresh run id, the version wireprobe speaks and message ids unless the case gives
//! them (`"$omit"` leaves one out), POSTed to the agent's endpoint with an explicit `Accept`
//! (a wildcard would admit protobuf). The answer's events are SSE data, or protobuf frames.

use crate::protocol::{fill, Decoded, ProtocolError, Session};
use crate::transport::{Body, Frame, Outgoing};
use serde_json::{json, Value};

/// The version wireprobe declares on its input.
pub const VERSION: &str = "1.1";

/// One case's side of a thread.
#[derive(Debug)]
pub struct AguiSession {
    thread_id: String,
    accept: &'static str,
    /// wireprobe plays the agent: a `send` is an event of the answer's stream, as written.
    serving: bool,
}

impl AguiSession {
    /// A session whose answers come as SSE (`proto`: protobuf admitted first).
    pub fn new(proto: bool) -> AguiSession {
        AguiSession {
            thread_id: format!("thread-{}", uuid::Uuid::new_v4()),
            accept: if proto {
                super::ACCEPT_PROTO
            } else {
                super::ACCEPT_SSE
            },
            serving: false,
        }
    }

    /// The agent's side, serving a client under test: each event goes out as the case wrote
    /// it, into the stream that answers the client's last POST.
    pub fn serving() -> AguiSession {
        AguiSession {
            serving: true,
            ..AguiSession::new(false)
        }
    }
}

impl Session for AguiSession {
    // AG-UI has no handshake (the trait's default): each exchange is one POST.
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        if self.serving {
            return Ok(Frame::Text(event.to_string()).into());
        }
        let mut input = event.clone();
        let Value::Object(m) = &mut input else {
            return Err(ProtocolError::InvalidEvent(
                "a RunAgentInput is a JSON object".into(),
            ));
        };
        let thread = self.thread_id.clone();
        fill(m, "threadId", || json!(thread));
        fill(m, "runId", || {
            json!(format!("run-{}", uuid::Uuid::new_v4()))
        });
        fill(m, "protocolVersion", || json!(VERSION));
        fill(m, "messages", || json!([]));
        if let Some(Value::Array(messages)) = m.get_mut("messages") {
            for message in messages.iter_mut().filter_map(Value::as_object_mut) {
                fill(message, "id", || {
                    json!(format!("msg-{}", uuid::Uuid::new_v4()))
                });
            }
        }
        Ok(Outgoing::Post {
            path: String::new(),
            body: Body::Json(input),
            headers: vec![("accept".into(), self.accept.into())],
        })
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match frame {
            Frame::Binary(bytes) => match super::proto::decode(bytes) {
                Ok(event) => Decoded::Event(event),
                Err(_) => Decoded::Binary(bytes.len()),
            },
            _ => Decoded::json_frame(frame),
        }
    }

    /// A text event is its JSON, with no state to update: the parsed tree is shared.
    fn decode_shared(&mut self, _text: &str, _event: &std::sync::Arc<Value>) -> Option<Decoded> {
        None
    }

    fn decodes_verbatim(&self) -> bool {
        true
    }

    /// A run's events are the answer to its POST, and nothing comes outside one.
    fn answers_in_reply(&self) -> bool {
        true
    }

    /// AG-UI's rules read ids and structure, never a long string's content: an event's deltas,
    /// `rawEvent` and content may be cut in the transcript.
    fn condenses(&self) -> bool {
        true
    }

    /// RUN_ERROR is the protocol's error event; its code is optional.
    fn error_code(&self, event: &Value) -> Option<String> {
        (event.get("type")? == "RUN_ERROR").then(|| {
            event
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or("RUN_ERROR")
                .to_owned()
        })
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }
}
