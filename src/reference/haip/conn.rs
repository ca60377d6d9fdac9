//! One client connection of the HAIP reference target: handshake, inbound sequencing and gap
//! replay, inbound credit, and dispatch of every event type.

use super::agent::{self, Directive, Internal, RunSpec};
use super::outbox::{self, ClientPrefs, Outbox, Outgoing, SessionStore, AGENT_CHANNEL};
use super::Config;
use crate::protocol::haip::model::{self, SYSTEM_CHANNEL};
use crate::protocol::haip::schema::schema;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

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
    sink: SplitSink<WebSocketStream<TcpStream>, Message>,
    stream: Option<SplitStream<WebSocketStream<TcpStream>>>,
    outbox: Option<Outbox>,
    /// True once HAI was exchanged.
    handshaken: bool,
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
}

impl Conn {
    pub fn new(config: Arc<Config>, store: SessionStore, ws: WebSocketStream<TcpStream>) -> Self {
        let (sink, stream) = ws.split();
        let (internal_tx, internal_rx) = mpsc::channel(256);
        Conn {
            config,
            store,
            sink,
            stream: Some(stream),
            outbox: None,
            handshaken: false,
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
        }
    }

    pub async fn run(mut self) {
        let Some(mut stream) = self.stream.take() else {
            return;
        };
        let mut refill = tokio::time::interval(Duration::from_millis(100));
        while !self.closing {
            let gap = self.gap_deadline;
            tokio::select! {
                msg = stream.next() => match msg {
                    Some(Ok(Message::Text(text))) => self.on_text(text.as_str()).await,
                    Some(Ok(Message::Binary(bytes))) => self.on_binary(bytes.len() as u64).await,
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                },
                Some(internal) = self.internal_rx.recv() => self.on_internal(internal).await,
                _ = tokio::time::sleep_until(gap.unwrap_or_else(Instant::now)), if gap.is_some() => self.on_gap_timer().await,
                _ = refill.tick() => self.refill().await,
            }
        }
        if self.closing {
            let frame = CloseFrame {
                code: CloseCode::Protocol,
                reason: "protocol error".into(),
            };
            let _ = self.sink.send(Message::Close(Some(frame))).await;
        }
        self.tasks.abort_all();
    }

    async fn flush(&mut self) {
        let Some(outbox) = self.outbox.as_mut() else {
            return;
        };
        for frame in outbox.ready() {
            if self.sink.send(frame).await.is_err() {
                self.closing = true;
                return;
            }
        }
    }

