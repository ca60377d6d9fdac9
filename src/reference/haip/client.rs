//! The HAIP reference client: a correct scripted UI client for judging servers' answers and,
//! with `run haip --client --target builtin`, the client a client suite is shown to pass on.
//!
//! It opens with a HAI and, once the server's HAI has come, says one line of user text within
//! the credit the server advertised (more when a FLOW_UPDATE grants it, nothing while its
//! channel is paused). It answers what the server sends as the spec asks a client to: a PONG
//! echoing each PING's nonce, a cumulative `ack` on everything it sends, a REPLAY_REQUEST for a
//! gap still open after 500 ms, duplicates dropped, a TOOL_DONE for each TOOL_CALL (its params
//! as the result), and an ERROR for a frame it cannot read. A connection that drops without a
//! close frame it resumes, naming its session and the highest seq it received. It ends when
//! the server closes the connection, or (`leave_when_answered`) once a run has ended after
//! its text went out.

use crate::protocol::haip::model;
use crate::protocol::haip::session::HaipSession;
use crate::protocol::{Decoded, Session};
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::websocket::{self, WsOptions};
use crate::transport::{Connection, Frame, Outgoing, Received};
use serde_json::{json, Value};
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;
use tokio::time::Instant;

/// How long a gap may stay open before the client asks for a replay (§Sequencing and Replay:
/// "If a gap appears wait 500 ms then send `REPLAY_REQUEST`").
const REPLAY_WAIT: Duration = Duration::from_millis(500);

/// How long the `late-pong` variant takes to answer a PING.
const LATE_PONG: Duration = Duration::from_millis(200);

/// Longest a client session runs before it gives up on a server that never closes
/// ([`ClientEnd::TimedOut`]).
const MAX_SESSION: Duration = Duration::from_secs(300);

/// Times it resumes one session at most (a server that drops every connection at once cannot
/// keep it reconnecting for ever).
const MAX_RESUMES: usize = 5;

/// How long the `resumes-later` variant waits before it reconnects.
const RESUME_LATER: Duration = Duration::from_millis(300);

/// What the client knows of the session.
struct Client {
    session: HaipSession,
    conn: Connection,
    /// How it connects again after a drop.
    dial: WsOptions,
    resumes: usize,
    /// The highest seq received in order (what `ack` says), and the seqs received past a gap.
    delivered: u64,
    ahead: BTreeSet<u64>,
    /// When the oldest open gap appeared.
    gap_since: Option<Instant>,
    /// User messages waiting for the server's HAI, for credit, or for a resume.
    outbox: VecDeque<Value>,
    /// The server's HAI has come.
    greeted: bool,
    /// Messages the server still lets the client send on its channel (`None`: unlimited).
    credit: Option<i64>,
    /// The server paused the client's channel.
    paused: bool,
    /// The event types the server's HAI accepts (`None`: it named none).
    accepted: Option<Vec<String>>,
    /// The client ended the session (no version in common): it closes the connection.
    aborted: bool,
    /// Leave once a run ends after the client's text has gone out.
    leave_when_answered: bool,
    faults: Faults,
    variants: Variants,
}

/// Connects to `url` and plays one client session to its end.
pub async fn run(url: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let mut ws = WsOptions::new(url);
    // The token it was handed, where §Authentication and Security puts it on a WebSocket.
    if let Some(token) = opts.token.as_deref().filter(|t| !t.is_empty()) {
        if faults.has("token-in-header") {
            ws.headers
                .push(("Authorization".into(), format!("Bearer {token}")));
        } else if variants.has("token-subprotocol") {
            ws.subprotocols.push(token.to_owned());
        } else if !faults.has("no-token") {
            let sep = if url.contains('?') { '&' } else { '?' };
            ws.url = format!(
                "{}{sep}token={}",
                websocket::with_root_path(url),
                crate::transport::query_escape(token)
            );
        }
    }
    let conn = websocket::connect(&ws)
        .await
        .map_err(|e| ServeError::Connect(e.to_string()))?;
    let mut client = Client {
        session: HaipSession::new(),
        conn,
        dial: ws,
        resumes: 0,
        delivered: 0,
        ahead: BTreeSet::new(),
        gap_since: None,
        outbox: VecDeque::new(),
        greeted: false,
        credit: None,
        paused: false,
        accepted: None,
        aborted: false,
        leave_when_answered: opts.leave_when_answered,
        faults,
        variants,
    };
    let end = client.play().await;
    client.conn.close().await;
    Ok(end)
}

