//! What the client's messages were and what errors answer: whether a client message is well
//! formed (so the checker takes it into account), HAIP-ERR-004 (an ERROR claiming a violation
//! for a message that broke no rule) and HAIP-ERR-003 (error codes the spec names).

use super::{side, HaipChecker, UNKNOWN_FIELD};
use crate::protocol::haip::facts::Facts;
use crate::protocol::haip::model::{self, KNOWN_ERROR_CODES};
use crate::rules::ids::{HAIP_ERR_003, HAIP_ERR_004};
use crate::rules::{self, Violation};

use crate::transcript::Direction;
use serde_json::Value;

/// The codes by which an ERROR says the message it answers broke the protocol (§Error
/// Handling's common codes, and the one §Versioning and Extensibility gives `crit`).
const VIOLATION_CODES: [&str; 4] = [
    "PROTOCOL_VIOLATION",
    "SEQ_VIOLATION",
    "FLOW_CONTROL_VIOLATION",
    "UNSUPPORTED_TYPE",
];

/// What the client sent on the current connection, for an ERROR that names and acknowledges no
/// message: when nothing the client sent on the connection was a violation, nor one a receiver
/// may take for one, an ERROR claiming a violation is false whichever message it answers.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ClientSoFar {
    /// The server's HAI opened the connection: before it an ERROR may refuse the connection
    /// itself (a token, suites/haip/auth.toml), which answers no message.
    greeted: bool,
    /// Messages sent: with none there is nothing to answer.
    sent: bool,
    /// Something broken, or a message the spec lets its receiver refuse (an unknown field,
    /// suites/haip/ERRATA.md item 2).
    refusable: bool,
    /// A message some reading of credit or of a pause puts beyond what the client may send
    /// (ERRATA item 9): a FLOW_CONTROL_VIOLATION may be that reading's.
    flow_open: bool,
}

impl HaipChecker {
    /// The server's HAI greeted the connection.
    pub(super) fn server_greeted(&mut self) {
        self.client_so_far.greeted = true;
    }

    /// An ERROR or RUN_ERROR: its code, and what a server's ERROR answers.
    pub(super) fn check_errors(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) {
        if !matches!(f.ty, "ERROR" | "RUN_ERROR") {
            return;
        }
        if f.ty == "ERROR" {
            self.peer_refused_something(from);
        }
        if f.ty == "ERROR" && from == Direction::Server {
            self.error_answers_valid(f, out);
        }
        if let Some(code) = f.code.filter(|c| !KNOWN_ERROR_CODES.contains(c)) {
            out.push(Violation::new(
                HAIP_ERR_003,
                format!("error code {code:?} is not one the spec names"),
            ));
        }
    }

    /// After a client message: remembers whether it broke no must (`found` holds what the
    /// checker found in it).
    pub(super) fn client_message_judged(&mut self, f: &Facts<'_>, found: &[Violation]) {
        let client = side(Direction::Client);
        // A message on a channel the server paused within the grace the checker gives it
        // (`flow.rs`): the server may have held the pause to bind from the moment it sent it.
        let paused = f.channel.is_some_and(|ch| {
            model::consumes_credit(f.ty) && self.senders[client].paused.contains_key(ch)
        });
        let within_credit = self.within_strictest_credit(client, f) && !paused;
        self.client_so_far.sent = true;
        let valid = self.well_formed
            && !found
                .iter()
                .any(|v| rules::is_must(crate::protocol::haip::rules::RULES, v.rule));
        if !valid {
            self.client_broke();
            return;
        }
        self.client_so_far.flow_open |= !within_credit;
        // The schema forbids unknown fields where the prose lets a receiver ignore them
        // (ERRATA item 2): refusing the message is a reading too, and no false claim.
        if found.iter().any(|v| v.rule == UNKNOWN_FIELD) {
            self.client_so_far.refusable = true;
            self.last_valid_client_seq = None;
            return;
        }
        if let Some(id) = f.id {
            self.valid_client_ids.insert(id);
            if !within_credit {
                self.credit_open_ids.insert(id);
            }
        }
        self.last_valid_client_seq = f.seq;
    }

