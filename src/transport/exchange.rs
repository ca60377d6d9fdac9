//! What a transport does and sees besides frames: the HTTP exchanges of the SSE + HTTP
//! binding (a POST and its answer, a stream reopened) and the fields an SSE event carries
//! besides its data.
//!
//! These are typed, never JSON objects with reserved keys: nothing a target sends can pose as
//! one of them, and nothing wireprobe sends is read back as a command.

use super::Frame;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the runner asks a transport to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    /// Send one frame (over SSE + HTTP: POST it to the default route, exactly as it is).
    Frame(Frame),
    /// POST `body` to `path` under the target's base URL, with these request headers besides
    /// the run's (an `Accept`) (SSE + HTTP only).
    Post {
        path: String,
        body: Body,
        headers: Vec<(String, String)>,
    },
    /// Reopen the event stream from `from`, or drop it (`None`) (SSE + HTTP only).
    Stream(Option<StreamFrom>),
    /// Write these lines, each ended by LF, into the event stream wireprobe serves, exactly as
    /// they are: comments and fields besides `data` (a served SSE + HTTP stream only).
    StreamLines(Vec<String>),
}

impl From<Frame> for Outgoing {
    fn from(frame: Frame) -> Outgoing {
        Outgoing::Frame(frame)
    }
}

impl Outgoing {
    /// Bytes this puts on the wire (for a transcript's byte budget).
    pub fn len(&self) -> usize {
        match self {
            Outgoing::Frame(f) => f.len(),
            Outgoing::Post { body, .. } => body.len(),
            Outgoing::Stream(_) => 0,
            Outgoing::StreamLines(lines) => lines.iter().map(|l| l.len() + 1).sum(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An HTTP body: JSON, exact text (sent or received as it is), or nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    #[default]
    Empty,
    Json(Value),
    Text(String),
}

impl Body {
    /// A received body: JSON when it parses, else its text (lossy UTF-8).
    pub fn of_bytes(bytes: &[u8]) -> Body {
        if bytes.is_empty() {
            return Body::Empty;
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => Body::Json(v),
            Err(_) => Body::Text(String::from_utf8_lossy(bytes).into_owned()),
        }
    }

    /// The bytes a POST of this body sends.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Body::Empty => Vec::new(),
            Body::Json(v) => v.to_string().into_bytes(),
            Body::Text(t) => t.clone().into_bytes(),
        }
    }

    /// The body as JSON: parsed when it is text that parses (a JSON body is lent, not copied).
    pub fn json(&self) -> Result<std::borrow::Cow<'_, Value>, &'static str> {
        match self {
            Body::Json(v) => Ok(std::borrow::Cow::Borrowed(v)),
            Body::Text(t) => serde_json::from_str(t)
                .map(std::borrow::Cow::Owned)
                .map_err(|_| "the body is not JSON"),
            Body::Empty => Err("the body is empty"),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::Json(v) => json_len(v),
            Body::Text(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Body::Empty)
    }

    /// How a pattern or a person sees the body: the JSON, the text, or `null`.
    pub fn as_value(&self) -> Value {
        match self {
            Body::Empty => Value::Null,
            Body::Json(v) => v.clone(),
            Body::Text(t) => Value::String(t.clone()),
        }
    }
}

/// The target's answer to a POST.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HttpAnswer {
    pub method: String,
    pub path: String,
    pub status: u16,
    #[serde(default)]
    pub content_type: String,
    #[serde(default, skip_serializing_if = "Body::is_empty")]
    pub body: Body,
}

impl HttpAnswer {
    /// The answer as one JSON object, for patterns (`{"$http": {"status": 400}}` in a suite).
    pub fn as_value(&self) -> Value {
        serde_json::json!({
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "content_type": self.content_type,
            "body": self.body.as_value(),
        })
    }

    /// One line for messages: `HTTP 400 to POST /inputs` (`HTTP 200 to the POST` for a POST to
    /// the target's URL itself).
    pub fn describe(&self) -> String {
        match self.path.as_str() {
            "" => format!("HTTP {} to the {}", self.status, self.method),
            path => format!("HTTP {} to {} {path}", self.status, self.method),
        }
    }
}

/// Where a (re)opened event stream starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamFrom {
    /// The live end.
    Live,
    /// `?after=N`.
    After(String),
    /// `Last-Event-ID: N`.
    LastEventId(String),
}

impl StreamFrom {
    /// The id the stream resumes after, if it resumes.
    pub fn resume_id(&self) -> Option<&str> {
        match self {
            StreamFrom::Live => None,
            StreamFrom::After(n) | StreamFrom::LastEventId(n) => Some(n),
        }
    }
}

/// The fields of an SSE event besides its data, as the stream carried them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SseMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u64>,
}

impl SseMeta {
    /// The fields as one JSON object, for patterns (`"$sse" = { id = "$capture:from" }`).
    pub fn as_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// How many bytes `value` is as JSON text, counted as it is written rather than written to a
/// string first (every POST's body is measured for the transcript's budget).
pub fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, nor can a Value be unserializable.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_json_body_is_as_long_as_its_text() {
        for v in [
            json!(null),
            json!({"type": "USER_TEXT_INPUT", "text": "a \"quoted\" é\n\u{1F600}", "n": [1, 2.5, -3]}),
            json!({"nested": {"deep": [{"x": "\u{0}"}]}}),
        ] {
            assert_eq!(json_len(&v), v.to_string().len());
            assert_eq!(Body::Json(v.clone()).len(), v.to_string().len());
        }
    }

    #[test]
    fn bodies_read_as_json_or_text() {
        assert_eq!(Body::of_bytes(b""), Body::Empty);
        assert_eq!(Body::of_bytes(br#"{"a":1}"#), Body::Json(json!({"a": 1})));
        assert_eq!(Body::of_bytes(b"nope"), Body::Text("nope".into()));
        assert_eq!(Body::Text("[1]".into()).json().as_deref(), Ok(&json!([1])));
        assert!(Body::Text("x".into()).json().is_err());
    }
}
