//! One client connection of the HAIP reference target: handshake, inbound sequencing and gap
//! replay, inbound credit, and dispatch of every event type.

mod credit;
mod dispatch;

use super::agent::{self, Internal};
use super::event_faults::EventFaults;
use super::outbox::{self, ClientPrefs, Outbox, Outgoing, SessionStore};
use super::Config;
use crate::protocol::haip::model::{self, SYSTEM_CHANNEL};
use crate::protocol::haip::schema::schema;
use crate::transport::{self, Connection, Frame, Received};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};

/// Out-of-order messages buffered while waiting for a gap to fill.
const MAX_BUFFERED: usize = 1024;

/// Credit we granted the client on one channel.
#[derive(Debug)]
struct Granted {
    messages: i64,
    bytes: i64,
    used_since_grant: u64,
    last_arrival: Instant,
}

pub struct Conn {
    config: Arc<Config>,
    store: SessionStore,
    socket: Connection,
    outbox: Option<Outbox>,
    /// True once HAI was exchanged.
    handshaken: bool,
    /// Variant `hai-on-connect`: our HAI went out before the client's arrived.
    greeted: bool,
    /// Client messages that arrived ahead of a gap, by seq.
    buffer: BTreeMap<u64, Value>,
    gap_deadline: Option<Instant>,
    granted: HashMap<String, Granted>,
    /// Open runs; `Some` holds the cancel switch of a run the agent is driving.
    runs: HashMap<String, Option<oneshot::Sender<()>>>,
    tools: HashMap<String, oneshot::Sender<()>>,
    /// Client text streams: message_id -> (text so far, run_id).
    texts: HashMap<String, (String, Option<String>)>,
    /// A binary frame of this length is owed by the client.
    owed_binary: Option<u64>,
    tasks: JoinSet<()>,
    internal_tx: mpsc::Sender<Internal>,
    internal_rx: mpsc::Receiver<Internal>,
    closing: bool,
    /// What the event faults keep over the connection.
    event_faults: EventFaults,
}

/// How many of the agent's messages wait for the connection's loop at most.
const INTERNAL_QUEUE: usize = 256;

/// How long one frame may take to go out before the client counts as gone.
const SEND_BUDGET: Duration = Duration::from_secs(30);
/// The close status of a connection the target ends over a protocol error (RFC 6455 §7.4.1).
const PROTOCOL_ERROR: u16 = 1002;

/// How many client messages that already arrived are handled before the answers are written.
const READY_INPUT: usize = 64;

impl Conn {
    pub fn new(config: Arc<Config>, store: SessionStore, socket: Connection) -> Self {
        let (internal_tx, internal_rx) = mpsc::channel(INTERNAL_QUEUE);
        Conn {
            config,
            store,
            socket,
            outbox: None,
            handshaken: false,
            greeted: false,
            buffer: BTreeMap::new(),
            gap_deadline: None,
            granted: HashMap::new(),
            runs: HashMap::new(),
            tools: HashMap::new(),
            texts: HashMap::new(),
            owed_binary: None,
            tasks: JoinSet::new(),
            internal_tx,
            internal_rx,
            closing: false,
            event_faults: EventFaults::default(),
        }
    }

    pub async fn run(mut self) {
        let far = || Instant::now() + Duration::from_secs(24 * 3600);
        let mut refill = tokio::time::interval(Duration::from_millis(100));
        if self.config.variants.has("hai-on-connect") {
            self.greet().await;
        }
        while !self.closing {
            let mut ended = false;
            let gap = self.gap_deadline;
            tokio::select! {
                received = self.socket.recv(far()) => ended = !self.on_received(received.map(|(r, _)| r)).await,
                Some(internal) = self.internal_rx.recv() => self.on_internal(internal).await,
                _ = tokio::time::sleep_until(gap.unwrap_or_else(Instant::now)), if gap.is_some() => self.on_gap_timer().await,
                _ = refill.tick() => self.refill().await,
            }
            // Messages the client wrote together are answered together: what already arrived
            // is read before writing (a bounded number, so a flood cannot hold back the
            // agent's messages).
            for _ in 0..READY_INPUT {
                if ended || self.closing {
                    break;
                }
                let Some((received, _)) = self.socket.try_recv() else {
                    break;
                };
                ended = !self.on_received(Some(received)).await;
            }
            if ended {
                break;
            }
            // What the agent queued meanwhile goes out with it, and all of it in one write: a
            // run's messages one write each cost a fifth of the machine in a fuzz campaign. At
            // most a queue's worth, so runs that keep queueing cannot starve the client's input.
            for _ in 0..INTERNAL_QUEUE {
                let Ok(internal) = self.internal_rx.try_recv() else {
                    break;
                };
                self.on_internal(internal).await;
            }
        }
        self.tasks.abort_all();
        // The answers to what came before the end still go out, if they can; the transport
        // answers a client's close.
        match self.closing {
            true => {
                self.socket
                    .close_with(PROTOCOL_ERROR, "protocol error")
                    .await
            }
            false => self.socket.close().await,
        }
    }

