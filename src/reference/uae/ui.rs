//! The UAE reference Web UI: a correct scripted UI facing an agent over a WebSocket, the one
//! the client suite is shown to pass on (`run uae --client --target builtin`).
//!
//! Its test mode does what a person would: once connected it sends a `ui.message` ("Weigh-in
//! 187.6 today"), and it submits every A2UI view it is shown with a `ui.action` naming the
//! view's `view_id` (`form.submit` of the weight form, as the spec's example). Every event
//! is a full common envelope in its own session. Events it does not know, and text that is
//! not JSON, are passed over. It ends when the agent closes, or (`leave_when_answered`) at an
//! `assistant.message` while it holds no action back: the agent has answered what it sent.

use crate::protocol::json::timestamp;
use crate::reference::later::Later;
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::websocket::{self, WsOptions};
use crate::transport::{Connection, Frame, Received};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// How late the `acts-later` variant submits a view.
const LATER: Duration = Duration::from_millis(300);
/// Longest a session runs before giving up on an agent that never closes.
const MAX_SESSION: Duration = Duration::from_secs(300);

/// Connects to the agent at `url` and plays one session to its end.
pub async fn run(url: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let conn = websocket::connect(&WsOptions::new(url))
        .await
        .map_err(|e| ServeError::Connect(e.to_string()))?;
    let mut ui = Ui {
        conn,
        session: format!("sess_{}", uuid::Uuid::new_v4().simple()),
        next_id: 0,
        due: Later::default(),
        stopped: false,
        faults,
        variants,
        leave_when_answered: opts.leave_when_answered,
        answered: false,
    };
    let end = ui.play().await;
    ui.conn.close().await;
    Ok(end)
}

struct Ui {
    conn: Connection,
    session: String,
    next_id: u64,
    /// Actions not yet due (`acts-later`).
    due: Later<Value>,
    /// A fault made it stop acting.
    stopped: bool,
    faults: Faults,
    variants: Variants,
    /// Leave once the agent has answered the action ([`ClientOptions::leave_when_answered`]).
    leave_when_answered: bool,
    /// An `assistant.message` came while no action was held back.
    answered: bool,
}

impl Ui {
    async fn play(&mut self) -> ClientEnd {
        let text = match self.faults.has("message-without-text") {
            true => json!({"body": "Weigh-in 187.6 today"}),
            false => json!({"text": "Weigh-in 187.6 today"}),
        };
        self.send("ui.message", text).await;
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            match self.conn.recv(self.due.wake(give_up)).await {
                Some((Received::Frame(Frame::Text(text)), _)) => {
                    self.on_text(&text).await;
                    if self.answered && self.leave_when_answered {
                        return ClientEnd::Closed;
                    }
                }
                Some((received, _)) if received.is_terminal() => return ClientEnd::Closed,
                Some(_) => {}
                None if Instant::now() >= give_up => return ClientEnd::TimedOut,
                None => self.send_due().await,
            }
        }
    }

    async fn on_text(&mut self, text: &str) {
        if self.stopped {
            return;
        }
        let Ok(event) = serde_json::from_str::<Value>(text) else {
            self.stopped = self.faults.has("stops-on-garbage");
            return;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("assistant.view") => {}
            Some("assistant.message") => {
                self.answered = self.due.is_empty();
                return;
            }
            _ => {
                self.stopped = self.faults.has("stops-on-unknown-type");
                return;
            }
        }
        let Some(view) = event
            .pointer("/payload/view/view_id")
            .and_then(Value::as_str)
        else {
            return;
        };
        let renders =
            event.pointer("/payload/view/kind").and_then(Value::as_str) == Some("a2ui.v1");
        if !renders && self.faults.has("stops-on-unrenderable-view") {
            self.stopped = true;
            return;
        }
        let view = match self.faults.has("acts-on-unknown-view") {
            true => "view_wireprobe_never_sent".to_owned(),
            false => view.to_owned(),
        };
        let mut action = json!({"kind": "form.submit", "form_id": "weight_entry",
            "values": {"measured_at": "2026-01-08", "weight_lbs": 187.6}});
        if self.faults.has("action-without-kind") {
            action = json!({"form_id": "weight_entry"});
        }
        if self.faults.has("values-as-pairs") {
            action["values"] = json!([["measured_at", "2026-01-08"], ["weight_lbs", 187.6]]);
        }
        let payload = json!({"view_id": view, "action": action});
        if self.variants.has("acts-later") {
            self.due.push(Instant::now() + LATER, payload);
            return;
        }
        self.send("ui.action", payload).await;
    }

    async fn send_due(&mut self) {
        for payload in self.due.take_due() {
            self.send("ui.action", payload).await;
        }
    }

    /// Sends one event in the common envelope.
    async fn send(&mut self, kind: &str, payload: Value) {
        self.next_id += 1;
        let id = match self.faults.has("reuses-ids") {
            true => "evt_1".to_owned(),
            false => format!("evt_{}", uuid::Uuid::new_v4().simple()),
        };
        let session = match self.faults.has("switches-session") && kind == "ui.action" {
            true => format!("sess_other_{}", self.next_id),
            false => self.session.clone(),
        };
        let mut event = json!({"type": kind, "id": id, "ts": timestamp(SystemTime::now()),
            "session_id": session, "payload": payload});
        if self.variants.has("with-trace") {
            event["trace_id"] = json!(format!("tr_{}", uuid::Uuid::new_v4().simple()));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        let _ = self
            .conn
            .send(Frame::Text(event.to_string()), deadline)
            .await;
    }
}
