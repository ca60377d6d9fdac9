//! The HAIP transcript checker: schema validation of every message plus the lifecycle state
//! machine (handshake, sequencing, runs, text streams, tool calls, flow control, media framing).
//!
//! The lifecycle logic reads [`Facts`], never the JSON itself, so a message validated by the
//! fast path ([`super::fast`]) and one validated by the schema are judged identically.

use super::facts::{Data, Facts, HaiFacts};
use super::model::KNOWN_ERROR_CODES;
use super::schema::schema;
use super::{fast, model};
use crate::protocol::recent::RecentSet;
use crate::protocol::{Checker, Observed};
use crate::rules::Violation;
use crate::transcript::Direction;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

mod answers;

/// Most skipped seqs remembered per side (a jump wider than this is not tracked).
const MAX_TRACKED_GAP: u64 = 4096;

/// How many run ids and finished tool calls are remembered to catch reuse. Memory stays flat
/// however long a transcript is; a reuse further back than this goes unnoticed.
const RECENT_IDS: usize = 16_384;

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
    announced: Option<HaiFacts>,
    credit: HashMap<String, Credit>,
    /// Channels the peer paused: channel -> (seq of the PAUSE, time it was seen).
    paused: HashMap<String, (u64, u64)>,
    /// Nonces of the peer's PINGs this side has not answered yet.
    pings_to_answer: VecDeque<Option<String>>,
    /// Nonces of the peer's PINGs resent under a number already used: dropped as duplicates,
    /// or taken if the first message with that number was rejected (suites/haip/ERRATA.md
    /// item 19). Their PONG is neither owed nor wrong.
    pings_maybe_dropped: VecDeque<Option<String>>,
    /// Numbers of this side's messages the peer must have rejected (malformed, or naming
    /// another session): the number may come again on a new message (ERRATA item 19).
    rejected: BTreeSet<u64>,
    /// Open text streams by message_id.
    open_texts: HashSet<String>,
    /// After an envelope with bin_len: the binary frame length owed.
    owed_binary: Option<u64>,
}

/// Run and tool state shared by both sides of a session.
#[derive(Debug, Default)]
struct Shared {
    runs_open: HashSet<String>,
    runs_seen: RecentSet<RECENT_IDS>,
    /// Open calls: call_id -> caller.
    calls_open: HashMap<String, Direction>,
    calls_done: RecentSet<RECENT_IDS>,
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
    /// The message being judged passed the schema, names our session and sets no `crit`. A
    /// malformed message of the client's is rejected by its receiver: it changes nothing but
    /// the sequence numbers the target may have counted.
    well_formed: bool,
    /// The client's last item was broken (malformed, or not a message at all).
    client_broken: bool,
    /// The `id` of the client's last malformed message, when it was not a UUID: an ERROR
    /// answering it may echo it as `related_id`.
    broken_id: Option<String>,
    /// What the client sent that breaks no must, for HAIP-ERR-004: recent message ids, and
    /// the seq of its latest message when that one was valid.
    valid_client_ids: RecentSet<RECENT_IDS>,
    last_valid_client_seq: Option<u64>,
    /// Broken client messages no ERROR has answered yet.
    broken_unanswered: usize,
    /// The session UUID of the client's latest HAI: a message naming another is rejected.
    session_id: Option<String>,
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

    /// A client HAI without `last_rx_seq` starts a new session: numbering restarts. A server
    /// that greeted this connection before the client's HAI arrived has already begun the
    /// new session's numbering, so what it sent stands.
    fn new_session(&mut self) {
        for (i, s) in self.senders.iter_mut().enumerate() {
            let sent = s.sent_on_connection;
            if i == side(Direction::Server) && sent > 0 {
                continue;
            }
            *s = Sender {
                sent_on_connection: sent,
                ..Sender::default()
            };
        }
        self.shared = Shared::default();
    }

