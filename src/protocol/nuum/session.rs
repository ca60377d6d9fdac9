//! The host side of a Nuum session: nothing to send on start (the process announces itself with
//! system/init, which is the handshake reply), events written as one JSON line each, exactly as
//! the case gives them, and stdout lines decoded as JSON.

use super::input::{line_of, HostLine};
use crate::protocol::{Decoded, ProtocolError, Session};
use crate::transport::{Frame, Outgoing};
use serde_json::Value;

/// Nuum state, by the side wireprobe plays.
#[derive(Debug)]
pub enum NuumSession {
    /// The host: what the agent owes for the user lines sent.
    Host(Owed),
    /// Standing in for the agent (judging a host): the session id its init announced, which
    /// its assistant, result and system lines carry.
    Agent { session_id: String },
}

impl Default for NuumSession {
    fn default() -> Self {
        NuumSession::Host(Owed::default())
    }
}

/// What the agent's lines show of the turns it owes the host, so that a settle ends once it is
/// idle rather than after a fixed time: a message sent while a turn runs is queued behind it
/// (§Mid-Turn Message Injection), and a fuzzing scenario sent then never starts its own turn.
/// A valid user line is answered by `turn_accepted` ("emitted immediately when a message is
/// received and processing begins", §Turn Accepted) or `queued`; a turn runs until its
/// `result` ("sent when a turn completes", §Result Message). A broken line may go unanswered
/// and is not waited for. A queued message is owed until it is `injected` ("at the next
/// opportunity (before the next model call)") or a turn of its own starts: a turn may end
/// before its next model call, and the spec leaves open what then becomes of its queue (the
/// reference runs it as the next turn, announced like any other).
#[derive(Debug, Default)]
pub struct Owed {
    /// Valid user lines sent that nothing has answered yet.
    unanswered: usize,
    /// A turn is under way: accepted, or its assistant output seen, and no result since.
    running: bool,
    /// Messages `queued` mid-turn that no `injected` or new turn has taken yet.
    queued: usize,
}

impl Owed {
    fn sent_line(&mut self, event: &Value) {
        if let Ok(HostLine::User { .. }) = line_of(event) {
            self.unanswered += 1;
        }
    }

    fn received(&mut self, event: &Value) {
        let answered = |owed: &mut Owed| owed.unanswered = owed.unanswered.saturating_sub(1);
        match event.get("type").and_then(Value::as_str) {
            Some("system") => match event.get("subtype").and_then(Value::as_str) {
                // A process that announces itself (started again) owes nothing of the last.
                Some("init") => *self = Owed::default(),
                Some("turn_accepted") => {
                    answered(self);
                    self.running = true;
                    self.queued = 0;
                }
                Some("queued") => {
                    answered(self);
                    self.running = true;
                    self.queued += 1;
                }
                // Without a count, the injection took the whole queue.
                Some("injected") => {
                    let taken = event.get("message_count").and_then(Value::as_u64);
                    self.queued = taken.map_or(0, |n| {
                        self.queued
                            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX))
                    });
                }
                // An error may answer a line we sent valid (a queue that is full).
                Some("error") => answered(self),
                // The public agent ends an interrupted turn so, with no result (an extra
                // subtype, suites/nuum/ERRATA.md): whatever is judged of it, it owes no more.
                Some("interrupted") => self.running = false,
                _ => {}
            },
            // An agent that does not announce its turns shows one by its output (or by a
            // result alone); the turn runs until its result.
            Some(ty @ ("assistant" | "result")) => {
                if !self.running {
                    answered(self);
                }
                self.running = ty == "assistant";
            }
            _ => {}
        }
    }

    fn settled(&self) -> bool {
        self.unanswered == 0 && !self.running && self.queued == 0
    }
}

impl NuumSession {
    /// The agent's side, for a host under test.
    pub fn serving() -> Self {
        NuumSession::Agent {
            session_id: format!("nuum_{}", uuid::Uuid::new_v4().simple()),
        }
    }
}

/// The lines that carry the session id (the spec's §Session Identity and examples).
fn carries_session(event: &Value) -> bool {
    match event.get("type").and_then(Value::as_str) {
        Some("assistant" | "result") => true,
        Some("system") => matches!(
            event.get("subtype").and_then(Value::as_str),
            Some("init" | "turn_accepted" | "tasks" | "status_response")
        ),
        _ => false,
    }
}

/// True for `{"type":"system","subtype":SUBTYPE}`.
pub fn is_system(event: &Value, subtype: &str) -> bool {
    event.get("type").and_then(Value::as_str) == Some("system")
        && event.get("subtype").and_then(Value::as_str) == Some(subtype)
}

impl Session for NuumSession {
    fn handshake(
        &mut self,
        _with: Option<&Value>,
        _resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        // The agent announces itself once it starts (§Init Message).
        Ok(match self {
            NuumSession::Agent { session_id } => {
                let init = serde_json::json!({"type": "system", "subtype": "init",
                    "session_id": session_id, "version": "0.1.0", "tools": ["read", "write"]});
                vec![Frame::Text(init.to_string())]
            }
            NuumSession::Host(_) => Vec::new(),
        })
    }

    fn is_handshake_reply(&self, event: &Value) -> bool {
        is_system(event, "init")
    }

