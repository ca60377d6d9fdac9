//! The HAIP transcript checker: schema validation of every message plus the lifecycle state
//! machine (handshake, sequencing, runs, text streams, tool calls, flow control, media framing).

use super::model::{self, KNOWN_ERROR_CODES};
use super::schema::schema;
use crate::protocol::{Checker, Observed};
use crate::rules::Violation;
use crate::transcript::Direction;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Most skipped seqs remembered per side (a jump wider than this is not tracked).
const MAX_TRACKED_GAP: u64 = 4096;

/// How long after a PAUSE_CHANNEL an in-flight message from the peer is still forgiven, when the
/// peer's `ack` does not prove it had seen the pause.
const PAUSE_GRACE_MS: u64 = 250;

fn side(d: Direction) -> usize {
    match d {
        Direction::Client => 0,
        Direction::Server => 1,
    }
}

fn other(d: Direction) -> Direction {
    match d {
        Direction::Client => Direction::Server,
        Direction::Server => Direction::Client,
    }
}

/// What one side announced in its HAI.
#[derive(Debug, Default)]
struct Announced {
    accept_events: Option<HashSet<String>>,
    binary_frames: bool,
    credit_messages: Option<u64>,
    credit_bytes: Option<u64>,
}

/// Credit one side still has on one channel (signed: a violation drives it below zero).
#[derive(Debug, Clone, Copy)]
struct Credit {
    messages: Option<i64>,
    bytes: Option<i64>,
}

/// State about the messages one side sends.
#[derive(Debug, Default)]
struct Sender {
    /// Messages sent on the current connection (for HAI-first).
    sent_on_connection: usize,
    /// Highest seq sent in this session.
    max_seq: Option<u64>,
    /// Seqs a jump skipped: a message arriving later with one of them fills the gap and is
    /// new, not a resend (bounded by [`MAX_TRACKED_GAP`]).
    missing: BTreeSet<u64>,
    last_ack: Option<u64>,
    announced: Option<Announced>,
    credit: HashMap<String, Credit>,
    /// Channels the peer paused: channel -> (seq of the PAUSE, time it was seen).
    paused: HashMap<String, (u64, u64)>,
    /// Nonces of the peer's PINGs this side has not answered yet.
    pings_to_answer: Vec<Option<String>>,
    /// Open text streams by message_id.
    open_texts: HashSet<String>,
    /// After an envelope with bin_len: the binary frame length owed.
    owed_binary: Option<u64>,
}

/// Run and tool state shared by both sides of a session.
#[derive(Debug, Default)]
struct Shared {
    runs_open: HashSet<String>,
    runs_seen: HashSet<String>,
    /// call_id -> (caller, done)
    calls: HashMap<String, (Direction, bool)>,
}

/// The HAIP [`Checker`].
#[derive(Debug, Default)]
pub struct HaipChecker {
    senders: [Sender; 2],
    shared: Shared,
    /// The client's latest HAI asked to resume: the server may continue its old numbering.
    resuming: bool,
    /// Time of the current observation, in ms (from the transcript).
    now_ms: u64,
}

impl HaipChecker {
    pub fn new() -> Self {
        Self::default()
    }

    fn on_connect(&mut self) {
        for s in &mut self.senders {
            s.sent_on_connection = 0;
            s.owed_binary = None;
        }
    }

    /// A client HAI without `last_rx_seq` starts a new session: numbering restarts.
    fn new_session(&mut self) {
        for s in &mut self.senders {
            let sent = s.sent_on_connection;
            *s = Sender {
                sent_on_connection: sent,
                ..Sender::default()
            };
        }
        self.shared = Shared::default();
    }

