//! Transcripts: everything sent, received and observed during a case, with direction and time.
//!
//! An entry is either an **event** (exactly the JSON a side sent, whatever keys it holds) or an
//! **observation** of ours (a connection, its end, stderr, text that is not JSON, binary, an
//! HTTP exchange, a stream reopened, where a capped transcript stopped). The two never share a
//! namespace: nothing a target sends can pose as an observation, in memory, in `check`'s input
//! or in a saved report.

pub mod words;

use crate::transport::{Body, Frame, HttpAnswer, Outgoing, Received, SseMeta, StreamFrom};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Which side of the conversation produced an entry.
///
/// A recorded transcript of a three-party protocol (UAE) may name its parties instead: the Web
/// UI is the client; the agent and the executor, the implementations being judged, are servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[serde(alias = "ui")]
    Client,
    #[serde(alias = "agent", alias = "executor")]
    Server,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Client => "client",
            Direction::Server => "server",
        })
    }
}

impl Direction {
    /// The other side of the conversation.
    pub fn other(self) -> Direction {
        match self {
            Direction::Client => Direction::Server,
            Direction::Server => Direction::Client,
        }
    }
}

/// What a transcript entry holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A JSON message exactly as the side sent it (a text frame, a line, an SSE event's data),
    /// with the SSE fields it came with. Shared: the run's steps read the same tree the
    /// transcript keeps, so a received event is neither copied nor freed twice.
    Event {
        event: Arc<Value>,
        sse: Option<SseMeta>,
    },
    /// Something wireprobe did or saw that is not a JSON message of a side.
    Observed(Observation),
}

impl Record {
    /// True for what a side put on the wire (an event, text, bytes, a POST or its answer), as
    /// opposed to what was only observed around it (a connection, its end, stderr).
    pub fn was_sent(&self) -> bool {
        match self {
            Record::Event { .. } => true,
            Record::Observed(o) => matches!(
                o,
                Observation::Text { .. }
                    | Observation::Binary { .. }
                    | Observation::InvalidUtf8 { .. }
                    | Observation::Post { .. }
                    | Observation::Http(_)
            ),
        }
    }
}