    /// Judges one event the schema already checked (or the fast path accepted).
    fn on_facts(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
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
        if let Some(hai) = &f.hai {
            // Only a HAI that opens a connection starts (or resumes) a session; one sent later
            // is just a bad message for the target to reject.
            if from == Direction::Client && first {
                self.resuming = hai.resumes;
                if !self.resuming {
                    self.new_session();
                    self.senders[me].sent_on_connection = 1;
                }
            }
            // A malformed HAI of the client's is refused: it announces nothing.
            if from == Direction::Server || self.well_formed {
                if self.resuming && first {
                    self.readvertised(me, hai);
                }
                self.on_hai(from, hai, out);
            }
        }

        // Sequencing. A message at or below the highest seq already sent is a resend (unless
        // it fills a gap): it is exempt from the lifecycle checks, which saw it the first time.
        // A message filling a gap was first sent before the ones after it, with the ack it had
        // then: its ack is not held against the later ones.
        let mut resent = false;
        if f.seq_unreadable {
            out.push(Violation::new(
                "HAIP-SEQ-001",
                "seq is not a decimal string, so it cannot start at \"1\" and go up by one",
            ));
        }
        if let Some(seq) = f.seq {
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
                    // A server answering a resume sends its HAI, a new message, before it
                    // replays what the client missed: the HAI's number is past the gap.
                    let resumed_hai = from == Direction::Server && self.resuming && f.hai.is_some();
                    if !resumed_hai {
                        out.push(Violation::new(
                            "HAIP-SEQ-001",
                            format!("seq jumped from \"{max}\" to \"{seq}\""),
                        ));
                    }
                    if seq - max <= MAX_TRACKED_GAP {
                        sender.missing.extend(max + 1..seq);
                    }
                    while sender.missing.len() as u64 > MAX_TRACKED_GAP {
                        sender.missing.pop_first();
                    }
                }
                Some(max) if seq <= max && sender.missing.remove(&seq) => resent = true,
                Some(max) if seq <= max && sender.rejected.remove(&seq) => {}
                Some(max) if seq <= max => {
                    // A resent media envelope is followed by its binary frame again.
                    if let Some(len) = f.bin_len {
                        sender.owed_binary = Some(len);
                    }
                    if ty == "PING" {
                        let maybe = &mut self.senders[peer].pings_maybe_dropped;
                        if maybe.len() >= 64 {
                            maybe.pop_front();
                        }
                        maybe.push_back(f.nonce.map(str::to_owned));
                    }
                    return;
                }
                _ => {}
            }
            sender.max_seq = Some(sender.max_seq.map_or(seq, |m| m.max(seq)));
            // Only the target's rejections are seen (its ERROR); ours are not judged here.
            if !self.well_formed && from == Direction::Client {
                if sender.rejected.len() >= 64 {
                    sender.rejected.pop_first();
                }
                sender.rejected.insert(seq);
            }
        }
        if let Some(ack) = f.ack.filter(|_| !resent) {
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

        // The rest follows what the message does: a malformed one of the client's does nothing
        // (a FLOW_UPDATE granting -5 grants nothing, a PING asks for no PONG).
        if from == Direction::Client && !self.well_formed {
            return;
        }

        // Event compatibility.
        if ty != "HAI" {
            if let Some(accepted) = self.senders[peer]
                .announced
                .as_ref()
                .and_then(|a| a.accept_events.as_ref())
            {
                if !accepted.iter().any(|t| t == ty) {
                    out.push(Violation::new(
                        "HAIP-VER-002",
                        format!("sent {ty}, which the peer's accept_events does not list"),
                    ));
                }
            }
        }

        self.check_media(from, f, out);
        self.check_flow(from, f, out);
        self.check_runs(f, out);
        self.check_streams(from, f, out);
    }

    fn on_hai(&mut self, from: Direction, hai: &HaiFacts, out: &mut Vec<Violation>) {
        if let Some(version) = &hai.haip_version {
            if !model::is_version_triplet(version) {
                out.push(Violation::new(
                    "HAIP-VER-004",
                    format!("haip_version {version:?} is not MAJOR.MINOR.PATCH"),
                ));
            }
        }
        self.senders[side(from)].announced = Some(hai.clone());
    }

    fn check_media(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        if let Some(len) = f.bin_len {
            if f.data != Data::Absent {
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
        } else if f.data != Data::Absent {
            if f.has_bin_mime {
                out.push(Violation::new(
                    "HAIP-MEDIA-002",
                    "a Base64-mode message (payload.data) carries bin_mime",
                ));
            }
            if matches!(f.data, Data::Text(_)) && f.media_bytes().is_none() {
                out.push(Violation::new(
                    "HAIP-MEDIA-002",
                    "payload.data is not valid Base64",
                ));
            }
        }
    }

    fn check_flow(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let me = side(from);
        let peer = side(other(from));
        let ty = f.ty;
        match (ty, f.payload_channel) {
            ("FLOW_UPDATE", Some(ch)) => {
                let credit = self.credit_entry(peer, ch);
                if let (Some(m), Some(add)) = (credit.messages.as_mut(), f.add_messages) {
                    *m = m.saturating_add(add);
                }
                if let (Some(b), Some(add)) = (credit.bytes.as_mut(), f.add_bytes) {
                    *b = b.saturating_add(add);
                }
                return;
            }
            ("PAUSE_CHANNEL" | "RESUME_CHANNEL", _) if !self.well_formed => return,
            ("PAUSE_CHANNEL", Some(ch)) => {
                let at = self.now_ms;
                self.senders[peer]
                    .paused
                    .insert(ch.to_owned(), (f.seq.unwrap_or(u64::MAX), at));
                return;
            }
            ("RESUME_CHANNEL", Some(ch)) => {
                self.senders[peer].paused.remove(ch);
                return;
            }
            _ => {}
        }
        if !model::consumes_credit(ty) {
            return;
        }
        let Some(channel) = f.channel else {
            return;
        };
        if let Some(&(pause_seq, paused_at)) = self.senders[me].paused.get(channel) {
            let saw_pause = match f.ack {
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
            f.media_bytes().unwrap_or(0)
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

    /// A HAI resuming a session announces credit again. Whether that resets the credit left,
    /// and whether channels paused on the old connection stay paused, is open
    /// (suites/haip/ERRATA.md): the peer may use whichever credit is larger, and no pause binds.
    fn readvertised(&mut self, advertiser: usize, hai: &HaiFacts) {
        self.senders[1 - advertiser].paused.clear();
        let widen = |left: &mut Option<i64>, announced: Option<u64>| {
            if let (Some(l), Some(a)) = (left.as_mut(), announced) {
                *l = (*l).max(a.min(i64::MAX as u64) as i64);
            }
        };
        for credit in self.senders[1 - advertiser].credit.values_mut() {
            widen(&mut credit.messages, hai.credit_messages);
            widen(&mut credit.bytes, hai.credit_bytes);
        }
    }

    /// The credit `sender` has on `channel`, starting from what its peer announced.
    fn credit_entry(&mut self, sender: usize, channel: &str) -> &mut Credit {
        let peer = 1 - sender;
        let (m, b) = self.senders[peer]
            .announced
            .as_ref()
            .map_or((None, None), |a| (a.credit_messages, a.credit_bytes));
        let credits = &mut self.senders[sender].credit;
        if !credits.contains_key(channel) {
            credits.insert(
                channel.to_owned(),
                Credit {
                    messages: m.map(|v| v.min(i64::MAX as u64) as i64),
                    bytes: b.map(|v| v.min(i64::MAX as u64) as i64),
                },
            );
        }
        credits.get_mut(channel).expect("inserted above")
    }

    fn check_runs(&mut self, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
        let runs = &mut self.shared;
        match ty {
            "RUN_STARTED" => match f.run_id {
                Some(id) => {
                    if !runs.runs_seen.insert(id) {
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
            "RUN_FINISHED" | "RUN_ERROR" => match f.run_id {
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
                if f.run_id.is_none() || !f.payload_run_id {
                    out.push(Violation::new(
                        "HAIP-RUN-003",
                        "RUN_CANCEL lacks run_id in the envelope or the payload",
                    ));
                }
            }
            "ERROR" | "HAI" => {}
            _ => {
                if let Some(id) = f.run_id {
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

    fn check_streams(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let me = side(from);
        let peer = side(other(from));
        let ty = f.ty;
        match ty {
            "TEXT_MESSAGE_START" => {
                if let Some(id) = f.message_id {
                    self.senders[me].open_texts.insert(id.to_owned());
                }
            }
            "TEXT_MESSAGE_PART" | "TEXT_MESSAGE_END" => {
                if let Some(id) = f.message_id {
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
                if let Some(id) = f.call_id {
                    self.shared.calls_open.insert(id.to_owned(), from);
                }
            }
            "TOOL_UPDATE" | "TOOL_DONE" => {
                if let Some(id) = f.call_id {
                    let calls = &mut self.shared;
                    match calls.calls_open.get(id) {
                        Some(caller) if *caller != from => {
                            if ty == "TOOL_DONE" {
                                calls.calls_open.remove(id);
                                calls.calls_done.insert(id);
                            }
                        }
                        _ if calls.calls_done.contains(id) => out.push(Violation::new(
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
                let pending = &mut self.senders[peer].pings_to_answer;
                if pending.len() >= 4096 {
                    pending.pop_front();
                }
                pending.push_back(f.nonce.map(str::to_owned));
            }
            "PONG" => {
                let sender = &mut self.senders[me];
                let (pending, maybe) =
                    (&mut sender.pings_to_answer, &mut sender.pings_maybe_dropped);
                if let Some(i) = pending.iter().position(|n| n.as_deref() == f.nonce) {
                    pending.remove(i);
                } else if let Some(i) = maybe.iter().position(|n| n.as_deref() == f.nonce) {
                    maybe.remove(i);
                } else if pending.pop_front().is_some() {
                    out.push(Violation::new(
                        "HAIP-PING-002",
                        format!(
                            "PONG nonce {} echoes no outstanding PING",
                            crate::show::quoted_or_none(f.nonce)
                        ),
                    ));
                }
            }
            "ERROR" if from == Direction::Server => {
                self.error_answers_valid(f, out);
                if let Some(code) = f.code.filter(|c| !KNOWN_ERROR_CODES.contains(c)) {
                    out.push(Violation::new(
                        "HAIP-ERR-003",
                        format!("error code {code:?} is not one the spec names"),
                    ));
                }
            }
            "ERROR" | "RUN_ERROR" => {
                if let Some(code) = f.code {
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

    /// Checks a parsed event: the schema, then the lifecycle.
    fn on_value(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        let before = out.len();
        match self.echoed_related_id(from, event) {
            Some(unechoed) => schema().check(&unechoed, out),
            None => schema().check(event, out),
        }
        let ty = event.get("type").and_then(Value::as_str);
        let session = event.get("session").and_then(Value::as_str);
        let schema_clean = out[before..].iter().all(|v| v.rule == "HAIP-ENV-005");
        self.judge_form(from, ty, session, schema_clean, event.get("crit"));
        if from == Direction::Client && !self.well_formed {
            self.broken_id = event
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !model::is_uuid(id))
                .map(str::to_owned);
        }
        let facts = Facts::from_value(event);
        if let Some(facts) = &facts {
            self.on_facts(from, facts, out);
        }
        if from == Direction::Client {
            // A message without a type is malformed, and judged so.
            let facts = facts.unwrap_or_else(|| Facts::bare(""));
            self.client_message_judged(&facts, &out[before..]);
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
            Observed::Connect(_) => self.on_connect(),
            Observed::Event(event, _) => self.on_value(from, event, out),
            Observed::Binary(len) => {
                let announced = self.senders[side(from)].owed_binary.take();
                let fits = announced == Some(len as u64);
                // An announced frame of the wrong length, or one nothing announced, is broken
                // input an ERROR may answer; the frame an envelope announced is not.
                if from == Direction::Client {
                    match fits {
                        true => self.client_broken = false,
                        false => self.client_broke(),
                    }
                }
                match announced {
                    Some(_) if fits => {}
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
                if from == Direction::Client {
                    self.client_broke();
                }
                let shown: String = text.chars().take(80).collect();
                out.push(Violation::new(
                    "HAIP-ENV-001",
                    format!("a text frame that is not a JSON message: {shown:?}"),
                ));
            }
            // HAIP runs over a WebSocket: no HTTP exchanges reach its checker.
            Observed::Closed { .. }
            | Observed::Notice(_)
            | Observed::Aside
            | Observed::NoGreeting { .. }
            | Observed::Post { .. }
            | Observed::Http(_)
            | Observed::StreamOpened(_) => {}
        }
    }

    fn input_broken(&self) -> bool {
        self.client_broken
    }

    fn observe_raw(
        &mut self,
        from: Direction,
        at_ms: u64,
        raw: &str,
        out: &mut Vec<Violation>,
    ) -> bool {
        match fast::accept(raw) {
            Some((facts, session)) => {
                self.now_ms = at_ms;
                self.judge_form(from, Some(facts.ty), Some(session), true, None);
                let before = out.len();
                self.on_facts(from, &facts, out);
                if from == Direction::Client {
                    self.client_message_judged(&facts, &out[before..]);
                }
                true
            }
            None => false,
        }
    }
}
