//! One proxied connection, sans-IO: every item either side sent, judged as it passes (a
//! checker over the whole conversation, so memory stays flat however long it runs), kept in a
//! bounded transcript, and at the end a case `proxy.N` of the report, its violations each
//! pinned to the side that broke them.

use crate::judge::{has_room, observed_of, FrameViolation, Judge};
use crate::protocol::{Decoded, Protocol, Session};
use crate::report::Transcripts;
use crate::results::CaseResult;
use crate::rules::{self, Binds, Level};
use crate::transcript::words;
use crate::transcript::{stored_record, Direction, Observation, Record, Transcript};
use crate::transport::{Frame, Received};
use crate::verdict::Verdict;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

/// A violation seen for the first time on this connection, for the live report on stderr
/// (once per rule per connection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub connection: usize,
    pub rule: &'static str,
    pub level: Level,
    /// The side whose behaviour broke it.
    pub side: Direction,
    /// What the item that showed it was (an event's type, an observation in words).
    pub kind: String,
    pub message: String,
}

/// One connection through the proxy.
pub struct ProxySession<'p> {
    protocol: &'p dyn Protocol,
    number: usize,
    peer: String,
    started: Instant,
    judge: Judge<'p>,
    /// Reads binary frames the protocol decodes to events (AG-UI's protobuf), as a run does.
    decoder: Box<dyn Session>,
    transcript: Transcript,
    condense: bool,
    violations: Vec<FrameViolation>,
    /// Rules already reported live on this connection.
    told: HashSet<&'static str>,
    /// Items judged, stored or not (the transcript keeps a bounded part).
    items: usize,
    /// Why the proxy could not carry the connection (the upstream unreachable), if so.
    error: Option<String>,
}

impl<'p> ProxySession<'p> {
    /// Connection `number` (1-based), from `peer`.
    pub fn new(protocol: &'p dyn Protocol, number: usize, peer: impl Into<String>) -> Self {
        let decoder = protocol.session(protocol.transport());
        let condense = decoder.condenses();
        ProxySession {
            decoder,
            protocol,
            number,
            peer: peer.into(),
            started: Instant::now(),
            judge: Judge::judging(protocol, Direction::Server),
            transcript: Transcript::judging(Direction::Server).condensing(condense),
            condense,
            violations: Vec::new(),
            told: HashSet::new(),
            items: 0,
            error: None,
        }
    }

    /// The client opened the connection asking for `url`.
    pub fn opened(&mut self, url: &str, at: Instant) {
        let record = Record::Observed(Observation::Connect {
            url: url.to_owned(),
        });
        self.take(Direction::Client, record, 0, at);
    }

    /// True when the proxy could not carry the connection (its case is an `error`).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Judges what `from` sent (or what was observed of it: a close, a status), then keeps it;
    /// the violations this connection shows for the first time, for the live report.
    pub fn pass(&mut self, from: Direction, received: &Received, at: Instant) -> Vec<Live> {
        match received {
            Received::Failed(e) if e.is_unreachable() => {
                self.error.get_or_insert_with(|| e.to_string());
            }
            // A checker that can judge a message's text as it is spares building its JSON
            // tree: the transcript keeps the text, read only if the case's transcript is kept.
            Received::Frame(Frame::Text(text)) => {
                if let Some(live) = self.take_raw(from, text, at) {
                    return live;
                }
            }
            _ => {}
        }
        let record = match received {
            Received::Frame(frame @ Frame::Binary(_)) => match self.decoder.decode(frame) {
                Decoded::Event(event) => Record::Event {
                    event: event.into(),
                    sse: None,
                },
                _ => stored_record(received, self.condense),
            },
            _ => stored_record(received, self.condense),
        };
        self.take(from, record, received.len(), at)
    }

    fn take(&mut self, from: Direction, record: Record, size: usize, at: Instant) -> Vec<Live> {
        let at_ms = self.transcript.ms_at(at);
        let mut out = Vec::new();
        self.judge
            .observe(from, at_ms, observed_of(&record), &mut out);
        let frame = self.transcript.entries().len();
        let live = self.found(from, record.was_sent(), out, frame, || words::kind(&record));
        self.transcript.push_at(from, at, record, size);
        self.items += 1;
        live
    }

    /// Judges a text message without parsing it, when the checker can, and keeps its text;
    /// `None`: it cannot, the message is to be taken as any other.
    fn take_raw(&mut self, from: Direction, text: &str, at: Instant) -> Option<Vec<Live>> {
        let at_ms = self.transcript.ms_at(at);
        let mut out = Vec::new();
        if !self.judge.observe_raw(from, at_ms, text, &mut out) {
            return None;
        }
        let frame = self.transcript.entries().len();
        let live = self.found(from, true, out, frame, || {
            words::kind(&crate::transcript::text_record(text))
        });
        self.transcript.push_text_at(from, at, text);
        self.items += 1;
        Some(live)
    }

