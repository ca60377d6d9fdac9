//! The HUMA transcript checker: every server emit is validated, and two lifecycles are
//! followed — tool calls (a cancel must name an outstanding call) and messaging bursts
//! (typing_start, message_sent in index order, typing_end).

use super::bursts::Bursts;
use super::duties::ClientDuties;
use super::session::decode_sio;
use super::validate;
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{HUMA_CLI_001, HUMA_CLI_008, HUMA_SRV_003, HUMA_VAL_007, HUMA_VAL_008};
use crate::rules::{Exercised, Violation};
use crate::transcript::Direction;
use crate::transport::socketio::packet::{self, EioPacket};
use serde_json::Value;

/// The HUMA [`Checker`].
#[derive(Debug, Default)]
pub struct HumaChecker {
    bursts: Bursts,
    /// The client's last frame was broken: a packet that does not parse, or an emit on
    /// another channel than `message`.
    client_broken: bool,
    /// The client's frames no error has answered yet, in the order sent: what the next error
    /// can answer.
    awaiting: Awaiting,
    /// What the client owes for what the server sent (judged when the client is).
    duties: ClientDuties,
    /// The rules this file and the validator judged on the last observation (the bursts and
    /// the duties keep their own).
    exercised: Exercised,
}

/// The channel and first argument of a Socket.IO EVENT in `text`; `Err` when it is not an
/// Engine.IO message holding a Socket.IO packet, `Ok(None)` for another packet (CONNECT, a
/// ping).
fn emit_of(text: &str) -> Result<Option<(String, Value)>, ()> {
    let Ok(eio) = packet::parse_eio(text) else {
        return Err(());
    };
    let EioPacket::Message(m) = eio else {
        return Ok(None);
    };
    let p = packet::parse_sio(&m).map_err(|_| ())?;
    let mut decoded = decode_sio(&p);
    let channel = decoded
        .get("channel")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(channel.map(|c| (c, decoded["event"].take())))
}

impl HumaChecker {
    fn on_server(&mut self, at_ms: u64, channel: &str, event: &Value, out: &mut Vec<Violation>) {
        out.extend(validate::server_event_checks(
            channel,
            event,
            &mut self.exercised,
        ));
        if channel == "error" {
            self.error_answers(out);
        }
        if channel != "event" {
            return;
        }
        // The calls the server issues are the client's duties; the checker asks them which
        // are still outstanding.
        self.duties.on_server(at_ms, event);
        let id = event
            .get("toolCallId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match event.get("type").and_then(Value::as_str) {
            Some("cancel-tool-call") => {
                self.exercised.hit(HUMA_SRV_003);
                if !self.duties.is_outstanding(&id) {
                    out.push(Violation::new(
                        HUMA_SRV_003,
                        format!(
                            "cancel-tool-call names {id:?}, which is not an outstanding tool call"
                        ),
                    ));
                }
            }
            Some("messaging") => self.bursts.on_messaging(event, out),
            _ => {}
        }
    }

    fn on_client(&mut self, at_ms: u64, channel: &str, event: &Value, out: &mut Vec<Violation>) {
        if channel != "message" {
            self.client_sent_broken(
                format!("a client event emitted on {channel:?}, not \"message\""),
                out,
            );
            return;
        }
        // Every client event is held to its table (HUMA-CLI-001); an object result of a
        // tool-result, to the forbidden keys too (HUMA-CLI-008).
        self.exercised.hit(HUMA_CLI_001);
        let ty = event.get("type").and_then(Value::as_str);
        if ty == Some("tool-result")
            && matches!(
                event.get("result"),
                Some(Value::Object(_) | Value::Array(_))
            )
        {
            self.exercised.hit(HUMA_CLI_008);
        }
        let found = validate::client_event_violations(event);
        let valid = found.is_empty();
        // The field checks name what the server must reject (HUMA-VAL-*); the client that
        // sent it broke its own rule, with the same words.
        out.extend(found.into_iter().map(|v| {
            let rule = if v.rule == HUMA_VAL_008 {
                HUMA_CLI_008
            } else {
                HUMA_CLI_001
            };
            Violation::new(rule, v.message)
        }));
        let id = event.get("toolCallId").and_then(Value::as_str);
        // What the server does with a result for a call it never issued, or a confirmation,
        // is open (HUMA-LC-006): an error answering one is not judged.
        self.awaiting.push(match ty {
            _ if !valid => Sent::Broken,
            Some("context-update") => Sent::Valid("context-update"),
            Some("tool-result") if id.is_some_and(|id| self.duties.is_outstanding(id)) => {
                Sent::Valid("tool-result")
            }
            _ => Sent::Open,
        });
        // An invalid event is refused: a tool-result's call stays outstanding.
        if valid {
            self.duties.on_client(at_ms, event, out);
        }
    }

