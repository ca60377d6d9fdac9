//! The HUMA reference client: a correct scripted client application, the one a client suite
//! is shown to pass on (`run huma --client --target builtin`).
//!
//! It connects over Socket.IO (a WebSocket at once), sends CONNECT, and once the server has
//! answered it does what the spec's "Client Responsibility" paragraphs ask: a tool-call is run
//! and answered with one tool-result naming its toolCallId and toolName (`lookup_movie`
//! succeeds at once; `slow_search` runs until cancelled, then answers canceled with triggering
//! false; any other name is a failure, "Unknown tool: NAME"); each message_sent is confirmed
//! with an addon-tool-event echoing its toolCallId and messageIndex. An error event, an event it
//! does not know and a packet it cannot read are ignored. It ends when the server closes.

use crate::protocol::huma::validate::forbidden_key_path;
use crate::reference::later::Later;
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::socketio::packet::{self, EioPacket, SioKind, SioPacket};
use crate::transport::socketio::{self, DEFAULT_PATH};
use crate::transport::websocket::WsOptions;
use crate::transport::{Connection, Frame, Received};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// The tool that answers at once.
pub const QUICK_TOOL: &str = "lookup_movie";
/// The tool that runs until cancelled.
pub const SLOW_TOOL: &str = "slow_search";

/// How long the slow tool runs when nobody cancels it.
const SLOW_RUN: Duration = Duration::from_secs(30);
/// How late the `answers-later` variant answers, and the `ignores-cancel` fault finishes.
const LATER: Duration = Duration::from_millis(300);
/// A message this long "cannot be delivered" by the `chokes-on-oversize` fault.
const OVERSIZE: usize = 1_000_000;
/// Longest a session runs before giving up on a server that never closes.
const MAX_SESSION: Duration = Duration::from_secs(300);

/// A client event held back (a result of a tool still running), with the call it answers.
struct Due {
    call: String,
    event: Value,
}

struct Client {
    conn: Connection,
    /// Results and confirmations not yet due.
    due: Later<Due>,
    faults: Faults,
    variants: Variants,
}

/// Connects to the Socket.IO server at `url` and plays one session to its end.
pub async fn run(url: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let (conn, _) = socketio::connect(WsOptions::new(url), DEFAULT_PATH)
        .await
        .map_err(|e| ServeError::Connect(e.to_string()))?;
    let mut client = Client {
        conn,
        due: Later::default(),
        faults,
        variants,
    };
    let end = client.play().await;
    client.conn.close().await;
    Ok(end)
}

