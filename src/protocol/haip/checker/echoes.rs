//! A peer's broken message sent back: what a target answers to input sent broken on purpose is
//! judged by the rules about broken input alone, and a message carrying the envelope `id` of
//! the peer's broken message is its echo, not the target's own (the public HAIP server relays
//! every message its client sends, our mutations included, suites/haip/ERRATA.md). A server
//! that takes a broken REPLAY_REQUEST answers it with what it replays: its relays of the
//! client's valid messages then answer broken input too. So does a message naming a text, a
//! tool call or a run the peer began with a broken message: a server that took the broken
//! TEXT_MESSAGE_START, TOOL_CALL or RUN_STARTED and went on with it (or relayed the rest).

use super::{side, HaipChecker, UNKNOWN_FIELD};
use crate::protocol::haip::facts::Facts;
use crate::protocol::haip::rules::RULES;
use crate::rules::{self, Violation};
use crate::transcript::Direction;
use serde_json::Value;
use std::borrow::Cow;

/// How many of a side's latest broken messages are remembered by id.
pub(super) const REMEMBERED_BROKEN: usize = 1024;

/// The envelope `id` of a text that is no message wireprobe could read: JSON a tree cannot
/// hold (a number past f64, `1e400`) still names one, which a target may send back. Every
/// other field is skipped unread, so no number in it can fail the reading.
#[derive(serde::Deserialize)]
struct IdOf<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
}

/// What a message begins that later messages name.
#[derive(Debug, Clone, Copy)]
pub(super) enum Begun {
    /// A text, by its `message_id` (TEXT_MESSAGE_START).
    Text,
    /// A tool call, by its `call_id` (TOOL_CALL).
    Call,
    /// A run, by its `run_id` (RUN_STARTED).
    Run,
}

impl Begun {
    /// What a message of type `ty` begins, and under which of its ids.
    fn of<'a>(f: &Facts<'a>) -> Option<(Begun, &'a str)> {
        match f.ty {
            "TEXT_MESSAGE_START" => f.message_id.map(|id| (Begun::Text, id)),
            "TOOL_CALL" => f.call_id.map(|id| (Begun::Call, id)),
            "RUN_STARTED" => f.run_id.map(|id| (Begun::Run, id)),
            _ => None,
        }
    }
}

/// Such a text's type, when it has a string one.
#[derive(serde::Deserialize)]
struct TypeOf<'a> {
    #[serde(borrow, rename = "type")]
    ty: Cow<'a, str>,
}

/// Such a text's PING nonce, when it is a PING with a string nonce (the reading fails
/// otherwise): a target that takes the broken PING may answer it.
#[derive(serde::Deserialize)]
struct PingOf<'a> {
    #[serde(borrow, rename = "type")]
    ty: Cow<'a, str>,
    #[serde(borrow)]
    payload: NonceOf<'a>,
}

#[derive(serde::Deserialize)]
struct NonceOf<'a> {
    #[serde(borrow)]
    nonce: Option<Cow<'a, str>>,
}

/// `event` without `payload.field`: an answer to broken input that echoes a field of it is
/// judged on the rest (the field broke the schema only because the input did).
pub(super) fn without_payload_field(event: &Value, field: &str) -> Value {
    let mut unechoed = event.clone();
    if let Some(p) = unechoed.get_mut("payload").and_then(Value::as_object_mut) {
        p.remove(field);
    }
    unechoed
}

/// False when `text` cannot be one JSON object: it does not start with `{` and end with `}`
/// once whitespace is trimmed (trimming any Unicode whitespace, more than JSON's four, errs
/// only towards reading a text that then fails to read).
fn looks_like_object(text: &str) -> bool {
    let text = text.trim();
    text.starts_with('{') && text.ends_with('}')
}

/// False when `text` cannot hold `word` as JSON text: it is not there as written, and no
/// escape (`\u0050ING` is `PING`) could spell it otherwise.
fn may_hold(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr(b'\\', bytes).is_some() || memchr::memmem::find(bytes, word.as_bytes()).is_some()
}