    fn on_event(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        schema().check(event, out);
        let Some(ty) = model::event_type(event) else {
            return;
        };
        let me = side(from);
        let peer = side(other(from));

        if let Some(owed) = self.senders[me].owed_binary.take() {
            out.push(Violation::new(
                "HAIP-MEDIA-001",
                format!("an envelope announced bin_len {owed} but a {ty} event followed instead of a binary frame"),
            ));
        }

        // Handshake: HAI first on every connection.
        let first = self.senders[me].sent_on_connection == 0;
        self.senders[me].sent_on_connection += 1;
        if first && ty != "HAI" && !(from == Direction::Server && ty == "ERROR") {
            out.push(Violation::new(
                "HAIP-HS-001",
                format!("the first message on the connection is {ty}, not HAI"),
            ));
        }
        if ty == "HAI" && from == Direction::Client {
            self.resuming = event.pointer("/payload/last_rx_seq").is_some();
            if !self.resuming {
                self.new_session();
                self.senders[me].sent_on_connection = 1;
            }
        }
        if ty == "HAI" {
            self.on_hai(from, event, out);
        }

        // Sequencing. A message at or below the highest seq already sent is a resend: it is
        // exempt from the lifecycle checks, which saw it the first time.
        let seq = event.get("seq").and_then(model::parse_seq);
        if let Some(seq) = seq {
            let sender = &mut self.senders[me];
            match sender.max_seq {
                None if seq != 1 && from == Direction::Server && self.resuming => {
                    // A server answering a resume continues numbering we never saw; only a
                    // fresh session must start at 1, which the client's HAI tells us.
                    sender.max_seq = Some(seq);
                }
                None if seq != 1 => out.push(Violation::new(
                    "HAIP-SEQ-001",
                    format!("the session's first seq is \"{seq}\", not \"1\""),
                )),
                Some(max) if seq > max + 1 => {
                    out.push(Violation::new(
                        "HAIP-SEQ-001",
                        format!("seq jumped from \"{max}\" to \"{seq}\""),
                    ));
                    if seq - max <= MAX_TRACKED_GAP {
                        sender.missing.extend(max + 1..seq);
                    }
                    while sender.missing.len() as u64 > MAX_TRACKED_GAP {
                        sender.missing.pop_first();
                    }
                }
                Some(max) if seq <= max && !sender.missing.remove(&seq) => return,
                _ => {}
            }
            sender.max_seq = Some(sender.max_seq.map_or(seq, |m| m.max(seq)));
        }
        if let Some(ack) = event.get("ack").and_then(model::parse_seq) {
            let peer_max = self.senders[peer].max_seq.unwrap_or(0);
            if ack > peer_max {
                out.push(Violation::new(
                    "HAIP-SEQ-002",
                    format!(
                        "ack \"{ack}\" is beyond the highest seq the peer sent (\"{peer_max}\")"
                    ),
                ));
            }
            let sender = &mut self.senders[me];
            if let Some(last) = sender.last_ack {
                if ack < last {
                    out.push(Violation::new(
                        "HAIP-SEQ-002",
                        format!("ack went back from \"{last}\" to \"{ack}\""),
                    ));
                }
            }
            sender.last_ack = Some(sender.last_ack.map_or(ack, |l| l.max(ack)));
        }

        // Event compatibility.
        if ty != "HAI" {
            if let Some(accepted) = self.senders[peer]
                .announced
                .as_ref()
                .and_then(|a| a.accept_events.as_ref())
            {
                if !accepted.contains(ty) {
                    out.push(Violation::new(
                        "HAIP-VER-002",
                        format!("sent {ty}, which the peer's accept_events does not list"),
                    ));
                }
            }
        }

        self.check_media(from, event, out);
        self.check_flow(from, ty, event, seq, out);
        self.check_runs(from, ty, event, out);
        self.check_streams(from, ty, event, out);
    }

    fn on_hai(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        if let Some(version) = model::payload_str(event, "haip_version") {
            if !model::is_version_triplet(version) {
                out.push(Violation::new(
                    "HAIP-VER-004",
                    format!("haip_version {version:?} is not MAJOR.MINOR.PATCH"),
                ));
            }
        }
        let accept_events = event
            .pointer("/payload/accept_events")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
        let (credit_messages, credit_bytes) = model::initial_credit(event);
        let binary_frames =
            model::hai_capability(event, "binary_frames") == Some(&Value::Bool(true));
        self.senders[side(from)].announced = Some(Announced {
            accept_events,
            binary_frames,
            credit_messages,
            credit_bytes,
        });
    }

    fn check_media(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        let bin_len = event.get("bin_len").and_then(Value::as_u64);
        let data = event.pointer("/payload/data");
        if let Some(len) = bin_len {
            if data.is_some() {
                out.push(Violation::new(
                    "HAIP-MEDIA-001",
                    "a binary-mode envelope (bin_len) contains payload.data",
                ));
            }
            let peer_binary = self.senders[side(other(from))]
                .announced
                .as_ref()
                .is_some_and(|a| a.binary_frames);
            if !peer_binary {
                out.push(Violation::new(
                    "HAIP-MEDIA-003",
                    "used the two-frame binary mode towards a peer that did not advertise binary_frames",
                ));
            }
            self.senders[side(from)].owed_binary = Some(len);
        } else if let Some(data) = data {
            if event.get("bin_mime").is_some() {
                out.push(Violation::new(
                    "HAIP-MEDIA-002",
                    "a Base64-mode message (payload.data) carries bin_mime",
                ));
            }
            if data.is_string() && model::media_bytes(event).is_none() {
                out.push(Violation::new(
                    "HAIP-MEDIA-002",
                    "payload.data is not valid Base64",
                ));
            }
        }
    }