    /// Keeps what one item showed broken (`out`, at transcript entry `frame`, an item `kind`
    /// names, asked only for a rule told live; `sent`: the item is what `from` put on the
    /// wire); the rules told for the first time on this connection, for the live report.
    fn found(
        &mut self,
        from: Direction,
        sent: bool,
        out: Vec<crate::rules::Violation>,
        frame: usize,
        kind: impl FnOnce() -> String,
    ) -> Vec<Live> {
        let mut kind = Some(kind);
        let mut named = String::new();
        let mut live = Vec::new();
        for v in out {
            let rule = rules::find(self.protocol.rules(), v.rule);
            let level = rule.map_or(Level::Info, |r| r.level);
            // What a side put on the wire broke its own rule. An observation (a close, a
            // stream's end) can show the other side's: a client's close shows a server's run
            // left open, so a rule binding one side is that side's. Binding is not read for
            // what was sent: UAE's agent rules bind the agent, a Web UI's server but an
            // executor's client.
            let side = match rule.map(|r| r.binds) {
                _ if sent => from,
                Some(Binds::Server) => Direction::Server,
                Some(Binds::Client) => Direction::Client,
                _ => from,
            };
            if self.told.insert(v.rule) {
                if let Some(kind) = kind.take() {
                    named = kind();
                }
                live.push(Live {
                    connection: self.number,
                    rule: v.rule,
                    level,
                    side,
                    kind: named.clone(),
                    message: v.message.clone(),
                });
            }
            if !has_room(&self.violations, &v) {
                continue;
            }
            self.violations.push(FrameViolation {
                rule: v.rule.into(),
                level,
                message: v.message,
                frame,
                side: Some(side),
            });
        }
        live
    }

    /// The connection over: a connection that passed and whose transcript is let go only as
    /// what its case is made from ([`Passed`]), any other as its case ([`ProxySession::case`]).
    pub fn finish(self, transcripts: Transcripts) -> Finished {
        let passed = self.violations.is_empty() && self.error.is_none();
        if passed && !transcripts.keeps(Verdict::Pass) {
            return Finished::Passed(Passed {
                number: self.number,
                peer: self.peer.into_boxed_str(),
                items: self.items,
                duration_ms: self.started.elapsed().as_millis() as u64,
            });
        }
        Finished::Case(Box::new(self.case(transcripts)))
    }

    /// The connection as a case of the report: `proxy.N`, failing on a must either side
    /// broke, warning on a should, with its transcript when `transcripts` keeps it.
    pub fn case(self, transcripts: Transcripts) -> CaseResult {
        let mut judged: BTreeMap<String, Verdict> = BTreeMap::new();
        for v in &self.violations {
            let verdict = Verdict::broken(v.level);
            let entry = judged.entry(v.rule.to_string()).or_insert(verdict);
            *entry = entry.worst(verdict);
        }
        let mut verdict = judged.values().copied().fold(Verdict::Pass, Verdict::worst);
        if self.error.is_some() {
            verdict = verdict.worst(Verdict::Error);
        }
        let level = self
            .violations
            .iter()
            .map(|v| v.level)
            .max()
            .unwrap_or(Level::Must);
        let sides = |side: Direction| {
            self.violations
                .iter()
                .filter(|v| v.side == Some(side))
                .count()
        };
        let message = match (&self.error, self.violations.len()) {
            (Some(why), _) => format!("the proxy could not carry the connection: {why}"),
            (None, 0) => String::new(),
            (None, _) => format!(
                "the server broke {} rule(s), the client {}",
                sides(Direction::Server),
                sides(Direction::Client)
            ),
        };
        let transcript = match transcripts.keeps(verdict) {
            true => self.transcript.into_entries(),
            false => Vec::new(),
        };
        CaseResult {
            id: case_id(self.number),
            title: case_title(self.number, &self.peer, self.items),
            rules: judged.keys().cloned().collect(),
            level,
            verdict,
            message,
            duration_ms: self.started.elapsed().as_millis() as u64,
            judged,
            violations: self.violations,
            transcript,
            steps: Vec::new(),
            stopped_at: None,
            exercised: Vec::new(),
        }
    }
}

/// A connection that passed, kept as what its case is made from (about 60 bytes instead of
/// the 350 of a case), so a proxy carrying connections for hours keeps a flat memory: every
/// connection is still a case of the report, made when the report is.
#[derive(Debug)]
pub struct Passed {
    number: usize,
    peer: Box<str>,
    items: usize,
    duration_ms: u64,
}

impl Passed {
    /// Its case: what [`ProxySession::case`] makes of a connection that passed.
    pub fn into_case(self) -> CaseResult {
        CaseResult {
            id: case_id(self.number),
            title: case_title(self.number, &self.peer, self.items),
            rules: Vec::new(),
            level: Level::Must,
            verdict: Verdict::Pass,
            message: String::new(),
            duration_ms: self.duration_ms,
            judged: BTreeMap::new(),
            violations: Vec::new(),
            transcript: Vec::new(),
            steps: Vec::new(),
            stopped_at: None,
            exercised: Vec::new(),
        }
    }
}