    /// The client sent something that is not a client event at all: that breaks its rule
    /// (HUMA-CLI-001), and it is broken input for the server.
    fn client_sent_broken(&mut self, why: String, out: &mut Vec<Violation>) {
        out.push(Violation::new(HUMA_CLI_001, why));
        self.client_broke();
    }

    /// The client's frame was broken: an error may answer it, and it is not the latest valid
    /// event.
    fn client_broke(&mut self) {
        self.client_broken = true;
        self.awaiting.push(Sent::Broken);
    }

    /// An error emit. A server reads a connection's events in order, so its errors come in the
    /// order of what they answer: this one answers the oldest frame still unanswered that may
    /// draw an error (a broken one, or one whose answer is open), and every valid event sent
    /// before that frame drew none. With no such frame, it answers the oldest valid event still
    /// unanswered, which breaks HUMA-VAL-007.
    fn error_answers(&mut self, out: &mut Vec<Violation>) {
        // Only an error that is weighed against a valid event judges HUMA-VAL-007: it is blamed
        // on that event, or it answers a later frame and so the event drew none.
        if self.awaiting.weighs_valid() {
            self.exercised.hit(HUMA_VAL_007);
        }
        if let Some(ty) = self.awaiting.answer() {
            out.push(Violation::new(
                HUMA_VAL_007,
                format!("an error answers the client's valid {ty}"),
            ));
        }
    }
}

/// A client frame as an error may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// Not a valid client event: the server must refuse it.
    Broken,
    /// A valid event whose answer the spec leaves open (HUMA-LC-006): a result for a call the
    /// server never issued, a confirmation.
    Open,
    /// A valid event of this type, which no error may answer (HUMA-VAL-007).
    Valid(&'static str),
}

impl Sent {
    /// A correct server may answer this frame with an error.
    fn may_draw_error(self) -> bool {
        !matches!(self, Sent::Valid(_))
    }
}

/// The client's frames since the last error that answered them, oldest first, each run of
/// valid events kept as its first. Past [`Awaiting::MOST`] entries the oldest go: a client
/// that sends that many frames no error answers is judged as if the server answered those.
#[derive(Debug, Default)]
struct Awaiting(std::collections::VecDeque<Sent>);

impl Awaiting {
    const MOST: usize = 4096;

    fn push(&mut self, sent: Sent) {
        let last = self.0.back().copied();
        if last.is_some_and(|l| !l.may_draw_error()) && !sent.may_draw_error() {
            return;
        }
        if self.0.len() >= Self::MOST {
            self.0.pop_front();
        }
        self.0.push_back(sent);
    }

    /// The next error is weighed against a valid event: the oldest frame waiting is one (what
    /// [`Awaiting::answer`] either blames or clears).
    fn weighs_valid(&self) -> bool {
        matches!(self.0.front(), Some(Sent::Valid(_)))
    }

    /// An error came: the frame it answers leaves the queue with every frame before it. The
    /// type of a valid event it answers, when there was nothing else it could answer (runs of
    /// valid events are kept as one, so that event is then all the queue holds).
    fn answer(&mut self) -> Option<&'static str> {
        match self.0.iter().position(|s| s.may_draw_error()) {
            Some(at) => {
                self.0.drain(..=at);
                None
            }
            None => match self.0.pop_front() {
                Some(Sent::Valid(ty)) => Some(ty),
                _ => None,
            },
        }
    }
}

