//! The HPD reference client: a correct scripted UI facing a hosted agent, the one the client
//! suite is shown to pass on (`run hpd --client --target builtin`).
//!
//! Given `http://HOST/PREFIX`, it subscribes to `GET …/events/live` and answers each request
//! as §UI Rendering Guidance asks, with the matching response event POSTed to
//! `…/responses`: a PERMISSION_REQUEST approved, a CLARIFICATION_REQUEST with its first
//! option, a CONTINUATION_REQUEST approved for five more iterations. When the agent ends the
//! stream it reopens it after the last id it received (`Last-Event-ID`), after the delay the
//! stream's `retry:` asked for. Given `ws://…`, it does the same over the WebSocket. Events it
//! does not know, data that is not JSON and comments are passed over. It ends when the agent
//! is gone.

use crate::protocol::hpd::{events, INPUTS_ROUTE, RESPONSES_ROUTE, STREAM_ROUTE};
use crate::reference::later::Later;
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::sse::{self, Captured};
use crate::transport::websocket::{self, WsOptions};
use crate::transport::{Connection, Frame, Received};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// Longest SSE line read.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// How late the `answers-later` variant answers.
const LATER: Duration = Duration::from_millis(300);
/// A delta this long is "too much" for the `stops-on-oversize` fault.
const OVERSIZE: usize = 1_000_000;
/// The reconnection delay until a stream says otherwise.
const DEFAULT_RETRY: Duration = Duration::from_millis(200);
/// Longest a session runs before giving up on an agent that never goes away.
const MAX_SESSION: Duration = Duration::from_secs(300);

/// Plays one session against the agent at `url` until it is gone.
pub async fn run(url: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let mut client = Client {
        base: url.trim_end_matches('/').to_owned(),
        http: reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| ServeError::Connect(e.to_string()))?,
        faults,
        variants,
        due: Later::default(),
        stopped: false,
        in_turn: false,
        turn_first: None,
    };
    if url.starts_with("ws://") || url.starts_with("wss://") {
        let conn = websocket::connect(&WsOptions::new(url))
            .await
            .map_err(|e| ServeError::Connect(e.to_string()))?;
        return Ok(client.over_ws(conn).await);
    }
    client.over_sse().await
}

/// Where the client's events go.
enum Up<'a> {
    Http,
    Ws(&'a mut Connection),
}

struct Client {
    base: String,
    http: reqwest::Client,
    faults: Faults,
    variants: Variants,
    /// Responses not yet due (the `answers-later` variant).
    due: Later<Value>,
    /// A fault made it stop answering.
    stopped: bool,
    /// A message turn is in progress.
    in_turn: bool,
    /// The first permission id of the message turn in progress.
    turn_first: Option<String>,
}

impl Client {
    async fn over_sse(&mut self) -> Result<ClientEnd, ServeError> {
        if self.variants.has("greets") {
            let typed = json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": "hello"});
            self.post(INPUTS_ROUTE, &typed).await;
            self.post(INPUTS_ROUTE, &json!({"text": "hello again"}))
                .await;
        }
        let give_up = Instant::now() + MAX_SESSION;
        let (mut first_id, mut last_id) = (None::<String>, None::<String>);
        let mut retry = DEFAULT_RETRY;
        let mut opened_before = false;
        loop {
            let resume = match (&last_id, &first_id) {
                _ if !opened_before || self.faults.has("no-resume") => None,
                (Some(_), Some(first)) if self.faults.has("resumes-from-first") => {
                    Some(first.clone())
                }
                (last, _) => last.clone(),
            };
            let Some(response) = self.open(resume.as_deref()).await else {
                return Ok(ClientEnd::Closed);
            };
            opened_before = true;
            let mut events = Box::pin(sse::events(response, MAX_LINE));
            loop {
                let wake = self.due.wake(give_up);
                tokio::select! {
                    next = events.next() => match next {
                        Some(Captured::Event { data, meta }) => {
                            if let Some(ms) = meta.retry {
                                retry = Duration::from_millis(ms);
                            }
                            if let Some(id) = meta.id {
                                first_id.get_or_insert_with(|| id.clone());
                                last_id = Some(id);
                            }
                            self.on_data(&data, &mut Up::Http).await;
                        }
                        Some(Captured::Notice(_)) => {}
                        Some(Captured::Failed(_)) | None => break,
                    },
                    _ = tokio::time::sleep_until(wake) => {
                        if Instant::now() >= give_up {
                            return Ok(ClientEnd::TimedOut);
                        }
                        self.send_due(&mut Up::Http).await;
                    }
                }
            }
            if self.faults.has("no-reconnect") {
                tokio::time::sleep_until(give_up).await;
                return Ok(ClientEnd::TimedOut);
            }
            tokio::time::sleep(retry).await;
        }
    }

    /// Opens the event stream, resuming after `after`; `None` when the agent is gone.
    async fn open(&self, after: Option<&str>) -> Option<reqwest::Response> {
        let mut url = format!("{}{STREAM_ROUTE}", self.base);
        let mut req = self.http.get(&url).header("accept", "text/event-stream");
        if let Some(id) = after {
            if self.variants.has("after-query") {
                url = format!("{url}?after={}", crate::transport::query_escape(id));
                req = self.http.get(&url).header("accept", "text/event-stream");
            } else {
                req = req.header("last-event-id", id);
            }
        }
        let response = req.send().await.ok()?;
        response.status().is_success().then_some(response)
    }