/// A connection over, as [`ProxySession::finish`] keeps it (the case boxed, so one that
/// passed takes only its own few bytes in a list of them).
#[derive(Debug)]
pub enum Finished {
    Case(Box<CaseResult>),
    Passed(Passed),
}

impl Finished {
    pub fn into_case(self) -> CaseResult {
        match self {
            Finished::Case(case) => *case,
            Finished::Passed(passed) => passed.into_case(),
        }
    }
}

fn case_id(number: usize) -> String {
    format!("proxy.{number}")
}

fn case_title(number: usize, peer: &str, items: usize) -> String {
    format!("connection {number} from {peer} ({items} items)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Received {
        Received::Frame(Frame::Text(s.to_owned()))
    }

    #[test]
    fn both_sides_are_judged_and_each_rule_is_told_once_per_connection() {
        let haip = crate::protocol::get("haip").expect("haip");
        let mut s = ProxySession::new(haip, 1, "127.0.0.1:5000");
        let now = Instant::now();
        let mut told = Vec::new();
        // Neither side's first message is JSON: each breaks the envelope rule, once told.
        told.extend(s.pass(Direction::Client, &text("not json"), now));
        told.extend(s.pass(Direction::Server, &text("nor this"), now));
        told.extend(s.pass(Direction::Server, &text("again"), now));
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].side, Direction::Client);
        let case = s.case(Transcripts::All);
        assert_eq!(case.id, "proxy.1");
        assert_eq!(case.verdict, Verdict::Fail);
        let sides: Vec<_> = case.violations.iter().map(|v| v.side).collect();
        assert!(
            sides.contains(&Some(Direction::Client)) && sides.contains(&Some(Direction::Server))
        );
        assert_eq!(case.transcript.len(), 3);
    }

    #[test]
    fn a_clean_connection_passes() {
        let agui = crate::protocol::get("agui").expect("agui");
        let mut s = ProxySession::new(agui, 2, "peer");
        let now = Instant::now();
        let post = Received::Posted {
            path: String::new(),
            body: crate::transport::Body::Json(
                serde_json::json!({"threadId": "t", "runId": "r", "protocolVersion": "1.1", "messages": []}),
            ),
            status: None,
            answered_as: None,
            headers: Vec::new(),
        };
        assert!(s.pass(Direction::Client, &post, now).is_empty());
        assert_eq!(s.case(Transcripts::All).verdict, Verdict::Pass);
    }

    /// A passing connection whose transcript is let go is kept small, and made into the same
    /// case as one kept whole (its duration aside, which is the time it ended).
    #[test]
    fn a_passing_connection_kept_small_is_the_same_case() {
        let haip = crate::protocol::get("haip").expect("haip");
        let open = || {
            let mut s = ProxySession::new(haip, 4, "127.0.0.1:6000");
            s.opened("ws://up/", Instant::now());
            s
        };
        let Finished::Passed(small) = open().finish(Transcripts::Failing) else {
            panic!("a passing connection is kept small");
        };
        let mut small = small.into_case();
        let mut whole = open().case(Transcripts::Failing);
        small.duration_ms = 0;
        whole.duration_ms = 0;
        assert_eq!(
            serde_json::to_value(&small).expect("json"),
            serde_json::to_value(&whole).expect("json")
        );
        assert!(matches!(open().finish(Transcripts::All), Finished::Case(_)));
    }
    #[test]
    fn messages_past_a_full_transcript_are_still_judged() {
        let haip = crate::protocol::get("haip").expect("haip");
        let mut s = ProxySession::new(haip, 3, "peer");
        let now = Instant::now();
        let envelope = |seq: usize, ty: &str, payload: &str| {
            text(&format!(
                r#"{{"id":"m-{seq}","session":"s","seq":"{seq}","ts":"1700000000000","channel":"SYSTEM","type":"{ty}","payload":{payload}}}"#
            ))
        };
        let hai =
            r#"{"haip_version":"1.1.2","accept_major":[1],"accept_events":["HAI","PING","PONG"]}"#;
        s.pass(Direction::Client, &envelope(1, "HAI", hai), now);
        s.pass(Direction::Server, &envelope(1, "HAI", hai), now);
        let mut seq = 1;
        while s.transcript.has_room(0) {
            seq += 1;
            s.pass(Direction::Client, &envelope(seq, "PING", "{}"), now);
        }
        // Past the cap, a sequence that skips is still seen.
        let told = s.pass(Direction::Client, &envelope(seq + 5, "PING", "{}"), now);
        assert!(told.iter().any(|l| l.rule == "HAIP-SEQ-001"), "{told:?}");
        let case = s.case(Transcripts::All);
        // The texts kept unread are events in the case's transcript.
        assert!(
            case.transcript[0].event().is_some(),
            "{:?}",
            case.transcript[0]
        );
        assert!(
            case.rules.contains(&"HAIP-SEQ-001".to_owned()),
            "{:?}",
            case.rules
        );
        assert!(
            case.title.contains(&format!("({} items)", seq + 2)),
            "{}",
            case.title
        );
    }
}
