//! What a client owes a hosted agent, followed across a transcript: its envelopes (the live
//! envelope rules bind what it sends too), each of a type the agent can deserialize
//! (HPD-CLI-006), each response to a request the agent issued, once, on its route
//! (HPD-CLI-001, -002), and a resumed stream that picks up where it left off
//! (HPD-CLI-004). Whether a request is answered at all is a case's to wait for (HPD-CLI-003).
//!
//! The served stream numbers the agent's events 1, 2, 3… in the order they are sent on a
//! session (what `transport::sse_server` does), so the id of each is its count here.

use super::events;
use super::{validate, INPUTS_ROUTE};
use crate::rules::ids::{HPD_CLI_001, HPD_CLI_002, HPD_CLI_004, HPD_CLI_006};
use crate::rules::{Exercised, Violation};
use crate::transport::StreamFrom;
use serde_json::Value;
use std::collections::HashMap;

/// Requests remembered; past this, answered ones are forgotten first.
const REMEMBERED: usize = 4096;

/// One request the agent issued.
#[derive(Debug)]
struct Request {
    /// The response type that answers it.
    answer: &'static str,
    answered: bool,
}

/// The client's side of one HPD session.
#[derive(Debug, Default)]
pub struct ClientDuties {
    requests: HashMap<String, Request>,
    /// Events the agent sent on this session: the id of the last one.
    sent: u64,
    /// The id of the last event sent while the client's stream was open.
    delivered: u64,
    /// The client's stream is open.
    streaming: bool,
    /// The agent dropped the stream at this id: the client's next opening must resume there.
    dropped_at: Option<u64>,
    /// The rules the client's items were held to since the checker last asked.
    pub exercised: Exercised,
}

impl ClientDuties {
    /// A new connection: a new session, numbered from 1.
    pub fn connected(&mut self) {
        *self = ClientDuties {
            requests: std::mem::take(&mut self.requests),
            exercised: std::mem::take(&mut self.exercised),
            ..ClientDuties::default()
        };
    }

    /// The agent sent one event (`event` is `None` for text that is not JSON): it has the
    /// next id, and a request among them is owed an answer.
    pub fn agent_sent(&mut self, event: Option<&Value>) {
        self.sent += 1;
        if self.streaming {
            self.delivered = self.sent;
        }
        let Some((id, answer)) = event.and_then(events::request_of) else {
            return;
        };
        self.make_room();
        self.requests.insert(
            id.to_owned(),
            Request {
                answer,
                answered: false,
            },
        );
    }

    fn make_room(&mut self) {
        if self.requests.len() >= REMEMBERED {
            self.requests.retain(|_, r| !r.answered);
        }
        if self.requests.len() >= REMEMBERED {
            self.requests.clear();
        }
    }

    /// The agent dropped the client's stream.
    pub fn agent_dropped(&mut self) {
        if self.streaming {
            self.streaming = false;
            self.dropped_at = Some(self.delivered);
        }
    }

    /// The client opened the event stream from `from`.
    pub fn client_opened(&mut self, from: &StreamFrom, out: &mut Vec<Violation>) {
        self.streaming = true;
        let Some(last) = self.dropped_at.take() else {
            self.delivered = self.sent;
            return;
        };
        self.delivered = self.sent;
        if last == 0 {
            return;
        }
        // The agent ended a stream that had delivered something: the reopening owes a resume.
        self.exercised.hit(HPD_CLI_004);
        match from.resume_id() {
            None => out.push(Violation::new(
                HPD_CLI_004,
                format!("after the agent ended the stream at event id {last}, the client reopened it at the live end (no Last-Event-ID, no ?after): what was sent meanwhile is lost to it"),
            )),
            Some(id) if id.trim() != last.to_string() => out.push(Violation::new(
                HPD_CLI_004,
                format!("after the agent ended the stream at event id {last}, the client resumed after id {id:?}, not after {last}"),
            )),
            Some(_) => {}
        }
    }

