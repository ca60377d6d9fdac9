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
        Record::Event { event, sse } => return Observed::Event(event.into(), sse.as_ref()),
        Record::Observed(o) => o,
    };
    match o {
        Observation::Connect { url } => Observed::Connect(url),
        Observation::Close { code, .. } => Observed::Closed { code: *code },
        Observation::Rejected { .. }
        | Observation::Error { .. }
        | Observation::Truncated { .. } => Observed::Closed { code: None },
        Observation::Notice { message } => Observed::Notice(message),
        Observation::StreamRequested { from: None } => Observed::StreamDropped,
        Observation::Stderr { .. }
        | Observation::Stdout { .. }
        | Observation::RoundTrip { .. }
        | Observation::StreamRequested { .. } => Observed::Aside,
        Observation::Text { text, .. } => Observed::Garbage(text),
        Observation::Binary { len, .. } => Observed::Binary(*len),
        Observation::InvalidUtf8 { .. } => Observed::Garbage(""),
        Observation::Post {
            path,
            body,
            headers,
        } => Observed::Post {
            path,
            body,
            headers,
        },
        Observation::AnswerEnded { error, .. } => Observed::AnswerEnded {
            error: error.as_deref(),
        },
        Observation::Http(answer) => Observed::Http(answer),
        Observation::StreamOpened { from } => Observed::StreamOpened(from),
        Observation::TokenPresented { at } => Observed::TokenPresented(at.as_deref()),
        Observation::NoGreeting { waited_ms } => Observed::NoGreeting {
            waited_ms: *waited_ms,
        },
    }
}

/// True when the target (the `judged` side) sent, among `entries`, a message the protocol
/// recognises as its own, well-formed or not.
pub fn target_spoke<'a>(
    protocol: &dyn Protocol,
    entries: impl IntoIterator<Item = &'a Entry>,
    judged: Direction,
) -> bool {
    entries
        .into_iter()
        .any(|e| e.from == judged && protocol.recognises(observed_of(&e.record)))
}

/// One checker over one conversation, and what the target is answering.
///
/// What a target answers to input wireprobe sent broken on purpose is not held to the rules
/// that tie an answer to a valid input. Each broken input may have one answer excused: the
/// first item after it that may be an answer (an error, a refusal, an HTTP status) and breaks
/// one of [`Descriptor::broken_input_excuses`](crate::protocol::Descriptor::broken_input_excuses) loses those violations, and only those. A
/// refusal of a call without a trace id cannot name the call. Answers come in the order
/// inputs went, after inputs sent later (a case may send several at once), so a valid input
/// in between does not end the excuse; an answer with nothing to excuse leaves it for the
/// next. Checkers take nothing from broken input that changes what they expect of the target
/// ([`Checker::input_broken`]).
pub struct Judge<'p> {
    protocol: &'p dyn Protocol,
    checker: Box<dyn Checker>,
    /// The target's side; the other is wireprobe's, whose items are the input.
    judged: Direction,
    /// Broken inputs on this connection whose answer has not been excused yet.
    unanswered_broken: usize,
    /// Whether it keeps the rules exercised ([`Judge::recording_exercised`]): `check` and the
    /// proxy, judging millions of frames, have no use for them.
    recording: bool,
    /// The rules of the judged side exercised so far, each once, in the order first seen.
    exercised: Vec<&'static str>,
    /// The checker's hits on the observation being judged.
    hits: Vec<&'static str>,
}

impl<'p> Judge<'p> {
    /// A judge of a server's answers (wireprobe plays the client).
    pub fn new(protocol: &'p dyn Protocol) -> Self {
        Self::judging(protocol, Direction::Server)
    }

