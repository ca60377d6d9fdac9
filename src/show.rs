//! How values read in messages people see: no Rust `Debug` text, and long events cut after
//! what identifies them.

use serde_json::Value;
use std::fmt::Display;

/// Longest event shown in full in a message.
const MAX_SHOWN: usize = 160;

/// `"text"` quoted, or `none` when absent (never `Some("text")`).
pub fn quoted_or_none(value: Option<impl Display>) -> String {
    match value {
        Some(v) => format!("\"{v}\""),
        None => "none".into(),
    }
}

/// An event as one line. A long one is cut, but its `type` (and `subtype`) come first, so
/// the reader still sees what it was.
pub fn event(e: &Value) -> String {
    let text = e.to_string();
    if text.len() <= MAX_SHOWN {
        return text;
    }
    let kind = named(e, &["type", "subtype"]);
    let cut = text
        .char_indices()
        .nth(MAX_SHOWN)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    if kind.is_empty() {
        format!("{head}… ({} bytes)", text.len())
    } else {
        format!("{kind} {head}… ({} bytes)", text.len())
    }
}

/// The string values `e` has under `keys`, joined by `/` (empty when it has none).
fn named(e: &Value, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| e.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("/")
}

/// What kind of item a record is, in a few words: an event's `type` (and `subtype`), or its
/// `method` or `event` when it has no type; an observation as [`record`] says it, cut short.
pub fn kind(r: &crate::transcript::Record) -> String {
    use crate::transcript::Record;
    let Record::Event { event: ev, .. } = r else {
        return record(r).chars().take(60).collect();
    };
    [
        named(ev, &["type", "subtype"]),
        named(ev, &["method"]),
        named(ev, &["event"]),
    ]
    .into_iter()
    .find(|k| !k.is_empty())
    .unwrap_or_else(|| "an event".into())
}

/// A transcript entry as one line: an event as [`event`] shows it, an observation in words.
pub fn entry(e: &crate::transcript::Entry) -> String {
    record(&e.record)
}

/// A record as one line: an event as [`event`] shows it, an observation in words.
pub fn record(r: &crate::transcript::Record) -> String {
    use crate::transcript::{Observation as O, Record};
    let o = match r {
        Record::Event { event: ev, .. } => return event(ev),
        Record::Observed(o) => o,
    };
    let cut = |t: &str| t.chars().take(80).collect::<String>();
    match o {
        O::Connect { url } => format!("a connection to {url}"),
        O::Close { code, reason } => match code {
            Some(c) => format!("a close (code {c} {reason:?})"),
            None => format!("an end of the connection ({reason})"),
        },
        O::Rejected { status } => format!("a refusal with HTTP {status}"),
        O::Error { message } => format!("a transport failure ({message})"),
        O::Notice { message } => message.clone(),
        O::Stderr { line } => format!("stderr {:?}", cut(line)),
        O::Stdout { line } => format!("stdout {:?}", cut(line)),
        O::Text { text, .. } => format!("non-JSON text {:?}", cut(text)),
        O::Binary { len, .. } => format!("a binary frame of {len} bytes"),
        O::InvalidUtf8 { len, .. } => format!("a text frame of {len} bytes that is not UTF-8"),
        O::Post { path, .. } => format!("POST {path}"),
        O::Http(answer) => answer.describe(),
        O::AnswerEnded { path, error: None } => format!("the end of the answer to POST {path}"),
        O::AnswerEnded {
            path,
            error: Some(e),
        } => format!("the answer to POST {path} broken off ({e})"),
        O::StreamRequested { from: Some(_) } => "a request to reopen the event stream".into(),
        O::StreamRequested { from: None } => "a request to drop the event stream".into(),
        O::StreamOpened { .. } => "the event stream reopened".into(),
        O::Truncated { dropped } => format!("{dropped} entries not stored"),
        O::NoGreeting { waited_ms } => format!("no greeting within {waited_ms} ms"),
        O::RoundTrip { ms } => format!("a ping answered in {ms} ms"),
        O::TokenPresented { at: Some(at) } => format!("the token presented in the {at}"),
        O::TokenPresented { at: None } => "no token presented".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_read_as_words() {
        assert_eq!(quoted_or_none(Some("a")), "\"a\"");
        assert_eq!(quoted_or_none(None::<&str>), "none");
    }

    #[test]
    fn a_long_event_shows_its_type_first() {
        let long = json!({"payload": {"text": "x".repeat(500)}, "type": "TEXT_MESSAGE_PART"});
        let shown = event(&long);
        assert!(shown.starts_with("TEXT_MESSAGE_PART {"), "{shown}");
        assert!(shown.len() < 260, "{shown}");
        let short = json!({"type": "PONG"});
        assert_eq!(event(&short), r#"{"type":"PONG"}"#);
    }
}