/// Something observed (or done by wireprobe's transport) rather than a JSON message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Observation {
    /// A connection was opened to this URL (or the process started).
    Connect { url: String },
    /// The connection ended: a close frame's code and reason, a process's exit status, or
    /// wireprobe closing it (`from` says which side).
    Close {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<u16>,
        #[serde(default)]
        reason: String,
    },
    /// The connection attempt was refused with this HTTP status.
    Rejected { status: u16 },
    /// The transport failed (an oversized frame, an I/O error, a refused connection).
    Error { message: String },
    /// A framing anomaly that did not end the connection (a blank line, an over-long line).
    Notice { message: String },
    /// A line the target wrote to stderr: kept for the record, never judged.
    Stderr { line: String },
    /// A line a client under test wrote to stdout (it speaks over the network, not there):
    /// kept for the record, never judged.
    Stdout { line: String },
    /// A text frame or line that is not JSON (a Socket.IO packet, garbage), cut at the
    /// storage cap; `len` is its length on the wire.
    Text {
        text: String,
        #[serde(default)]
        len: usize,
    },
    /// A binary frame: its first bytes in Base64, and its length.
    Binary { base64: String, len: usize },
    /// A text frame whose bytes are not UTF-8: its first bytes in Base64, and its length.
    InvalidUtf8 { base64: String, len: usize },
    /// An HTTP POST wireprobe made (SSE + HTTP), with the request headers it set besides the
    /// run's.
    Post {
        path: String,
        body: Body,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<(String, String)>,
    },
    /// The body of an answer that was a stream of its own ended: cleanly, or broken (`error`).
    AnswerEnded {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The target's answer to a POST.
    Http(HttpAnswer),
    /// wireprobe asked for the event stream to be reopened from here (`None`: dropped).
    StreamRequested { from: Option<StreamFrom> },
    /// The event stream was reopened: what follows is the new stream's.
    StreamOpened { from: StreamFrom },
    /// wireprobe's own measurement, never judged: a ping it sent to see how far the target is
    /// now (a `settled` wait the protocol cannot end by its structure asks, over a WebSocket)
    /// was answered after this many ms, behind everything the target sent before it.
    RoundTrip { ms: u64 },
    /// The transcript was full: this many entries were not stored, and nothing after is judged.
    Truncated { dropped: usize },
    /// A target that speaks first (Nuum's init) said nothing of the protocol within this
    /// many ms of the connection or the process starting; wireprobe went on without it.
    NoGreeting { waited_ms: u64 },
    /// A client under test was handed a token (`{token}`): where its connection presented
    /// it (`query`, `subprotocol`, `header`), or `None` when it did not.
    TokenPresented {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
}

/// One transcript line: `{"from", "at_ms", "frame"}` for an event (with `"sse"` when it came
/// with SSE fields), `{"from", "at_ms", "observed"}` for an observation. A line from before
/// observations were typed has only `frame`, and reads as an event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EntryWire", into = "EntryWire")]
pub struct Entry {
    pub from: Direction,
    pub at_ms: u64,
    pub record: Record,
}

impl Entry {
    /// The event, when this entry is one.
    pub fn event(&self) -> Option<&Value> {
        match &self.record {
            Record::Event { event, .. } => Some(event),
            Record::Observed(_) => None,
        }
    }

    /// The observation, when this entry is one.
    pub fn observation(&self) -> Option<&Observation> {
        match &self.record {
            Record::Observed(o) => Some(o),
            Record::Event { .. } => None,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct EntryWire {
    from: Direction,
    #[serde(default)]
    at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "event")]
    frame: Option<Arc<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sse: Option<SseMeta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed: Option<Observation>,
}

impl TryFrom<EntryWire> for Entry {
    type Error = String;
    fn try_from(w: EntryWire) -> Result<Entry, String> {
        let record = match (w.frame, w.observed) {
            (None, Some(o)) => Record::Observed(o),
            (Some(event), None) => Record::Event { event, sse: w.sse },
            (Some(_), Some(_)) => {
                return Err("a transcript line holds either `frame` or `observed`, not both".into())
            }
            (None, None) => return Err("a transcript line needs `frame` or `observed`".into()),
        };
        Ok(Entry {
            from: w.from,
            at_ms: w.at_ms,
            record,
        })
    }
}

impl From<Entry> for EntryWire {
    fn from(e: Entry) -> EntryWire {
        let (frame, sse, observed) = match e.record {
            Record::Event { event, sse } => (Some(event), sse, None),
            Record::Observed(o) => (None, None, Some(o)),
        };
        EntryWire {
            from: e.from,
            at_ms: e.at_ms,
            frame,
            sse,
            observed,
        }
    }
}

/// Frames larger than this are stored truncated, so a flood cannot grow a report without bound.
/// Twice HUMA's 65,536-character result limit: a result just over it is kept whole, and the
/// kept start of a longer one is itself over the limit, so the limit can be judged either way.
const MAX_STORED_FRAME: usize = 128 * 1024;
/// Entries beyond this are counted but not stored (a replay-window case needs about 2,400).
const MAX_ENTRIES: usize = 5_000;
/// Stored frame bytes beyond this are counted but not stored.
const MAX_STORED_BYTES: usize = 1024 * 1024;

/// What wireprobe sent, ready to record ([`Transcript::sent`]).
#[derive(Debug)]
pub struct Sent {
    record: Record,
    size: usize,
}

/// A case's transcript, timed from the case's start. What wireprobe sends is recorded as the
/// side it plays, what it receives and observes of the target as the side it judges.
#[derive(Debug)]
pub struct Transcript {
    /// The side the run judges (the target's).
    judged: Direction,
    started: Instant,
    entries: Vec<Entry>,
    stored_bytes: usize,
    dropped: usize,
    /// Keep an event too large to store whole as its [`condensed`] form (its long strings cut)
    /// rather than as cut text: a protocol whose rules never read long strings (AG-UI's ids and
    /// structure) is then still judged on it.
    condense: bool,
    /// Entries stored as their text by [`Transcript::push_text_at`], read into events only by
    /// [`Transcript::into_entries`].
    unread: Vec<usize>,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    /// A transcript of a run judging a server (wireprobe plays the client).
    pub fn new() -> Self {
        Self::judging(Direction::Server)
    }

    /// A transcript of a run judging the `judged` side.
    pub fn judging(judged: Direction) -> Self {
        Transcript {
            judged,
            started: Instant::now(),
            entries: Vec::new(),
            stored_bytes: 0,
            dropped: 0,
            condense: false,
            unread: Vec::new(),
        }
    }

    /// This transcript, keeping events too large to store whole in their condensed form.
    pub fn condensing(mut self, on: bool) -> Self {
        self.condense = on;
        self
    }

    /// How an event of `len` bytes is stored: whole (shared, not copied), condensed, or
    /// (`None`) as cut text.
    fn stored_event(&self, event: Arc<Value>, len: usize) -> Option<Arc<Value>> {
        if len <= MAX_STORED_FRAME {
            return Some(event);
        }
        self.condense
            .then(|| condensed(&event))
            .flatten()
            .map(Arc::new)
    }

    /// The side the run judges.
    pub fn judged(&self) -> Direction {
        self.judged
    }

    /// Records an observation of wireprobe's own side made now (a connect, a close).
    pub fn observe_ours(&mut self, observation: Observation) {
        self.observe(self.judged.other(), observation);
    }

    /// Records an observation of the target made now (a refusal, a silence).
    pub fn observe_target(&mut self, observation: Observation) {
        self.observe(self.judged, observation);
    }

    /// Milliseconds since the case started.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Records an observation made now.
    pub fn observe(&mut self, from: Direction, observation: Observation) {
        self.push_at(from, Instant::now(), Record::Observed(observation), 0);
    }

    /// Records something seen at `at` (a transport's receive time); `size` is its length on
    /// the wire, for the byte budget.
    pub fn push_at(&mut self, from: Direction, at: Instant, record: Record, size: usize) {
        let size = size.min(MAX_STORED_FRAME);
        if !self.has_room(size) {
            self.dropped += 1;
            return;
        }
        self.stored_bytes += size;
        let at_ms = at.saturating_duration_since(self.started).as_millis() as u64;
        self.entries.push(Entry {
            from,
            at_ms,
            record,
        });
    }

    /// Records a text message at `at` without reading its JSON: it is read into an event when
    /// the entries are taken, so a transcript that is let go (a passing proxied connection's)
    /// never pays for building the tree. Until then [`Transcript::entries`] shows it as text.
    pub fn push_text_at(&mut self, from: Direction, at: Instant, text: &str) {
        if text.len() > MAX_STORED_FRAME {
            // Stored cut, as text_record cuts it; reading it later would keep it whole.
            return self.push_at(from, at, text_record(text), text.len());
        }
        let at_entry = self.entries.len();
        let record = Record::Observed(Observation::Text {
            text: text.to_owned(),
            len: text.len(),
        });
        self.push_at(from, at, record, text.len());
        if self.entries.len() > at_entry {
            self.unread.push(at_entry);
        }
    }

    /// True when an entry of `size` bytes on the wire would be stored. Once one was not,
    /// none after it is: the stored entries stay a prefix of what happened. (An observation of
    /// no size, an HTTP answer's head say, stored past a dropped POST would be paired with an
    /// earlier input by whoever judges the transcript.)
    pub fn has_room(&self, size: usize) -> bool {
        let size = size.min(MAX_STORED_FRAME);
        self.dropped == 0
            && self.entries.len() < MAX_ENTRIES
            && self.stored_bytes + size <= MAX_STORED_BYTES
    }

    /// Milliseconds from the case's start to `at`.
    pub fn ms_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_millis() as u64
    }

    /// Records what wireprobe sent.
    pub fn record_sent(&mut self, out: &Outgoing) {
        self.record_sent_parsed(out, None)
    }

    /// Records what wireprobe sent, given the JSON a text frame of it is exactly the text of
    /// (`parsed`), so it need not be parsed back.
    pub fn record_sent_parsed(&mut self, out: &Outgoing, parsed: Option<Value>) {
        let sent = self.sent(out, parsed);
        self.record(sent);
    }

    /// What recording `out` as sent would store ([`Transcript::record_sent_parsed`]), to
    /// record later with [`Transcript::record`]: once the frame has gone, when what the
    /// target wrote before it reached the target is to be recorded first.
    pub fn sent(&self, out: &Outgoing, parsed: Option<Value>) -> Sent {
        let record = match out {
            Outgoing::Frame(Frame::Text(text)) if parsed.is_some() => {
                match parsed.and_then(|event| self.stored_event(Arc::new(event), text.len())) {
                    Some(event) => Record::Event { event, sse: None },
                    None => text_record(text),
                }
            }
            Outgoing::Frame(frame) => frame_record(frame),
            Outgoing::Post {
                path,
                body,
                headers,
            } => Record::Observed(Observation::Post {
                path: path.clone(),
                body: body.clone(),
                headers: headers.clone(),
            }),
            Outgoing::Stream(from) => {
                Record::Observed(Observation::StreamRequested { from: from.clone() })
            }
            Outgoing::StreamLines(lines) => Record::Observed(Observation::Notice {
                message: format!("wrote into the event stream: {lines:?}"),
            }),
        };
        Sent {
            record,
            size: out.len(),
        }
    }

    /// Records, now, what wireprobe sent.
    pub fn record(&mut self, sent: Sent) {
        self.push_at(self.judged.other(), Instant::now(), sent.record, sent.size);
    }

    /// Records what the target sent or the transport saw.
    pub fn record_received(&mut self, received: &Received, at: Instant) {
        let record = stored_record(received, self.condense);
        // This machine having no port to connect from is nothing the target did: judged as
        // the target's, it would read as the target ending the connection.
        let from = match received {
            Received::Failed(e) if e.is_local() => self.judged.other(),
            _ => self.judged,
        };
        self.push_at(from, at, record, received.len());
        // A client's POST was answered by wireprobe's transport: the answer is ours.
        if let Received::Posted {
            path,
            status: Some(status),
            answered_as,
            ..
        } = received
        {
            let answer = HttpAnswer {
                method: "POST".into(),
                path: path.clone(),
                status: *status,
                content_type: answered_as
                    .clone()
                    .unwrap_or_else(|| "application/json".into()),
                body: Body::Empty,
            };
            let ours = Record::Observed(Observation::Http(answer));
            self.push_at(self.judged.other(), at, ours, 0);
        }
    }

    /// Records a text frame, or an SSE event's data (`sse`: its fields), whose JSON the caller
    /// has already parsed (`event`, shared with the caller).
    pub fn record_received_parsed(
        &mut self,
        text: &str,
        event: &Arc<Value>,
        sse: Option<&SseMeta>,
        at: Instant,
    ) {
        let record = match self.stored_event(event.clone(), text.len()) {
            Some(event) => Record::Event {
                event,
                sse: sse.cloned(),
            },
            None => text_record(text),
        };
        self.push_at(self.judged, at, record, text.len());
    }

    /// Records a binary frame the protocol decoded to `event` (`len` bytes on the wire).
    pub fn record_received_decoded(&mut self, len: usize, event: &Arc<Value>, at: Instant) {
        let record = match self.stored_event(event.clone(), len) {
            Some(event) => Record::Event { event, sse: None },
            None => text_record(&event.to_string()),
        };
        self.push_at(self.judged, at, record, len);
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How many entries were not stored because the transcript was full.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The entries, ending with a `truncated` observation when some were not stored.
    pub fn into_entries(mut self) -> Vec<Entry> {
        for &at in &self.unread {
            if let Some(Record::Observed(Observation::Text { text, .. })) =
                self.entries.get(at).map(|e| &e.record)
            {
                self.entries[at].record = text_record(text);
            }
        }
        if self.dropped > 0 {
            let at_ms = self.elapsed_ms();
            self.entries.push(Entry {
                from: self.judged.other(),
                at_ms,
                record: Record::Observed(Observation::Truncated {
                    dropped: self.dropped,
                }),
            });
        }
        self.entries
    }
}

/// [`received_record`], but an SSE event too large to keep whole kept [`condensed`] when
/// `condense` says the protocol allows it.
pub fn stored_record(received: &Received, condense: bool) -> Record {
    if let Received::SseEvent { data, meta } = received {
        if condense && data.len() > MAX_STORED_FRAME {
            let event = serde_json::from_str::<Value>(data).ok();
            if let Some(event) = event.as_ref().and_then(condensed) {
                return Record::Event {
                    event: Arc::new(event),
                    sse: Some(meta.clone()),
                };
            }
        }
    }
    received_record(received)
}

/// The transcript form of what the target sent or the transport saw (not cut to the
/// transcript's caps, beyond a frame's).
pub fn received_record(received: &Received) -> Record {
    match received {
        Received::Frame(frame) => frame_record(frame),
        Received::SseEvent { data, meta } => match text_record(data) {
            Record::Event { event, .. } => Record::Event {
                event,
                sse: Some(meta.clone()),
            },
            other => other,
        },
        Received::Http(answer) => Record::Observed(Observation::Http(answer.clone())),
        Received::StreamOpened(from) | Received::Subscribed(from) => {
            Record::Observed(Observation::StreamOpened { from: from.clone() })
        }
        Received::Posted {
            path,
            body,
            headers,
            ..
        } => Record::Observed(Observation::Post {
            path: path.clone(),
            body: body.clone(),
            headers: headers.clone(),
        }),
        Received::AnswerEnded { path, error } => Record::Observed(Observation::AnswerEnded {
            path: path.clone(),
            error: error.clone(),
        }),
        Received::Closed { code, reason } => Record::Observed(Observation::Close {
            code: *code,
            reason: reason.clone(),
        }),
        Received::Failed(err) => Record::Observed(Observation::Error {
            message: err.to_string(),
        }),
        Received::Notice(what) => Record::Observed(Observation::Notice {
            message: what.clone(),
        }),
        Received::Stderr(line) => Record::Observed(Observation::Stderr { line: line.clone() }),
        Received::RoundTrip(took) => Record::Observed(Observation::RoundTrip {
            ms: took.as_millis() as u64,
        }),
    }
}

/// The transcript form of a frame: its JSON as an event when it is JSON text (and small
/// enough to keep whole), else an observation of its text or bytes.
pub fn frame_record(frame: &Frame) -> Record {
    match frame {
        Frame::Text(text) => text_record(text),
        Frame::Binary(bytes) => Record::Observed(Observation::Binary {
            base64: encode_truncated(bytes),
            len: bytes.len(),
        }),
        Frame::RawText(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => text_record(text),
            Err(_) => Record::Observed(Observation::InvalidUtf8 {
                base64: encode_truncated(bytes),
                len: bytes.len(),
            }),
        },
    }
}

/// What ends the stored text of a frame too long to keep whole.
pub const TRUNCATED_MARK: &str = "…(truncated)";

/// Longest string a condensed event keeps whole.
const CONDENSED_STRING: usize = 1024;

/// `event` with every string longer than [`CONDENSED_STRING`] bytes cut there and ended with
/// [`TRUNCATED_MARK`]; `None` when even that is too large to store.
pub fn condensed(event: &Value) -> Option<Value> {
    fn cut(v: &mut Value) {
        match v {
            Value::String(s) if s.len() > CONDENSED_STRING => {
                let end = (0..=CONDENSED_STRING)
                    .rev()
                    .find(|i| s.is_char_boundary(*i))
                    .unwrap_or(0);
                s.truncate(end);
                s.push_str(TRUNCATED_MARK);
            }
            Value::Array(items) => items.iter_mut().for_each(cut),
            Value::Object(m) => m.values_mut().for_each(cut),
            _ => {}
        }
    }
    let mut out = event.clone();
    cut(&mut out);
    (crate::transport::exchange::json_len(&out) <= MAX_STORED_FRAME).then_some(out)
}

pub fn text_record(text: &str) -> Record {
    match serde_json::from_str::<Value>(text) {
        Ok(event) if text.len() <= MAX_STORED_FRAME => Record::Event {
            event: Arc::new(event),
            sse: None,
        },
        // Text no longer in bytes than the cap is no longer in characters either: kept whole.
        Ok(_) | Err(_) if text.len() <= MAX_STORED_FRAME => Record::Observed(Observation::Text {
            text: text.to_owned(),
            len: text.len(),
        }),
        Ok(_) | Err(_) => {
            let mut shown: String = text.chars().take(MAX_STORED_FRAME).collect();
            if shown.len() < text.len() {
                shown.push_str(TRUNCATED_MARK);
            }
            Record::Observed(Observation::Text {
                text: shown,
                len: text.len(),
            })
        }
    }
}

fn encode_truncated(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(MAX_STORED_FRAME)];
    base64::engine::general_purpose::STANDARD.encode(shown)
}

#[cfg(test)]
mod tests;
