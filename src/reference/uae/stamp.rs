//! Wraps a payload in the common envelope, with the envelope variants applied.

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
        let n = self.next_number();
        match self.variants.has("uuid-ids") {
            true => format!("{prefix}_{}", uuid::Uuid::new_v4().simple()),
            false => format!("{prefix}_{n:x}"),
        }
    }

    /// The next number of the count fresh ids are made from.
    pub fn next_number(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The event of type `ty` in `session`, on `trace` when it has one. The event faults
    /// reshape it as it goes out (`event_faults.rs`).
    pub fn event(&mut self, ty: &str, session: &str, trace: Option<&str>, payload: Value) -> Value {
        let id = self.fresh("evt");
        let ts = json!(timestamp(SystemTime::now()));
        let mut event = json!({"type": ty, "id": id, "ts": ts, "session_id": session});
        // Tool events always carry their trace; assistant output may not (the spec's examples).
        let traced = matches!(ty, "tool.call" | "tool.result") || !self.variants.has("no-ui-trace");
        if let (Some(trace), true) = (trace, traced) {
            event["trace_id"] = json!(trace);
        }
        let mut payload = payload;
        if self.variants.has("extra-fields") {
            event["meta"] = json!({"producer": "wireprobe-reference", "seq": self.next_id});
            if let Some(obj) = payload.as_object_mut() {
                obj.insert("x_reference".into(), json!(true));
            }
        }
        event["payload"] = payload;
        event
    }
}
