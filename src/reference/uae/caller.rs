//! The UAE reference agent as its executor's client: a correct scripted agent that starts its
//! API Executor as a child over stdio and calls it, the one the caller suite is shown to pass
//! on (`run uae --client --transport stdio --target builtin`).
//!
//! Its test mode calls a tool once the executor has started (the spec's example,
//! `weight_entry_save_batch` with one row), and again after each result, ok or not. Every call
//! is a full common envelope with a trace of its own, in its session. Events it does not know,
//! and lines that are not JSON, are passed over. It ends when the executor's stdout ends, or
//! (`leave_when_answered`) once every call it made has its result.

use crate::protocol::json::timestamp;
use crate::reference::later::Later;
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::{Connection, Frame, Received};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// Calls it makes at most in one session.
const MAX_CALLS: usize = 50;
/// How late the `acts-later` variant makes its next call.
const LATER: Duration = Duration::from_millis(300);
/// Longest a session runs before giving up on an executor that never ends.
const MAX_SESSION: Duration = Duration::from_secs(300);

/// Starts the executor `command` and plays one session to its end.
pub async fn run(command: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::faults::CLIENT_FAULTS, &opts.faults)?;
    let variants = Variants::parse(super::variants::CLIENT_VARIANTS, &opts.variants)?;
    let conn = crate::reference::start_child(command).await?;
    let mut agent = Caller {
        conn,
        session: format!("sess_{}", uuid::Uuid::new_v4().simple()),
        open: HashSet::new(),
        calls: 0,
        due: Later::default(),
        stopped: false,
        faults,
        variants,
        leave_when_answered: opts.leave_when_answered,
        answered: false,
    };
    let end = agent.play().await;
    agent.conn.close().await;
    Ok(end)
}

struct Caller {
    conn: Connection,
    session: String,
    /// Traces of the calls not yet answered.
    open: HashSet<String>,
    calls: usize,
    /// Calls not yet due (`acts-later`).
    due: Later<()>,
    /// A fault made it stop calling.
    stopped: bool,
    faults: Faults,
    variants: Variants,
    /// Leave once answered ([`ClientOptions::leave_when_answered`]).
    leave_when_answered: bool,
    /// Every call made has its result.
    answered: bool,
}

impl Caller {
    async fn play(&mut self) -> ClientEnd {
        self.call().await;
        if self.variants.has("two-calls") {
            self.call().await;
        }
        let give_up = Instant::now() + MAX_SESSION;
        loop {
            match self.conn.recv(self.due.wake(give_up)).await {
                Some((Received::Frame(Frame::Text(line)), _)) => {
                    self.on_line(&line).await;
                    if self.answered {
                        return ClientEnd::Closed;
                    }
                }
                Some((Received::Frame(_), _)) => self.stop_if("stops-on-garbage"),
                Some((received, _)) if received.is_terminal() => return ClientEnd::Closed,
                Some(_) => {}
                None if Instant::now() >= give_up => return ClientEnd::TimedOut,
                None => {
                    for () in self.due.take_due() {
                        self.call().await;
                    }
                }
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
        if event.get("type").and_then(Value::as_str) != Some("tool.result") {
            return self.stop_if("stops-on-unknown-type");
        }
        // A result for a call of ours (by its trace) lets the next call go.
        let trace = event.get("trace_id").and_then(Value::as_str);
        if !trace.is_some_and(|t| self.open.remove(t)) {
            return;
        }
        if event.pointer("/payload/ok") == Some(&Value::Bool(false)) {
            self.stop_if("stops-after-failure");
        }
        if self.leave_when_answered && self.open.is_empty() {
            self.answered = true;
            return;
        }
        match self.variants.has("acts-later") {
            true => self.due.push(Instant::now() + LATER, ()),
            false => self.call().await,
        }
    }

    /// One tool.call, as §Agent → API Executor shows it.
    async fn call(&mut self) {
        if self.stopped || self.calls >= MAX_CALLS {
            return;
        }
        self.calls += 1;
        let trace = format!("tr_{}", uuid::Uuid::new_v4().simple());
        let mut payload = json!({"tool": "weight_entry_save_batch",
            "args": {"rows": [{"measured_at": "2026-01-08", "weight_lbs": 187.6}]}});
        if self.faults.has("call-without-tool") {
            payload = json!({"args": payload["args"].clone()});
        }
        if self.faults.has("args-not-object") {
            payload["args"] = json!("rows=1");
        }
        let id = match self.faults.has("reuses-ids") {
            true => "evt_1".to_owned(),
            false => format!("evt_{}", uuid::Uuid::new_v4().simple()),
        };
        let event = json!({"type": "tool.call", "id": id, "ts": timestamp(SystemTime::now()),
            "trace_id": trace, "session_id": self.session, "payload": payload});
        self.open.insert(trace);
        let deadline = Instant::now() + Duration::from_secs(5);
        let _ = self
            .conn
            .send(Frame::Text(event.to_string()), deadline)
            .await;
    }
}
