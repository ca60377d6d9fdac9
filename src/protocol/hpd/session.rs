//! The client side of an HPD connection: envelopes filled with `version`, routed to the POST
//! route their type belongs to when the transport is SSE + HTTP, sent as they are over the
//! WebSocket.

use super::{INPUTS_ROUTE, INTERRUPT_ROUTE, RESPONSES_ROUTE};
use crate::protocol::{Decoded, ProtocolError, Session};
use crate::transport::TransportKind;
use crate::transport::{Body, Frame, HttpAnswer, Outgoing};
use serde_json::{json, Value};

/// The envelope version wireprobe sends.
pub const VERSION: &str = "1.0";

/// HPD state: which transport the envelopes go over, and which side fills them.
#[derive(Debug)]
pub struct HpdSession {
    transport: TransportKind,
    /// wireprobe plays the agent: every envelope is a live event on the stream (or a frame
    /// on the WebSocket), never a POST.
    serving: bool,
    /// What the agent owes for the inputs it took.
    turns: Turns,
}

impl HpdSession {
    pub fn new(transport: TransportKind) -> Self {
        HpdSession {
            transport,
            serving: false,
            turns: Turns::default(),
        }
    }

    /// The agent's side, serving a client under test.
    pub fn serving(transport: TransportKind) -> Self {
        HpdSession {
            transport,
            serving: true,
            turns: Turns::default(),
        }
    }

    /// A received event, read leniently (as the framework writes its names), counted toward
    /// the turns.
    fn received(&mut self, event: Value) -> Decoded {
        let event = lenient(event);
        self.turns.received(&event);
        Decoded::Event(event)
    }
}

/// The inputs the agent accepted, and the message turns it started and ended, each turn told
/// apart by its `messageTurnId` (else by the whole event), so a stream resumed from an earlier
/// point, which delivers the same events again, counts nothing twice.
#[derive(Debug, Default)]
struct Turns {
    accepted: usize,
    started: Distinct,
    ended: Distinct,
}

/// At most this many turns are told apart; past it the session no longer says it has settled.
const MAX_TURNS: usize = 4096;

/// Turns told apart by a hash of their key (a turn's event may be large), randomly seeded per
/// session so a target cannot choose keys that collide.
#[derive(Debug, Default)]
struct Distinct {
    hasher: foldhash::quality::RandomState,
    seen: foldhash::HashSet<u64>,
    overflowed: bool,
}

impl Distinct {
    fn note(&mut self, event: &Value) {
        use std::hash::BuildHasher;
        let key = match event.get("messageTurnId") {
            Some(Value::String(id)) => self.hasher.hash_one(id),
            _ => self.hasher.hash_one(event.to_string()),
        };
        // A turn already told apart (a resumed stream repeats them) changes nothing, at the
        // bound too: only a new one past it makes the count inexact.
        if self.seen.len() < MAX_TURNS {
            self.seen.insert(key);
        } else if !self.seen.contains(&key) {
            self.overflowed = true;
        }
    }
}

impl Turns {
    /// A received event, as the lenient reader names it.
    fn received(&mut self, event: &Value) {
        match event.get("type").and_then(Value::as_str) {
            Some("MESSAGE_TURN_STARTED") => self.started.note(event),
            // The framework ends an interrupted turn with INTERRUPTION_HANDLED alone
            // (suites/hpd/ERRATA.md), as the interruption cases take it.
            Some("MESSAGE_TURN_FINISHED" | "MESSAGE_TURN_ERROR" | "INTERRUPTION_HANDLED") => {
                self.ended.note(event)
            }
            _ => {}
        }
    }

    /// Every input accepted has had its turn, and every turn has ended. (An agent that runs
    /// queued inputs in one turn never looks settled: the wait then lasts its whole time.)
    fn settled(&self) -> Option<bool> {
        if self.started.overflowed || self.ended.overflowed {
            return None;
        }
        let (started, ended) = (self.started.seen.len(), self.ended.seen.len());
        Some(ended >= started && started >= self.accepted)
    }
}

/// The POST route an envelope of type `kind` goes to.
pub fn route_of(kind: &str) -> &'static str {
    let kind = kind.to_ascii_uppercase();
    if kind == "INTERRUPTION_REQUEST" {
        INTERRUPT_ROUTE
    } else if kind.ends_with("_RESPONSE") {
        RESPONSES_ROUTE
    } else {
        INPUTS_ROUTE
    }
}