    async fn emit(&mut self, o: Outgoing) {
        if let Some(outbox) = self.outbox.as_mut() {
            outbox.queue(o);
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
        let mut payload = json!({"code": code});
        if !self.config.faults.has("error-without-message") {
            payload["message"] = json!(message);
        }
        if let Some(id) = related
            .and_then(|e| e.get("id"))
            .filter(|v| v.as_str().is_some_and(is_uuid))
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
            let mut problems = Vec::new();
            schema().check(&event, &mut problems);
            // Unknown fields without crit may be ignored (spec §Versioning and Extensibility).
            problems.retain(|v| v.rule != "HAIP-ENV-005");
            if let Some(p) = problems.first() {
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
        let mut problems = Vec::new();
        schema().check(&hai, &mut problems);
        problems.retain(|v| v.rule != "HAIP-ENV-005");
        if let Some(p) = problems.first().filter(|_| !f.has("lenient-envelope")) {
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
            .filter(|s| is_uuid(s))
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
        let (state, replay_from) = match resumed {
            Some((state, last)) => (state, Some(last + 1)),
            None => (self.store.create(&session_id, &self.config), None),
        };
        if let Ok(mut s) = state.lock() {
            s.expected_client_seq = s.expected_client_seq.max(hai_seq + 1);
        }
        let prefs = ClientPrefs::from_hai(&hai);
        self.outbox = Some(Outbox::new(self.config.clone(), session_id, state, prefs));
        self.handshaken = true;
        if f.has("hai-not-first") {
            self.emit(Outgoing::new(
                "TOOL_LIST",
                SYSTEM_CHANNEL,
                agent::tool_list(),
            ))
            .await;
        }
        self.emit(Outgoing::new(
            "HAI",
            SYSTEM_CHANNEL,
            outbox::hai_payload(&self.config),
        ))
        .await;
        if let (Some(from), Some(outbox)) = (replay_from, self.outbox.as_ref()) {
            for frame in outbox.replay(from, u64::MAX).unwrap_or_default() {
                if self.sink.send(frame).await.is_err() {
                    self.closing = true;
                    return;
                }
            }
        }
        if !f.has("hai-not-first") {
            self.emit(Outgoing::new(
                "TOOL_LIST",
                SYSTEM_CHANNEL,
                agent::tool_list(),
            ))
            .await;
        }
        for schema in agent::tool_schemas() {
            self.emit(Outgoing::new("TOOL_SCHEMA", SYSTEM_CHANNEL, schema))
                .await;
        }
    }

    /// Handles one in-order client message.
    async fn deliver(&mut self, event: Value) {
        let f = self.config.faults.clone();
        let ty = model::event_type(&event).unwrap_or("").to_owned();
        if model::consumes_credit(&ty)
            && !self.consume_credit(&event)
            && !f.has("no-flow-enforcement")
        {
            return self
                .error(
                    "FLOW_CONTROL_VIOLATION",
                    "message beyond the credit granted on its channel",
                    Some(&event),
                )
                .await;
        }
        let run_id = event
            .get("run_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let payload_str = |k: &str| model::payload_str(&event, k).map(str::to_owned);
        match ty.as_str() {
            "PING" => {
                if f.has("no-pong") {
                    return;
                }
                let mut payload = json!({});
                if let Some(nonce) = event.pointer("/payload/nonce") {
                    payload["nonce"] = if f.has("pong-nonce") {
                        json!("wireprobe-wrong-nonce")
                    } else if f.has("bad-ping-payload") {
                        json!(42)
                    } else {
                        nonce.clone()
                    };
                }
                self.emit(Outgoing::new("PONG", SYSTEM_CHANNEL, payload))
                    .await;
            }
            "REPLAY_REQUEST" => {
                let from = event
                    .pointer("/payload/from_seq")
                    .and_then(model::parse_seq)
                    .unwrap_or(1);
                let to = event
                    .pointer("/payload/to_seq")
                    .and_then(model::parse_seq)
                    .unwrap_or(u64::MAX);
                let replay = self.outbox.as_ref().map(|o| o.replay(from, to));
                match replay {
                    Some(Ok(frames)) => {
                        for frame in frames {
                            if self.sink.send(frame).await.is_err() {
                                self.closing = true;
                                return;
                            }
                        }
                    }
                    Some(Err(())) if !f.has("silent-replay-too-old") => {
                        let msg = format!("seq {from} is older than the replay window");
                        self.error("REPLAY_TOO_OLD", &msg, Some(&event)).await;
                    }
                    _ => {}
                }
            }
            "RUN_STARTED" => {
                let Some(id) = run_id.or_else(|| payload_str("run_id")) else {
                    return self
                        .error(
                            "PROTOCOL_VIOLATION",
                            "RUN_STARTED needs a run_id",
                            Some(&event),
                        )
                        .await;
                };
                if self.seen_run(&id) {
                    return self
                        .error(
                            "PROTOCOL_VIOLATION",
                            "run_id already used in this session",
                            Some(&event),
                        )
                        .await;
                }
                if !self.room_for_run() {
                    return self
                        .error(
                            "RUN_LIMIT_EXCEEDED",
                            "max_concurrent_runs reached",
                            Some(&event),
                        )
                        .await;
                }
                self.note_run(&id);
                self.runs.insert(id, None);
            }
            "RUN_CANCEL" => {
                let id = run_id.or_else(|| payload_str("run_id")).unwrap_or_default();
                if f.has("ignores-run-cancel") && self.runs.contains_key(&id) {
                    return;
                }
                match self.runs.remove(&id) {
                    Some(Some(cancel)) => {
                        let _ = cancel.send(());
                        // The run task reports its own end; keep it open until then.
                        self.runs.insert(id, None);
                    }
                    Some(None) => {
                        let end = Outgoing::new(
                            "RUN_FINISHED",
                            AGENT_CHANNEL,
                            json!({"status": "CANCELLED"}),
                        );
                        self.emit(end.in_run(Some(&id))).await;
                    }
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "RUN_CANCEL names no open run",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "RUN_FINISHED" | "RUN_ERROR" => {
                if let Some(id) = run_id {
                    self.runs.remove(&id);
                }
            }
            "TEXT_MESSAGE_START" => {
                let id = payload_str("message_id").unwrap_or_default();
                self.texts
                    .insert(id, (payload_str("text").unwrap_or_default(), run_id));
            }
            "TEXT_MESSAGE_PART" => {
                let id = payload_str("message_id").unwrap_or_default();
                match self.texts.get_mut(&id) {
                    Some((text, _)) if text.len() < 1 << 20 => {
                        text.push_str(&payload_str("text").unwrap_or_default())
                    }
                    Some(_) => {}
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "TEXT_MESSAGE_PART for a message never started",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "TEXT_MESSAGE_END" => {
                let id = payload_str("message_id").unwrap_or_default();
                match self.texts.remove(&id) {
                    Some((text, start_run)) => {
                        self.on_user_message(&text, start_run.or(run_id), &event)
                            .await
                    }
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "TEXT_MESSAGE_END for a message never started",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "AUDIO_CHUNK" => {
                if let Some(len) = event.get("bin_len").and_then(Value::as_u64) {
                    if event.pointer("/payload/data").is_some() {
                        return self
                            .error(
                                "PROTOCOL_VIOLATION",
                                "a binary-mode envelope must not contain data",
                                Some(&event),
                            )
                            .await;
                    }
                    self.owed_binary = Some(len);
                } else if model::media_bytes(&event).is_none() {
                    self.error(
                        "PROTOCOL_VIOLATION",
                        "payload.data is not valid Base64",
                        Some(&event),
                    )
                    .await;
                }
            }
            "TOOL_CALL" => {
                let call_id = payload_str("call_id").unwrap_or_default();
                if self.tools.contains_key(&call_id) {
                    return self
                        .error("PROTOCOL_VIOLATION", "call_id already in use", Some(&event))
                        .await;
                }
                let tool = payload_str("tool").unwrap_or_default();
                let params = event
                    .pointer("/payload/params")
                    .cloned()
                    .unwrap_or(json!({}));
                let (cancel_tx, cancel_rx) = oneshot::channel();
                self.tools.insert(call_id.clone(), cancel_tx);
                let task = agent::call_tool(
                    call_id,
                    tool,
                    params,
                    f.clone(),
                    self.internal_tx.clone(),
                    cancel_rx,
                );
                self.tasks.spawn(task);
            }
            "TOOL_CANCEL" => {
                // Cancelling a call that already ended is a harmless race: nothing to do.
                if let Some(cancel) = payload_str("call_id").and_then(|id| self.tools.remove(&id)) {
                    let _ = cancel.send(());
                }
            }
            "FLOW_UPDATE" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    let m = event
                        .pointer("/payload/add_messages")
                        .and_then(Value::as_i64);
                    let b = event.pointer("/payload/add_bytes").and_then(Value::as_i64);
                    o.grant(&ch, m, b);
                }
                self.flush().await;
            }
            "PAUSE_CHANNEL" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    o.pause(&ch);
                }
            }
            "RESUME_CHANNEL" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    o.resume(&ch);
                }
                self.flush().await;
            }
            // PONG, ERROR, a later HAI, and tool events for calls we never make need no answer.
            _ => {}
        }
    }

    fn seen_run(&self, id: &str) -> bool {
        self.outbox
            .as_ref()
            .is_some_and(|o| o.state.lock().is_ok_and(|s| s.run_ids.contains(id)))
    }

    fn note_run(&self, id: &str) {
        if let Some(Ok(mut s)) = self.outbox.as_ref().map(|o| o.state.lock()) {
            s.run_ids.insert(id.to_owned());
        }
    }

    fn room_for_run(&self) -> bool {
        self.runs.len() < self.config.max_concurrent_runs || self.config.faults.has("no-run-limit")
    }

    async fn on_user_message(&mut self, text: &str, run_id: Option<String>, event: &Value) {
        let f = self.config.faults.clone();
        let (run_id, announce) = match run_id.filter(|id| matches!(self.runs.get(id), Some(None))) {
            Some(id) => (id, false),
            None => {
                if !self.room_for_run() {
                    return self
                        .error(
                            "RUN_LIMIT_EXCEEDED",
                            "max_concurrent_runs reached",
                            Some(event),
                        )
                        .await;
                }
                let id = if f.has("run-id-reuse") {
                    "00000000-0000-4000-8000-000000000001".to_owned()
                } else {
                    uuid::Uuid::new_v4().to_string()
                };
                (id, true)
            }
        };
        self.note_run(&run_id);
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.runs.insert(run_id.clone(), Some(cancel_tx));
        let binary_ok = self.outbox.as_ref().is_some_and(|o| o.client.binary_frames);
        let spec = RunSpec {
            run_id,
            announce,
            directive: Directive::parse(text),
            binary_ok,
            faults: f,
        };
        self.tasks
            .spawn(agent::run(spec, self.internal_tx.clone(), cancel_rx));
    }

    /// Takes one message's credit; false when the client had none left.
    fn consume_credit(&mut self, event: &Value) -> bool {
        let channel = event
            .get("channel")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let bytes = model::media_bytes(event).unwrap_or(0) as i64;
        let (m, b) = (
            self.config.initial_credit_messages as i64,
            self.config.initial_credit_bytes as i64,
        );
        let g = self.granted.entry(channel).or_insert(Granted {
            messages: m,
            bytes: b,
            used_since_grant: 0,
            last_arrival: Instant::now(),
        });
        g.messages -= 1;
        g.bytes -= bytes;
        g.used_since_grant += 1;
        g.last_arrival = Instant::now();
        g.messages >= 0 && g.bytes >= 0
    }

    /// Grants credit back on channels that went idle after using half of it.
    async fn refill(&mut self) {
        let half = (self.config.initial_credit_messages / 2).max(1);
        let idle = self.config.credit_refill_idle;
        let zero = self.config.faults.has("zero-credit-grant");
        let mut grants = Vec::new();
        for (channel, g) in &mut self.granted {
            if g.used_since_grant >= half && g.last_arrival.elapsed() >= idle && g.messages >= 0 {
                let add = g.used_since_grant;
                g.messages += add as i64;
                g.used_since_grant = 0;
                grants
                    .push(json!({"channel": channel, "add_messages": if zero { 0 } else { add }}));
            }
        }
        for payload in grants {
            self.emit(Outgoing::new("FLOW_UPDATE", SYSTEM_CHANNEL, payload))
                .await;
        }
    }

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
            Internal::Emit(o) => self.emit(o).await,
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

fn is_uuid(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok() && s.len() == 36
}
