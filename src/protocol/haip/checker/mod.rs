//! The HAIP transcript checker: schema validation of every message plus the lifecycle state
//! machine, one concern per file: the handshake, sequencing, flow control, media framing,
//! runs and tool calls, text streams, liveness, and what errors answer.
//!
//! The lifecycle logic reads [`Facts`], never the JSON itself, so a message validated by the
//! fast path ([`super::fast`]) and one validated by the schema are judged identically. This
//! file holds the state the concerns share and the order they judge a message in.

use super::facts::{Facts, HaiFacts};
use super::fast;
use super::schema::schema;
use crate::protocol::recent::RecentSet;
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{
    HAIP_AUTH_006, HAIP_AUTH_009, HAIP_ENV_001, HAIP_ENV_002, HAIP_ENV_003, HAIP_ENV_004,
    HAIP_ENV_005, HAIP_ENV_006, HAIP_ENV_007,
};
use crate::rules::{Exercised, Violation};
use crate::transcript::Direction;
use foldhash::{HashMap, HashSet};
use sequencing::Numbered;
use serde_json::Value;
use std::collections::{BTreeSet, VecDeque};

mod answers;
mod echoes;
mod flow;
mod handshake;
mod liveness;
mod media;
mod runs;
mod sequencing;
mod streams;
#[cfg(test)]
mod talk;

/// How many run ids and finished tool calls are remembered to catch reuse. Memory stays flat
/// however long a transcript is; a reuse further back than this goes unnoticed.
const RECENT_IDS: usize = 16_384;

/// The rule a property outside the schema breaks (a `should`: suites/haip/ERRATA.md item 2).
const UNKNOWN_FIELD: &str = HAIP_ENV_005;

fn side(d: Direction) -> usize {
    match d {
        Direction::Client => 0,
        Direction::Server => 1,
    }
}

/// State about the messages one side sends.
#[derive(Debug, Default)]
struct Sender {
    /// Messages sent on the current connection (for HAI-first).
    sent_on_connection: usize,
    /// Highest seq sent in this session.
    max_seq: Option<u64>,
    /// Seqs a jump skipped: a message arriving later with one of them fills the gap and is
    /// new, not a resend (bounded: see `sequencing.rs`).
    missing: BTreeSet<u64>,
    last_ack: Option<u64>,
    /// The lowest seq of this side's that a jump skipped or that came on a malformed message:
    /// the peer's cumulative ack may stop below it for good (see `sequencing.rs`).
    first_unclean: Option<u64>,
    announced: Option<HaiFacts>,
    credit: HashMap<String, flow::Credit>,
    /// Credit under the strictest reading of what consumes it (see `flow.rs`): every message
    /// on the channel counted, a resume's new announcement not taken.
    strictest_credit: HashMap<String, flow::Spent>,
    /// The message and byte credit this side's first HAI in the session announced.
    first_announced: (Option<u64>, Option<u64>),
    /// Channels the peer paused: channel -> (seq of the PAUSE, time it was seen).
    paused: HashMap<String, (u64, u64)>,
    /// The peer's PINGs this side has not answered yet.
    pings_to_answer: VecDeque<liveness::OwedPong>,
    /// Nonces of the peer's PINGs resent under a number already used: dropped as duplicates,
    /// or taken if the first message with that number was rejected (suites/haip/ERRATA.md
    /// item 19). Their PONG is neither owed nor wrong.
    pings_maybe_dropped: VecDeque<Option<String>>,
    /// Nonces of the PONGs this side sent (the latest few): one of them coming back from the
    /// peer is this side's own message echoed, which answers no PING of ours.
    pongs_sent: RecentSet<{ liveness::REMEMBERED_PONGS }>,
    /// Nonces of this side's broken PINGs that are no string: a PONG of the peer's copying one
    /// answers broken input (see `liveness.rs`).
    broken_nonces: VecDeque<Value>,
    /// Ids of this side's latest broken messages: one coming back from the peer is an echo
    /// of broken input (see `echoes.rs`).
    broken_ids: RecentSet<{ echoes::REMEMBERED_BROKEN }>,
    /// Numbers of this side's messages the peer must have rejected (malformed, or naming
    /// another session): the number may come again on a new message (ERRATA item 19).
    rejected: BTreeSet<u64>,
    /// Open text streams by message_id.
    open_texts: HashSet<String>,
    /// The texts, calls and runs this side's latest broken messages began (by
    /// [`echoes::Begun`]): the peer naming one answers what was broken on purpose (see
    /// `echoes.rs`).
    broken_begun: [RecentSet<{ echoes::REMEMBERED_BROKEN }>; 3],
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
    /// Connections seen: after a reconnection, what reached the peer before the drop is
    /// unknown, so its ack is no longer held to keeping up (HAIP-SEQ-011).
    connections: usize,
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
    /// Valid client messages some reading of what consumes credit puts beyond it: an ERROR
    /// FLOW_CONTROL_VIOLATION answering one is not judged false (suites/haip/ERRATA.md item 9).
    credit_open_ids: RecentSet<RECENT_IDS>,
    /// What the client sent on this connection, for an ERROR that names no message.
    client_so_far: answers::ClientSoFar,
    /// Broken client messages no ERROR has answered yet.
    broken_unanswered: usize,
    /// The client's latest REPLAY_REQUEST on this connection was broken: until a valid one,
    /// the server's relays of the client's own messages answer it (see `echoes.rs`).
    replay_asked_broken: bool,
    /// The session UUID of the client's latest HAI: a message naming another is rejected.
    session_id: Option<String>,
    /// The rules checked on the observation being judged.
    exercised: Exercised,
}

