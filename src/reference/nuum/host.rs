//! The Nuum reference host: a correct scripted application that starts Nuum as its child, the
//! one the host suite is shown to pass on (`run nuum --client --target builtin`).
//!
//! Given the agent's command line, it starts the agent (its whole process group goes with the
//! host), waits for system/init, then sends a user message, and another after each result, as
//! §Input Messages shows them. Output it does not know, lines that are not JSON, system errors
//! and failed turns are passed over. It ends when the agent's stdout ends, or
//! (`leave_when_answered`) once its first message has a result: it closes the agent's stdin.

use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::{Connection, Frame, Received};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// Messages it sends at most in one session.
const MAX_MESSAGES: usize = 50;
/// Longest a session runs before giving up on an agent that never ends.
const MAX_SESSION: Duration = Duration::from_secs(300);

/// Starts the agent `command` and plays one session to its end.
pub async fn run(command: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let conn = crate::reference::start_child(command).await?;
    let mut host = Host {
        conn,
        sent: 0,
        started: false,
        stopped: false,
        leave_when_answered: opts.leave_when_answered,
        answered: false,
        faults,
        variants,
    };
    let end = host.play().await;
    host.conn.close().await;
    Ok(end)
}

struct Host {
    conn: Connection,
    /// User messages sent.
    sent: usize,
    /// The agent has said init.
    started: bool,
    /// A fault made it stop sending.
    stopped: bool,
    /// Leave once its first message has a result.
    leave_when_answered: bool,
    answered: bool,
    faults: Faults,
    variants: Variants,
}

impl Host {
    async fn play(&mut self) -> ClientEnd {
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            match self.conn.recv(give_up).await {
                Some((Received::Frame(Frame::Text(line)), _)) => {
                    self.on_line(&line).await;
                    if self.answered {
                        return ClientEnd::Closed;
                    }
                }
                Some((Received::Frame(_), _)) => self.stop_if("stops-on-garbage"),
                Some((received, _)) if received.is_terminal() => return ClientEnd::Closed,
                Some(_) => {}
                None => return ClientEnd::TimedOut,
            }
        }
    }

    fn stop_if(&mut self, fault: &str) {
        if self.faults.has(fault) {
            self.stopped = true;
        }
    }

    async fn on_line(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            return self.stop_if("stops-on-garbage");
        };
        let field = |name: &str| event.get(name).and_then(Value::as_str);
        match (field("type"), field("subtype")) {
            (Some("system"), Some("init")) if !self.started => {
                self.started = true;
                if self.variants.has("asks-status") {
                    self.write(json!({"type": "control", "action": "status"}))
                        .await;
                }
                self.next_message().await;
            }
            (Some("result"), Some("success")) => self.next_message().await,
            (Some("result"), _) => {
                self.stop_if("stops-on-error");
                self.next_message().await;
            }
            (Some("system"), Some("error")) => self.stop_if("stops-on-error"),
            (Some("system"), Some(subtype)) if !KNOWN_SYSTEM.contains(&subtype) => {
                self.stop_if("stops-on-unknown-output")
            }
            (Some("system" | "assistant" | "user"), _) => {}
            _ => self.stop_if("stops-on-unknown-output"),
        }
    }

    /// The next user message, as §Input Messages shows it.
    async fn next_message(&mut self) {
        if self.leave_when_answered && self.sent > 0 {
            self.answered = true;
            return;
        }
        if self.stopped || self.sent >= MAX_MESSAGES {
            return;
        }
        self.sent += 1;
        if self.faults.has("not-json") {
            self.write_raw("hello from the host").await;
        }
        if self.faults.has("unknown-action") {
            self.write(json!({"type": "control", "action": "pause"}))
                .await;
        }
        if self.variants.has("heartbeats") {
            self.write(json!({"type": "control", "action": "heartbeat"}))
                .await;
        }
        let text = format!("Message {} from the host", self.sent);
        let content = match self.variants.has("content-blocks") {
            true => json!([{"type": "text", "text": text}]),
            false => json!(text),
        };
        let role = match self.faults.has("bad-role") {
            true => "human",
            false => "user",
        };
        self.write(json!({"type": "user", "message": {"role": role, "content": content}}))
            .await;
    }

    async fn write(&mut self, line: Value) {
        self.write_raw(&line.to_string()).await;
    }

    async fn write_raw(&mut self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let _ = self.conn.send(Frame::Text(line.to_owned()), deadline).await;
    }
}

/// The system subtypes the spec and the public implementation name.
const KNOWN_SYSTEM: &[&str] = &[
    "init",
    "tool_result",
    "turn_accepted",
    "tasks",
    "error",
    "queued",
    "injected",
    "status_response",
    "status",
    "heartbeat_ack",
    "interrupted",
    "consolidation",
];