impl Client {
    async fn play(&mut self) -> ClientEnd {
        self.send_packet(SioPacket::new(SioKind::Connect, "/", None))
            .await;
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            match self.conn.recv(self.due.wake(give_up)).await {
                Some((Received::Frame(Frame::Text(text)), _)) => {
                    if self.on_text(&text).await.is_err() {
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

    /// One Engine.IO packet. `Err`: a fault makes the client give up here.
    async fn on_text(&mut self, text: &str) -> Result<(), ()> {
        let Ok(EioPacket::Message(message)) = packet::parse_eio(text) else {
            return Ok(());
        };
        // A packet it cannot parse is ignored (socket.io-client would close: HUMA-CLI-010).
        let Ok(p) = packet::parse_sio(&message) else {
            return Ok(());
        };
        let Some((channel, args)) = p.event_parts() else {
            return Ok(());
        };
        let event = args.first().cloned().unwrap_or(Value::Null);
        match channel {
            "error" => self.gives_up("dies-after-error"),
            "event" => self.on_event(&event).await,
            _ => Ok(()),
        }
    }

    fn gives_up(&self, fault: &str) -> Result<(), ()> {
        if self.faults.has(fault) {
            Err(())
        } else {
            Ok(())
        }
    }

    async fn on_event(&mut self, event: &Value) -> Result<(), ()> {
        let field = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("");
        let id = field("toolCallId").to_owned();
        let name = field("toolName").to_owned();
        match field("type") {
            "tool-call" => {
                let arguments = event.get("arguments").cloned().unwrap_or(Value::Null);
                if forbidden_key_path(&arguments).is_some() {
                    self.gives_up("pollutes")?;
                }
                self.on_call(id, name, &arguments).await;
            }
            "cancel-tool-call" => self.on_cancel(&id, &name).await,
            "messaging" if field("event") == "message_sent" => {
                let message = field("message");
                if message.len() > OVERSIZE {
                    self.gives_up("chokes-on-oversize")?;
                }
                self.confirm(&id, event.get("messageIndex")).await;
            }
            "messaging" => {}
            _ => self.gives_up("crashes-on-unknown-type")?,
        }
        Ok(())
    }

    async fn on_call(&mut self, id: String, name: String, arguments: &Value) {
        let later = self.variants.has("answers-later");
        let result = match name.as_str() {
            QUICK_TOOL => {
                let title = arguments
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or("Inception");
                let mut found = json!({"title": title, "year": 2010, "rating": 8.8});
                if self.faults.has("result-with-proto") {
                    found["__proto__"] = json!({"polluted": true});
                }
                if self.faults.has("oversized-result") {
                    found["plot"] = json!("x".repeat(100_000));
                }
                let result = match self.variants.has("string-results") {
                    true => Value::String(found.to_string()),
                    false => found,
                };
                self.result(&id, &name, "success", Some(result), None)
            }
            SLOW_TOOL => {
                let done = self.result(&id, &name, "success", Some(json!("done")), None);
                self.schedule(SLOW_RUN, id, done);
                return;
            }
            _ if self.faults.has("unknown-tool-success") => {
                self.result(&id, &name, "success", Some(json!(null)), None)
            }
            _ => {
                let error = (!self.faults.has("failure-without-error"))
                    .then(|| format!("Unknown tool: {name}"));
                self.result(&id, &name, "failure", None, error)
            }
        };
        if later {
            self.schedule(LATER, id, result);
            return;
        }
        self.emit(result.clone()).await;
        if self.faults.has("answers-twice") {
            self.emit(result).await;
        }
    }

    async fn on_cancel(&mut self, id: &str, name: &str) {
        let Some(running) = self.due.take_first(|d| d.call == id) else {
            return;
        };
        if self.faults.has("ignores-cancel") {
            // Runs on, and finishes soon after, with success.
            self.due.push(Instant::now() + LATER, running);
            return;
        }
        let mut canceled = self.result(id, name, "canceled", None, None);
        canceled["triggering"] = json!(self.faults.has("canceled-triggering"));
        self.emit(canceled).await;
    }

    /// The confirmation of a message_sent.
    async fn confirm(&mut self, id: &str, index: Option<&Value>) {
        if self.faults.has("no-confirmation") {
            return;
        }
        let mut index = index.cloned().unwrap_or(json!(0));
        if self.faults.has("wrong-message-index") {
            index = json!(index.as_u64().unwrap_or(0) + 1);
        }
        let data = match self.variants.has("failure-confirmations") {
            true => {
                json!({"messageIndex": index, "success": false, "error": "Failed to send: rate limited"})
            }
            false => {
                json!({"messageIndex": index, "success": true, "context": {"conversationHistory": "[14:31] Agent: delivered"}})
            }
        };
        let confirmation = json!({"type": "addon-tool-event", "toolCallId": id, "data": data});
        if self.variants.has("confirms-late") {
            self.schedule(LATER, String::new(), confirmation);
            return;
        }
        self.emit(confirmation).await;
    }

    fn result(
        &self,
        id: &str,
        name: &str,
        outcome: &str,
        result: Option<Value>,
        error: Option<String>,
    ) -> Value {
        let name = match self.faults.has("wrong-tool-name") {
            true => format!("{name}_v2"),
            false => name.to_owned(),
        };
        let mut event = json!({
            "type": "tool-result",
            "triggering": true,
            "toolCallId": id,
            "toolName": name,
            "outcome": outcome,
        });
        if let Some(result) = result {
            event["result"] = result;
        }
        if let Some(error) = error {
            event["error"] = json!(error);
        }
        event
    }

    fn schedule(&mut self, after: Duration, call: String, event: Value) {
        self.due.push(Instant::now() + after, Due { call, event });
    }

    async fn send_due(&mut self) {
        for due in self.due.take_due() {
            self.emit(due.event).await;
        }
    }

    async fn emit(&mut self, event: Value) {
        self.send_packet(SioPacket::event("/", "message", vec![event]))
            .await;
    }

    async fn send_packet(&mut self, p: SioPacket) {
        let frame = Frame::Text(p.to_frame_text());
        // A server that has gone is noticed by the read side.
        let _ = self
            .conn
            .send(frame, Instant::now() + Duration::from_secs(10))
            .await;
    }
}