impl Checker for HumaChecker {
    fn observe(
        &mut self,
        from: Direction,
        at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        // Socket.IO frames are not JSON, so transcripts hold them as text.
        let text = match (super::packet_text(&item), &item) {
            (Some(text), _) => text,
            (None, Observed::Event(..) | Observed::Binary(_)) if from == Direction::Client => {
                self.client_sent_broken(
                    "the client sent a frame that is not a Socket.IO packet".into(),
                    out,
                );
                return;
            }
            // An error on a new connection answers only what was sent on it.
            (None, Observed::Connect(_)) => {
                self.awaiting = Awaiting::default();
                return;
            }
            _ => return,
        };
        if from == Direction::Client {
            self.client_broken = false;
        }
        let text = text.as_ref();
        let (channel, event) = match emit_of(text) {
            Ok(Some(emit)) => emit,
            Ok(None) => return,
            Err(()) => {
                let cut = text.strip_suffix(crate::transcript::TRUNCATED_MARK);
                match (from, cut) {
                    (Direction::Server, Some(_)) => self.duties.on_unreadable_server_frame(),
                    // Only the start was kept: judged for what the start shows.
                    (Direction::Client, Some(kept)) => {
                        // As before: a frame not read whole counts as broken input.
                        self.client_broke();
                        if let Some(len) = super::truncated::result_chars_at_least(kept) {
                            // The start shows a tool-result: its length limit is judged.
                            self.exercised.hit(HUMA_CLI_001);
                            if len > validate::MAX_RESULT {
                                out.push(Violation::new(
                                    HUMA_CLI_001,
                                    format!("a tool-result's result is at least {len} characters serialised, over {}", validate::MAX_RESULT),
                                ));
                            }
                        }
                    }
                    (Direction::Client, None) => {
                        let start: String = text.chars().take(60).collect();
                        self.client_sent_broken(
                            format!("the client sent {start:?}, not a Socket.IO packet"),
                            out,
                        );
                    }
                    (Direction::Server, None) => {}
                }
                return;
            }
        };
        match from {
            Direction::Server => self.on_server(at_ms, &channel, &event, out),
            Direction::Client => self.on_client(at_ms, &channel, &event, out),
        }
    }

    fn input_broken(&self) -> bool {
        self.client_broken
    }

    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
        self.bursts.exercised(into);
        self.duties.exercised(into);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Direction::{Client, Server};

    fn emit(channel: &str, event: Value) -> String {
        format!("42{}", json!([channel, event]))
    }

    fn context_update() -> String {
        emit(
            "message",
            json!({"type": "context-update", "triggering": false, "name": "n", "context": {},
                   "description": "d"}),
        )
    }

    /// A result for a call the server never issued: what it answers is open.
    fn unknown_result() -> String {
        emit(
            "message",
            json!({"type": "tool-result", "triggering": false, "toolCallId": "never-issued",
                   "toolName": "t", "outcome": "success", "result": 1}),
        )
    }

    fn broken() -> String {
        emit("message", json!({"type": "context-update"}))
    }

    fn error() -> String {
        emit(
            "error",
            json!({"type": "error", "code": "INVALID_EVENT", "message": "no"}),
        )
    }

    /// Stands for a new connection among the frames.
    const CONNECT: &str = "(connect)";

    /// Frames as sent and received, in order.
    type Frames = Vec<(Direction, String)>;

    /// The HUMA-VAL-007 findings over `frames`, in order.
    fn val_007(frames: &[(Direction, String)]) -> Vec<String> {
        let mut checker = HumaChecker::default();
        let mut out = Vec::new();
        for (at, (from, text)) in frames.iter().enumerate() {
            let item = match text.as_str() {
                CONNECT => Observed::Connect("http://127.0.0.1:1/"),
                text => Observed::Garbage(text),
            };
            checker.observe(*from, at as u64, item, &mut out);
        }
        out.into_iter()
            .filter(|v| v.rule == "HUMA-VAL-007")
            .map(|v| v.message)
            .collect()
    }

