//! The HPD checker over a whole transcript: every envelope (validate), the SSE ids (stream),
//! the turn lifecycles (lifecycle), and how the target answered what the client sent: HTTP
//! statuses for POSTs, close codes for WebSocket frames.

use super::duties::ClientDuties;
use super::events::{self, Family};
use super::lifecycle::Lifecycle;
use super::stream::StreamIds;
use super::{validate, INPUTS_ROUTE, INTERRUPT_ROUTE, RESPONSES_ROUTE};
use crate::protocol::{Checker, EventRef, Observed};
use crate::rules::ids::{
    HPD_ENV_001, HPD_ENV_009, HPD_IN_001, HPD_IN_002, HPD_IN_003, HPD_IN_004, HPD_IN_005,
};
use crate::rules::{Exercised, Violation};
use crate::transcript::Direction;
use crate::transport::{Body, HttpAnswer, SseMeta, StreamFrom};
use serde_json::Value;
use std::collections::VecDeque;

/// Statuses that say "busy, try later" rather than "not this input".
const BUSY: [u16; 2] = [409, 429];

/// Posts remembered while their answers are outstanding.
const MAX_POSTS: usize = 1024;

/// What the answer to one POST must be.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    /// An invalid envelope: 400 (HPD-IN-001).
    BadRequest(String),
    /// A valid input: 2xx (HPD-IN-003).
    Accepted,
    /// A response naming a request id never issued: 404 (HPD-IN-004).
    UnknownRequest(String),
    /// Nothing the rules fix.
    Anything,
}

/// What a client envelope is, whatever carried it.
pub(crate) enum Sent {
    /// A bad request, and why.
    Invalid(String),
    /// An input of a known type that our validator finds fault with, or that lacks a field of
    /// its type (a USER_TEXT_INPUT without text): the spec does not say which faults make a bad
    /// request, so the target may refuse it or take it (suites/hpd/ERRATA.md).
    Doubtful,
    Input,
    Response {
        kind: &'static str,
        id: String,
        approved: Option<bool>,
    },
    Interrupt,
    /// Nothing the rules judge.
    Other,
}

/// Classifies an envelope a client sends (the body of a POST to `route`, or a WebSocket frame
/// that would go there): the checker's reading of what the agent must refuse, and the
/// fuzzer's validator.
pub(crate) fn classify(body: Result<&Value, &str>, route: &str) -> Sent {
    let body = match body {
        Ok(v) => v,
        Err(why) => return Sent::Invalid(why.to_owned()),
    };
    let Value::Object(m) = body else {
        return Sent::Invalid("the body is JSON but not an object".into());
    };
    let kind = match m.get("type") {
        Some(Value::String(k)) => k.as_str(),
        Some(_) => return Sent::Invalid("its type is not a string".into()),
        // The framework takes a bare {text} as an input: not judged either way.
        None if route == INPUTS_ROUTE && m.contains_key("text") => return Sent::Other,
        None => return Sent::Invalid("it has no type".into()),
    };
    let Some(known) = events::known(kind) else {
        return Sent::Invalid(format!("its type {kind:?} is not an event type"));
    };
    if events::is_input(kind) {
        // Any fault our validator finds in an input, or a field of its type missing, leaves
        // the agent free to refuse it or take it.
        let mut found = Vec::new();
        validate::envelope(body, &mut found);
        let missing = known.fields.iter().any(|(name, _)| !m.contains_key(*name));
        return if found.is_empty() && !missing {
            Sent::Input
        } else {
            Sent::Doubtful
        };
    }
    if known.name == "INTERRUPTION_REQUEST" {
        return Sent::Interrupt;
    }
    if let Some(field) = events::response_id_field(kind) {
        return match m.get(field).and_then(Value::as_str) {
            None => Sent::Invalid(format!("{} has no {field}", known.name)),
            Some(id) => Sent::Response {
                kind: known.name,
                id: id.to_owned(),
                approved: m.get("approved").and_then(Value::as_bool),
            },
        };
    }
    Sent::Other
}

