//! The handshake and what it announces: HAI first on every connection (HAIP-HS-001), a
//! well-formed version (HAIP-VER-004), a client HAI starting or resuming a session, and events
//! the peer's HAI did not accept (HAIP-VER-002).

use super::{side, HaipChecker, Sender};
use crate::protocol::haip::facts::{Facts, HaiFacts};
use crate::protocol::haip::model;
use crate::rules::ids::{HAIP_HS_001, HAIP_SEQ_010, HAIP_VER_002, HAIP_VER_004};
use crate::rules::Violation;
use crate::transcript::Direction;

impl HaipChecker {
    /// Counts the message on its connection and judges it as the connection's first, when it
    /// is; a HAI is taken for what it announces.
    pub(super) fn handshake(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
        let me = side(from);
        let first = self.senders[me].sent_on_connection == 0;
        self.senders[me].sent_on_connection += 1;
        if first {
            self.exercised.hit(HAIP_HS_001);
        }
        if first && ty != "HAI" && !(from == Direction::Server && ty == "ERROR") {
            out.push(Violation::new(
                HAIP_HS_001,
                format!("the first message on the connection is {ty}, not HAI"),
            ));
        }
        let Some(hai) = &f.hai else {
            return;
        };
        if from == Direction::Server {
            self.server_greeted();
        }
        // Only a HAI that opens a connection starts (or resumes) a session; one sent later
        // is just a bad message for the target to reject.
        if from == Direction::Client && first {
            self.resuming = hai.resumes;
            if !self.resuming {
                self.new_session();
                self.senders[me].sent_on_connection = 1;
            }
            if let Some(last) = hai.last_rx_seq {
                self.resumed_from(last, out);
            }
        }
        // A malformed HAI of the client's is refused: it announces nothing.
        if from == Direction::Server || self.well_formed {
            if self.resuming && first {
                self.readvertised(me, hai);
            }
            self.on_hai(from, hai, out);
        }
    }

    /// HAIP-SEQ-010: a resuming client's `last_rx_seq` is "the highest received `seq`". What
    /// it received is not seen, only bounded: not past the highest seq the server sent, and
    /// not below what the client acknowledged before (its cumulative `ack` said it had that).
    /// A transcript that begins with the resume (the session's start not recorded) bounds
    /// nothing.
    fn resumed_from(&mut self, last: u64, out: &mut Vec<Violation>) {
        self.exercised.hit(HAIP_SEQ_010);
        let sent = self.senders[side(Direction::Server)].max_seq;
        let acked = self.senders[side(Direction::Client)].last_ack.unwrap_or(0);
        if let Some(sent) = sent.filter(|s| last > *s) {
            out.push(Violation::new(
                HAIP_SEQ_010,
                format!("the resuming HAI's last_rx_seq \"{last}\" is past the highest seq the server sent (\"{sent}\")"),
            ));
        } else if last < acked {
            out.push(Violation::new(
                HAIP_SEQ_010,
                format!("the resuming HAI's last_rx_seq \"{last}\" is below the ack \"{acked}\" the client sent before: it received at least that"),
            ));
        }
    }

    /// A client HAI without `last_rx_seq` starts a new session: numbering restarts. A server
    /// that greeted this connection before the client's HAI arrived has already begun the
    /// new session's numbering, so what it sent stands.
    fn new_session(&mut self) {
        for (i, s) in self.senders.iter_mut().enumerate() {
            let sent = s.sent_on_connection;
            if i == side(Direction::Server) && sent > 0 {
                continue;
            }
            *s = Sender {
                sent_on_connection: sent,
                ..Sender::default()
            };
        }
        self.shared = Default::default();
    }

    fn on_hai(&mut self, from: Direction, hai: &HaiFacts, out: &mut Vec<Violation>) {
        if let Some(version) = &hai.haip_version {
            self.exercised.hit(HAIP_VER_004);
            if !model::is_version_triplet(version) {
                out.push(Violation::new(
                    HAIP_VER_004,
                    format!("haip_version {version:?} is not MAJOR.MINOR.PATCH"),
                ));
            }
        }
        let sender = &mut self.senders[side(from)];
        if sender.announced.is_none() {
            sender.first_announced = (hai.credit_messages, hai.credit_bytes);
        }
        sender.announced = Some(hai.clone());
    }

    /// HAIP-VER-002: a message of a type the peer's HAI did not list in `accept_events`.
    pub(super) fn accepted_by_peer(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) {
        let ty = f.ty;
        if ty == "HAI" {
            return;
        }
        let accepted = self.senders[1 - side(from)]
            .announced
            .as_ref()
            .and_then(|a| a.accept_events.as_ref());
        if let Some(accepted) = accepted {
            let refused = !accepted.iter().any(|t| t == ty);
            self.exercised.hit(HAIP_VER_002);
            if refused {
                out.push(Violation::new(
                    HAIP_VER_002,
                    format!("sent {ty}, which the peer's accept_events does not list"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    #[test]
    fn hai_first_on_every_connection() {
        let mut talk = Talk::connected();
        assert_eq!(
            talk.send(Client, "PING", json!({"nonce": "a"})),
            ["HAIP-HS-001"]
        );
        let mut talk = Talk::open();
        talk.reconnect();
        assert_eq!(
            talk.send(Server, "PING", json!({"nonce": "b"})),
            ["HAIP-HS-001"]
        );
    }

    #[test]
    fn a_server_may_refuse_a_connection_with_an_error_first() {
        let mut talk = Talk::connected();
        let refusal = json!({"code": "VERSION_INCOMPATIBLE", "message": "no common major"});
        assert_eq!(talk.send(Server, "ERROR", refusal), NONE);
    }

    #[test]
    fn a_version_is_three_numbers() {
        let mut talk = Talk::connected();
        talk.send(Client, "HAI", hai("1.1.2"));
        assert_eq!(talk.send(Server, "HAI", hai("1.1")), ["HAIP-VER-004"]);
    }

    #[test]
    fn nothing_the_peer_did_not_accept() {
        let only_pings = json!({"accept_events": ["HAI", "PING", "PONG"]});
        let mut talk = Talk::open_with(only_pings, json!({}));
        assert_eq!(talk.send(Server, "PING", json!({"nonce": "n"})), NONE);
        let start = json!({"message_id": uuid(), "author": "agent", "text": "hi"});
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_START", start),
            ["HAIP-VER-002"]
        );
    }

    /// A resume's last_rx_seq lies between what the client acknowledged and what the server
    /// sent: past the one or below the other breaks HAIP-SEQ-010.
    #[test]
    fn a_resume_names_at_most_what_was_sent_and_at_least_what_was_acknowledged() {
        let resume_at = |last: &str| {
            let mut talk = Talk::open();
            for _ in 0..3 {
                talk.send(Server, "PING", json!({"nonce": "n"}));
            }
            // The client acknowledged the server's HAI and two PINGs: seq 3.
            talk.send_with(Client, "PONG", json!({"nonce": "n"}), json!({"ack": "3"}));
            talk.reconnect();
            let mut resume = hai("1.1.2");
            resume["last_rx_seq"] = json!(last);
            talk.send(Client, "HAI", resume)
        };
        assert_eq!(resume_at("4"), NONE);
        assert_eq!(resume_at("3"), NONE);
        assert_eq!(resume_at("5"), ["HAIP-SEQ-010"]);
        assert_eq!(resume_at("2"), ["HAIP-SEQ-010"]);
    }

    fn hai(version: &str) -> serde_json::Value {
        json!({
            "haip_version": version,
            "accept_major": [1],
            "accept_events": crate::protocol::haip::model::EVENT_TYPES,
        })
    }
}