    async fn over_ws(&mut self, mut conn: Connection) -> ClientEnd {
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            match conn.recv(self.due.wake(give_up)).await {
                Some((Received::Frame(Frame::Text(text)), _)) => {
                    self.on_data(&text, &mut Up::Ws(&mut conn)).await
                }
                Some((received, _)) if received.is_terminal() => return ClientEnd::Closed,
                Some(_) => {}
                None if Instant::now() >= give_up => return ClientEnd::TimedOut,
                None => self.send_due(&mut Up::Ws(&mut conn)).await,
            }
        }
    }

    /// One live event's data.
    async fn on_data(&mut self, data: &str, up: &mut Up<'_>) {
        if self.stopped {
            return;
        }
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            self.stopped = self.faults.has("stops-on-garbage");
            return;
        };
        if data.len() > OVERSIZE && self.faults.has("stops-on-oversize") {
            self.stopped = true;
            return;
        }
        let field = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("");
        let Some(known) = events::known(field("type")) else {
            self.stopped = self.faults.has("stops-on-custom-type");
            return;
        };
        let answer = match known.name {
            "MESSAGE_TURN_STARTED" | "MESSAGE_TURN_FINISHED" | "MESSAGE_TURN_ERROR" => {
                self.in_turn = known.name == "MESSAGE_TURN_STARTED";
                self.turn_first = None;
                return;
            }
            "PERMISSION_REQUEST" => self.permission(&event),
            "CLARIFICATION_REQUEST" if !self.faults.has("ignores-clarification") => {
                let answer = event
                    .get("options")
                    .and_then(|o| o.get(0))
                    .and_then(Value::as_str)
                    .unwrap_or("yes");
                json!({"type": "CLARIFICATION_RESPONSE", "requestId": field("requestId"),
                       "sourceName": field("sourceName"), "question": field("question"),
                       "answer": answer})
            }
            "CONTINUATION_REQUEST" if !self.faults.has("ignores-continuation") => {
                if self.faults.has("wrong-answer-type") {
                    json!({"type": "CLARIFICATION_RESPONSE", "requestId": field("continuationId"),
                           "sourceName": field("sourceName"), "answer": "yes"})
                } else {
                    let approved = !self.variants.has("denies");
                    json!({"type": "CONTINUATION_RESPONSE", "continuationId": field("continuationId"),
                           "sourceName": field("sourceName"), "approved": approved,
                           "extensionAmount": 5})
                }
            }
            _ => return,
        };
        let copies = match known.name == "PERMISSION_REQUEST" && self.faults.has("answers-twice") {
            true => 2,
            false => 1,
        };
        for _ in 0..copies {
            self.answer(answer.clone(), up).await;
        }
    }

    /// The answer to a permission request.
    fn permission(&mut self, event: &Value) -> Value {
        let field = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("");
        let mut id = field("permissionId").to_owned();
        // Only inside a message turn: a request outside one is its own.
        if self.in_turn {
            match &self.turn_first {
                Some(first) if self.faults.has("repeats-first-answer") => id = first.clone(),
                Some(_) => {}
                None => self.turn_first = Some(id.clone()),
            }
        }
        let approved = !self.variants.has("denies");
        if self.faults.has("snake-case-responses") {
            return json!({"type": "PERMISSION_RESPONSE", "permission_id": id,
                          "source_name": field("sourceName"), "approved": approved});
        }
        let mut answer = json!({"type": "PERMISSION_RESPONSE", "permissionId": id,
                                "sourceName": field("sourceName"), "approved": approved});
        if !approved {
            answer["reason"] = json!("denied by the wireprobe reference client");
        }
        if self.faults.has("null-fields") {
            answer["reason"] = Value::Null;
        }
        answer
    }

    /// Sends `answer` now, or queues it (`answers-later`).
    async fn answer(&mut self, mut answer: Value, up: &mut Up<'_>) {
        answer["version"] = json!("1.0");
        if self.variants.has("answers-later") {
            self.due.push(Instant::now() + LATER, answer);
            return;
        }
        self.send(&answer, up).await;
    }

    async fn send_due(&mut self, up: &mut Up<'_>) {
        for answer in self.due.take_due() {
            self.send(&answer, up).await;
        }
    }

    async fn send(&self, event: &Value, up: &mut Up<'_>) {
        match up {
            Up::Http => {
                let route = match self.faults.has("responses-to-inputs") {
                    true => INPUTS_ROUTE,
                    false => RESPONSES_ROUTE,
                };
                self.post(route, event).await;
            }
            Up::Ws(conn) => {
                let deadline = Instant::now() + Duration::from_secs(5);
                let _ = conn.send(Frame::Text(event.to_string()), deadline).await;
            }
        }
    }

    async fn post(&self, route: &str, body: &Value) {
        let _ = self
            .http
            .post(format!("{}{route}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
    }
}
