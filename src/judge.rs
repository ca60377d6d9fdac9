//! Judging a transcript: every frame through the protocol's whole checker (validator plus
//! lifecycle). One judge serves `check` (a recorded transcript, streamed), `run` (each case's
//! transcript, whatever rules the case was written for) and `fuzz` (each generated run).

use crate::protocol::{Checker, Observed, Protocol};
use crate::rules::{self, Level, Violation};
use crate::transcript::{Direction, Entry, Observation, Record};
use serde::Serialize;

/// Most violations one case keeps (after merging repeats): a flood of the same broken rule
/// helps nobody, and a report must stay bounded.
pub const MAX_CASE_VIOLATIONS: usize = 50;

/// Most violations of one rule one case keeps.
pub const MAX_PER_RULE: usize = 5;

/// What a transcript record is to a checker. A `truncated` observation marks where a capped
/// transcript stopped storing: nothing after it is judged, as after the end of a connection.
pub fn observed_of(record: &Record) -> Observed<'_> {
    let o = match record {
        Record::Event { event, sse } => return Observed::Event(event, sse.as_ref()),
        Record::Observed(o) => o,
    };
    match o {
        Observation::Connect { url } => Observed::Connect(url),
        Observation::Close { code, .. } => Observed::Closed { code: *code },
        Observation::Rejected { .. }
        | Observation::Error { .. }
        | Observation::Truncated { .. } => Observed::Closed { code: None },
        Observation::Notice { message } => Observed::Notice(message),
        Observation::Stderr { .. } | Observation::StreamRequested { .. } => Observed::Aside,
        Observation::Text { text, .. } => Observed::Garbage(text),
        Observation::Binary { len, .. } => Observed::Binary(*len),
        Observation::InvalidUtf8 { .. } => Observed::Garbage(""),
        Observation::Post { path, body } => Observed::Post { path, body },
        Observation::Http(answer) => Observed::Http(answer),
        Observation::StreamOpened { from } => Observed::StreamOpened(from),
    }
}

/// True when the target (the server side) sent, among `entries`, a message the protocol
/// recognises as its own, well-formed or not.
pub fn target_spoke<'a>(
    protocol: &dyn Protocol,
    entries: impl IntoIterator<Item = &'a Entry>,
) -> bool {
    entries
        .into_iter()
        .any(|e| e.from == Direction::Server && protocol.recognises(observed_of(&e.record)))
}

/// Feeds one transcript entry to a checker.
pub fn observe_entry(checker: &mut dyn Checker, entry: &Entry, out: &mut Vec<Violation>) {
    checker.observe(entry.from, entry.at_ms, observed_of(&entry.record), out);
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