    /// Handles what the socket gave; false once the client has closed or the socket failed.
    async fn on_received(&mut self, received: Option<Received>) -> bool {
        match received {
            Some(Received::Frame(Frame::Text(text))) => self.on_text(&text).await,
            Some(Received::Frame(Frame::Binary(bytes) | Frame::RawText(bytes))) => {
                self.on_binary(bytes.len() as u64).await
            }
            Some(received) if !received.is_terminal() => {}
            Some(_) | None => return false,
        }
        true
    }

    async fn flush(&mut self) {
        let frames = match self.outbox.as_mut() {
            Some(outbox) => outbox.ready(),
            None => return,
        };
        self.send_frames(frames).await;
    }

    /// Writes frames as they are (sealed messages, or resent ones for a replay), to the
    /// socket when this turn of `run`'s loop ends.
    async fn send_frames(&mut self, frames: Vec<Frame>) {
        for frame in frames {
            let deadline = Instant::now() + SEND_BUDGET;
            let out = transport::Outgoing::Frame(frame);
            if self.socket.send(out, deadline).await.is_err() {
                self.closing = true;
                return;
            }
        }
    }

    async fn emit(&mut self, o: Outgoing) {
        if let Some(outbox) = self.outbox.as_mut() {
            for o in self.event_faults.on_event(&self.config, o) {
                outbox.queue(o);
            }
        }
        self.flush().await;
    }