    fn check_flow(
        &mut self,
        from: Direction,
        ty: &str,
        event: &Value,
        seq: Option<u64>,
        out: &mut Vec<Violation>,
    ) {
        let me = side(from);
        let peer = side(other(from));
        let target_channel = model::payload_str(event, "channel").map(str::to_owned);
        match (ty, target_channel) {
            ("FLOW_UPDATE", Some(ch)) => {
                let add_m = event
                    .pointer("/payload/add_messages")
                    .and_then(Value::as_i64);
                let add_b = event.pointer("/payload/add_bytes").and_then(Value::as_i64);
                let credit = self.credit_entry(peer, &ch);
                if let (Some(m), Some(add)) = (credit.messages.as_mut(), add_m) {
                    *m = m.saturating_add(add);
                }
                if let (Some(b), Some(add)) = (credit.bytes.as_mut(), add_b) {
                    *b = b.saturating_add(add);
                }
                return;
            }
            ("PAUSE_CHANNEL", Some(ch)) => {
                let at = self.now_ms;
                self.senders[peer]
                    .paused
                    .insert(ch, (seq.unwrap_or(u64::MAX), at));
                return;
            }
            ("RESUME_CHANNEL", Some(ch)) => {
                self.senders[peer].paused.remove(&ch);
                return;
            }
            _ => {}
        }
        if !model::consumes_credit(ty) {
            return;
        }
        let Some(channel) = event.get("channel").and_then(Value::as_str) else {
            return;
        };
        if let Some(&(pause_seq, paused_at)) = self.senders[me].paused.get(channel) {
            let ack = event.get("ack").and_then(model::parse_seq);
            let saw_pause = match ack {
                Some(ack) => ack >= pause_seq,
                None => self.now_ms >= paused_at + PAUSE_GRACE_MS,
            };
            if saw_pause {
                out.push(Violation::new(
                    "HAIP-FLOW-003",
                    format!("sent {ty} on channel {channel:?} while the peer had it paused"),
                ));
            }
        }
        let bytes = if ty == "AUDIO_CHUNK" {
            model::media_bytes(event).unwrap_or(0)
        } else {
            0
        };
        let credit = self.credit_entry(me, channel);
        if let Some(m) = credit.messages.as_mut() {
            *m -= 1;
            if *m == -1 {
                out.push(Violation::new(
                    "HAIP-FLOW-001",
                    format!("sent {ty} on channel {channel:?} with no message credit left"),
                ));
            }
        }
        if let Some(b) = credit.bytes.as_mut() {
            let before = *b;
            *b -= bytes as i64;
            if before >= 0 && *b < 0 {
                out.push(Violation::new(
                    "HAIP-FLOW-001",
                    format!(
                        "sent {bytes} media bytes on channel {channel:?} beyond the byte credit"
                    ),
                ));
            }
        }
    }

    /// The credit `sender` has on `channel`, starting from what its peer announced.
    fn credit_entry(&mut self, sender: usize, channel: &str) -> &mut Credit {
        let peer = 1 - sender;
        let (m, b) = self.senders[peer]
            .announced
            .as_ref()
            .map_or((None, None), |a| (a.credit_messages, a.credit_bytes));
        self.senders[sender]
            .credit
            .entry(channel.to_owned())
            .or_insert(Credit {
                messages: m.map(|v| v.min(i64::MAX as u64) as i64),
                bytes: b.map(|v| v.min(i64::MAX as u64) as i64),
            })
    }

    fn check_runs(&mut self, _from: Direction, ty: &str, event: &Value, out: &mut Vec<Violation>) {
        let run_id = event.get("run_id").and_then(Value::as_str);
        let runs = &mut self.shared;
        match ty {
            "RUN_STARTED" => match run_id {
                Some(id) => {
                    if !runs.runs_seen.insert(id.to_owned()) {
                        out.push(Violation::new(
                            "HAIP-RUN-002",
                            format!("RUN_STARTED reuses run_id {id}"),
                        ));
                    }
                    runs.runs_open.insert(id.to_owned());
                }
                None => out.push(Violation::new(
                    "HAIP-RUN-006",
                    "RUN_STARTED carries no run_id",
                )),
            },
            "RUN_FINISHED" | "RUN_ERROR" => match run_id {
                Some(id) if !runs.runs_open.remove(id) => out.push(Violation::new(
                    "HAIP-RUN-001",
                    format!("{ty} names run {id}, which is not open"),
                )),
                Some(_) => {}
                None if ty == "RUN_ERROR" => out.push(Violation::new(
                    "HAIP-RUN-003",
                    "RUN_ERROR carries no envelope run_id",
                )),
                None => {}
            },
            "RUN_CANCEL" => {
                if run_id.is_none() || event.pointer("/payload/run_id").is_none() {
                    out.push(Violation::new(
                        "HAIP-RUN-003",
                        "RUN_CANCEL lacks run_id in the envelope or the payload",
                    ));
                }
            }
            "ERROR" | "HAI" => {}
            _ => {
                if let Some(id) = run_id {
                    if !runs.runs_open.contains(id) {
                        out.push(Violation::new(
                            "HAIP-RUN-001",
                            format!("{ty} names run {id}, which is not open"),
                        ));
                    }
                }
            }
        }
    }