/// The HPD checker.
#[derive(Debug, Default)]
pub struct HpdChecker {
    over_ws: bool,
    posts: VecDeque<Expected>,
    /// The close code a WebSocket frame the client sent calls for, with its rule and why.
    close_due: Option<(u16, &'static str, String)>,
    /// The client's last item was one the agent may or must refuse.
    client_broken: bool,
    stream: StreamIds,
    turns: Lifecycle,
    /// What the client owes (judged when wireprobe serves it).
    duties: ClientDuties,
    /// The rules of envelopes, answers and closes evaluated since the judge last asked (the
    /// stream's, the turns' and the duties' keep their own).
    exercised: Exercised,
}

impl HpdChecker {
    /// Remembers what the answer to a POST just sent must be (bounded: past the cap, answers
    /// go unjudged rather than memory growing).
    fn await_answer(&mut self, expected: Expected) {
        if self.posts.len() < MAX_POSTS {
            self.posts.push_back(expected);
        }
    }

    /// Follows what the client sent; returns what its answer must be.
    fn client_sent(&mut self, sent: Sent) -> Expected {
        self.client_broken = matches!(sent, Sent::Invalid(_) | Sent::Doubtful);
        match sent {
            Sent::Invalid(why) => Expected::BadRequest(why),
            Sent::Doubtful => Expected::Anything,
            Sent::Input => Expected::Accepted,
            Sent::Interrupt => {
                self.turns.interrupted();
                Expected::Anything
            }
            Sent::Response { kind, id, approved } => {
                if kind == "PERMISSION_RESPONSE" {
                    if let Some(approved) = approved {
                        self.turns.permission_answered(&id, approved);
                    }
                }
                match self.turns.issued.contains(&id) {
                    true => Expected::Anything,
                    false => Expected::UnknownRequest(id),
                }
            }
            Sent::Other => Expected::Anything,
        }
    }

    /// A POST wireprobe made over SSE + HTTP.
    fn client_post(&mut self, path: &str, body: &Body) {
        self.client_broken = false;
        let expected = match path {
            INPUTS_ROUTE | RESPONSES_ROUTE => {
                let body = body.json();
                let sent = classify(body.as_deref().map_err(|why| *why), path);
                self.client_sent(sent)
            }
            INTERRUPT_ROUTE => self.client_sent(Sent::Interrupt),
            _ => Expected::Anything,
        };
        self.await_answer(expected);
    }

    fn client_event(&mut self, event: &Value) {
        if self.over_ws {
            let route = event
                .get("type")
                .and_then(Value::as_str)
                .map_or(INPUTS_ROUTE, super::session::route_of);
            let sent = classify(Ok(event), route);
            if let Expected::BadRequest(why) = self.client_sent(sent) {
                self.close_after(1007, HPD_IN_002, why);
            }
        } else {
            // A frame sent as it is: the SSE transport posts it to the inputs route.
            let sent = classify(Ok(event), INPUTS_ROUTE);
            let expected = self.client_sent(sent);
            self.await_answer(expected);
        }
    }

    /// The close a WebSocket frame calls for. The agent closes over the first frame it cannot
    /// take: a later one's code is not due.
    fn close_after(&mut self, code: u16, rule: &'static str, why: String) {
        if self.close_due.is_none() {
            self.close_due = Some((code, rule, why));
        }
    }

    /// Judges the answer to the oldest outstanding POST.
    fn http_answer(&mut self, answer: &HttpAnswer, out: &mut Vec<Violation>) {
        let Some(expected) = self.posts.pop_front() else {
            return;
        };
        let status = answer.status;
        let path = answer.path.as_str();
        // An answer the rules fix a status for is judged, whatever the status.
        match &expected {
            Expected::BadRequest(_) => self.exercised.hit(HPD_IN_001),
            Expected::Accepted => self.exercised.hit(HPD_IN_003),
            Expected::UnknownRequest(_) => self.exercised.hit(HPD_IN_004),
            Expected::Anything => {}
        }
        match expected {
            Expected::BadRequest(why) if status != 400 => out.push(Violation::new(
                HPD_IN_001,
                format!("POST {path} of an invalid envelope ({why}) answered HTTP {status}, not 400"),
            )),
            // 409 and 429: the agent is busy with a turn and takes one input at a time (the
            // framework refuses an input while a run is active), not a refusal of this input.
            Expected::Accepted if !(200..300).contains(&status) && !BUSY.contains(&status) => {
                out.push(Violation::new(
                HPD_IN_003,
                    format!("POST {path} of a valid input answered HTTP {status}"),
                ))
            }
            Expected::UnknownRequest(id) if status != 404 => out.push(Violation::new(
                HPD_IN_004,
                format!("POST {path} answering request id {id:?}, which the agent never issued, got HTTP {status}, not 404"),
            )),
            _ => {}
        }
    }

