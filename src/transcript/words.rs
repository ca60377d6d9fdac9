//! Transcript items in words, for messages people read: an event as `crate::show` shows it, an
//! observation as what happened.

use super::{Entry, Record};
use crate::show;

/// What kind of item a record is, in a few words: an event's `type` (and `subtype`), or its
/// `method` or `event` when it has no type; an observation as [`record`] says it, cut short.
pub fn kind(r: &Record) -> String {
    let Record::Event { event: ev, .. } = r else {
        return record(r).chars().take(60).collect();
    };
    [
        show::named(ev, &["type", "subtype"]),
        show::named(ev, &["method"]),
        show::named(ev, &["event"]),
    ]
    .into_iter()
    .find(|k| !k.is_empty())
    .unwrap_or_else(|| "an event".into())
}

/// A transcript entry as one line: an event as [`show::event`] shows it, an observation in words.
pub fn entry(e: &Entry) -> String {
    record(&e.record)
}

/// A record as one line: an event as [`show::event`] shows it, an observation in words.
pub fn record(r: &Record) -> String {
    use super::Observation as O;
    let o = match r {
        Record::Event { event: ev, .. } => return show::event(ev),
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
