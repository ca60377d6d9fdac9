//! Wraps a payload in the common envelope, with the envelope faults and variants applied.

use crate::protocol::json::timestamp;
use crate::reference::{Faults, Variants};
use serde_json::{json, Value};
use std::time::SystemTime;

/// The envelope writer of one connection.
pub struct Stamp {
    faults: Faults,
    variants: Variants,
    /// Ids count up from here (a random start, so two connections' ids differ).
    next_id: u64,
}

impl Stamp {
    pub fn new(faults: Faults, variants: Variants) -> Stamp {
        Stamp {
            faults,
            variants,
            next_id: u64::from(uuid::Uuid::new_v4().as_fields().0) << 16,
        }
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    pub fn variants(&self) -> &Variants {
        &self.variants
    }

    /// A fresh id with `prefix` (`view`, `tr`, `wt`).
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        match self.variants.has("uuid-ids") {
            true => format!("{prefix}_{}", uuid::Uuid::new_v4().simple()),
            false => format!("{prefix}_{:x}", self.next_id),
        }
    }

    /// The event of type `ty` in `session`, on `trace` when it has one.
    pub fn event(&mut self, ty: &str, session: &str, trace: Option<&str>, payload: Value) -> Value {
        let id = match (
            self.faults.has("duplicate-ids"),
            self.faults.has("id-without-prefix"),
        ) {
            (true, _) => "evt_1".to_owned(),
            (_, true) => {
                self.next_id += 1;
                self.next_id.to_string()
            }
            _ => self.fresh("evt"),
        };
        let now = SystemTime::now();
        let ts = match (
            self.faults.has("epoch-ts"),
            self.faults.has("ts-without-millis"),
            self.faults.has("ts-not-rfc3339"),
        ) {
            (true, _, _) => json!(now
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)),
            (_, true, _) => json!(humantime::format_rfc3339_seconds(now).to_string()),
            (_, _, true) => json!("Thu Jan  8 12:34:56 2026"),
            _ => json!(timestamp(now)),
        };
        let mut event = json!({"type": ty, "id": id, "ts": ts, "session_id": session});
        let traced = match ty {
            "tool.call" => !self.faults.has("call-without-trace"),
            "tool.result" => !self.faults.has("result-without-trace"),
            _ => !self.variants.has("no-ui-trace"),
        };
        if let (Some(trace), true) = (trace, traced) {
            event["trace_id"] = json!(trace);
        }
        if self.faults.has("no-session-id") {
            if let Some(obj) = event.as_object_mut() {
                obj.remove("session_id");
            }
        }
        let mut payload = payload;
        if self.variants.has("extra-fields") {
            event["meta"] = json!({"producer": "wireprobe-reference", "seq": self.next_id});
            if let Some(obj) = payload.as_object_mut() {
                obj.insert("x_reference".into(), json!(true));
            }
        }
        event["payload"] = match self.faults.has("payload-string") {
            true => json!(payload.to_string()),
            false => payload,
        };
        event
    }
}
