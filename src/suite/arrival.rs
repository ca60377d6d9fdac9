//! What the steps see of something received: an event, an HTTP answer, the end of the
//! connection, and how a suite's pattern matches each (its `$http`, `$sse`, `$stream` and `$end`
//! keys are the suite's words for what the transport observed, never a target's JSON).

use crate::matcher::{self, Vars};
use crate::protocol::Session;
use crate::transport::{HttpAnswer, SseMeta, StreamFrom};
use serde_json::Value;
use std::sync::Arc;

/// Something received, as the profile decoded it.
#[derive(Debug, Clone)]
pub(super) enum Item {
    /// An event, with the SSE fields it came with (the tree the transcript keeps, when the
    /// session decodes verbatim).
    Event(Arc<Value>, Option<SseMeta>),
    /// The answer to a POST (SSE + HTTP).
    Http(HttpAnswer),
    Binary(usize),
    Garbage(String),
    /// A client under test opened the event stream, from here (wireprobe serving SSE + HTTP).
    Stream(StreamFrom),
    /// The connection ended (close frame, drop or transport failure).
    Ended(String),
    /// The body of an answer that was a stream of its own ended (the connection goes on).
    AnswerEnded {
        path: String,
        error: Option<String>,
    },
}

/// In a pattern, the key that addresses an HTTP answer (`{"$http": {"status": 400}}`).
pub const HTTP_KEY: &str = "$http";
/// In a pattern, the key that addresses an event's SSE fields (`"$sse" = { id = "$capture:x" }`).
pub const SSE_KEY: &str = "$sse";
/// In a pattern, the key that addresses a client opening the event stream
/// (`"$stream" = { last_event_id = "3" }`, `{ after = "3" }`, or `"live"`).
pub const STREAM_KEY: &str = "$stream";
/// In a pattern, the key that addresses the end of an answer that was a stream of its own
/// (`"$end" = {}`, or `{ error = "$capture:why" }`).
pub const END_KEY: &str = "$end";

impl Item {
    /// True when `pattern` matches this arrival. A pattern's own `$http` key addresses an HTTP
    /// answer and its `$sse` key an event's SSE fields: they are the suite's words for what the
    /// transport observed, so a target's JSON holding such keys never matches them.
    pub(super) fn matches(&self, pattern: &Value, vars: &mut Vars) -> bool {
        let Value::Object(p) = pattern else {
            return matches!(self, Item::Event(e, _) if matcher::matches(pattern, e, vars));
        };
        if let Some(want) = p.get(HTTP_KEY) {
            return match self {
                Item::Http(answer) if p.len() == 1 => {
                    matcher::matches(want, &answer.as_value(), vars)
                }
                _ => false,
            };
        }
        if let Some(want) = p.get(END_KEY) {
            return match self {
                Item::AnswerEnded { path, error } if p.len() == 1 => {
                    let end = serde_json::json!({ "path": path, "error": error });
                    matcher::matches(want, &end, vars)
                }
                _ => false,
            };
        }
        if let Some(want) = p.get(STREAM_KEY) {
            return match self {
                Item::Stream(from) if p.len() == 1 => {
                    let from = serde_json::to_value(from).unwrap_or(Value::Null);
                    matcher::matches(want, &from, vars)
                }
                _ => false,
            };
        }
        let Item::Event(event, sse) = self else {
            return false;
        };
        let Some(want) = p.get(SSE_KEY) else {
            return matcher::matches(pattern, event, vars);
        };
        let fields = sse
            .as_ref()
            .map_or(Value::Object(Default::default()), SseMeta::as_value);
        let mut rest = p.clone();
        rest.remove(SSE_KEY);
        matcher::matches(want, &fields, vars) && matcher::matches(&Value::Object(rest), event, vars)
    }

    /// The error code this arrival carries, if it is the protocol's error (or an HTTP answer
    /// refusing a POST).
    pub(super) fn error_code(&self, session: &dyn Session) -> Option<String> {
        match self {
            Item::Event(e, _) => session.error_code(e),
            Item::Http(answer) => session.http_error_code(answer),
            _ => None,
        }
    }

    /// One line naming the arrival, for messages.
    pub(super) fn describe(&self) -> String {
        match self {
            Item::Event(e, _) => crate::show::event(e),
            Item::Http(answer) => answer.describe(),
            Item::Binary(n) => format!("binary({n} bytes)"),
            Item::Garbage(t) => {
                format!("non-JSON text {:?}", t.chars().take(40).collect::<String>())
            }
            Item::Stream(from) => match from.resume_id() {
                Some(n) => format!("the event stream opened after id {n:?}"),
                None => "the event stream opened at the live end".into(),
            },
            Item::Ended(how) => format!("end of connection ({how})"),
            Item::AnswerEnded { path, error: None } => {
                format!("the end of the answer to POST {path}")
            }
            Item::AnswerEnded {
                path,
                error: Some(e),
            } => format!("the answer to POST {path} broken off ({e})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Body;
    use serde_json::json;

    fn answer(status: u16) -> Item {
        Item::Http(HttpAnswer {
            method: "POST".into(),
            path: "/inputs".into(),
            status,
            content_type: String::new(),
            body: Body::Empty,
        })
    }

    #[test]
    fn a_targets_json_never_stands_for_what_the_transport_saw() {
        let forged = Item::Event(
            Arc::new(json!({"$http": {"status": 400, "path": "/inputs"}})),
            None,
        );
        let pattern = json!({"$http": {"status": 400}});
        assert!(!forged.matches(&pattern, &mut Vars::new()));
        assert!(answer(400).matches(&pattern, &mut Vars::new()));
        assert!(!answer(202).matches(&pattern, &mut Vars::new()));

        let meta = SseMeta {
            id: Some("7".into()),
            ..SseMeta::default()
        };
        let event = json!({"type": "X", "$sse": {"id": "99"}});
        let with_id = Item::Event(Arc::new(event.clone()), Some(meta));
        let without = Item::Event(Arc::new(event), None);
        let mut vars = Vars::new();
        let wants_id = json!({"type": "X", "$sse": {"id": "$capture:id"}});
        assert!(with_id.matches(&wants_id, &mut vars));
        assert_eq!(
            vars.get("id"),
            Some(&json!("7")),
            "the stream's id, not the event's key"
        );
        assert!(!without.matches(&wants_id, &mut Vars::new()));
        assert!(without.matches(
            &json!({"type": "X", "$sse": {"id": "$absent"}}),
            &mut Vars::new()
        ));

        // A client's JSON naming `$stream` is an event, never its opening of the stream.
        let opened = json!({"$stream": {"last_event_id": "3"}});
        let posed = Item::Event(Arc::new(opened.clone()), None);
        assert!(!posed.matches(&opened, &mut Vars::new()));
        let subscribed = Item::Stream(StreamFrom::LastEventId("3".into()));
        assert!(subscribed.matches(&opened, &mut Vars::new()));
        assert!(!subscribed.matches(&json!({"$stream": "live"}), &mut Vars::new()));
    }
}
