//! Engine.IO v4 and Socket.IO v5 packet codec. Pure text in, text out, so a fuzzer can build
//! packets no well-behaved client library would send.

use serde_json::Value;

/// Why a packet could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {layer} packet {shown:?}: {reason}")]
pub struct PacketError {
    pub layer: &'static str,
    pub shown: String,
    pub reason: String,
}

fn err(layer: &'static str, text: &str, reason: impl Into<String>) -> PacketError {
    PacketError {
        layer,
        shown: text.chars().take(60).collect(),
        reason: reason.into(),
    }
}

/// The Engine.IO handshake parameters from the server's open packet.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenInfo {
    pub sid: String,
    #[serde(default)]
    pub upgrades: Vec<String>,
    pub ping_interval: u64,
    pub ping_timeout: u64,
    #[serde(default)]
    pub max_payload: Option<u64>,
}

/// One Engine.IO packet (text form).
#[derive(Debug, Clone, PartialEq)]
pub enum EioPacket {
    Open(OpenInfo),
    Close,
    Ping(String),
    Pong(String),
    /// A message: for Socket.IO, one Socket.IO packet.
    Message(String),
    Upgrade,
    Noop,
}

/// Parses one Engine.IO text packet.
pub fn parse_eio(text: &str) -> Result<EioPacket, PacketError> {
    let mut chars = text.chars();
    let kind = chars
        .next()
        .ok_or_else(|| err("Engine.IO", text, "empty"))?;
    let rest = chars.as_str();
    Ok(match kind {
        '0' => EioPacket::Open(
            serde_json::from_str(rest)
                .map_err(|e| err("Engine.IO", text, format!("open payload: {e}")))?,
        ),
        '1' => EioPacket::Close,
        '2' => EioPacket::Ping(rest.to_owned()),
        '3' => EioPacket::Pong(rest.to_owned()),
        '4' => EioPacket::Message(rest.to_owned()),
        '5' => EioPacket::Upgrade,
        '6' => EioPacket::Noop,
        other => {
            return Err(err(
                "Engine.IO",
                text,
                format!("unknown packet type {other:?}"),
            ))
        }
    })
}

/// Socket.IO packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SioKind {
    Connect,
    Disconnect,
    Event,
    Ack,
    ConnectError,
    BinaryEvent,
    BinaryAck,
}

impl SioKind {
    fn digit(self) -> char {
        match self {
            SioKind::Connect => '0',
            SioKind::Disconnect => '1',
            SioKind::Event => '2',
            SioKind::Ack => '3',
            SioKind::ConnectError => '4',
            SioKind::BinaryEvent => '5',
            SioKind::BinaryAck => '6',
        }
    }
}

/// One Socket.IO packet.
#[derive(Debug, Clone, PartialEq)]
pub struct SioPacket {
    pub kind: SioKind,
    /// `/` for the default namespace.
    pub namespace: String,
    pub ack_id: Option<u64>,
    /// Binary attachments announced (binary event/ack only).
    pub attachments: Option<u64>,
    pub data: Option<Value>,
}

impl SioPacket {
    pub fn new(kind: SioKind, namespace: &str, data: Option<Value>) -> Self {
        SioPacket {
            kind,
            namespace: namespace.to_owned(),
            ack_id: None,
            attachments: None,
            data,
        }
    }

    /// An EVENT packet `[name, args...]`.
    pub fn event(namespace: &str, name: &str, args: Vec<Value>) -> Self {
        let mut items = vec![Value::String(name.to_owned())];
        items.extend(args);
        SioPacket::new(SioKind::Event, namespace, Some(Value::Array(items)))
    }

    /// For an EVENT: its name and arguments.
    pub fn event_parts(&self) -> Option<(&str, &[Value])> {
        if !matches!(self.kind, SioKind::Event | SioKind::BinaryEvent) {
            return None;
        }
        let items = self.data.as_ref()?.as_array()?;
        let (name, args) = items.split_first()?;
        Some((name.as_str()?, args))
    }

    /// The Socket.IO text of this packet (without the Engine.IO `4`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        out.push(self.kind.digit());
        if let Some(n) = self.attachments {
            out.push_str(&format!("{n}-"));
        }
        if self.namespace != "/" {
            out.push_str(&self.namespace);
            out.push(',');
        }
        if let Some(id) = self.ack_id {
            out.push_str(&id.to_string());
        }
        if let Some(data) = &self.data {
            out.push_str(&data.to_string());
        }
        out
    }

    /// The Engine.IO message carrying this packet: the text of one WebSocket frame.
    pub fn to_frame_text(&self) -> String {
        format!("4{}", self.encode())
    }
}