impl HaipChecker {
    /// True when the message from `from` carries the `id` of a broken message its peer sent:
    /// an echo of broken input, not judged.
    /// So is a server's relay of a valid client message while the client's latest
    /// REPLAY_REQUEST was broken: what the server replays answers that request.
    pub(super) fn echoes_broken(&self, from: Direction, id: Option<&str>) -> bool {
        let Some(id) = id else {
            return false;
        };
        let sent = &self.senders[1 - side(from)].broken_ids;
        let replayed = from == Direction::Server
            && self.replay_asked_broken
            && self.valid_client_ids.contains(id);
        replayed || (!sent.is_empty() && sent.contains(id))
    }

    /// A text frame from `from` that is no message: when it still names an `id` (JSON whose
    /// number no tree holds), a message of the peer's carrying it is its echo; when it is a
    /// PING, its PONG is neither owed nor wrong.
    pub(super) fn note_garbage(&mut self, from: Direction, text: &str) {
        // Only a whole JSON object can name either. Most garbage a fuzzer sends is a message
        // cut short, which each reading below took to its end to refuse (2% of fuzzing's CPU).
        if !looks_like_object(text) {
            return;
        }
        // Each reading goes through the whole text (a fuzzer's deep nesting is 20 KB of
        // brackets); one that cannot find its word is skipped.
        if may_hold(text, "\"id\"") {
            if let Ok(IdOf { id: Some(id) }) = serde_json::from_str::<IdOf<'_>>(text) {
                self.senders[side(from)].broken_ids.insert(&id);
            }
        }
        if from == Direction::Client && may_hold(text, "REPLAY_REQUEST") {
            if let Ok(TypeOf { ty }) = serde_json::from_str::<TypeOf<'_>>(text) {
                self.replay_asked_broken |= ty == "REPLAY_REQUEST";
            }
        }
        if !may_hold(text, "PING") {
            return;
        }
        if let Ok(ping) = serde_json::from_str::<PingOf<'_>>(text) {
            if ping.ty == "PING" {
                self.ping_may_be_answered(side(from), ping.payload.nonce.as_deref());
            }
        }
    }

    /// After a message from `from` was judged (`f` what could be read of it, `found` what
    /// broke in it): remembers its `id` when it was broken, malformed or breaking a must, or
    /// carried an unknown field (a mutation too, one its receiver may refuse), and the text,
    /// call or run it began; for a client's REPLAY_REQUEST, whether what the server replays
    /// next answers broken input.
    pub(super) fn note_sent(
        &mut self,
        from: Direction,
        f: Option<&Facts<'_>>,
        id: Option<&str>,
        found: &[Violation],
    ) {
        let broken = !self.well_formed
            || found
                .iter()
                .any(|v| v.rule == UNKNOWN_FIELD || rules::is_must(RULES, v.rule));
        let ty = f.map(|f| f.ty);
        if from == Direction::Client && ty == Some("REPLAY_REQUEST") {
            self.replay_asked_broken = broken;
        }
        if !broken {
            return;
        }
        let sender = &mut self.senders[side(from)];
        if let Some(id) = id {
            sender.broken_ids.insert(id);
        }
        if let Some((begun, id)) = f.and_then(Begun::of) {
            sender.broken_begun[begun as usize].insert(id);
        }
    }

    /// True when `id` names a text, call or run (`begun`) the peer of `from` began with a
    /// broken message: `from` going on with it answers what was broken on purpose, judged by
    /// the rules about broken input alone.
    pub(super) fn continues_broken(&self, from: Direction, begun: Begun, id: &str) -> bool {
        // Most transcripts hold no broken beginning: no hashing for them.
        let begun = &self.senders[1 - side(from)].broken_begun[begun as usize];
        !begun.is_empty() && begun.contains(id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use super::{looks_like_object, may_hold};
    use serde_json::json;

    /// The quick refusal never skips an object the readings would take, whitespace around it
    /// and all. It does skip a JSON array, which serde's derived readings would also take
    /// (`["a"]` as an id): an array is no message, and no target echoes one's "id".
    #[test]
    fn only_what_cannot_be_an_object_is_skipped() {
        for text in [
            "{}",
            " \t\r\n{\"id\":\"a\",\"pv\":1e400}\n ",
            "{\"id\":\"a\"}",
        ] {
            assert!(looks_like_object(text), "{text:?}");
            assert!(
                serde_json::from_str::<super::IdOf<'_>>(text).is_ok(),
                "{text:?}"
            );
        }
        for text in [
            "{\"id\":\"a\",\"type\":\"PI",
            "[\"a\"]",
            "{\"id\":\"a\"} x",
            "",
            "}{",
        ] {
            assert!(!looks_like_object(text), "{text:?}");
        }
    }

    /// The quick refusal before each reading never skips a text that reading would take:
    /// a key or a type spelled with escapes is still read.
    #[test]
    fn a_reading_is_skipped_only_when_its_word_cannot_be_there() {
        let id_of =
            |t: &str| serde_json::from_str::<super::IdOf<'_>>(t).is_ok_and(|r| r.id.is_some());
        let ping_of =
            |t: &str| serde_json::from_str::<super::PingOf<'_>>(t).is_ok_and(|p| p.ty == "PING");
        for text in [
            r#"{"id":"a","pv":1e400}"#,
            r#"{"\u0069d":"a","pv":1e400}"#,
            r#"{"i\u0064":"a"}"#,
            r#"{"type":"PING","payload":{"nonce":"n"},"pv":1e400}"#,
            r#"{"type":"\u0050ING","payload":{"nonce":"n"}}"#,
            r#"{"type":"PIN\u0047","payload":{}}"#,
        ] {
            assert!(id_of(text) || ping_of(text), "{text:?} is read by neither");
            if id_of(text) {
                assert!(may_hold(text, "\"id\""), "{text:?}");
            }
            if ping_of(text) {
                assert!(may_hold(text, "PING"), "{text:?}");
            }
        }
        let nested = format!(
            r#"{{"id":"a","payload":{{"x":{}{}}}}}"#,
            "[".repeat(9),
            "]".repeat(9)
        );
        assert!(!may_hold(&nested, "PING"));
        assert!(!may_hold(r#"{"type":"PONG","pv":1e400}"#, "\"id\""));
    }

    /// The public HAIP server relays each message its client sends, id and all: the relay of
    /// one broken on purpose (here an unknown envelope field, a `pv` out of range, a text end
    /// whose start was broken) is judged by the rules about broken input alone, where the
    /// relay of a valid one is the server's message like any other.
    #[test]
    fn a_broken_message_sent_back_is_not_the_target_s_own() {
        let mut talk = Talk::open();
        for (ty, payload, envelope) in [
            ("PING", json!({"nonce": "a"}), json!({"x_future": true})),
            ("PING", json!({"nonce": "b"}), json!({"pv": -1})),
        ] {
            let id = uuid();
            let mut sent = envelope.clone();
            sent["id"] = json!(id);
            assert!(!talk
                .send_with(Client, ty, payload.clone(), sent.clone())
                .is_empty());
            let relay = json!({"id": id, "seq": "9", "channel": "SYSTEM"});
            let mut relayed = sent;
            crate::protocol::merge(&mut relayed, &relay);
            assert_eq!(talk.send_with(Server, ty, payload, relayed), NONE);
        }
        let id = uuid();
        let never_started = json!({"message_id": uuid()});
        let end = json!({"id": id});
        let found = talk.send_with(Client, "TEXT_MESSAGE_END", never_started.clone(), end);
        assert_eq!(found, ["HAIP-TEXT-001"]);
        let relay = json!({"id": id, "channel": "USER"});
        assert_eq!(
            talk.send_with(Server, "TEXT_MESSAGE_END", never_started.clone(), relay),
            NONE
        );
        // A frame no tree holds (its pv is past f64) sent back as the target read it.
        let id = uuid();
        let raw = format!(r#"{{"id":"{id}","type":"PING","pv":1e400}}"#);
        assert_eq!(talk.garbage(Client, &raw), ["HAIP-ENV-001"]);
        let relay = json!({"id": id, "pv": null, "channel": "SYSTEM"});
        assert_eq!(talk.send_with(Server, "PING", json!({}), relay), NONE);
        // Not an id of a broken message: judged as the server's own (numbered after its HAI:
        // the relays were not).
        let other = json!({"channel": "USER", "seq": "2"});
        let found = talk.send_with(Server, "TEXT_MESSAGE_END", never_started, other);
        assert_eq!(found, ["HAIP-TEXT-001"]);

        // A server taking such a PING answers it: no PONG is owed, and that one is not wrong.
        let mut talk = Talk::open();
        assert_eq!(talk.send(Client, "PING", json!({"nonce": "owed"})), NONE);
        let raw = format!(
            r#"{{"id":"{}","type":"PING","payload":{{"nonce":"odd"}},"pv":1e400}}"#,
            uuid()
        );
        assert_eq!(talk.garbage(Client, &raw), ["HAIP-ENV-001"]);
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "odd"})), NONE);
        assert_eq!(talk.send(Server, "PONG", json!({"nonce": "owed"})), NONE);
    }

    /// A server that takes a broken REPLAY_REQUEST replays: the public HAIP server resends
    /// the client's own messages by number, and one whose number the broken request took is
    /// lost, leaving a text end without its start (seen fuzzing it, suites/haip/ERRATA.md).
    /// What it replays answers broken input; the same relay answering a valid REPLAY_REQUEST
    /// is the server's own message, and judged.
    #[test]
    fn what_a_broken_replay_request_brings_back_answers_broken_input() {
        for broken in [true, false] {
            let mut talk = Talk::open();
            let message_id = uuid();
            let start = json!({"message_id": message_id, "author": "user", "text": "hi"});
            assert_eq!(talk.send(Client, "TEXT_MESSAGE_START", start), NONE);
            let end_id = uuid();
            let end = json!({"message_id": message_id});
            let sent = json!({"id": end_id});
            assert_eq!(
                talk.send_with(Client, "TEXT_MESSAGE_END", end.clone(), sent),
                NONE
            );
            if broken {
                let raw = format!(
                    r#"{{"id":"{}","type":"REPLAY_REQUEST","payload":{{"from_seq":"1"}},"pv":1e400}}"#,
                    uuid()
                );
                assert_eq!(talk.garbage(Client, &raw), ["HAIP-ENV-001"]);
            } else {
                assert_eq!(
                    talk.send(Client, "REPLAY_REQUEST", json!({"from_seq": "1"})),
                    NONE
                );
            }
            let relay = json!({"id": end_id, "channel": "USER"});
            let found = talk.send_with(Server, "TEXT_MESSAGE_END", end, relay);
            match broken {
                true => assert_eq!(found, NONE),
                false => assert_eq!(found, ["HAIP-TEXT-001"]),
            }
        }
    }

    /// A text the client began with a start broken on purpose (here an unknown envelope
    /// field), ended validly: the server's relay of the end, its start not relayed, answers
    /// broken input, even in a replay the client asked for properly. A server ending a text
    /// the client began with a valid start is judged (`streams.rs`).
    #[test]
    fn a_text_begun_broken_and_ended_by_the_server_relays_it() {
        let mut talk = Talk::open();
        let message_id = uuid();
        let start = json!({"message_id": message_id, "author": "user", "text": "hi"});
        let future = json!({"x_wireprobe_future": 1});
        assert_eq!(
            talk.send_with(Client, "TEXT_MESSAGE_START", start, future),
            ["HAIP-ENV-005"]
        );
        let (end_id, end) = (uuid(), json!({"message_id": message_id}));
        let sent = json!({"id": end_id});
        assert_eq!(
            talk.send_with(Client, "TEXT_MESSAGE_END", end.clone(), sent),
            NONE
        );
        assert_eq!(
            talk.send(Client, "REPLAY_REQUEST", json!({"from_seq": "1"})),
            NONE
        );
        let relay = json!({"id": end_id, "channel": "USER"});
        assert_eq!(talk.send_with(Server, "TEXT_MESSAGE_END", end, relay), NONE);
    }
}
