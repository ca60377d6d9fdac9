//! The client side of a HUMA session over Socket.IO: CONNECT to the namespace before the first
//! emit, client events emitted as `message`, server emits decoded into matchable objects.
//!
//! Decoded forms (what `expect` patterns match):
//! - an EVENT packet: `{"channel": NAME, "event": FIRST_ARG}` (plus `"args"` when there are more);
//! - `{"sio": "connect" | "connect_error" | "disconnect" | "ack" | "binary", "namespace": NS,
//!   "data": DATA}` for the other Socket.IO packets.
//!
//! Engine.IO control packets (open, ping, pong, noop) are transport business: kept in the
//! transcript, never matched.

use crate::protocol::{Decoded, ProtocolError, Session};
use crate::transport::socketio::packet::{self, EioPacket, SioKind, SioPacket};
use crate::transport::{Frame, Outgoing};
use serde_json::{json, Map, Value};

/// HUMA session state, on either side.
#[derive(Debug)]
pub struct HumaSession {
    namespace: String,
    /// wireprobe plays the server: it answers the client's CONNECT and emits server events.
    serving: bool,
}

impl Default for HumaSession {
    fn default() -> Self {
        HumaSession {
            namespace: "/".into(),
            serving: false,
        }
    }
}

impl HumaSession {
    /// The server side, for judging a client: it answers the client's CONNECT on the
    /// namespace the client named, and emits each event on `event` (an event of type `error`
    /// on `error`, where the spec puts errors).
    pub fn serving() -> Self {
        HumaSession {
            serving: true,
            ..HumaSession::default()
        }
    }
}

/// The matchable form of a Socket.IO packet.
pub fn decode_sio(p: &SioPacket) -> Value {
    if let Some((name, args)) = p.event_parts() {
        let mut out = Map::new();
        out.insert("channel".into(), json!(name));
        out.insert("event".into(), args.first().cloned().unwrap_or(Value::Null));
        if args.len() > 1 {
            out.insert("args".into(), Value::Array(args.to_vec()));
        }
        return Value::Object(out);
    }
    let sio = match p.kind {
        SioKind::Connect => "connect",
        SioKind::ConnectError => "connect_error",
        SioKind::Disconnect => "disconnect",
        SioKind::Ack => "ack",
        SioKind::Event | SioKind::BinaryEvent | SioKind::BinaryAck => "binary",
    };
    json!({"sio": sio, "namespace": p.namespace, "data": p.data})
}

impl Session for HumaSession {
    /// `with` may set `namespace` (default `/`) and `auth` (the CONNECT payload). Serving,
    /// the answer to the client's CONNECT: `{"sid": …}`, or `with` as the payload.
    fn handshake(
        &mut self,
        with: Option<&Value>,
        _resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        if self.serving {
            let payload = with
                .cloned()
                .unwrap_or_else(|| json!({"sid": uuid::Uuid::new_v4().simple().to_string()}));
            let connect = SioPacket::new(SioKind::Connect, &self.namespace, Some(payload));
            return Ok(vec![Frame::Text(connect.to_frame_text())]);
        }
        if let Some(ns) = with
            .and_then(|w| w.get("namespace"))
            .and_then(Value::as_str)
        {
            if !ns.starts_with('/') {
                return Err(ProtocolError::InvalidEvent(format!(
                    "namespace {ns:?} must start with /"
                )));
            }
            self.namespace = ns.to_owned();
        }
        let auth = with.and_then(|w| w.get("auth")).cloned();
        let connect = SioPacket::new(SioKind::Connect, &self.namespace, auth);
        Ok(vec![Frame::Text(connect.to_frame_text())])
    }

    fn is_handshake_reply(&self, event: &Value) -> bool {
        event.get("sio").and_then(Value::as_str) == Some("connect")
    }

    fn answers_handshake(&self) -> bool {
        self.serving
    }

    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        let channel = match (self.serving, event.get("type").and_then(Value::as_str)) {
            (false, _) => "message",
            (true, Some("error")) => "error",
            (true, _) => "event",
        };
        let emit = SioPacket::event(&self.namespace, channel, vec![event.clone()]);
        Ok(Frame::Text(emit.to_frame_text()).into())
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        let text = match frame {
            Frame::Text(t) => t.as_str(),
            Frame::Binary(b) => return Decoded::Binary(b.len()),
            Frame::RawText(b) => return Decoded::Garbage(String::from_utf8_lossy(b).into_owned()),
        };
        match packet::parse_eio(text) {
            Ok(EioPacket::Message(m)) => match packet::parse_sio(&m) {
                Ok(p) => {
                    // The namespace a client connects to is the one the server answers on.
                    if self.serving && p.kind == SioKind::Connect {
                        self.namespace = p.namespace.clone();
                    }
                    Decoded::Event(decode_sio(&p))
                }
                Err(_) => Decoded::Garbage(text.to_owned()),
            },
            Ok(_) => Decoded::Control,
            Err(_) => Decoded::Garbage(text.to_owned()),
        }
    }

    /// An error object counts on either channel: sending it on the wrong one breaks
    /// HUMA-TR-001, which the checker judges, not every case that expects an error.
    fn error_code(&self, event: &Value) -> Option<String> {
        let channel = event.get("channel").and_then(Value::as_str);
        let is_error = event.pointer("/event/type").and_then(Value::as_str) == Some("error");
        if channel == Some("error") || (channel.is_some() && is_error) {
            let code = event.pointer("/event/code").and_then(Value::as_str);
            return Some(code.unwrap_or("(no code)").to_owned());
        }
        (event.get("sio").and_then(Value::as_str) == Some("connect_error"))
            .then(|| "CONNECT_ERROR".to_owned())
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }
}
