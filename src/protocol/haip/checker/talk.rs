//! Small transcripts for the checker's unit tests: whole, schema-valid HAIP messages between a
//! client and a server, numbered as a correct sender numbers them unless a test says
//! otherwise, each answered with the rules the checker found broken in it.

use super::HaipChecker;
use crate::protocol::haip::model::{EVENT_TYPES, HAIP_VERSION};
use crate::protocol::{merge, Checker, Observed};
use crate::transcript::Direction;
use serde_json::{json, Value};

pub(super) use Direction::{Client, Server};

/// The session every message names.
pub(super) const SESSION: &str = "cec25548-5672-4190-968d-b5c4f206e96c";

/// One connection's messages, judged as they are sent.
pub(super) struct Talk {
    checker: HaipChecker,
    /// The next seq of each side: client, server.
    next_seq: [u64; 2],
    at_ms: u64,
}

/// A plain HAI payload accepting every event type.
pub(super) fn hai_payload() -> Value {
    json!({
        "haip_version": HAIP_VERSION,
        "accept_major": [1],
        "accept_events": EVENT_TYPES,
    })
}

/// A fresh UUID (message, run, call and message ids).
pub(super) fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl Talk {
    /// The checker, for a test that looks at what it keeps.
    pub(super) fn checker(&self) -> &HaipChecker {
        &self.checker
    }

    /// A connection opened, nothing sent on it yet.
    pub(super) fn connected() -> Talk {
        let mut talk = Talk {
            checker: HaipChecker::new(),
            next_seq: [1, 1],
            at_ms: 0,
        };
        talk.reconnect();
        talk
    }

    /// A connection both sides opened with a plain HAI, each breaking nothing.
    pub(super) fn open() -> Talk {
        Talk::open_with(json!({}), json!({}))
    }

    /// A connection opened with each side's HAI payload patched (`$omit` removes a field).
    pub(super) fn open_with(client_hai: Value, server_hai: Value) -> Talk {
        let mut talk = Talk::connected();
        for (from, patch) in [(Client, client_hai), (Server, server_hai)] {
            let mut payload = hai_payload();
            merge(&mut payload, &patch);
            let found = talk.send(from, "HAI", payload);
            assert_eq!(found, Vec::<&str>::new(), "{from:?}'s HAI broke rules");
        }
        talk
    }

    /// A new connection in the same transcript (messages go on numbering).
    pub(super) fn reconnect(&mut self) {
        self.checker
            .observe(Client, self.at_ms, Observed::Connect(""), &mut Vec::new());
    }

    /// Lets `ms` pass before the next message.
    pub(super) fn wait(&mut self, ms: u64) {
        self.at_ms += ms;
    }

    /// `from` sends a `ty` message with `payload`, on the channel its type goes on.
    pub(super) fn send(&mut self, from: Direction, ty: &str, payload: Value) -> Vec<&'static str> {
        self.send_with(from, ty, payload, json!({}))
    }

    /// As [`Talk::send`], with `envelope` merged into the envelope (`seq`, `ack`, `run_id`,
    /// `bin_len`, `channel`; `$omit` removes a field). A `seq` given sets the numbering.
    pub(super) fn send_with(
        &mut self,
        from: Direction,
        ty: &str,
        payload: Value,
        envelope: Value,
    ) -> Vec<&'static str> {
        let side = usize::from(from == Server);
        let channel = match (ty, from) {
            ("HAI" | "PING" | "PONG" | "ERROR" | "FLOW_UPDATE", _) => "SYSTEM",
            ("PAUSE_CHANNEL" | "RESUME_CHANNEL", _) => "SYSTEM",
            (_, Client) => "USER",
            (_, Server) => "AGENT",
        };
        let mut event = json!({
            "id": uuid(),
            "session": SESSION,
            "seq": self.next_seq[side].to_string(),
            "ts": (1_700_000_000_000 + self.at_ms).to_string(),
            "channel": channel,
            "type": ty,
            "payload": payload,
        });
        merge(&mut event, &envelope);
        let sent = event.get("seq").and_then(Value::as_str);
        if let Some(seq) = sent.and_then(|s| s.parse::<u64>().ok()) {
            self.next_seq[side] = seq + 1;
        }
        self.judge(from, Observed::Event((&event).into(), None))
    }

    /// `from` sends a binary frame of `len` bytes.
    pub(super) fn binary(&mut self, from: Direction, len: usize) -> Vec<&'static str> {
        self.judge(from, Observed::Binary(len))
    }

    /// `from` sends a text frame that is no JSON.
    pub(super) fn garbage(&mut self, from: Direction, text: &str) -> Vec<&'static str> {
        self.judge(from, Observed::Garbage(text))
    }

    /// True when the checker found the client's last item broken.
    pub(super) fn client_input_broken(&self) -> bool {
        self.checker.input_broken()
    }

    fn judge(&mut self, from: Direction, item: Observed<'_>) -> Vec<&'static str> {
        let mut out = Vec::new();
        self.checker.observe(from, self.at_ms, item, &mut out);
        out.into_iter().map(|v| v.rule).collect()
    }
}

/// No rule broken.
pub(super) const NONE: [&str; 0] = [];
