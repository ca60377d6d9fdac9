//! Liveness: a PONG echoes the nonce of a PING its sender still owes an answer (HAIP-PING-002).

use super::echoes::without_payload_field;
use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::protocol::haip::model;
use crate::protocol::recent::push_bounded;
use crate::rules::ids::HAIP_PING_002;
use crate::rules::Violation;
use crate::transcript::Direction;
use serde_json::Value;

/// Most nonces of a side's broken PINGs that are no string, remembered to tell a PONG echoing
/// one.
pub(super) const REMEMBERED_BROKEN_NONCES: usize = 16;

/// Most PINGs remembered while their PONGs are owed.
const MAX_OWED_PONGS: usize = 4096;

/// How many of a side's latest PONG nonces are remembered, to tell one relayed back.
pub(super) const REMEMBERED_PONGS: usize = 4096;

/// A PING whose PONG is owed: its nonce, and its seq, which the PONG's ack keeps up with
/// (HAIP-SEQ-011).
#[derive(Debug)]
pub(super) struct OwedPong {
    nonce: Option<String>,
    seq: Option<u64>,
}

impl HaipChecker {
    pub(super) fn check_liveness(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) {
        let me = side(from);
        match f.ty {
            // A PING broken on purpose (the server's, when wireprobe judges a client) is owed
            // no PONG: answered, the answer is judged by the rules about broken input alone.
            "PING" if !self.well_formed => self.ping_may_be_answered(me, f.nonce),
            "PING" => {
                let pending = &mut self.senders[1 - me].pings_to_answer;
                let owed = OwedPong {
                    nonce: f.nonce.map(str::to_owned),
                    seq: f.seq,
                };
                push_bounded(pending, owed, MAX_OWED_PONGS);
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
                if !sender.pings_to_answer.is_empty() {
                    self.exercised.hit(HAIP_PING_002);
                }
                let (pending, maybe) =
                    (&mut sender.pings_to_answer, &mut sender.pings_maybe_dropped);
                if let Some(i) = pending.iter().position(|p| p.nonce.as_deref() == f.nonce) {
                    let answered = pending.remove(i).and_then(|p| p.seq);
                    self.ack_keeps_up(me, answered, f.ack, out);
                } else if let Some(i) = maybe.iter().position(|n| n.as_deref() == f.nonce) {
                    maybe.remove(i);
                } else if pending.pop_front().is_some() {
                    out.push(Violation::new(
                        HAIP_PING_002,
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

    /// A broken PING's nonce that is no string (`{"n": 1}`), remembered: a PONG copying it
    /// answers broken input.
    pub(super) fn note_broken_ping(&mut self, from: Direction, event: &Value) {
        if self.well_formed || model::event_type(event) != Some("PING") {
            return;
        }
        let Some(nonce) = event.pointer("/payload/nonce").filter(|n| !n.is_string()) else {
            return;
        };
        let kept = &mut self.senders[side(from)].broken_nonces;
        push_bounded(kept, nonce.clone(), REMEMBERED_BROKEN_NONCES);
    }

    /// A PONG answering a PING broken on purpose may copy its nonce, which then breaks the
    /// schema: what a target answers to broken input is judged by the rules about broken
    /// input alone, so the schema is judged on the rest (`None`: nothing echoed). Found
    /// fuzzing the public HAIP SDK, which echoes whatever nonce it is sent.
    pub(super) fn echoed_nonce(&self, from: Direction, event: &Value) -> Option<Value> {
        if model::event_type(event) != Some("PONG") {
            return None;
        }
        let nonce = event.pointer("/payload/nonce").filter(|n| !n.is_string())?;
        if !self.senders[1 - side(from)].broken_nonces.contains(nonce) {
            return None;
        }
        Some(without_payload_field(event, "nonce"))
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

    /// Judging a client, wireprobe's broken PINGs are the input: one answered with an ERROR
    /// and no PONG leaves no PONG owed (a later keep-alive PONG was taken for its wrong
    /// answer), and a PONG copying its nonce that is no string breaks no schema rule (the
    /// public SDK echoes whatever nonce it gets; found by fuzzing it).
    #[test]
    fn a_broken_ping_of_the_server_s_is_owed_nothing_and_its_echo_is_excused() {
        let mut talk = Talk::open();
        let late = json!({"ts": ""});
        let found = talk.send_with(Server, "PING", json!({"nonce": "x"}), late);
        assert!(!found.is_empty(), "an empty ts breaks the envelope");
        assert_eq!(
            talk.send(Client, "PONG", json!({"nonce": "keep-alive"})),
            NONE
        );

        let odd = json!({"nonce": {"n": 1}});
        assert_eq!(talk.send(Server, "PING", odd.clone()), ["HAIP-ENV-009"]);
        assert_eq!(talk.send(Client, "PONG", odd.clone()), NONE);
        // A PONG with a nonce no broken PING had breaks the schema as any message would.
        let other = json!({"nonce": {"n": 2}});
        assert_eq!(talk.send(Client, "PONG", other), ["HAIP-ENV-009"]);
    }

    #[test]
    fn an_unasked_pong_is_not_judged() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "z"})), NONE);
    }
}
