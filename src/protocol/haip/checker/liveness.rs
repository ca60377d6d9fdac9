//! Liveness: a PONG echoes the nonce of a PING its sender still owes an answer (HAIP-PING-002).

use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::rules::Violation;
use crate::transcript::Direction;

/// Most PINGs remembered while their PONGs are owed.
const MAX_OWED_PONGS: usize = 4096;

impl HaipChecker {
    pub(super) fn check_liveness(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) {
        let me = side(from);
        match f.ty {
            "PING" => {
                let pending = &mut self.senders[1 - me].pings_to_answer;
                if pending.len() >= MAX_OWED_PONGS {
                    pending.pop_front();
                }
                pending.push_back(f.nonce.map(str::to_owned));
            }
            "PONG" => {
                let sender = &mut self.senders[me];
                let (pending, maybe) =
                    (&mut sender.pings_to_answer, &mut sender.pings_maybe_dropped);
                if let Some(i) = pending.iter().position(|n| n.as_deref() == f.nonce) {
                    pending.remove(i);
                } else if let Some(i) = maybe.iter().position(|n| n.as_deref() == f.nonce) {
                    maybe.remove(i);
                } else if pending.pop_front().is_some() {
                    out.push(Violation::new(
                        "HAIP-PING-002",
                        format!(
                            "PONG nonce {} echoes no outstanding PING",
                            crate::show::quoted_or_none(f.nonce)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    #[test]
    fn a_pong_echoes_an_outstanding_ping() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "a"})), NONE);
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "b"})), NONE);
        // Answered out of order: each echoes a PING still owed.
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "b"})), NONE);
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "c"})), NONE);
        assert_eq!(
            talk.send(Server, "PONG", json!({"nonce": "z"})),
            ["HAIP-PING-002"]
        );
    }

    #[test]
    fn an_unasked_pong_is_not_judged() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "z"})), NONE);
    }
}