    /// The event stream was reopened from `from`.
    fn stream_opened(&mut self, from: &StreamFrom) {
        match from.resume_id() {
            Some(n) => self.stream.resumed(n),
            None => self.stream.live(),
        }
    }

    fn server_event(
        &mut self,
        event: EventRef<'_>,
        sse: Option<&SseMeta>,
        out: &mut Vec<Violation>,
    ) {
        let Some((m, known)) = validate::envelope_noting(event.value(), &mut self.exercised, out)
        else {
            return;
        };
        if let Some(id) = sse.and_then(|s| s.id.as_deref()) {
            if self.stream.observe(id, event, out) {
                return;
            }
        }
        if let Some(known) = known {
            if known.family != Family::Upstream {
                self.turns.observe(known.family, known.name, m, out);
            }
        }
    }

    /// The agent sent a text frame: over the WebSocket, a live event in the frame type it
    /// must use (HPD-ENV-009; a binary frame breaks it). Over SSE the rule does not apply.
    fn ws_text_frame(&mut self) {
        if self.over_ws {
            self.exercised.hit(HPD_ENV_009);
        }
    }

    fn closed(&mut self, code: Option<u16>, out: &mut Vec<Violation>) {
        if let Some((due, rule, why)) = self.close_due.take() {
            // A close was owed a code: this close is judged against it.
            self.exercised.hit(rule);
            if code != Some(due) {
                let got = code.map_or("no close code".to_owned(), |c| format!("close code {c}"));
                out.push(Violation::new(
                    rule,
                    format!("after a frame the agent cannot accept ({why}) the WebSocket ended with {got}, not {due}"),
                ));
            }
        }
    }
}

impl Checker for HpdChecker {
    fn observe(
        &mut self,
        from: Direction,
        _at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        match (from, item) {
            (_, Observed::Connect(url)) => {
                self.over_ws = url.starts_with("ws");
                self.posts.clear();
                self.close_due = None;
                self.stream.live();
                self.duties.connected();
            }
            (Direction::Client, Observed::Event(event, _)) => {
                self.duties.client_sent(event.value(), None, out);
                self.client_event(event.value())
            }
            (Direction::Client, Observed::StreamOpened(from)) => {
                self.duties.client_opened(from, out);
                self.stream_opened(from)
            }
            (Direction::Server, Observed::StreamDropped) => self.duties.agent_dropped(),
            (Direction::Client, Observed::Garbage(_)) => {
                self.client_broken = true;
                let why = "it is not JSON".to_owned();
                if self.over_ws {
                    self.close_after(1007, HPD_IN_002, why);
                } else {
                    self.await_answer(Expected::BadRequest(why));
                }
            }
            (Direction::Client, Observed::Binary(_)) => {
                self.client_broken = self.over_ws;
                if self.over_ws {
                    self.close_after(1008, HPD_IN_005, "a binary frame".into());
                } else {
                    self.await_answer(Expected::Anything);
                }
            }
            (Direction::Client, Observed::Post { path, body, .. }) => {
                match body {
                    Body::Json(event) => self.duties.client_sent(event, Some(path), out),
                    Body::Text(text) => out.push(Violation::new(
                        HPD_ENV_001,
                        format!(
                            "POST {path} of a body that is not JSON: {:?}",
                            text.chars().take(80).collect::<String>()
                        ),
                    )),
                    // An empty POST (a stop button's interrupt) carries no envelope.
                    Body::Empty => {}
                }
                self.client_post(path, body)
            }
            (Direction::Server, Observed::Event(event, sse)) => {
                self.ws_text_frame();
                self.duties.agent_sent(Some(event.value()));
                self.server_event(event, sse, out)
            }
            (Direction::Server, Observed::Http(answer)) => self.http_answer(answer, out),
            (Direction::Server, Observed::StreamOpened(from)) => self.stream_opened(from),
            (Direction::Server, Observed::Garbage(text)) => {
                self.ws_text_frame();
                self.duties.agent_sent(None);
                out.push(Violation::new(
                    HPD_ENV_001,
                    format!(
                        "a live event is not JSON: {:?}",
                        text.chars().take(80).collect::<String>()
                    ),
                ))
            }
            (Direction::Server, Observed::Binary(len)) => out.push(Violation::new(
                HPD_ENV_009,
                format!("a binary frame of {len} bytes, not an envelope in a text frame"),
            )),
            (Direction::Server, Observed::Closed { code }) => self.closed(code, out),
            _ => {}
        }
    }

