//! Transcripts: every frame sent and received during a case, with direction and time.

use crate::transport::{Frame, Received};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
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

/// One transcript line: `{"from": "client", "at_ms": 0, "frame": {...}}`.
///
/// `frame` is the event itself when the frame was JSON text. Anything else is a one-key
/// object whose key starts with `$`: `$text` (non-JSON text), `$binary` (Base64 bytes with
/// `len`), `$close`, `$connect`, `$rejected`, `$error` (a transport failure), `$notice` (a
/// framing anomaly that did not end the connection), `$stderr` (a line the target wrote there).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub from: Direction,
    pub at_ms: u64,
    pub frame: Value,
}

/// Frames larger than this are stored truncated, so a flood cannot grow a report without bound.
const MAX_STORED_FRAME: usize = 64 * 1024;
/// Entries beyond this are counted but not stored (a replay-window case needs about 2,400).
const MAX_ENTRIES: usize = 5_000;
/// Stored frame bytes beyond this are counted but not stored.
const MAX_STORED_BYTES: usize = 1024 * 1024;

/// A case's transcript, timed from the case's start.
#[derive(Debug)]
pub struct Transcript {
    started: Instant,
    entries: Vec<Entry>,
    stored_bytes: usize,
    dropped: usize,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    pub fn new() -> Self {
        Transcript {
            started: Instant::now(),
            entries: Vec::new(),
            stored_bytes: 0,
            dropped: 0,
        }
    }

    /// Milliseconds since the case started.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub fn push(&mut self, from: Direction, frame: Value) {
        self.push_at(from, Instant::now(), frame, 0);
    }

    /// Records something observed at `at` (a transport's receive time); `size` is the frame's
    /// length on the wire, for the byte budget.
    pub fn push_at(&mut self, from: Direction, at: Instant, frame: Value, size: usize) {
        let size = size.min(MAX_STORED_FRAME);
        if self.entries.len() >= MAX_ENTRIES || self.stored_bytes + size > MAX_STORED_BYTES {
            self.dropped += 1;
            return;
        }
        self.stored_bytes += size;
        let at_ms = at.saturating_duration_since(self.started).as_millis() as u64;
        self.entries.push(Entry { from, at_ms, frame });
    }

    /// Milliseconds from the case's start to `at`.
    pub fn ms_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_millis() as u64
    }

    pub fn record_sent(&mut self, frame: &Frame) {
        self.push_at(
            Direction::Client,
            Instant::now(),
            frame_to_value(frame),
            frame.len(),
        );
    }

    pub fn record_received(&mut self, received: &Received, at: Instant) {
        let size = match received {
            Received::Frame(f) => f.len(),
            _ => 0,
        };
        self.push_at(Direction::Server, at, received_to_value(received), size);
    }

    /// Records a text frame whose JSON the caller has already parsed (`event`).
    pub fn record_received_parsed(&mut self, text: &str, event: &Value, at: Instant) {
        let value = if text.len() <= MAX_STORED_FRAME {
            event.clone()
        } else {
            text_to_value(text)
        };
        self.push_at(Direction::Server, at, value, text.len());
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How many entries were not stored because the transcript was full.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The entries, ending with a `$truncated` note when some were not stored.
    pub fn into_entries(mut self) -> Vec<Entry> {
        if self.dropped > 0 {
            let at_ms = self.elapsed_ms();
            self.entries.push(Entry {
                from: Direction::Client,
                at_ms,
                frame: json!({ "$truncated": self.dropped }),
            });
        }
        self.entries
    }
}

/// The transcript form of a frame: its JSON when it is JSON text, else a `$`-tagged object.
pub fn frame_to_value(frame: &Frame) -> Value {
    match frame {
        Frame::Text(text) => text_to_value(text),
        Frame::Binary(bytes) => binary_value(bytes),
        Frame::RawText(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => text_to_value(text),
            Err(_) => json!({ "$invalid_utf8_text": encode_truncated(bytes), "len": bytes.len() }),
        },
    }
}

fn received_to_value(received: &Received) -> Value {
    match received {
        Received::Frame(frame) => frame_to_value(frame),
        Received::Closed { code, reason } => {
            json!({ "$close": { "code": code, "reason": reason } })
        }
        Received::Failed(err) => json!({ "$error": err.to_string() }),
        Received::Notice(what) => json!({ "$notice": what }),
        Received::Stderr(line) => json!({ "$stderr": line }),
    }
}

fn text_to_value(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if text.len() <= MAX_STORED_FRAME => v,
        Ok(_) | Err(_) => {
            let mut shown: String = text.chars().take(MAX_STORED_FRAME).collect();
            if shown.len() < text.len() {
                shown.push_str("…(truncated)");
            }
            json!({ "$text": shown, "len": text.len() })
        }
    }
}

fn binary_value(bytes: &[u8]) -> Value {
    json!({ "$binary": encode_truncated(bytes), "len": bytes.len() })
}

fn encode_truncated(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(MAX_STORED_FRAME)];
    base64::engine::general_purpose::STANDARD.encode(shown)
}
