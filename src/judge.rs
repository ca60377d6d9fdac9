//! Judging a transcript: every frame through the protocol's whole checker (validator plus
//! lifecycle). One judge serves `check` (a recorded transcript, streamed), `run` (each case's
//! transcript, whatever rules the case was written for) and `fuzz` (each generated run).

use crate::protocol::{Checker, Observed, Protocol};
use crate::rules::{self, Level, Violation};
use crate::transcript::{Direction, Entry};
use serde::Serialize;
use serde_json::Value;

/// Most violations one case keeps (after merging repeats): a flood of the same broken rule
/// helps nobody, and a report must stay bounded.
pub const MAX_CASE_VIOLATIONS: usize = 50;

/// Most violations of one rule one case keeps.
pub const MAX_PER_RULE: usize = 5;

/// What a transcript frame is: an event, or one of the `$`-tagged observations (`$truncated`
/// marks where a capped transcript stopped storing; nothing after it is judged).
pub fn observed_of(frame: &Value) -> Observed<'_> {
    if let Value::Object(m) = frame {
        if m.len() <= 2 {
            if let Some(to) = m.get("$connect") {
                return Observed::Connect(to.as_str().unwrap_or(""));
            }
            if m.contains_key("$stderr") {
                return Observed::Aside;
            }
            if let Some(what) = m.get("$notice") {
                return Observed::Notice(what.as_str().unwrap_or(""));
            }
            if let Some(close) = m.get("$close") {
                let code = close.get("code").and_then(Value::as_u64);
                return Observed::Closed {
                    code: code.and_then(|c| u16::try_from(c).ok()),
                };
            }
            if ["$error", "$rejected", "$truncated"]
                .iter()
                .any(|k| m.contains_key(*k))
            {
                return Observed::Closed { code: None };
            }
            if m.contains_key("$binary") {
                let len = m.get("len").and_then(Value::as_u64).unwrap_or(0);
                return Observed::Binary(len as usize);
            }
            if let Some(text) = m.get("$text") {
                return Observed::Garbage(text.as_str().unwrap_or(""));
            }
            if m.contains_key("$invalid_utf8_text") {
                return Observed::Garbage("");
            }
        }
    }
    Observed::Event(frame)
}

/// True when the target (the server side) sent, among `entries`, a message the protocol
/// recognises as its own, well-formed or not.
pub fn target_spoke<'a>(
    protocol: &dyn Protocol,
    entries: impl IntoIterator<Item = &'a Entry>,
) -> bool {
    entries
        .into_iter()
        .any(|e| e.from == Direction::Server && protocol.recognises(&e.frame))
}

/// Feeds one transcript entry to a checker.
pub fn observe_entry(checker: &mut dyn Checker, entry: &Entry, out: &mut Vec<Violation>) {
    checker.observe(entry.from, entry.at_ms, observed_of(&entry.frame), out);
}

/// A rule the target broke, pinned to the transcript entry where the checker saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FrameViolation {
    /// The rule's id (borrowed from the catalogue; owned when read back from a saved report).
    pub rule: std::borrow::Cow<'static, str>,
    pub level: Level,
    pub message: String,
    /// Index of the entry in the case's transcript (0-based).
    pub frame: usize,
}

/// Every rule the target (the server side) broke anywhere in `transcript`, in wire order.
/// The same rule with the same message is kept once (at its first frame), at most
/// [`MAX_PER_RULE`] of one rule and [`MAX_CASE_VIOLATIONS`] in all.
pub fn target_violations(protocol: &dyn Protocol, transcript: &[Entry]) -> Vec<FrameViolation> {
    let mut checker = protocol.checker();
    let mut found: Vec<FrameViolation> = Vec::new();
    let mut scratch = Vec::new();
    for (frame, entry) in transcript.iter().enumerate() {
        observe_entry(&mut *checker, entry, &mut scratch);
        if entry.from != Direction::Server {
            scratch.clear();
            continue;
        }
        for v in scratch.drain(..) {
            let same_rule = found.iter().filter(|f| f.rule == v.rule);
            let seen = same_rule.clone().any(|f| f.message == v.message);
            if seen || same_rule.count() >= MAX_PER_RULE || found.len() >= MAX_CASE_VIOLATIONS {
                continue;
            }
            found.push(FrameViolation {
                rule: v.rule.into(),
                level: rules::find(protocol.rules(), v.rule).map_or(Level::Info, |r| r.level),
                message: v.message,
                frame,
            });
        }
    }
    found
}
