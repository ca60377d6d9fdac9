//! Liveness: a PONG echoes the nonce of a PING its sender still owes an answer (HAIP-PING-002).

use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::rules::Violation;
use crate::transcript::Direction;

/// Most PINGs remembered while their PONGs are owed.
const MAX_OWED_PONGS: usize = 4096;

/// How many of a side's latest PONG nonces are remembered, to tell one relayed back.
pub(super) const REMEMBERED_PONGS: usize = 4096;

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
                // A PONG of the peer's own coming back (a server relaying what its clients
                // send, the sender too: the public HAIP server does) answers nothing: taken
                // for the answer to the oldest PING owed, it was called a wrong nonce, and the
                // right answer after it one to no PING at all.
                if let Some(nonce) = f.nonce {
                    if self.senders[1 - me].pongs_sent.contains(nonce) {
                        return;
                    }
                    self.senders[me].pongs_sent.insert(nonce);
                }
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

    /// Found against the public HAIP server, which relays every message its client sends
    /// back to it: the client's own PONG, echoed while a PING of the client's was owed, was
    /// taken for that PING's answer (a wrong nonce), and the right answer after it for one to
    /// no PING (two false HAIP-PING-002).
    #[test]
    fn a_pong_of_ours_echoed_back_answers_no_ping() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "PING", json!({"nonce": "s1"})), NONE);
        assert_eq!(talk.send(Client, "PONG", json!({"nonce": "s1"})), NONE);
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "c1"})), NONE);
        // Our PONG relayed back, then the answer.
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "s1"})), NONE);
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "c1"})), NONE);
        // A wrong nonce is still one.
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "c2"})), NONE);
        assert_eq!(
            talk.send(Server, "PONG", json!({"nonce": "zz"})),
            ["HAIP-PING-002"]
        );
    }

    /// Also found against the public HAIP server, which answers a PING we broke on purpose
    /// (an empty `ts`) with a PONG instead of an ERROR: that PONG was taken for the answer to
    /// the oldest PING still owed, and every right answer after it for one to no PING. What a
    /// target answers to broken input is judged by the rules about broken input alone.
    #[test]
    fn a_pong_to_a_broken_ping_answers_no_ping_owed() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "owed"})), NONE);
        let broken = talk.send_with(
            Client,
            "PING",
            json!({"nonce": "broken"}),
            json!({"ts": ""}),
        );
        assert!(!broken.is_empty(), "an empty ts breaks the envelope");
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "broken"})), NONE);
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "owed"})), NONE);
    }

    #[test]
    fn an_unasked_pong_is_not_judged() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "z"})), NONE);
    }
}
