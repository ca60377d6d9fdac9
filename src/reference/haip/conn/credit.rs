//! The inbound credit the reference target grants: each message that consumes credit takes
//! it, and channels that went idle after using half of it get it back.

use super::{Conn, Granted};
use crate::protocol::haip::model::{self, SYSTEM_CHANNEL};
use crate::reference::haip::outbox::Outgoing;
use serde_json::{json, Value};
use tokio::time::Instant;

impl Conn {
    /// Takes one message's credit; false when the client had none left.
    pub(super) fn consume_credit(&mut self, event: &Value) -> bool {
        let channel = event
            .get("channel")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let bytes = model::media_bytes(event).unwrap_or(0) as i64;
        let (m, b) = (
            self.config.initial_credit_messages as i64,
            self.config.initial_credit_bytes as i64,
        );
        let g = self.granted.entry(channel).or_insert(Granted {
            messages: m,
            bytes: b,
            used_since_grant: 0,
            last_arrival: Instant::now(),
        });
        g.messages -= 1;
        g.bytes -= bytes;
        g.used_since_grant += 1;
        g.last_arrival = Instant::now();
        g.messages >= 0 && g.bytes >= 0
    }

    /// Grants credit back on channels that went idle after using half of it.
    pub(super) async fn refill(&mut self) {
        let half = (self.config.initial_credit_messages / 2).max(1);
        let idle = self.config.credit_refill_idle;
        let zero = self.config.faults.has("zero-credit-grant");
        let mut grants = Vec::new();
        for (channel, g) in &mut self.granted {
            if g.used_since_grant >= half && g.last_arrival.elapsed() >= idle && g.messages >= 0 {
                let add = g.used_since_grant;
                g.messages += add as i64;
                g.used_since_grant = 0;
                grants
                    .push(json!({"channel": channel, "add_messages": if zero { 0 } else { add }}));
            }
        }
        for payload in grants {
            self.emit(Outgoing::new("FLOW_UPDATE", SYSTEM_CHANNEL, payload))
                .await;
        }
    }
}