    /// The client's item was broken (malformed, not a message, a binary frame nothing
    /// announced): an ERROR may answer it, and it is not the latest valid message.
    pub(super) fn client_broke(&mut self) {
        self.client_broken = true;
        self.client_so_far.refusable = true;
        self.broken_unanswered = self.broken_unanswered.saturating_add(1);
        self.last_valid_client_seq = None;
    }

    /// HAIP-ERR-004: an ERROR claiming a protocol violation that answers a client message
    /// which broke no rule. It answers the message its `related_id` names; without one, the
    /// client's latest message when that was valid, the ERROR acknowledges it, and no broken
    /// message of the client's is still unanswered; naming none it acknowledges, after a
    /// greeting on a connection where the client sent nothing a receiver may refuse, it
    /// answers a valid message whichever it is.
    fn error_answers_valid(&mut self, f: &Facts<'_>, out: &mut Vec<Violation>) {
        // An ERROR naming a valid message of the client's (a refused run: RUN_LIMIT_EXCEEDED)
        // answers that one, not a broken message still owed its ERROR.
        let names_valid = f
            .related_id
            .is_some_and(|id| self.valid_client_ids.contains(id));
        let answers_broken = !names_valid && self.broken_unanswered > 0;
        if !names_valid {
            self.broken_unanswered = self.broken_unanswered.saturating_sub(1);
        }
        let Some(code) = f.code.filter(|c| VIOLATION_CODES.contains(c)) else {
            return;
        };
        self.exercised.hit(HAIP_ERR_004);
        // What consumes credit is open (ERRATA item 9): the claim is false only for a message
        // within its credit however the target counted.
        if code == "FLOW_CONTROL_VIOLATION" {
            let credit_open = match f.related_id {
                Some(id) => self.credit_open_ids.contains(id),
                None => self.client_so_far.flow_open,
            };
            if credit_open {
                return;
            }
        }
        let answered = match f.related_id {
            Some(id) => self
                .valid_client_ids
                .contains(id)
                .then(|| format!("answers the client's message {id}, which broke no rule")),
            None => self
                .last_valid_client_seq
                .filter(|seq| !answers_broken && f.ack == Some(*seq))
                .map(|seq| {
                    format!("answers the client's message with seq \"{seq}\", which it acknowledges and which broke no rule")
                })
                .or_else(|| self.nothing_refusable()),
        };
        if let Some(answered) = answered {
            out.push(Violation::new(
                HAIP_ERR_004,
                format!("ERROR {code} {answered}"),
            ));
        }
    }

    /// What an ERROR naming and acknowledging no message answers, when every message the
    /// client sent on the greeted connection broke no rule and none was one a receiver may
    /// refuse. Not on a connection that resumes a session: the server resends there what
    /// the client did not receive on the last, an ERROR answering what it sent there among it.
    fn nothing_refusable(&self) -> Option<String> {
        let so_far = self.client_so_far;
        (so_far.greeted && so_far.sent && !so_far.refusable && !self.resuming).then(|| {
            "names and acknowledges no message, and every message the client sent on this connection broke no rule".to_owned()
        })
    }

    /// Whether the message is well formed: schema-clean (unknown fields are tolerated,
    /// suites/haip/ERRATA.md item 2), in our session and without `crit`. A schema-clean client
    /// HAI that opens its connection names the session; a malformed one is rejected and a later
    /// one starts nothing (see `handshake.rs`), so with either the session keeps its name.
    /// A broken client message's `id` is kept when it is no UUID, for an ERROR to echo.
    pub(super) fn judge_form(
        &mut self,
        from: Direction,
        ty: Option<&str>,
        id: Option<&str>,
        session: Option<&str>,
        schema_clean: bool,
        crit: Option<&Value>,
    ) {
        let critical = crit == Some(&Value::Bool(true));
        let opens = self.senders[0].sent_on_connection == 0;
        if from == Direction::Client && ty == Some("HAI") && schema_clean && opens {
            self.session_id = session.map(str::to_owned);
        }
        let foreign =
            session.is_some() && self.session_id.is_some() && session != self.session_id.as_deref();
        self.well_formed = !foreign && schema_clean && !critical;
        if from == Direction::Client {
            self.client_broken = !self.well_formed;
            if !self.well_formed {
                self.broken_id = id.filter(|id| !model::is_uuid(id)).map(str::to_owned);
            }
        }
    }