    /// The line as the case gives it; standing in for the agent, with the session id filled
    /// where the line carries one and the case set none.
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        match (&mut *self, event) {
            (NuumSession::Host(owed), _) => owed.sent_line(event),
            (NuumSession::Agent { session_id }, Value::Object(m))
                if carries_session(event) && !m.contains_key("session_id") =>
            {
                let mut filled = m.clone();
                filled.insert("session_id".into(), Value::String(session_id.clone()));
                return Ok(Frame::Text(Value::Object(filled).to_string()).into());
            }
            (NuumSession::Agent { .. }, _) => {}
        }
        Ok(Frame::Text(event.to_string()).into())
    }

    /// A frame is one JSON event.
    fn decodes_verbatim(&self) -> bool {
        true
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        match frame {
            Frame::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(event) => {
                    if let NuumSession::Host(owed) = self {
                        owed.received(&event);
                    }
                    Decoded::Event(event)
                }
                Err(_) => Decoded::Garbage(text.clone()),
            },
            Frame::Binary(b) | Frame::RawText(b) => {
                Decoded::Garbage(String::from_utf8_lossy(b).into_owned())
            }
        }
    }

    /// Nuum errors have no codes: every system/error is `"error"`.
    fn error_code(&self, event: &Value) -> Option<String> {
        is_system(event, "error").then(|| "error".to_owned())
    }

    /// A field of the init line (`${capability.tools}`).
    fn capability(&self, reply: &Value, name: &str) -> Option<Value> {
        reply.get(name).cloned()
    }

    /// On the host's side, once every valid user line sent has been answered and no turn is
    /// under way (an agent that has just announced itself owes nothing); `None` standing in
    /// for the agent.
    fn settled(&self) -> Option<bool> {
        match self {
            NuumSession::Host(owed) => Some(owed.settled()),
            NuumSession::Agent { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(s: &mut NuumSession, event: Value) {
        s.decode(&Frame::Text(event.to_string()));
    }

    fn user(text: &str) -> Value {
        json!({"type": "user", "message": {"role": "user", "content": text}})
    }

    /// The agent writes a system line of `subtype`.
    fn system(s: &mut NuumSession, subtype: &str) {
        line(s, json!({"type": "system", "subtype": subtype}));
    }

    /// The agent writes an assistant line, then ends its turn.
    fn answer_and_end(s: &mut NuumSession) {
        line(s, json!({"type": "assistant", "message": {"content": []}}));
        assert_eq!(s.settled(), Some(false), "the turn runs");
        line(s, json!({"type": "result", "subtype": "success"}));
        assert_eq!(s.settled(), Some(true), "the turn ended");
    }

    #[test]
    fn settled_once_every_valid_user_line_was_answered_and_no_turn_runs() {
        let mut s = NuumSession::default();
        assert_eq!(s.settled(), Some(true), "nothing sent, nothing owed");
        // A broken line may go unanswered: it is not waited for.
        assert!(s.encode(&json!({"type": "user", "message": {}})).is_ok());
        let heartbeat = json!({"type": "control", "action": "heartbeat"});
        assert!(s.encode(&heartbeat).is_ok());
        assert_eq!(s.settled(), Some(true));
        assert!(s.encode(&user("one")).is_ok());
        assert!(s.encode(&user("two")).is_ok());
        assert_eq!(s.settled(), Some(false), "nothing answered yet");
        system(&mut s, "turn_accepted");
        line(
            &mut s,
            json!({"type": "system", "subtype": "queued", "position": 1}),
        );
        assert_eq!(s.settled(), Some(false), "the turn runs");
        line(
            &mut s,
            json!({"type": "system", "subtype": "injected", "message_count": 1}),
        );
        answer_and_end(&mut s);
        // An agent that announces no turn shows it by its output.
        assert!(s.encode(&user("three")).is_ok());
        assert_eq!(s.settled(), Some(false));
        answer_and_end(&mut s);
        // The public agent ends an interrupted turn with system/interrupted alone.
        assert!(s.encode(&user("four")).is_ok());
        system(&mut s, "turn_accepted");
        system(&mut s, "interrupted");
        assert_eq!(s.settled(), Some(true));
        // A process started again owes nothing of the one before it.
        assert!(s.encode(&user("five")).is_ok());
        system(&mut s, "turn_accepted");
        assert_eq!(s.settled(), Some(false));
        system(&mut s, "init");
        assert_eq!(s.settled(), Some(true));
    }

    #[test]
    fn a_queued_message_is_owed_until_injected_or_run_as_a_turn_of_its_own() {
        let mut s = NuumSession::default();
        assert!(s.encode(&user("slow")).is_ok());
        system(&mut s, "turn_accepted");
        assert!(s.encode(&user("meanwhile")).is_ok());
        line(
            &mut s,
            json!({"type": "system", "subtype": "queued", "position": 1}),
        );
        // The turn ends before its next model call: the queued message is not yet taken.
        line(&mut s, json!({"type": "result", "subtype": "success"}));
        assert_eq!(s.settled(), Some(false), "the queue is still owed");
        system(&mut s, "turn_accepted");
        assert_eq!(s.settled(), Some(false), "its turn runs");
        line(&mut s, json!({"type": "result", "subtype": "success"}));
        assert_eq!(s.settled(), Some(true));
    }

    #[test]
    fn standing_in_for_the_agent_it_cannot_tell() {
        let mut s = NuumSession::serving();
        assert!(s.encode(&user("hello")).is_ok());
        assert_eq!(s.settled(), None);
    }
}