/// Parses one Socket.IO packet (the payload of an Engine.IO message).
pub fn parse_sio(text: &str) -> Result<SioPacket, PacketError> {
    let bad = |reason: &str| err("Socket.IO", text, reason);
    let mut rest = text;
    let kind = match rest.chars().next() {
        Some('0') => SioKind::Connect,
        Some('1') => SioKind::Disconnect,
        Some('2') => SioKind::Event,
        Some('3') => SioKind::Ack,
        Some('4') => SioKind::ConnectError,
        Some('5') => SioKind::BinaryEvent,
        Some('6') => SioKind::BinaryAck,
        Some(_) => return Err(bad("unknown packet type")),
        None => return Err(bad("empty")),
    };
    rest = &rest[1..];
    let mut attachments = None;
    if matches!(kind, SioKind::BinaryEvent | SioKind::BinaryAck) {
        let dash = rest
            .find('-')
            .ok_or_else(|| bad("binary packet without attachment count"))?;
        attachments = Some(
            rest[..dash]
                .parse()
                .map_err(|_| bad("bad attachment count"))?,
        );
        rest = &rest[dash + 1..];
    }
    let mut namespace = "/".to_owned();
    if rest.starts_with('/') {
        let comma = rest.find(',').unwrap_or(rest.len());
        namespace = rest[..comma].to_owned();
        rest = rest.get(comma + 1..).unwrap_or("");
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let ack_id = if digits > 0 {
        Some(
            rest[..digits]
                .parse()
                .map_err(|_| bad("ack id out of range"))?,
        )
    } else {
        None
    };
    rest = &rest[digits..];
    let data: Option<Value> = if rest.is_empty() {
        None
    } else {
        Some(serde_json::from_str(rest).map_err(|e| bad(&format!("payload is not JSON: {e}")))?)
    };
    if !payload_fits(kind, data.as_ref()) {
        return Err(bad("payload of the wrong shape for the packet type"));
    }
    Ok(SioPacket {
        kind,
        namespace,
        ack_id,
        attachments,
        data,
    })
}

/// The payload shapes socket.io-parser accepts per type (its `isPayloadValid`). Without this
/// check an ack id followed by a numeric payload would read back as a longer id.
fn payload_fits(kind: SioKind, data: Option<&Value>) -> bool {
    match (kind, data) {
        (SioKind::Connect, None | Some(Value::Object(_))) => true,
        (SioKind::Disconnect, None) => true,
        (SioKind::ConnectError, Some(Value::String(_) | Value::Object(_))) => true,
        (SioKind::Event | SioKind::BinaryEvent, Some(Value::Array(items))) => {
            matches!(items.first(), Some(Value::String(_) | Value::Number(_)))
        }
        (SioKind::Ack | SioKind::BinaryAck, Some(Value::Array(_))) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn engine_io_packets() {
        let open = r#"0{"sid":"abc","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#;
        match parse_eio(open).unwrap() {
            EioPacket::Open(info) => assert_eq!(
                (info.ping_interval, info.max_payload),
                (25000, Some(1000000))
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_eio("2").unwrap(), EioPacket::Ping(String::new()));
        assert_eq!(
            parse_eio("3probe").unwrap(),
            EioPacket::Pong("probe".into())
        );
        assert_eq!(
            parse_eio("42[\"a\"]").unwrap(),
            EioPacket::Message("2[\"a\"]".into())
        );
        assert!(parse_eio("9").is_err());
        assert!(parse_eio("0{not json").is_err());
    }

    #[test]
    fn socket_io_round_trips() {
        for text in [
            "0",
            "0{\"token\":\"x\"}",
            "0/admin,{\"sid\":\"s\"}",
            "1",
            "2[\"message\",{\"a\":1}]",
            "2/chat,12[\"e\"]",
            "312[]",
            "4{\"message\":\"no\"}",
            "51-[\"e\",{\"_placeholder\":true,\"num\":0}]",
        ] {
            let p = parse_sio(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(p.encode(), text);
        }
        let p = SioPacket::event("/", "message", vec![json!({"type": "context-update"})]);
        assert_eq!(
            p.to_frame_text(),
            "42[\"message\",{\"type\":\"context-update\"}]"
        );
        assert_eq!(
            parse_sio("2/chat,7[\"e\",1]")
                .unwrap()
                .event_parts()
                .map(|(n, a)| (n.to_owned(), a.len())),
            Some(("e".into(), 1))
        );
        assert!(parse_sio("2[\"truncated").is_err());
        // Found by fuzz/socketio_packet: an ack id before a numeric payload read back as a
        // longer id. Payloads must have their type's shape, as socket.io-parser demands.
        for bad in [
            "400 0 ", "20", "2{}", "2[]", "2[{}]", "1{}", "3{}", "4[1]", "0[]",
        ] {
            assert!(parse_sio(bad).is_err(), "{bad}");
        }
        assert!(parse_sio("9").is_err());
        assert!(parse_sio("").is_err());
    }
}