impl Client {
    async fn play(&mut self) -> ClientEnd {
        if self.faults.has("ping-before-hai") {
            self.send(json!({"type": "PING", "payload": {"nonce": "too-early"}}))
                .await;
        }
        // The `hai-without-accept-events` fault leaves out a field every HAI must carry.
        let broken = json!({"payload": {"accept_events": crate::protocol::OMIT}});
        let with = self
            .faults
            .has("hai-without-accept-events")
            .then_some(&broken);
        let hai = self.session.handshake(with, false);
        for frame in hai.unwrap_or_default() {
            self.send_frame(frame).await;
        }
        self.outbox = self.user_text();
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            let replay_at = self.gap_since.map(|t| t + REPLAY_WAIT);
            let wake = replay_at.map_or(give_up, |at| at.min(give_up));
            match self.conn.recv(wake).await {
                Some((Received::Frame(frame), _)) => {
                    self.on_frame(&frame).await;
                    if self.aborted {
                        return ClientEnd::Closed;
                    }
                }
                // A connection dropped without a close frame (a network failure) is resumed;
                // one the server closed ends the session.
                Some((received, _))
                    if websocket::dropped(&received) && self.resumes < MAX_RESUMES =>
                {
                    if !self.resume().await {
                        return ClientEnd::Closed;
                    }
                }
                Some((received, _)) if received.is_terminal() => return ClientEnd::Closed,
                Some(_) => {}
                None if Instant::now() >= give_up => return ClientEnd::TimedOut,
                None => self.request_replay().await,
            }
        }
    }

    /// Connects again and resumes the session (§HAIP Handshake Requirements: `last_rx_seq`,
    /// the highest seq received); false when the server cannot be reached.
    async fn resume(&mut self) -> bool {
        self.resumes += 1;
        if self.variants.has("resumes-later") {
            tokio::time::sleep(RESUME_LATER).await;
        }
        let Ok(conn) = websocket::connect(&self.dial).await else {
            return false;
        };
        self.conn = conn;
        let last = match (
            self.faults.has("resumes-beyond"),
            self.faults.has("resumes-below-ack"),
        ) {
            (true, _) => Some(self.delivered + 5),
            (_, true) => Some(0),
            _ => None,
        };
        let mut with = last.map(|l| json!({"payload": {"last_rx_seq": l.to_string()}}));
        if self.faults.has("ack-stuck") {
            let stuck = json!({"ack": self.acked().to_string()});
            with = Some(with.map_or(stuck.clone(), |mut w| {
                crate::protocol::merge(&mut w, &stuck);
                w
            }));
        }
        let hai = self.session.handshake(with.as_ref(), true);
        for frame in hai.unwrap_or_default() {
            self.send_frame(frame).await;
        }
        true
    }

    async fn on_frame(&mut self, frame: &Frame) {
        let event = match self.session.decode(frame) {
            Decoded::Event(event) => event,
            Decoded::Binary(_) | Decoded::Control => return,
            Decoded::Garbage(_) if self.faults.has("silent-on-garbage") => return,
            Decoded::Garbage(_) => {
                let error = json!({"code": "PROTOCOL_VIOLATION", "message": "not a HAIP message"});
                return self.send(json!({"type": "ERROR", "payload": error})).await;
            }
        };
        let ends_run = matches!(
            model::event_type(&event),
            Some("RUN_FINISHED" | "RUN_ERROR")
        );
        self.on_event(event).await;
        // Answered: a run ended (well-formed or not: a broken server's answer is still its
        // answer) once everything the client had to say went out.
        if ends_run && self.leave_when_answered && self.outbox.is_empty() {
            self.aborted = true;
        }
    }

    async fn on_event(&mut self, event: Value) {
        // §Versioning and Extensibility: with crit true, an unknown field MUST trigger
        // UNSUPPORTED_TYPE (and the message is not acted on).
        let schema = crate::protocol::haip::schema::schema();
        let crit = event.get("crit") == Some(&Value::Bool(true));
        if crit && !self.faults.has("crit-ignored") {
            let unknown = schema.unknown_fields(&event);
            if !unknown.is_empty() {
                let error = json!({"code": "UNSUPPORTED_TYPE",
                    "message": format!("crit is true and these fields are unknown: {}", unknown.join(", "))});
                return self.send(json!({"type": "ERROR", "payload": error})).await;
            }
        }
        let unknown_type =
            model::event_type(&event).is_some_and(|ty| !model::EVENT_TYPES.contains(&ty));
        if unknown_type && self.faults.has("exits-on-unknown-type") {
            self.aborted = true;
            return;
        }
        // §Error Handling: "Any violation MUST trigger ERROR", whichever side commits it.
        if let Some(p) = schema.rejection(&event) {
            if self.faults.has("silent-on-garbage") {
                return;
            }
            let error = json!({"code": "PROTOCOL_VIOLATION",
                "message": format!("{} ({})", p.message, p.rule)});
            self.send(json!({"type": "ERROR", "payload": error})).await;
            // The `leaves-after-error` fault says its ERROR, then closes.
            self.aborted = self.faults.has("leaves-after-error");
            return;
        }
        let Some(seq) = event.get("seq").and_then(model::parse_seq) else {
            return;
        };
        let duplicate = !self.in_order(seq);
        if duplicate && !self.faults.has("answers-duplicates") {
            return;
        }
        match model::event_type(&event) {
            Some("HAI") if !self.greeted => {
                if !self.shares_major(&event) && !self.faults.has("ignores-version") {
                    let error = json!({"code": "VERSION_INCOMPATIBLE",
                        "message": "no HAIP major version in common"});
                    self.send(json!({"type": "ERROR", "payload": error})).await;
                    self.aborted = true;
                    return;
                }
                self.greeted = true;
                let (messages, _) = model::initial_credit(&event);
                self.credit = messages.map(|m| m.min(i64::MAX as u64) as i64);
                self.accepted = event
                    .pointer("/payload/accept_events")
                    .and_then(Value::as_array)
                    .map(|types| {
                        types
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    });
                self.flush().await;
            }
            Some("FLOW_UPDATE") if self.names_our_channel(&event) => {
                let add = event
                    .pointer("/payload/add_messages")
                    .and_then(Value::as_i64);
                if let (Some(credit), Some(add)) = (self.credit.as_mut(), add) {
                    *credit = credit.saturating_add(add);
                }
                self.flush().await;
            }
            Some("PAUSE_CHANNEL") if self.names_our_channel(&event) => {
                self.paused = !self.faults.has("ignores-pause");
            }
            Some("RESUME_CHANNEL") if self.names_our_channel(&event) => {
                self.paused = false;
                self.flush().await;
            }
            Some("PING") if self.faults.has("no-pong") => {}
            Some("PING") => {
                if self.variants.has("late-pong") {
                    tokio::time::sleep(LATE_PONG).await;
                }
                let mut payload = json!({});
                if let Some(nonce) = event.pointer("/payload/nonce") {
                    payload["nonce"] = match self.faults.has("pong-wrong-nonce") {
                        true => json!("not-the-ping-s-nonce"),
                        false => nonce.clone(),
                    };
                }
                self.send(json!({"type": "PONG", "payload": payload})).await;
            }
            Some("TOOL_CALL") => {
                let call_id = event.pointer("/payload/call_id").cloned();
                let params = event.pointer("/payload/params").cloned();
                let result = params.unwrap_or(json!({}));
                if let Some(call_id) = call_id {
                    let done = json!({"call_id": call_id, "status": "OK", "result": result});
                    self.send(json!({"type": "TOOL_DONE", "payload": done}))
                        .await;
                }
            }
            _ => {}
        }
    }

    /// The user's one line: START and END, or (variant `chunked-text`) START, two PARTs, END.
    fn user_text(&self) -> VecDeque<Value> {
        let id = uuid::Uuid::new_v4().to_string();
        let text = |t: &str| json!({"message_id": id, "text": t});
        let mut start = text("hello from the reference client");
        start["author"] = json!("user");
        let channel = self.channel();
        let message =
            |ty: &str, payload: Value| json!({"type": ty, "channel": channel, "payload": payload});
        let mut messages = VecDeque::new();
        if self.variants.has("chunked-text") {
            start["text"] = json!("hello ");
            messages.push_back(message("TEXT_MESSAGE_START", start));
            for part in ["from the ", "reference client"] {
                messages.push_back(message("TEXT_MESSAGE_PART", text(part)));
            }
        } else {
            messages.push_back(message("TEXT_MESSAGE_START", start));
        }
        messages.push_back(message("TEXT_MESSAGE_END", json!({"message_id": id})));
        messages
    }

    /// True when the server's HAI accepts a MAJOR version the client speaks (1).
    fn shares_major(&self, hai: &Value) -> bool {
        let ours = model::HAIP_VERSION
            .split('.')
            .next()
            .and_then(|m| m.parse::<u64>().ok());
        hai.pointer("/payload/accept_major")
            .and_then(Value::as_array)
            .is_some_and(|majors| majors.iter().any(|m| m.as_u64() == ours))
    }

    /// The channel the client's content goes on: USER, as the spec's examples have it, or
    /// (variant `own-channel`) one of its own naming; the spec leaves the name open.
    fn channel(&self) -> &'static str {
        match self.variants.has("own-channel") {
            true => "chat",
            false => model::USER_CHANNEL,
        }
    }

    /// True when a flow-control event names the channel the client's content goes on.
    fn names_our_channel(&self, event: &Value) -> bool {
        model::payload_str(event, "channel") == Some(self.channel())
    }

    /// Sends the waiting user messages the server's HAI, credit and pauses allow.
    async fn flush(&mut self) {
        let ignores_credit = self.faults.has("ignores-credit");
        while self.greeted && !self.paused {
            let allowed = ignores_credit || self.credit.is_none_or(|c| c > 0);
            if !allowed {
                return;
            }
            let Some(message) = self.outbox.pop_front() else {
                return;
            };
            // A type the server does not accept is not sent at all.
            let ty = model::event_type(&message).unwrap_or("");
            let refused = self
                .accepted
                .as_ref()
                .is_some_and(|types| !types.iter().any(|t| t == ty));
            if refused && !self.faults.has("ignores-accept-events") {
                continue;
            }
            if let Some(credit) = self.credit.as_mut() {
                *credit -= 1;
            }
            self.send(message).await;
        }
    }

    /// Takes `seq` into the ordering; false for a duplicate, which is dropped.
    fn in_order(&mut self, seq: u64) -> bool {
        if seq <= self.delivered || self.ahead.contains(&seq) {
            return false;
        }
        if seq == self.delivered + 1 {
            self.delivered = seq;
            while self.ahead.remove(&(self.delivered + 1)) {
                self.delivered += 1;
            }
            if self.ahead.is_empty() {
                self.gap_since = None;
            }
        } else {
            self.ahead.insert(seq);
            // The `eager-replay-request` fault counts the wait as already over.
            let opened = match self.faults.has("eager-replay-request") {
                true => Instant::now().checked_sub(REPLAY_WAIT),
                false => None,
            };
            self.gap_since
                .get_or_insert_with(|| opened.unwrap_or_else(Instant::now));
        }
        true
    }

    async fn request_replay(&mut self) {
        if self.gap_since.take().is_none() || self.faults.has("no-replay-request") {
            return;
        }
        let from = (self.delivered + 1).to_string();
        self.send(json!({"type": "REPLAY_REQUEST", "payload": {"from_seq": from}}))
            .await;
        // Asked once per gap: a server that does not replay is its own rules' to judge.
    }

    async fn send(&mut self, event: Value) {
        if let Ok(Outgoing::Frame(frame)) = self.session.encode(&with_ack(event, self.acked())) {
            self.send_frame(frame).await;
        }
    }

    /// What this client acknowledges: what it received in order (the `ack-stuck` fault never
    /// goes past the server's HAI).
    fn acked(&self) -> u64 {
        match self.faults.has("ack-stuck") {
            true => self.delivered.min(1),
            false => self.delivered,
        }
    }

    async fn send_frame(&mut self, frame: Frame) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let _ = self.conn.send(frame, deadline).await;
    }
}

/// `event` with the cumulative ack of what was received in order (none before anything was).
fn with_ack(mut event: Value, delivered: u64) -> Value {
    if delivered > 0 {
        event["ack"] = json!(delivered.to_string());
    }
    event
}