    /// A judge of the `judged` side's answers to the other side's input.
    pub fn judging(protocol: &'p dyn Protocol, judged: Direction) -> Self {
        Judge {
            protocol,
            checker: protocol.checker(),
            judged,
            unanswered_broken: 0,
            recording: false,
            exercised: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// The judge, keeping the rules each item exercised ([`Judge::exercised`]).
    pub fn recording_exercised(mut self) -> Self {
        self.recording = true;
        self
    }

    /// Judges one item; `out` gets the violations it shows, of either side.
    pub fn observe(
        &mut self,
        from: Direction,
        at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        let start = out.len();
        self.checker.observe(from, at_ms, item, out);
        let excused = self.answer_or_input(from, item, start, out);
        // What the judged side is blamed for is what it sent (see `judge_transcript`).
        let found = if from == self.judged {
            &out[start..]
        } else {
            &[]
        };
        self.note_exercised(from, excused, found);
    }

    /// After the checker judged `item`: counts it as input, or excuses the violations of an
    /// answer to broken input (then true).
    fn answer_or_input(
        &mut self,
        from: Direction,
        item: Observed<'_>,
        start: usize,
        out: &mut Vec<Violation>,
    ) -> bool {
        if let Observed::Connect(_) = item {
            // A new connection, whichever side opened it: nothing from before it is answered
            // on it.
            self.unanswered_broken = 0;
            return false;
        }
        if from != self.judged {
            match item {
                Observed::Event(..)
                | Observed::Garbage(_)
                | Observed::Binary(_)
                | Observed::Post { .. } => self.note_input(start, out),
                _ => {}
            }
            return false;
        }
        if self.unanswered_broken > 0 && self.protocol.may_answer_input(item) {
            let excuses = self.protocol.broken_input_excuses();
            if out[start..].iter().any(|v| excuses.contains(&v.rule)) {
                self.unanswered_broken -= 1;
                let kept: Vec<Violation> = out
                    .drain(start..)
                    .filter(|v| !excuses.contains(&v.rule))
                    .collect();
                out.extend(kept);
                return true;
            }
        }
        false
    }

    /// Adds to the rules exercised what the observation just judged exercised: the checker's
    /// hits and the rules `found` broken. A rule counts for the judged side when it binds that
    /// side, or binds either and the judged side sent the item; the rules an answer to broken
    /// input is `excused` from were not judged on it.
    fn note_exercised(&mut self, from: Direction, excused: bool, found: &[Violation]) {
        // Drained either way: a checker's hits are kept only until asked for.
        self.checker.exercised(&mut self.hits);
        if !self.recording {
            self.hits.clear();
            return;
        }
        self.hits.extend(found.iter().map(|v| v.rule));
        let catalogue = self.protocol.rules();
        let excuses = self.protocol.broken_input_excuses();
        let judges_server = self.judged == Direction::Server;
        for rule in self.hits.drain(..) {
            let counts = rules::find(catalogue, rule).is_some_and(|r| match r.binds {
                rules::Binds::Either => from == self.judged,
                binds => binds.applies(judges_server),
            });
            if counts && !(excused && excuses.contains(&rule)) && !self.exercised.contains(&rule) {
                self.exercised.push(rule);
            }
        }
    }

    /// The rules of the judged side the observations so far exercised: each checked on an
    /// item it applies to (see [`crate::rules::Exercised`]), each once; none unless the judge
    /// is [`Judge::recording_exercised`].
    pub fn exercised(&self) -> &[&'static str] {
        &self.exercised
    }

    /// The rules the checker could not judge on what it was shown (see
    /// [`Checker::unjudged`]).
    pub fn unjudged(&self) -> Vec<crate::rules::Unjudged> {
        self.checker.unjudged()
    }

    /// Judges one transcript entry.
    pub fn observe_entry(&mut self, entry: &Entry, out: &mut Vec<Violation>) {
        self.observe(entry.from, entry.at_ms, observed_of(&entry.record), out);
    }

    /// Judges one event given as raw JSON text when the checker can without parsing it
    /// ([`Checker::observe_raw`]); `false`: parse it and call [`Judge::observe`].
    pub fn observe_raw(
        &mut self,
        from: Direction,
        at_ms: u64,
        raw: &str,
        out: &mut Vec<Violation>,
    ) -> bool {
        // Whether an event may answer broken input depends on what it is: parse it.
        if self.unanswered_broken > 0 && from == self.judged {
            return false;
        }
        let start = out.len();
        if !self.checker.observe_raw(from, at_ms, raw, out) {
            return false;
        }
        if from != self.judged {
            self.note_input(start, out);
            self.note_exercised(from, false, &[]);
        } else {
            self.note_exercised(from, false, &out[start..]);
        }
        true
    }

    /// Counts wireprobe's item just judged when it was broken: a must of the protocol's
    /// broke (in `out[start..]`), or the checker says so.
    fn note_input(&mut self, start: usize, out: &[Violation]) {
        // Checkers say what they found broken in the client's items (`input_broken`); when
        // wireprobe plays the server, only the must-level violations of its items count.
        let checker_says = self.judged == Direction::Server && self.checker.input_broken();
        let broken = checker_says
            || out[start..]
                .iter()
                .any(|v| rules::is_must(self.protocol.rules(), v.rule));
        if broken {
            self.unanswered_broken = self.unanswered_broken.saturating_add(1);
        }
    }
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
    /// The side that broke it, when a report judges both (`proxy`); a case judges one side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Direction>,
}

/// True when `v` is worth keeping beside what a case `found` already: not the same rule
/// with the same message again, fewer than [`MAX_PER_RULE`] of its rule and
/// [`MAX_CASE_VIOLATIONS`] in all.
pub fn has_room(found: &[FrameViolation], v: &Violation) -> bool {
    let same_rule = found.iter().filter(|f| f.rule == v.rule);
    let seen = same_rule.clone().any(|f| f.message == v.message);
    !seen && same_rule.count() < MAX_PER_RULE && found.len() < MAX_CASE_VIOLATIONS
}

/// Every rule the target (the `judged` side) broke anywhere in `transcript`, in wire order.
/// The same rule with the same message is kept once (at its first frame), at most
/// [`MAX_PER_RULE`] of one rule and [`MAX_CASE_VIOLATIONS`] in all.
pub fn target_violations(
    protocol: &dyn Protocol,
    transcript: &[Entry],
    judged: Direction,
) -> Vec<FrameViolation> {
    judged_by(
        Judge::judging(protocol, judged),
        protocol,
        transcript,
        judged,
    )
    .0
}

/// [`target_violations`], and the rules of the judged side the transcript exercised
/// ([`Judge::exercised`]).
pub fn judge_transcript(
    protocol: &dyn Protocol,
    transcript: &[Entry],
    judged: Direction,
) -> (Vec<FrameViolation>, Vec<&'static str>) {
    let judge = Judge::judging(protocol, judged).recording_exercised();
    judged_by(judge, protocol, transcript, judged)
}

/// What `judge` finds of the `judged` side in `transcript` ([`target_violations`]), and the
/// rules it exercised if it records them.
fn judged_by(
    mut judge: Judge<'_>,
    protocol: &dyn Protocol,
    transcript: &[Entry],
    judged: Direction,
) -> (Vec<FrameViolation>, Vec<&'static str>) {
    let mut found: Vec<FrameViolation> = Vec::new();
    let mut scratch = Vec::new();
    for (frame, entry) in transcript.iter().enumerate() {
        judge.observe_entry(entry, &mut scratch);
        if entry.from != judged {
            scratch.clear();
            continue;
        }
        for v in scratch.drain(..) {
            if !has_room(&found, &v) {
                continue;
            }
            found.push(FrameViolation {
                rule: v.rule.into(),
                level: rules::find(protocol.rules(), v.rule).map_or(Level::Info, |r| r.level),
                message: v.message,
                frame,
                side: None,
            });
        }
    }
    (found, judge.exercised)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Record;
    use serde_json::{json, Value};

    const SESSION: &str = "cec25548-5672-4190-968d-b5c4f206e96c";

    /// A HAIP message of `from`'s, numbered `seq`.
    fn haip(from: Direction, seq: u64, ty: &str, payload: Value) -> Entry {
        let channel = match from {
            Direction::Client => "USER",
            Direction::Server => "AGENT",
        };
        let event = json!({
            "id": uuid::Uuid::new_v4().to_string(), "session": SESSION,
            "seq": seq.to_string(), "ts": "1700000000000", "channel": channel,
            "type": ty, "payload": payload,
        });
        Entry {
            from,
            at_ms: seq,
            record: Record::Event {
                event: event.into(),
                sse: None,
            },
        }
    }

    fn hai() -> Value {
        json!({"haip_version": "1.1.2", "accept_major": [1],
               "accept_events": crate::protocol::haip::model::EVENT_TYPES})
    }

    /// A rule counts as exercised only where its check ran on an item it applies to, and for
    /// the side judged: PINGs and PONGs flow, so the PONG's nonce is judged, but no text
    /// stream ever came from the server (the client's own stream exercises nothing of the
    /// server's), and a rule binding the client never counts for a server.
    #[test]
    fn a_rule_counts_as_exercised_only_where_it_applies_and_for_the_side_judged() {
        use crate::rules::ids::{
            HAIP_ENV_001, HAIP_HS_001, HAIP_PING_002, HAIP_SEQ_001, HAIP_SEQ_010, HAIP_TEXT_001,
        };
        let haip_protocol = crate::protocol::get("haip").expect("haip");
        let (c, s) = (Direction::Client, Direction::Server);
        let message = uuid::Uuid::new_v4().to_string();
        let transcript = vec![
            haip(c, 1, "HAI", hai()),
            haip(s, 1, "HAI", hai()),
            haip(c, 2, "PING", json!({"nonce": "a"})),
            haip(s, 2, "PONG", json!({"nonce": "a"})),
            haip(
                c,
                3,
                "TEXT_MESSAGE_START",
                json!({"message_id": message, "author": "user", "text": ""}),
            ),
            haip(c, 4, "TEXT_MESSAGE_END", json!({"message_id": message})),
        ];
        let (violations, exercised) = judge_transcript(haip_protocol, &transcript, s);
        assert_eq!(violations, Vec::new());
        crate::rules::assert_exercised(
            &exercised,
            &[HAIP_HS_001, HAIP_SEQ_001, HAIP_ENV_001, HAIP_PING_002],
            &[HAIP_TEXT_001, HAIP_SEQ_010],
        );
        // Judged as a client, its text stream exercises HAIP-TEXT-001.
        let (_, as_client) = judge_transcript(haip_protocol, &transcript, c);
        assert!(as_client.contains(&HAIP_TEXT_001), "{as_client:?}");
    }
}