/// The envelope as a lenient client reads it, which is what steps match: a built-in type in
/// its canonical case, snake_case or kebab-case names in camelCase. A case about one rule is
/// then not derailed by another rule's violation; the checker judges the frame as it came.
pub fn lenient(mut event: Value) -> Value {
    let Value::Object(m) = &mut event else {
        return event;
    };
    if let Some(Value::String(kind)) = m.get_mut("type") {
        if let Some(name) = canonical_type(kind) {
            *kind = name.to_owned();
        }
    }
    let renames: Vec<(String, String)> = m
        .keys()
        .filter_map(|k| renamed(m, k).map(|c| (k.clone(), c)))
        .collect();
    for (from, to) in renames {
        if let Some(v) = m.remove(&from) {
            m.insert(to, v);
        }
    }
    event
}

/// The canonical case of a built-in type written `kind`, when it is written otherwise.
fn canonical_type(kind: &str) -> Option<&'static str> {
    super::events::known(kind)
        .map(|known| known.name)
        .filter(|name| *name != kind)
}

/// The camelCase name `key` of `m` reads as, when it is in another form and `m` has no member
/// of that name already.
fn renamed(m: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    super::validate::camel_form(key).filter(|c| !m.contains_key(c))
}

/// True when [`lenient`] leaves `event` as it is.
fn read_as_sent(event: &Value) -> bool {
    let Value::Object(m) = event else {
        return true;
    };
    let kind = m.get("type").and_then(Value::as_str);
    kind.and_then(canonical_type).is_none() && m.keys().all(|k| renamed(m, k).is_none())
}