impl HaipChecker {
    pub fn new() -> Self {
        Self::default()
    }

    fn on_connect(&mut self) {
        self.connections += 1;
        for s in &mut self.senders {
            s.sent_on_connection = 0;
            s.owed_binary = None;
        }
        // An ERROR on this connection answers nothing sent on the last, nor does a replay.
        self.broken_unanswered = 0;
        self.replay_asked_broken = false;
        self.client_so_far = Default::default();
    }

    /// Judges one event the schema already checked (or the fast path accepted).
    fn on_facts(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        self.binary_not_sent(from, f, out);
        self.handshake(from, f, out);
        let numbered = self.sequence(from, f, out);
        if numbered == Numbered::Resent {
            return;
        }
        self.acknowledge(from, f, numbered, out);
        // The rest follows what the message does: a malformed one of the client's does nothing
        // (a FLOW_UPDATE granting -5 grants nothing, a PING asks for no PONG).
        if from == Direction::Client && !self.well_formed {
            // A target that answers it anyway owes an ERROR instead (judged by the rules about
            // broken input); its PONG must not pass for the answer to a PING still owed.
            if f.ty == "PING" {
                self.ping_may_be_answered(side(from), f.nonce);
            }
            return;
        }
        self.accepted_by_peer(from, f, out);
        self.check_media(from, f, out);
        self.check_flow(from, f, out);
        self.check_runs(from, f, out);
        // At most one of these judges a message: each concerns types of its own.
        self.check_calls(from, f, out);
        self.check_texts(from, f, out);
        self.check_liveness(from, f, out);
        self.check_errors(from, f, out);
    }

    /// Judges a message the fast path accepted (valid under the schema, `crit` not set).
    fn on_accepted(
        &mut self,
        from: Direction,
        facts: &Facts<'_>,
        session: &str,
        out: &mut Vec<Violation>,
    ) {
        if self.echoes_broken(from, facts.id) {
            return;
        }
        self.judge_form(from, Some(facts.ty), facts.id, Some(session), true, None);
        self.schema_checked(
            Some(facts.ty),
            facts.bin_len.is_some() || facts.has_bin_mime,
        );
        let before = out.len();
        self.on_facts(from, facts, out);
        if from == Direction::Client {
            self.client_message_judged(facts, &out[before..]);
        }
        self.note_sent(from, Some(facts), facts.id, &out[before..]);
    }

    /// The rules a message's schema check decided, whichever path checked it: its envelope's,
    /// its type's payload rule (when the type is one of the catalogue's), the version of a
    /// HAI, and HAIP-ENV-007 when it carries any of the optional fields that rule types.
    fn schema_checked(&mut self, ty: Option<&str>, optional_fields: bool) {
        let hit = &mut self.exercised;
        for rule in [
            HAIP_ENV_001,
            HAIP_ENV_002,
            HAIP_ENV_003,
            HAIP_ENV_004,
            HAIP_ENV_005,
            HAIP_ENV_006,
        ] {
            hit.hit(rule);
        }
        if optional_fields {
            hit.hit(HAIP_ENV_007);
        }
        if let Some(ty) = ty.filter(|ty| schema().is_event_type(ty)) {
            hit.hit(super::schema::payload_rule(ty));
        }
    }