    /// Errors answer, in order, the frames that may draw one (broken, or with an open answer);
    /// only one with none left answers a valid event, the oldest, once.
    #[test]
    fn each_error_answers_the_oldest_frame_that_may_draw_one() {
        let valid = "an error answers the client's valid context-update";
        let cases: [(&str, Frames, &[&str]); 5] = [
            (
                // Came after the next event was sent: still the open one's.
                "late answer to an open frame",
                vec![
                    (Client, unknown_result()),
                    (Client, context_update()),
                    (Server, error()),
                ],
                &[],
            ),
            (
                "nothing that may draw one",
                vec![
                    (Client, context_update()),
                    (Server, error()),
                    (Server, error()),
                ],
                &[valid],
            ),
            (
                // The valid event before the broken one drew no error; one error too many
                // answers the event after it.
                "a broken frame between valid events",
                vec![
                    (Client, context_update()),
                    (Client, broken()),
                    (Client, context_update()),
                    (Server, error()),
                    (Server, error()),
                ],
                &[valid],
            ),
            (
                // The server closed on the broken frame: its error never came.
                "a broken frame on a connection that ended",
                vec![
                    (Client, broken()),
                    (Client, CONNECT.into()),
                    (Client, context_update()),
                    (Server, error()),
                ],
                &[valid],
            ),
            (
                "one error each for broken frames",
                vec![
                    (Client, broken()),
                    (Client, broken()),
                    (Server, error()),
                    (Server, error()),
                ],
                &[],
            ),
        ];
        for (what, frames, expected) in cases {
            assert_eq!(val_007(&frames), expected, "{what}");
        }
    }

    /// A rule counts where its check ran on an item it applies to: a context-update, a
    /// tool-call and its result exercise the rules on those, and not the rules on cancels,
    /// bursts, errors or confirmations, which the exchange never held.
    #[test]
    fn a_rule_counts_as_exercised_only_where_it_applies() {
        let id = "550e8400-e29b-41d4-a716-446655440000";
        let frames = [
            (Client, context_update()),
            (
                Server,
                emit(
                    "event",
                    json!({"type": "tool-call", "toolCallId": id, "toolName": "t",
                           "arguments": {}}),
                ),
            ),
            (
                Client,
                emit(
                    "message",
                    json!({"type": "tool-result", "triggering": false, "toolCallId": id,
                           "toolName": "t", "outcome": "success", "result": {"ok": true}}),
                ),
            ),
        ];
        let mut checker = HumaChecker::default();
        let (mut out, mut hits) = (Vec::new(), Vec::new());
        for (at, (from, text)) in frames.iter().enumerate() {
            checker.observe(*from, at as u64, Observed::Garbage(text.as_str()), &mut out);
            checker.exercised(&mut hits);
        }
        assert!(out.is_empty(), "{out:?}");
        crate::rules::assert_exercised(
            &hits,
            &[
                "HUMA-TR-001",
                "HUMA-SRV-001",
                "HUMA-SRV-002",
                "HUMA-CLI-001",
                "HUMA-CLI-002",
                "HUMA-CLI-008",
            ],
            &[
                "HUMA-SRV-003",
                "HUMA-SRV-004",
                "HUMA-LC-001",
                "HUMA-ERR-001",
                "HUMA-VAL-007",
                "HUMA-CLI-004",
                "HUMA-CLI-005",
                "HUMA-CLI-006",
                "HUMA-CLI-007",
            ],
        );
    }

    /// However many frames go unanswered, what is kept stays bounded.
    #[test]
    fn what_awaits_an_answer_is_bounded() {
        let mut awaiting = Awaiting::default();
        for i in 0..3 * Awaiting::MOST {
            awaiting.push(if i % 2 == 0 {
                Sent::Open
            } else {
                Sent::Valid("context-update")
            });
        }
        assert_eq!(awaiting.0.len(), Awaiting::MOST);
        for _ in 0..10_000 {
            awaiting.push(Sent::Valid("context-update"));
        }
        assert!(awaiting.0.len() <= Awaiting::MOST);
    }
}
