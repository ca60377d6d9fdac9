//! What the lifecycle checker needs to know about one event, extracted once, whichever way
//! the event was parsed (a `serde_json::Value`, or the fast borrowed path in [`super::fast`]).

use super::model;
use serde_json::Value;

/// `payload.data` of a media message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data<'a> {
    Absent,
    Text(&'a str),
    /// Present but not a string (the schema flags it; the checker ignores it).
    Other,
}

/// What a HAI announces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HaiFacts {
    pub haip_version: Option<String>,
    pub accept_events: Option<Vec<String>>,
    pub binary_frames: bool,
    pub credit_messages: Option<u64>,
    pub credit_bytes: Option<u64>,
    pub resumes: bool,
    /// `last_rx_seq` when it is a decimal string.
    pub last_rx_seq: Option<u64>,
}

/// The fields of one event the lifecycle checks read.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts<'a> {
    pub ty: &'a str,
    /// The envelope's `id` when it is a string.
    pub id: Option<&'a str>,
    /// `seq` when it is a valid decimal string.
    pub seq: Option<u64>,
    /// `seq` is there but is no decimal string (a number, base-36 text): the sequence rules
    /// cannot hold for it.
    pub seq_unreadable: bool,
    pub ack: Option<u64>,
    pub channel: Option<&'a str>,
    pub run_id: Option<&'a str>,
    pub bin_len: Option<u64>,
    pub has_bin_mime: bool,
    pub message_id: Option<&'a str>,
    pub call_id: Option<&'a str>,
    /// `payload.nonce` when it is a string.
    pub nonce: Option<&'a str>,
    pub payload_channel: Option<&'a str>,
    pub payload_run_id: bool,
    pub add_messages: Option<i64>,
    pub add_bytes: Option<i64>,
    pub data: Data<'a>,
    pub code: Option<&'a str>,
    /// An ERROR's `payload.related_id` when it is a string.
    pub related_id: Option<&'a str>,
    pub hai: Option<HaiFacts>,
}

impl<'a> Facts<'a> {
    /// Facts of an event with no type-specific fields set.
    pub fn bare(ty: &'a str) -> Self {
        Facts {
            ty,
            id: None,
            seq: None,
            seq_unreadable: false,
            ack: None,
            channel: None,
            run_id: None,
            bin_len: None,
            has_bin_mime: false,
            message_id: None,
            call_id: None,
            nonce: None,
            payload_channel: None,
            payload_run_id: false,
            add_messages: None,
            add_bytes: None,
            data: Data::Absent,
            code: None,
            related_id: None,
            hai: None,
        }
    }

    /// Facts of a parsed event; `None` when it has no string `type`.
    pub fn from_value(event: &'a Value) -> Option<Self> {
        let ty = model::event_type(event)?;
        let s = |v: &'a Value, k: &str| v.get(k).and_then(Value::as_str);
        let payload = event.get("payload").unwrap_or(&Value::Null);
        let mut f = Facts::bare(ty);
        f.seq = event.get("seq").and_then(model::parse_seq);
        f.seq_unreadable = f.seq.is_none() && event.get("seq").is_some();
        f.ack = event.get("ack").and_then(model::parse_seq);
        f.channel = s(event, "channel");
        f.run_id = s(event, "run_id");
        f.bin_len = event.get("bin_len").and_then(model::whole_u64);
        f.has_bin_mime = event.get("bin_mime").is_some();
        f.message_id = s(payload, "message_id");
        f.call_id = s(payload, "call_id");
        f.nonce = s(payload, "nonce");
        f.payload_channel = s(payload, "channel");
        f.payload_run_id = payload.get("run_id").is_some();
        f.add_messages = payload.get("add_messages").and_then(model::whole_i64);
        f.add_bytes = payload.get("add_bytes").and_then(model::whole_i64);
        f.data = match payload.get("data") {
            None => Data::Absent,
            Some(Value::String(t)) => Data::Text(t),
            Some(_) => Data::Other,
        };
        f.code = s(payload, "code");
        f.id = s(event, "id");
        if matches!(ty, "ERROR" | "RUN_ERROR") {
            f.related_id = s(payload, "related_id");
        }
        if ty == "HAI" {
            let (credit_messages, credit_bytes) = model::initial_credit(event);
            f.hai = Some(HaiFacts {
                haip_version: s(payload, "haip_version").map(str::to_owned),
                accept_events: payload
                    .get("accept_events")
                    .and_then(Value::as_array)
                    .map(|l| {
                        l.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    }),
                binary_frames: model::hai_capability(event, "binary_frames")
                    == Some(&Value::Bool(true)),
                credit_messages,
                credit_bytes,
                resumes: payload.get("last_rx_seq").is_some(),
                last_rx_seq: payload.get("last_rx_seq").and_then(model::parse_seq),
            });
        }
        Some(f)
    }

    /// Bytes a media message moves, for byte credit (see [`model::media_bytes`]).
    pub fn media_bytes(&self) -> Option<u64> {
        if let Some(len) = self.bin_len {
            return Some(len);
        }
        match self.data {
            Data::Text(t) => model::base64_len(t),
            _ => Some(0),
        }
    }
}