    /// Checks a parsed event: the schema (by the fast path when it is sure), then the
    /// lifecycle.
    fn on_value(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        if let Some((facts, session)) = fast::accept_value(event) {
            return self.on_accepted(from, &facts, session, out);
        }
        let id = event.get("id").and_then(Value::as_str);
        if self.echoes_broken(from, id) {
            return;
        }
        let before = out.len();
        let echo = self.echoed_related_id(from, event);
        match echo.or_else(|| self.echoed_nonce(from, event)) {
            Some(unechoed) => schema().check(&unechoed, out),
            None => schema().check(event, out),
        }
        let ty = event.get("type").and_then(Value::as_str);
        let session = event.get("session").and_then(Value::as_str);
        let schema_clean = out[before..].iter().all(|v| v.rule == UNKNOWN_FIELD);
        self.judge_form(from, ty, id, session, schema_clean, event.get("crit"));
        let optional = ["pv", "crit", "bin_len", "bin_mime"]
            .iter()
            .any(|k| event.get(*k).is_some());
        self.schema_checked(ty, optional);
        self.note_broken_ping(from, event);
        let facts = Facts::from_value(event);
        if let Some(facts) = &facts {
            self.on_facts(from, facts, out);
        }
        if from == Direction::Client {
            // A message without a type is malformed, and judged so.
            let bare = Facts::bare("");
            self.client_message_judged(facts.as_ref().unwrap_or(&bare), &out[before..]);
        }
        self.note_sent(from, facts.as_ref(), id, &out[before..]);
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
            Observed::Connect(url) => {
                // A connection presenting its token as ?token= is held to being let in.
                if url.contains("?token=") || url.contains("&token=") {
                    self.exercised.hit(HAIP_AUTH_006);
                }
                self.on_connect()
            }
            Observed::Event(event, _) => self.on_value(from, event.value(), out),
            Observed::Binary(len) => self.on_binary(from, len, out),
            Observed::Garbage(text) => {
                if from == Direction::Client {
                    self.client_broke();
                }
                self.note_garbage(from, text);
                let shown: String = text.chars().take(80).collect();
                out.push(Violation::new(
                    HAIP_ENV_001,
                    format!("a text frame that is not a JSON message: {shown:?}"),
                ));
            }
            // A client handed a token presents it on the WebSocket as the spec names it.
            Observed::TokenPresented(at) if from == Direction::Client => match at {
                Some("query" | "subprotocol") => self.exercised.hit(HAIP_AUTH_009),
                Some(_) => out.push(Violation::new(
                    HAIP_AUTH_009,
                    "the client presented its token in an Authorization header, the spec's form for HTTP/SSE, not on the WebSocket (?token= or Sec-WebSocket-Protocol)".to_owned(),
                )),
                None => out.push(Violation::new(
                    HAIP_AUTH_009,
                    "the client was handed a token and connected without presenting it (no ?token=, nothing in Sec-WebSocket-Protocol)".to_owned(),
                )),
            },
            Observed::TokenPresented(_) => {}
            // HAIP runs over a WebSocket: no HTTP exchanges reach its checker.
            Observed::Closed { .. }
            | Observed::AnswerEnded { .. }
            | Observed::Notice(_)
            | Observed::Aside
            | Observed::NoGreeting { .. }
            | Observed::Post { .. }
            | Observed::Http(_)
            | Observed::StreamOpened(_)
            | Observed::StreamDropped => {}
        }
    }

    fn input_broken(&self) -> bool {
        self.client_broken
    }

    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
    }

    fn observe_raw(
        &mut self,
        from: Direction,
        at_ms: u64,
        raw: &str,
        out: &mut Vec<Violation>,
    ) -> bool {
        // Matched by reference: the facts are not moved out of the slot `accept` filled.
        match &fast::accept(raw) {
            Some((facts, session)) => {
                self.now_ms = at_ms;
                self.on_accepted(from, facts, session, out);
                true
            }
            None => false,
        }
    }
}
