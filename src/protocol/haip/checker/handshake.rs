//! The handshake and what it announces: HAI first on every connection (HAIP-HS-001), a
//! well-formed version (HAIP-VER-004), a client HAI starting or resuming a session, and events
//! the peer's HAI did not accept (HAIP-VER-002).

use super::{side, HaipChecker, Sender};
use crate::protocol::haip::facts::{Facts, HaiFacts};
use crate::protocol::haip::model;
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
        if first && ty != "HAI" && !(from == Direction::Server && ty == "ERROR") {
            out.push(Violation::new(
                "HAIP-HS-001",
                format!("the first message on the connection is {ty}, not HAI"),
            ));
        }
        let Some(hai) = &f.hai else {
            return;
        };
        // Only a HAI that opens a connection starts (or resumes) a session; one sent later
        // is just a bad message for the target to reject.
        if from == Direction::Client && first {
            self.resuming = hai.resumes;
            if !self.resuming {
                self.new_session();
                self.senders[me].sent_on_connection = 1;
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
            if !model::is_version_triplet(version) {
                out.push(Violation::new(
                    "HAIP-VER-004",
                    format!("haip_version {version:?} is not MAJOR.MINOR.PATCH"),
                ));
            }
        }
        self.senders[side(from)].announced = Some(hai.clone());
    }

    /// HAIP-VER-002: a message of a type the peer's HAI did not list in `accept_events`.
    pub(super) fn accepted_by_peer(
        &self,
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
            if !accepted.iter().any(|t| t == ty) {
                out.push(Violation::new(
                    "HAIP-VER-002",
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

    fn hai(version: &str) -> serde_json::Value {
        json!({
            "haip_version": version,
            "accept_major": [1],
            "accept_events": crate::protocol::haip::model::EVENT_TYPES,
        })
    }
}