    /// The client sent `event`: over the WebSocket (`route` is `None`) or POSTed to `route`.
    pub fn client_sent(&mut self, event: &Value, route: Option<&str>, out: &mut Vec<Violation>) {
        // The framework takes a bare {text} as an input: not judged (suites/hpd/ERRATA.md).
        let bare_text = route == Some(INPUTS_ROUTE)
            && event.get("type").is_none()
            && event.get("text").is_some();
        if bare_text {
            return;
        }
        let known = match validate::client_envelope(event, &mut self.exercised, out) {
            // A string type is judged deserializable: a built-in one is.
            Some((_, Some(known))) => {
                self.exercised.hit(HPD_CLI_006);
                known
            }
            Some((m, None)) => {
                // A string type the profile does not know: the agent cannot deserialize it.
                if let Some(kind) = m.get("type").and_then(Value::as_str) {
                    out.push(Violation::new(
                        HPD_CLI_006,
                        format!(
                            "the client sent an event of type {kind:?}{}: no input, response or interruption of the spec's families, so the agent cannot deserialize it",
                            route.map_or(String::new(), |r| format!(" (POSTed to {r})"))
                        ),
                    ));
                }
                return;
            }
            None => return,
        };
        if let Some(route) = route {
            // Over the WebSocket every envelope is on its route; a POST's route is judged.
            self.exercised.hit(HPD_CLI_002);
            let belongs = super::session::route_of(known.name);
            if route != belongs {
                out.push(Violation::new(
                    HPD_CLI_002,
                    format!(
                        "{} was POSTed to {route}; it belongs on {belongs}",
                        known.name
                    ),
                ));
            }
        }
        let Some(field) = events::response_id_field(known.name) else {
            return;
        };
        // A response is judged against the requests the agent issued.
        self.exercised.hit(HPD_CLI_001);
        // Read as a lenient agent reads it, so a misspelt name (HPD-ENV-004) is not also an
        // answer to nothing. Only a response is read so (a copy of each input was 1.4% of
        // fuzzing HPD's instructions).
        let event = super::session::lenient(event.clone());
        let Some(m) = event.as_object() else {
            return;
        };
        let Some(id) = m.get(field).and_then(Value::as_str) else {
            out.push(Violation::new(
                HPD_CLI_001,
                format!("{} names no {field}: it answers no request", known.name),
            ));
            return;
        };
        match self.requests.get_mut(id) {
            None => out.push(Violation::new(
                HPD_CLI_001,
                format!(
                    "{} answers {field} {id:?}, which the agent never issued",
                    known.name
                ),
            )),
            Some(r) if r.answer != known.name => out.push(Violation::new(
                HPD_CLI_001,
                format!(
                    "{} answers request {id:?}, which wants a {}",
                    known.name, r.answer
                ),
            )),
            Some(r) if r.answered => out.push(Violation::new(
                HPD_CLI_001,
                format!("{} answers request {id:?} a second time", known.name),
            )),
            Some(r) => r.answered = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::hpd::RESPONSES_ROUTE;
    use serde_json::json;

    fn rules(out: &[Violation]) -> Vec<&'static str> {
        out.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn a_response_answers_an_issued_request_of_its_kind_once() {
        let mut d = ClientDuties::default();
        d.agent_sent(Some(
            &json!({"version": "1.0", "type": "PERMISSION_REQUEST", "permissionId": "p1"}),
        ));
        d.agent_sent(Some(
            &json!({"version": "1.0", "type": "CONTINUATION_REQUEST", "continuationId": "c1"}),
        ));
        let answer = |kind: &str, field: &str, id: &str| json!({"version": "1.0", "type": kind, field: id, "approved": true});
        let mut out = Vec::new();
        d.client_sent(
            &answer("PERMISSION_RESPONSE", "permissionId", "p1"),
            Some(RESPONSES_ROUTE),
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        for (event, why) in [
            (
                answer("PERMISSION_RESPONSE", "permissionId", "p1"),
                "a second time",
            ),
            (
                answer("PERMISSION_RESPONSE", "permissionId", "nope"),
                "never issued",
            ),
            (
                answer("PERMISSION_RESPONSE", "permissionId", "c1"),
                "wants a CONTINUATION_RESPONSE",
            ),
        ] {
            let mut out = Vec::new();
            d.client_sent(&event, Some(RESPONSES_ROUTE), &mut out);
            assert_eq!(rules(&out), ["HPD-CLI-001"], "{why}");
            assert!(out[0].message.contains(why), "{}", out[0].message);
        }
        let mut out = Vec::new();
        d.client_sent(
            &answer("CONTINUATION_RESPONSE", "continuationId", "c1"),
            Some(INPUTS_ROUTE),
            &mut out,
        );
        assert_eq!(rules(&out), ["HPD-CLI-002"]);
    }

    #[test]
    fn a_client_envelope_is_held_to_the_envelope_rules() {
        let mut d = ClientDuties::default();
        let mut out = Vec::new();
        d.client_sent(
            &json!({"type": "USER_TEXT_INPUT", "text": "hi", "user_id": null}),
            Some(INPUTS_ROUTE),
            &mut out,
        );
        assert_eq!(rules(&out), ["HPD-ENV-002", "HPD-ENV-004", "HPD-ENV-005"]);
        let mut out = Vec::new();
        d.client_sent(&json!({"text": "hi"}), Some(INPUTS_ROUTE), &mut out);
        assert!(
            out.is_empty(),
            "a bare text input is taken by the framework"
        );
        let mut out = Vec::new();
        d.client_sent(
            &json!({"version": "1.0", "permissionId": "p"}),
            Some(RESPONSES_ROUTE),
            &mut out,
        );
        assert_eq!(rules(&out), ["HPD-ENV-001"]);
        // A misspelt name is that, not also an answer to nothing.
        d.agent_sent(Some(
            &json!({"type": "PERMISSION_REQUEST", "permissionId": "p"}),
        ));
        let mut out = Vec::new();
        let snake = json!({"version": "1.0", "type": "PERMISSION_RESPONSE", "permission_id": "p"});
        d.client_sent(&snake, Some(RESPONSES_ROUTE), &mut out);
        assert_eq!(rules(&out), ["HPD-ENV-004"]);
    }

    #[test]
    fn a_stream_dropped_by_the_agent_is_resumed_after_the_last_id_delivered() {
        let opened = |d: &mut ClientDuties, from: StreamFrom| {
            let mut out = Vec::new();
            d.client_opened(&from, &mut out);
            rules(&out)
        };
        let mut d = ClientDuties::default();
        assert!(opened(&mut d, StreamFrom::Live).is_empty());
        d.agent_sent(None);
        d.agent_sent(Some(&json!({"type": "TEXT_DELTA"})));
        d.agent_dropped();
        // Sent while the client was away: not delivered.
        d.agent_sent(Some(&json!({"type": "TEXT_DELTA"})));
        assert!(opened(&mut d, StreamFrom::LastEventId("2".into())).is_empty());
        d.agent_dropped();
        assert_eq!(opened(&mut d, StreamFrom::Live), ["HPD-CLI-004"]);
        d.agent_dropped();
        assert_eq!(
            opened(&mut d, StreamFrom::After("1".into())),
            ["HPD-CLI-004"]
        );
        // A client that reopens on its own is not judged.
        assert!(opened(&mut d, StreamFrom::Live).is_empty());
    }
}