    /// Sends ERROR, creating a throwaway outbox when no handshake happened yet.
    async fn error(&mut self, code: &str, message: &str, related: Option<&Value>) {
        if self.outbox.is_none() {
            let state = outbox::fresh_state(&self.config);
            let id = uuid::Uuid::new_v4().to_string();
            self.outbox = Some(Outbox::new(
                self.config.clone(),
                id,
                state,
                ClientPrefs::default(),
            ));
        }
        if self.config.variants.has("slow-first-error")
            && self
                .config
                .no_error_yet
                .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        }
        let mut payload = json!({"code": code});
        if !self.config.faults.has("error-without-message") {
            payload["message"] = json!(message);
        }
        if let Some(id) = related
            .and_then(|e| e.get("id"))
            .filter(|v| v.as_str().is_some_and(model::is_uuid))
        {
            payload["related_id"] = id.clone();
        }
        self.emit(Outgoing::new("ERROR", SYSTEM_CHANNEL, payload))
            .await;
    }

    async fn on_text(&mut self, text: &str) {
        let Ok(event) = serde_json::from_str::<Value>(text) else {
            return self
                .error("PROTOCOL_VIOLATION", "the frame is not valid JSON", None)
                .await;
        };
        if self.owed_binary.take().is_some() {
            return self
                .error(
                    "PROTOCOL_VIOLATION",
                    "expected the binary frame announced by bin_len",
                    Some(&event),
                )
                .await;
        }
        if !self.handshaken {
            return self.on_first(event).await;
        }
        let f = self.config.faults.clone();
        if event.get("crit") == Some(&Value::Bool(true)) && !f.has("crit-ignored") {
            let unknown = schema().unknown_fields(&event);
            if !unknown.is_empty() {
                let msg = format!(
                    "crit is true and these fields are unknown: {}",
                    unknown.join(", ")
                );
                return self.error("UNSUPPORTED_TYPE", &msg, Some(&event)).await;
            }
        }
        if !f.has("lenient-envelope") {
            if let Some(p) = schema().rejection(&event) {
                let msg = format!("{} ({})", p.message, p.rule);
                return self.error("PROTOCOL_VIOLATION", &msg, Some(&event)).await;
            }
        }
        let Some(seq) = event.get("seq").and_then(model::parse_seq) else {
            return self.deliver(event).await;
        };
        let expected = self.expected();
        if seq < expected {
            // A duplicate: dropped silently (spec §Sequencing and Replay).
            if f.has("no-duplicate-drop") {
                self.deliver(event).await;
            }
            return;
        }
        if seq > expected {
            if self.buffer.len() >= MAX_BUFFERED {
                return self
                    .error(
                        "SEQ_VIOLATION",
                        "too many messages after an unfilled gap",
                        Some(&event),
                    )
                    .await;
            }
            self.buffer.insert(seq, event);
            if f.has("eager-replay-request") {
                return self.on_gap_timer().await;
            }
            if self.gap_deadline.is_none() {
                self.gap_deadline = Some(Instant::now() + self.config.gap_wait);
            }
            return;
        }
        self.set_expected(seq + 1);
        self.deliver(event).await;
        while let Some(next) = self.buffer.remove(&self.expected()) {
            let s = self.expected();
            self.set_expected(s + 1);
            self.deliver(next).await;
        }
        if self.buffer.is_empty() {
            self.gap_deadline = None;
        }
    }

    fn expected(&self) -> u64 {
        self.outbox
            .as_ref()
            .and_then(|o| o.state.lock().ok().map(|s| s.expected_client_seq))
            .unwrap_or(1)
    }

    fn set_expected(&mut self, next: u64) {
        if let Some(Ok(mut s)) = self.outbox.as_ref().map(|o| o.state.lock()) {
            s.expected_client_seq = next;
        }
    }

    /// Variant `hai-on-connect`: our HAI (and tool list) before the client has said anything,
    /// in a session of our own until the client's HAI names one.
    async fn greet(&mut self) {
        let session_id = uuid::Uuid::new_v4().to_string();
        let state = self.store.create(&session_id, &self.config);
        self.outbox = Some(Outbox::new(
            self.config.clone(),
            session_id,
            state,
            ClientPrefs::default(),
        ));
        self.greeted = true;
        self.emit(Outgoing::new(
            "HAI",
            SYSTEM_CHANNEL,
            outbox::hai_payload(&self.config),
        ))
        .await;
    }

    /// The first message: it must be a HAI we can accept.
    async fn on_first(&mut self, hai: Value) {
        let f = self.config.faults.clone();
        if model::event_type(&hai) != Some("HAI") {
            self.error(
                "PROTOCOL_VIOLATION",
                "the first message must be HAI",
                Some(&hai),
            )
            .await;
            self.closing = true;
            return;
        }
        let rejected = schema().rejection(&hai);
        if let Some(p) = rejected.filter(|_| !f.has("lenient-envelope")) {
            let msg = format!("invalid HAI: {} ({})", p.message, p.rule);
            self.error("PROTOCOL_VIOLATION", &msg, Some(&hai)).await;
            self.closing = true;
            return;
        }
        let shares_major = hai
            .pointer("/payload/accept_major")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|v| v.as_u64() == Some(1)));
        if !shares_major && !f.has("no-version-check") {
            let code = if f.has("wrong-error-code") {
                "PROTOCOL_VIOLATION"
            } else {
                "VERSION_INCOMPATIBLE"
            };
            self.error(
                code,
                "no shared MAJOR version: this server speaks HAIP 1",
                Some(&hai),
            )
            .await;
            self.closing = !f.has("no-close-on-version");
            return;
        }
        let session_id = hai
            .get("session")
            .and_then(Value::as_str)
            .filter(|s| model::is_uuid(s))
            .map(str::to_owned)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let hai_seq = hai.get("seq").and_then(model::parse_seq).unwrap_or(1);
        let last_rx = hai
            .pointer("/payload/last_rx_seq")
            .and_then(model::parse_seq);
        let resumed = match last_rx {
            None => None,
            Some(last) => match self.store.get(&session_id) {
                // This fault forgets a session it could resume and starts afresh.
                Some(state) if can_resume(&state, last) && f.has("no-resume") => None,
                Some(state) if can_resume(&state, last) => Some((state, last)),
                _ if f.has("resume-unknown-accepted") => None,
                _ => {
                    let msg = format!("cannot resume session {session_id} from seq {last}");
                    self.error("RESUME_FAILED", &msg, Some(&hai)).await;
                    self.closing = true;
                    return;
                }
            },
        };
        let prefs = outbox::client_prefs(&hai);
        if let (true, None, Some(outbox)) = (self.greeted, &resumed, self.outbox.as_mut()) {
            // Our greeting opened the numbering; the session becomes the client's.
            self.store.register(&session_id, outbox.state.clone());
            if let Ok(mut s) = outbox.state.lock() {
                s.expected_client_seq = s.expected_client_seq.max(hai_seq + 1);
            }
            outbox.adopt_session(&session_id, prefs);
            self.handshaken = true;
            return self.after_hai(None).await;
        }
        let (state, replay_from) = match resumed {
            Some((state, last)) => (state, Some(last + 1)),
            None => (self.store.create(&session_id, &self.config), None),
        };
        if let Ok(mut s) = state.lock() {
            s.expected_client_seq = s.expected_client_seq.max(hai_seq + 1);
        }
        self.outbox = Some(Outbox::new(self.config.clone(), session_id, state, prefs));
        self.handshaken = true;
        if self.greeted {
            // Resumed after greeting: the replay follows the HAI already sent.
            return self.after_hai(replay_from).await;
        }
        if f.has("hai-not-first") {
            self.emit(Outgoing::new(
                "TOOL_LIST",
                SYSTEM_CHANNEL,
                agent::tool_list(&self.config.variants),
            ))
            .await;
        }
        self.emit(Outgoing::new(
            "HAI",
            SYSTEM_CHANNEL,
            outbox::hai_payload(&self.config),
        ))
        .await;
        self.after_hai(replay_from).await;
    }

    /// After our HAI: the replay a resume asked for, then the tool list and schemas.
    async fn after_hai(&mut self, replay_from: Option<u64>) {
        let f = self.config.faults.clone();
        if let (Some(from), Some(outbox)) = (replay_from, self.outbox.as_ref()) {
            let frames = outbox.replay(from, u64::MAX).unwrap_or_default();
            self.send_frames(frames).await;
        }
        if !f.has("hai-not-first") {
            self.emit(Outgoing::new(
                "TOOL_LIST",
                SYSTEM_CHANNEL,
                agent::tool_list(&self.config.variants),
            ))
            .await;
        }
        for schema in agent::tool_schemas(&self.config.variants) {
            self.emit(Outgoing::new("TOOL_SCHEMA", SYSTEM_CHANNEL, schema))
                .await;
        }
    }

    /// Handles one in-order client message.
    async fn on_gap_timer(&mut self) {
        self.gap_deadline = None;
        let Some((&first_buffered, _)) = self.buffer.iter().next() else {
            return;
        };
        if self.config.faults.has("no-replay-request") {
            return;
        }
        let from = self.expected();
        let payload =
            json!({"from_seq": from.to_string(), "to_seq": (first_buffered - 1).to_string()});
        self.emit(Outgoing::new("REPLAY_REQUEST", SYSTEM_CHANNEL, payload))
            .await;
    }

    async fn on_binary(&mut self, len: u64) {
        match self.owed_binary.take() {
            Some(owed) if owed == len => {}
            Some(owed) => {
                let msg = format!("binary frame of {len} bytes, but bin_len announced {owed}");
                self.error("PROTOCOL_VIOLATION", &msg, None).await;
            }
            None => {
                self.error(
                    "PROTOCOL_VIOLATION",
                    "a binary frame with no envelope announcing it",
                    None,
                )
                .await
            }
        }
    }

    async fn on_internal(&mut self, internal: Internal) {
        match internal {
            Internal::Emit(o) => self.emit(*o).await,
            Internal::RunEnded(id) => {
                self.runs.remove(&id);
            }
            Internal::ToolEnded(id) => {
                self.tools.remove(&id);
            }
        }
    }
}

/// A resume from `last` is possible when nothing after it has left the replay window.
fn can_resume(state: &outbox::SharedState, last: u64) -> bool {
    let Ok(s) = state.lock() else { return false };
    match (s.oldest_kept(), s.last_sent()) {
        (_, Some(sent)) if last > sent => false,
        (_, Some(sent)) if last == sent => true,
        (Some(oldest), _) => last + 1 >= oldest,
        (None, _) => last == 0,
    }
}