impl Session for HpdSession {
    // HPD has no handshake (the trait's default): a client subscribes and posts.
    /// Fills `version` unless the event sets it (`"$omit"` leaves it out), and routes it.
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        let mut envelope = event.clone();
        if let Value::Object(m) = &mut envelope {
            crate::protocol::fill(m, "version", || json!(VERSION));
        }
        Ok(match self.transport {
            TransportKind::Sse if !self.serving => {
                let kind = envelope.get("type").and_then(Value::as_str).unwrap_or("");
                Outgoing::Post {
                    path: route_of(kind).to_owned(),
                    body: Body::Json(envelope),
                    headers: Vec::new(),
                }
            }
            _ => {
                // Over the WebSocket an input is taken unless the agent closes on it.
                let kind = envelope.get("type").and_then(Value::as_str).unwrap_or("");
                if !self.serving && route_of(kind) == INPUTS_ROUTE {
                    self.turns.accepted += 1;
                }
                Frame::Text(envelope.to_string()).into()
            }
        })
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match Decoded::json_frame(frame) {
            Decoded::Event(v) => self.received(v),
            other => other,
        }
    }

    /// Most events are read as sent: only a type in another case, or a name in another form,
    /// needs the copy [`lenient`] makes (what [`Session::decode`] does with the text).
    fn decode_shared(&mut self, _text: &str, event: &std::sync::Arc<Value>) -> Option<Decoded> {
        if !read_as_sent(event) {
            return Some(self.received((**event).clone()));
        }
        self.turns.received(event);
        None
    }

    /// An input POST answered 2xx was accepted (HPD-IN-006: the agent answers it with a turn).
    fn answered(&mut self, answer: &HttpAnswer) {
        if (200..300).contains(&answer.status) && answer.path.ends_with(INPUTS_ROUTE) {
            self.turns.accepted += 1;
        }
    }

    fn settled(&self) -> Option<bool> {
        match self.serving {
            true => None,
            false => self.turns.settled(),
        }
    }

    /// HPD has no error event: a refusal is an HTTP status or a close code.
    fn error_code(&self, _event: &Value) -> Option<String> {
        None
    }

    fn capability(&self, _reply: &Value, _name: &str) -> Option<Value> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_read_as_sent_exactly_when_the_lenient_reading_changes_nothing() {
        for event in [
            json!({"version": "1.0", "type": "TEXT_DELTA", "messageId": "m", "text": "hi"}),
            json!({"version": "1.0", "type": "text_delta", "messageId": "m"}),
            json!({"type": "TEXT_DELTA", "message_id": "m"}),
            json!({"type": "TEXT_DELTA", "message_id": "m", "messageId": "n"}),
            json!({"type": "NOT_A_KNOWN_TYPE", "x-y": 1}),
            json!({"type": 7, "plain": true}),
            json!(["not", "an", "object"]),
        ] {
            let unchanged = lenient(event.clone()) == event;
            assert_eq!(read_as_sent(&event), unchanged, "{event}");
        }
    }

    #[test]
    fn a_turn_repeated_at_the_bound_keeps_the_count_exact() {
        let mut turns = Distinct::default();
        let turn = |n: usize| json!({"messageTurnId": format!("t{n}")});
        for n in 0..MAX_TURNS {
            turns.note(&turn(n));
        }
        turns.note(&turn(7));
        assert!(!turns.overflowed, "a repeat is no new turn");
        turns.note(&turn(MAX_TURNS));
        assert!(turns.overflowed, "a new turn past the bound");
    }

    fn answer(path: &str, status: u16) -> HttpAnswer {
        HttpAnswer {
            method: "POST".into(),
            path: path.into(),
            status,
            content_type: String::new(),
            body: Body::Empty,
        }
    }

    fn receive(session: &mut HpdSession, event: Value) {
        session.decode(&Frame::Text(event.to_string()));
    }

    #[test]
    fn settled_once_every_accepted_input_has_had_its_turn_and_every_turn_ended() {
        let mut s = HpdSession::new(TransportKind::Sse);
        assert_eq!(s.settled(), Some(true), "nothing taken in, nothing owed");
        s.answered(&answer("/wp-1/inputs", 202));
        assert_eq!(s.settled(), Some(false), "an accepted input is owed a turn");
        let started = json!({"type": "MESSAGE_TURN_STARTED", "messageTurnId": "t1"});
        receive(&mut s, started.clone());
        assert_eq!(s.settled(), Some(false), "the turn runs");
        // Refusals and other routes start nothing; a resumed stream repeats, counting nothing.
        s.answered(&answer("/wp-1/inputs", 400));
        s.answered(&answer("/wp-1/inputs", 409));
        s.answered(&answer("/wp-1/interrupt", 202));
        receive(&mut s, started);
        receive(
            &mut s,
            json!({"type": "message_turn_finished", "messageTurnId": "t1"}),
        );
        assert_eq!(s.settled(), Some(true));
        // A turn's error carries no id: told apart by the whole event.
        s.answered(&answer("/wp-1/inputs", 200));
        receive(
            &mut s,
            json!({"type": "MESSAGE_TURN_STARTED", "messageTurnId": "t2"}),
        );
        receive(
            &mut s,
            json!({"type": "MESSAGE_TURN_ERROR", "message": "boom"}),
        );
        assert_eq!(s.settled(), Some(true));
        // An interrupted turn may end with INTERRUPTION_HANDLED alone.
        s.answered(&answer("/wp-1/inputs", 202));
        receive(
            &mut s,
            json!({"type": "MESSAGE_TURN_STARTED", "messageTurnId": "t3"}),
        );
        assert_eq!(s.settled(), Some(false));
        receive(&mut s, json!({"type": "INTERRUPTION_HANDLED"}));
        assert_eq!(s.settled(), Some(true));
        assert_eq!(HpdSession::serving(TransportKind::Sse).settled(), None);
    }

    #[test]
    fn over_the_websocket_an_input_sent_is_an_input_taken() {
        let mut s = HpdSession::new(TransportKind::WebSocket);
        s.encode(&json!({"type": "USER_TEXT_INPUT", "text": "hi"}))
            .expect("encodes");
        s.encode(&json!({"type": "INTERRUPTION_REQUEST"}))
            .expect("encodes");
        assert_eq!(s.settled(), Some(false));
        receive(
            &mut s,
            json!({"type": "MESSAGE_TURN_STARTED", "messageTurnId": "t"}),
        );
        receive(
            &mut s,
            json!({"type": "MESSAGE_TURN_FINISHED", "messageTurnId": "t"}),
        );
        assert_eq!(s.settled(), Some(true));
    }
}