    /// An ERROR answering our malformed message may name it by the id it had, which is no
    /// UUID: the schema is judged on the rest (`None`: nothing echoed).
    pub(super) fn echoed_related_id(&self, from: Direction, event: &Value) -> Option<Value> {
        let broken = self.broken_id.as_deref()?;
        let echoed = from == Direction::Server
            && event.pointer("/payload/related_id").and_then(Value::as_str) == Some(broken);
        if !echoed {
            return None;
        }
        Some(super::echoes::without_payload_field(event, "related_id"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    fn error(code: &str) -> serde_json::Value {
        json!({"code": code, "message": "m"})
    }

    /// A HAI its receiver must reject (here `pv` out of range), or one that does not open its
    /// connection, leaves the session as it was: the client's later messages in it are its
    /// own, and the calls they make are answered.
    #[test]
    fn a_rejected_hai_names_no_session() {
        let mut talk = Talk::open();
        let hai = json!({"haip_version": "1.1.2", "accept_major": [1], "accept_events": ["HAI"]});
        let other = json!({"session": uuid(), "pv": 18446744073709551615u64, "seq": "2"});
        assert!(!talk.send_with(Client, "HAI", hai.clone(), other).is_empty());
        // Nor does a valid one sent after the connection's first message: it starts nothing.
        let later = json!({"session": uuid(), "seq": "2"});
        talk.send_with(Client, "HAI", hai, later);
        let call = uuid();
        let called = json!({"call_id": call, "tool": "echo"});
        assert_eq!(
            talk.send_with(Client, "TOOL_CALL", called, json!({"seq": "2"})),
            NONE
        );
        let done = json!({"call_id": call, "status": "OK"});
        assert_eq!(talk.send(Server, "TOOL_DONE", done), NONE);
    }

    /// An ERROR answering a valid message by name leaves a broken one still owed its own, which
    /// may come without a `related_id` after the client's next valid message.
    #[test]
    fn an_error_naming_a_valid_message_answers_no_broken_one() {
        let mut talk = Talk::open();
        let started = uuid();
        let run = json!({"run_id": started, "id": started});
        assert_eq!(talk.send_with(Client, "RUN_STARTED", json!({}), run), NONE);
        talk.garbage(Client, "{not json");
        let limit = json!({"code": "RUN_LIMIT_EXCEEDED", "message": "m", "related_id": started});
        assert_eq!(talk.send(Server, "ERROR", limit), NONE);
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "a"})), NONE);
        let late = talk.send_with(
            Server,
            "ERROR",
            error("PROTOCOL_VIOLATION"),
            json!({"ack": "3"}),
        );
        assert_eq!(late, NONE);
    }

    fn credit(messages: u64) -> serde_json::Value {
        json!({"capabilities": {"flow_control": {"initial_credit_messages": messages}}})
    }

    /// The client sends a text start on USER with this id; `well_formed` false breaks its
    /// message_id.
    fn user_text(talk: &mut Talk, id: &str, well_formed: bool) -> Vec<&'static str> {
        let message_id = if well_formed { uuid() } else { "m1".into() };
        let payload = json!({"message_id": message_id, "author": "user", "text": "hi"});
        talk.send_with(Client, "TEXT_MESSAGE_START", payload, json!({"id": id}))
    }

    fn flow_violation(related: &str) -> serde_json::Value {
        json!({"code": "FLOW_CONTROL_VIOLATION", "message": "m", "related_id": related})
    }

    /// Every message past the credit is one the ERROR may answer, not only the first (found
    /// by the fuzzer: the reference refused the 66th message of 64 credit, and the checker
    /// called that a false claim).
    #[test]
    fn a_flow_violation_claimed_past_the_credit_is_its_answer() {
        let mut talk = Talk::open_with(json!({}), credit(1));
        let ids: Vec<String> = (0..3).map(|_| uuid()).collect();
        for id in &ids {
            user_text(&mut talk, id, true);
        }
        for id in &ids[1..] {
            assert_eq!(talk.send(Server, "ERROR", flow_violation(id)), NONE);
        }
    }

    /// What consumes credit is open (ERRATA item 9): a target may count messages it refused.
    /// The claim is false only when no way of counting puts the message past its credit.
    #[test]
    fn a_flow_violation_is_false_only_within_credit_however_counted() {
        for (granted, claim_false) in [(2, false), (3, true)] {
            let mut talk = Talk::open_with(json!({}), credit(granted));
            user_text(&mut talk, &uuid(), false);
            user_text(&mut talk, &uuid(), false);
            let third = uuid();
            assert_eq!(user_text(&mut talk, &third, true), NONE);
            let found = talk.send(Server, "ERROR", flow_violation(&third));
            let expected: &[&str] = if claim_false { &["HAIP-ERR-004"] } else { &[] };
            assert_eq!(found, expected, "credit {granted}");
        }
    }

    /// An ERROR naming no message and acknowledging none answers one of the client's all the
    /// same: when every message the client sent on the connection was valid, its claim is
    /// false (the public server answers each PONG so, and nothing judged it).
    #[test]
    fn a_violation_claimed_of_nothing_after_valid_messages_is_false() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Client, "PONG", json!({"nonce": "k"})), NONE);
        let refusal = error("UNSUPPORTED_TYPE");
        assert_eq!(
            talk.send(Server, "ERROR", refusal.clone()),
            ["HAIP-ERR-004"]
        );
        // Acknowledging an earlier message ties it to none, and it is false all the same.
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "a"})), NONE);
        let earlier = json!({"ack": "1"});
        let found = talk.send_with(Server, "ERROR", refusal.clone(), earlier);
        assert_eq!(found, ["HAIP-ERR-004"]);
        // After garbage, a claim naming nothing may be its answer, and the next too.
        talk.garbage(Client, "{not json");
        assert_eq!(talk.send(Server, "ERROR", refusal.clone()), NONE);
        assert_eq!(talk.send(Server, "ERROR", refusal.clone()), NONE);
        // A new connection, and session, starts clean again.
        talk.reconnect();
        let first = json!({"seq": "1"});
        talk.send_with(Client, "HAI", hai_payload(), first.clone());
        talk.send_with(Server, "HAI", hai_payload(), first);
        assert_eq!(talk.send(Client, "PONG", json!({"nonce": "k"})), NONE);
        assert_eq!(talk.send(Server, "ERROR", refusal), ["HAIP-ERR-004"]);
    }

    /// A resumed session's server resends what the client did not receive: an ERROR answering
    /// the garbage of the last connection may come on the next (seen fuzzing the reference
    /// with 32 jobs: the connection dropped before the ERROR was read).
    #[test]
    fn a_violation_claimed_of_nothing_on_a_resumed_connection_may_be_a_resend() {
        let mut talk = Talk::open();
        talk.garbage(Client, "{not json");
        talk.reconnect();
        let mut resume = hai_payload();
        resume["last_rx_seq"] = json!("1");
        assert_eq!(talk.send(Client, "HAI", resume), NONE);
        assert_eq!(talk.send(Server, "HAI", hai_payload()), NONE);
        assert_eq!(
            talk.send(Server, "ERROR", error("PROTOCOL_VIOLATION")),
            NONE
        );
    }

    /// Naming nothing, an ERROR may answer what a receiver may refuse: a message with a field
    /// outside the schema (ERRATA item 2) or one past a credit however counted; and before the
    /// server's HAI it may refuse the connection itself (a token).
    #[test]
    fn a_violation_claimed_of_nothing_may_answer_what_may_be_refused() {
        let mut talk = Talk::open();
        let id = uuid();
        let unknown = json!({"x_note": "hi", "id": id});
        let found = talk.send_with(Client, "PING", json!({"nonce": "a"}), unknown);
        assert_eq!(found, ["HAIP-ENV-005"]);
        let named = json!({"code": "PROTOCOL_VIOLATION", "message": "m", "related_id": id});
        assert_eq!(talk.send(Server, "ERROR", named), NONE);
        assert_eq!(
            talk.send(Server, "ERROR", error("PROTOCOL_VIOLATION")),
            NONE
        );

        let mut talk = Talk::open_with(json!({}), credit(1));
        user_text(&mut talk, &uuid(), false);
        assert_eq!(user_text(&mut talk, &uuid(), true), NONE);
        let claim = error("FLOW_CONTROL_VIOLATION");
        assert_eq!(talk.send(Server, "ERROR", claim.clone()), NONE);
        // A broken message was sent on this connection: any claim naming nothing may be its.
        let found = talk.send(Server, "ERROR", error("PROTOCOL_VIOLATION"));
        assert_eq!(found, NONE);

        let mut talk = Talk::connected();
        talk.send(Client, "HAI", hai_payload());
        assert_eq!(
            talk.send(Server, "ERROR", error("PROTOCOL_VIOLATION")),
            NONE
        );
    }

    /// A message the client sent on a channel the server had just paused, within the grace
    /// the checker gives it, is one the server may hold the pause against: its refusal is
    /// no false claim, by name or without one.
    #[test]
    fn a_flow_violation_claimed_of_a_message_sent_into_a_pause_is_no_false_claim() {
        let mut talk = Talk::open();
        let pause = json!({"channel": "USER"});
        assert_eq!(talk.send(Server, "PAUSE_CHANNEL", pause), NONE);
        let id = uuid();
        assert_eq!(user_text(&mut talk, &id, true), NONE);
        assert_eq!(talk.send(Server, "ERROR", flow_violation(&id)), NONE);
        let unnamed = error("FLOW_CONTROL_VIOLATION");
        assert_eq!(talk.send(Server, "ERROR", unnamed), NONE);
    }

    #[test]
    fn error_codes_are_the_spec_s() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "ERROR", error("RESUME_FAILED")), NONE);
        assert_eq!(talk.send(Server, "ERROR", error("OOPS")), ["HAIP-ERR-003"]);
    }

    #[test]
    fn a_violation_claimed_of_a_valid_message_is_false() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "a"})), NONE);
        // It acknowledges the valid PING (seq 2) and claims it broke the protocol.
        assert_eq!(
            talk.send_with(
                Server,
                "ERROR",
                error("PROTOCOL_VIOLATION"),
                json!({"ack": "2"})
            ),
            ["HAIP-ERR-004"]
        );
    }

    #[test]
    fn a_violation_claimed_of_a_broken_message_is_its_answer() {
        let mut talk = Talk::open();
        talk.garbage(Client, "{not json");
        assert!(talk.client_input_broken());
        // A valid PING follows before the ERROR does: the ERROR acknowledging it may still
        // answer the garbage.
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "a"})), NONE);
        assert_eq!(
            talk.send_with(
                Server,
                "ERROR",
                error("PROTOCOL_VIOLATION"),
                json!({"ack": "2"})
            ),
            NONE
        );
        // A message naming another session is rejected, and an ERROR may say so.
        let foreign = json!({"session": uuid()});
        talk.send_with(Client, "PING", json!({"nonce": "b"}), foreign);
        assert!(talk.client_input_broken());
        assert_eq!(
            talk.send_with(
                Server,
                "ERROR",
                error("PROTOCOL_VIOLATION"),
                json!({"ack": "3"})
            ),
            NONE
        );
    }
}