    fn check_streams(
        &mut self,
        from: Direction,
        ty: &str,
        event: &Value,
        out: &mut Vec<Violation>,
    ) {
        let me = side(from);
        let peer = side(other(from));
        match ty {
            "TEXT_MESSAGE_START" => {
                if let Some(id) = model::payload_str(event, "message_id") {
                    self.senders[me].open_texts.insert(id.to_owned());
                }
            }
            "TEXT_MESSAGE_PART" | "TEXT_MESSAGE_END" => {
                if let Some(id) = model::payload_str(event, "message_id") {
                    let open = if ty == "TEXT_MESSAGE_END" {
                        self.senders[me].open_texts.remove(id)
                    } else {
                        self.senders[me].open_texts.contains(id)
                    };
                    if !open {
                        out.push(Violation::new(
                            "HAIP-TEXT-001",
                            format!(
                                "{ty} names message {id}, which no open TEXT_MESSAGE_START began"
                            ),
                        ));
                    }
                }
            }
            "TOOL_CALL" => {
                if let Some(id) = model::payload_str(event, "call_id") {
                    self.shared.calls.insert(id.to_owned(), (from, false));
                }
            }
            "TOOL_UPDATE" | "TOOL_DONE" => {
                if let Some(id) = model::payload_str(event, "call_id") {
                    match self.shared.calls.get_mut(id) {
                        Some((caller, done)) if *caller != from && !*done => {
                            *done = ty == "TOOL_DONE";
                        }
                        Some((_, true)) => out.push(Violation::new(
                            "HAIP-TOOL-001",
                            format!("{ty} for call {id}, which is already done"),
                        )),
                        _ => out.push(Violation::new(
                            "HAIP-TOOL-001",
                            format!("{ty} names call {id}, which the peer never called"),
                        )),
                    }
                }
            }
            "PING" => {
                let nonce = model::payload_str(event, "nonce").map(str::to_owned);
                let pending = &mut self.senders[peer].pings_to_answer;
                if pending.len() < 4096 {
                    pending.push(nonce);
                }
            }
            "PONG" => {
                let nonce = model::payload_str(event, "nonce").map(str::to_owned);
                let pending = &mut self.senders[me].pings_to_answer;
                if let Some(i) = pending.iter().position(|n| *n == nonce) {
                    pending.remove(i);
                } else if !pending.is_empty() {
                    pending.remove(0);
                    out.push(Violation::new(
                        "HAIP-PING-002",
                        format!("PONG nonce {nonce:?} echoes no outstanding PING"),
                    ));
                }
            }
            "ERROR" | "RUN_ERROR" => {
                if let Some(code) = model::payload_str(event, "code") {
                    if !KNOWN_ERROR_CODES.contains(&code) {
                        out.push(Violation::new(
                            "HAIP-ERR-003",
                            format!("error code {code:?} is not one the spec names"),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

impl Checker for HaipChecker {
    fn observe(
        &mut self,
        from: Direction,
        at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        self.now_ms = at_ms;
        match item {
            Observed::Connect => self.on_connect(),
            Observed::Event(event) => self.on_event(from, event, out),
            Observed::Binary(len) => {
                let sender = &mut self.senders[side(from)];
                match sender.owed_binary.take() {
                    Some(owed) if owed == len as u64 => {}
                    Some(owed) => out.push(Violation::new(
                        "HAIP-MEDIA-001",
                        format!("binary frame of {len} bytes after an envelope announcing bin_len {owed}"),
                    )),
                    None => out.push(Violation::new(
                        "HAIP-MEDIA-001",
                        format!("binary frame of {len} bytes with no envelope announcing it"),
                    )),
                }
            }
            Observed::Garbage(text) => {
                let shown: String = text.chars().take(80).collect();
                out.push(Violation::new(
                    "HAIP-ENV-001",
                    format!("a text frame that is not a JSON message: {shown:?}"),
                ));
            }
            Observed::Closed => {}
        }
    }
}
