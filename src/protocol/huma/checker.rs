//! The HUMA transcript checker: every server emit is validated, and two lifecycles are
//! followed — tool calls (a cancel must name an outstanding call) and messaging bursts
//! (typing_start, message_sent in index order, typing_end).

use super::bursts::Bursts;
use super::duties::ClientDuties;
use super::session::decode_sio;
use super::validate;
use crate::protocol::{Checker, Observed};
use crate::rules::Violation;
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
    /// Broken client frames no error has answered yet.
    broken_unanswered: usize,
    /// The client's latest event was valid and its answer is not left open (a tool-result for
    /// an outstanding call, a context-update): an error answering it breaks HUMA-VAL-007.
    last_client_valid: Option<&'static str>,
    /// What the client owes for what the server sent (judged when the client is).
    duties: ClientDuties,
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
        out.extend(validate::server_event_violations(channel, event));
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
            Some("cancel-tool-call") if !self.duties.is_outstanding(&id) => {
                out.push(Violation::new(
                    "HUMA-SRV-003",
                    format!("cancel-tool-call names {id:?}, which is not an outstanding tool call"),
                ));
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
        let found = validate::client_event_violations(event);
        let valid = found.is_empty();
        // The field checks name what the server must reject (HUMA-VAL-*); the client that
        // sent it broke its own rule, with the same words.
        out.extend(found.into_iter().map(|v| {
            let rule = if v.rule == "HUMA-VAL-008" {
                "HUMA-CLI-008"
            } else {
                "HUMA-CLI-001"
            };
            Violation::new(rule, v.message)
        }));
        if !valid {
            self.broken_unanswered = self.broken_unanswered.saturating_add(1);
        }
        let ty = event.get("type").and_then(Value::as_str);
        let id = event.get("toolCallId").and_then(Value::as_str);
        // What the server does with a result for a call it never issued, or a confirmation,
        // is open (HUMA-LC-006): an error answering one is not judged.
        self.last_client_valid = match ty {
            _ if !valid => None,
            Some("context-update") => Some("context-update"),
            Some("tool-result") if id.is_some_and(|id| self.duties.is_outstanding(id)) => {
                Some("tool-result")
            }
            _ => None,
        };
        // An invalid event is refused: a tool-result's call stays outstanding.
        if valid {
            self.duties.on_client(at_ms, event, out);
        }
    }

    /// The client sent something that is not a client event at all: that breaks its rule
    /// (HUMA-CLI-001), and it is broken input for the server.
    fn client_sent_broken(&mut self, why: String, out: &mut Vec<Violation>) {
        out.push(Violation::new("HUMA-CLI-001", why));
        self.client_broke();
    }

    /// The client's frame was broken: an error may answer it, and it is not the latest valid
    /// event.
    fn client_broke(&mut self) {
        self.client_broken = true;
        self.broken_unanswered = self.broken_unanswered.saturating_add(1);
        self.last_client_valid = None;
    }

    /// An error emit: it answers the oldest broken frame still unanswered, else the client's
    /// latest event, which must not have been valid (HUMA-VAL-007).
    fn error_answers(&mut self, out: &mut Vec<Violation>) {
        if self.broken_unanswered > 0 {
            self.broken_unanswered -= 1;
            return;
        }
        if let Some(ty) = self.last_client_valid.take() {
            out.push(Violation::new(
                "HUMA-VAL-007",
                format!("an error answers the client's valid {ty}"),
            ));
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
                            if len > validate::MAX_RESULT {
                                out.push(Violation::new(
                                    "HUMA-CLI-001",
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
}