    fn input_broken(&self) -> bool {
        self.client_broken
    }

    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
        self.stream.exercised.drain_into(into);
        self.turns.exercised.drain_into(into);
        self.duties.exercised.drain_into(into);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the judge does with one item: observes it, then collects what it exercised.
    struct Judged {
        checker: HpdChecker,
        out: Vec<Violation>,
        hits: Vec<&'static str>,
    }

    impl Judged {
        fn observe(&mut self, from: Direction, item: Observed<'_>) {
            self.checker.observe(from, 0, item, &mut self.out);
            self.checker.exercised(&mut self.hits);
        }
    }

    #[test]
    fn a_rule_counts_as_exercised_only_where_it_applies() {
        let mut j = Judged {
            checker: HpdChecker::default(),
            out: Vec::new(),
            hits: Vec::new(),
        };
        j.observe(Direction::Client, Observed::Connect("http://agent"));
        let input = Body::Json(json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": "hi"}));
        let post = Observed::Post {
            path: INPUTS_ROUTE,
            body: &input,
            headers: &[],
        };
        j.observe(Direction::Client, post);
        let accepted = HttpAnswer {
            method: "POST".into(),
            path: INPUTS_ROUTE.into(),
            status: 202,
            content_type: String::new(),
            body: Body::Empty,
        };
        j.observe(Direction::Server, Observed::Http(&accepted));
        // One message turn with one text block, each event with its SSE id.
        let turn = [
            json!({"type": "MESSAGE_TURN_STARTED", "messageTurnId": "t"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m"}),
            json!({"type": "TEXT_DELTA", "messageId": "m", "text": "hello"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
            json!({"type": "MESSAGE_TURN_FINISHED", "messageTurnId": "t"}),
        ];
        for (n, mut event) in turn.into_iter().enumerate() {
            event["version"] = json!("1.0");
            let sse = SseMeta {
                id: Some((n + 1).to_string()),
                event: None,
                retry: None,
            };
            j.observe(
                Direction::Server,
                Observed::Event((&event).into(), Some(&sse)),
            );
        }
        let (out, hits) = (j.out, j.hits);
        assert!(out.is_empty(), "the exchange is valid: {out:?}");
        // What the exchange held was judged: the input's answer, the envelopes, the turn, the
        // block's end, the ids in order.
        // What it never held was not: no invalid input, no tool call, no permission, no
        // resume, no WebSocket, though traffic flowed.
        crate::rules::assert_exercised(
            &hits,
            &[
                HPD_IN_003,
                HPD_ENV_001,
                "HPD-ENV-008",
                "HPD-TURN-001",
                "HPD-TURN-002",
                "HPD-STREAM-001",
                "HPD-STREAM-002",
                "HPD-SSE-001",
            ],
            &[
                HPD_IN_001,
                HPD_IN_002,
                HPD_ENV_009,
                "HPD-TOOL-001",
                "HPD-TOOL-002",
                "HPD-TOOL-003",
                "HPD-ASK-001",
                "HPD-SSE-002",
                "HPD-CLI-004",
            ],
        );
    }
}
