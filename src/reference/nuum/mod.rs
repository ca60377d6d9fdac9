//! The Nuum reference target: `wireprobe serve nuum --stdio --db PATH`. It reads NDJSON on stdin
//! and writes NDJSON on stdout as the spec describes, with a scripted agent ([`agent`]) and a
//! SQLite database ([`store`]) holding its stable session id.

pub mod agent;
pub mod faults;
pub mod host;
mod line_faults;
pub mod store;
pub mod variants;

use crate::ndjson::{AsyncLines, Line};
use crate::protocol::json::timestamp;
use crate::protocol::nuum::input::{self, Action, HostLine};
use crate::reference::{Faults, ServeError, ServeOptions, StdioPipes, Variants};
use agent::{Tasks, TurnCtx};
use serde_json::{json, Value};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::SystemTime;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

/// Longest input line the reference agent reads; longer ones are refused with system/error.
pub const MAX_INPUT_LINE: usize = 1024 * 1024;

/// Most messages queued mid-turn; a flood beyond it is refused with system/error.
const MAX_QUEUED: usize = 1000;

enum OutMsg {
    Line(String),
    Flush(oneshot::Sender<()>),
}

/// The stdout writer: every line goes through one channel, so lines never interleave and a
/// cancelled turn never leaves half a line behind; on its way each line meets the line faults
/// switched on ([`line_faults::on_line`]).
#[derive(Clone)]
pub struct Out(mpsc::Sender<OutMsg>, Faults);

impl Out {
    fn start(mut output: impl AsyncWrite + Unpin + Send + 'static, faults: Faults) -> Out {
        let (tx, mut rx) = mpsc::channel::<OutMsg>(256);
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                match msg {
                    OutMsg::Line(mut line) => {
                        line.push('\n');
                        if output.write_all(line.as_bytes()).await.is_err()
                            || output.flush().await.is_err()
                        {
                            return;
                        }
                    }
                    OutMsg::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Out(tx, faults)
    }

    /// Writes one JSON line.
    pub async fn line(&self, value: Value) {
        for line in line_faults::on_line(&self.1, value) {
            let _ = self.0.send(OutMsg::Line(line.to_string())).await;
        }
    }

    /// Writes text as it is (for faults that print non-JSON).
    pub async fn raw(&self, text: &str) {
        let _ = self.0.send(OutMsg::Line(text.to_owned())).await;
    }

    /// Waits until everything sent so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(OutMsg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

/// Why the reference agent stopped on purpose (a fault), as opposed to stdin ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// stdin ended: a normal exit.
    InputClosed,
    /// A fault made it exit: the process should exit with this status.
    Fault(i32),
}

/// The agent between lines of input.
struct Agent {
    ctx: TurnCtx,
    faults: Faults,
    /// The running turn's cancel switch.
    running: Option<watch::Sender<bool>>,
    /// Messages held back until the turn ends (the `no-queueing` fault).
    held: Vec<String>,
    /// The `exits-when-idle` fault: when the agent last became idle after a turn.
    idle_since: Option<tokio::time::Instant>,
}

/// How long the `exits-when-idle` fault waits before it exits.
const IDLE_EXIT: std::time::Duration = std::time::Duration::from_millis(800);

/// Sleeps until `at`, or forever without one.
async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The NUUM reference target, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::nuum::Nuum,
    faults: faults::FAULTS,
    variants: variants::VARIANTS,
    listen: None,
    stdio: Some(stdio),
    keeps_database: true,
    client: Some(crate::reference::ReferenceClient {
        faults: faults::CLIENT_FAULTS,
        variants: variants::CLIENT_VARIANTS,
        dial: |agent, opts| Box::pin(host::run(agent, opts)),
        tools: &[],
        slow_tools: &[],
        leaves_when_answered: true,
    }),
};

fn stdio(pipes: StdioPipes, opts: &ServeOptions) -> crate::reference::entry::Started<'_, i32> {
    Box::pin(async move {
        Ok(match serve(pipes.input, pipes.output, opts).await? {
            Stop::InputClosed => 0,
            Stop::Fault(code) => code,
        })
    })
}

/// Serves one agent on `input`/`output` until the input ends or a fault stops it.
pub async fn serve(
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
    opts: &ServeOptions,
) -> Result<Stop, ServeError> {
    let faults = Faults::parse(faults::FAULTS, &opts.faults)?;
    let variants = Variants::parse(variants::VARIANTS, &opts.variants)?;
    let session_id = if faults.has("new-session-id") {
        store::fresh_session_id()
    } else {
        store::session_id(opts.db.as_deref()).map_err(|e| ServeError::Database(e.to_string()))?
    };
    let out = Out::start(output, faults.clone());
    let (done_tx, mut done_rx) = mpsc::channel(4);
    let mut agent = Agent {
        ctx: TurnCtx {
            out: out.clone(),
            session_id,
            faults: faults.clone(),
            variants,
            queue: Arc::new(tokio::sync::Mutex::new(Vec::new())),
            tasks: Tasks::default(),
            ids: Arc::new(AtomicU64::new(0)),
            done: done_tx,
        },
        faults,
        running: None,
        held: Vec::new(),
        idle_since: None,
    };
    let mut announced = !agent.faults.has("init-after-input");
    if announced {
        agent.announce().await;
    }
    let mut lines = AsyncLines::new(BufReader::new(input), MAX_INPUT_LINE);
    let stop = loop {
        let idle_exit = agent.idle_exit_at();
        tokio::select! {
            _ = sleep_until_some(idle_exit) => {
                if agent.ctx.tasks.lock().map(|t| t.is_empty()).unwrap_or(true) {
                    break Stop::Fault(0);
                }
                agent.idle_since = Some(tokio::time::Instant::now());
            }
            read = lines.next() => {
                if agent.idle_since.is_some() {
                    agent.idle_since = Some(tokio::time::Instant::now());
                }
                if !announced {
                    announced = true;
                    agent.announce().await;
                }
                let handled = match read {
                    Ok(Line::Eof) | Err(_) => break Stop::InputClosed,
                    Ok(Line::TooLong(n)) if agent.faults.has("stalls-on-huge-line") => {
                        let _ = n;
                        std::future::pending::<()>().await;
                        continue;
                    }
                    Ok(Line::TooLong(n)) => agent.bad(format!("line of {n} bytes is over the {MAX_INPUT_LINE}-byte limit")).await,
                    Ok(Line::Complete) => agent.handle(lines.line()).await,
                };
                if let Err(stop) = handled {
                    break stop;
                }
            }
            Some(closing) = done_rx.recv() => agent.turn_finished(closing).await,
        }
    };
    out.flush().await;
    Ok(stop)
}

impl Agent {
    /// When the `exits-when-idle` fault ends the process, if it is idle.
    fn idle_exit_at(&self) -> Option<tokio::time::Instant> {
        self.idle_since
            .filter(|_| self.running.is_none())
            .map(|since| since + IDLE_EXIT)
    }

    async fn announce(&self) {
        let out = &self.ctx.out;
        let tools = variants::tool_names(&self.ctx.variants);
        out.line(
            json!({"type": "system", "subtype": "init", "session_id": self.ctx.session_id,
            "version": env!("CARGO_PKG_VERSION"), "tools": tools}),
        )
        .await;
        if self.faults.has("stdout-log-lines") {
            out.raw("nuum reference agent ready").await;
        }
    }

    /// One input line. `Err` stops the agent.
    async fn handle(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let line = match input::parse(bytes) {
            Ok(None) => return Ok(()),
            Ok(Some(HostLine::User { blocks: true, .. }))
                if self.faults.has("rejects-content-blocks") =>
            {
                return self.bad("content blocks are not supported".into()).await
            }
            Ok(Some(line)) => line,
            Err(why) => return self.bad(why).await,
        };
        match line {
            HostLine::User { text, .. } => {
                self.user(text).await;
                Ok(())
            }
            HostLine::Control(action) => match action {
                Action::Interrupt => {
                    if let Some(cancel) = &self.running {
                        let _ = cancel.send(true);
                    }
                    Ok(())
                }
                Action::Status if self.faults.has("no-status-answer") => Ok(()),
                Action::Status => {
                    let running = self.running.is_some() && !self.faults.has("status-always-idle");
                    let queued = self.ctx.queue.lock().await.len();
                    self.ctx
                        .out
                        .line(
                            json!({"type": "system", "subtype": "status_response", "running": running,
                        "session_id": self.ctx.session_id, "queued_messages": queued}),
                        )
                        .await;
                    Ok(())
                }
                Action::Heartbeat => {
                    self.ctx.out.line(json!({"type": "system", "subtype": "heartbeat_ack",
                        "session_id": self.ctx.session_id, "timestamp": timestamp(SystemTime::now())})).await;
                    Ok(())
                }
            },
        }
    }

    /// A user message: a new turn when idle, else queued for injection.
    async fn user(&mut self, text: String) {
        if self.running.is_none() {
            self.start_turn(text).await;
        } else if self.faults.has("no-queueing") {
            if self.held.len() < MAX_QUEUED {
                self.held.push(text);
            }
        } else if self.ctx.queue.lock().await.len() >= MAX_QUEUED {
            self.ctx.out.line(json!({"type": "system", "subtype": "error",
                "message": format!("{MAX_QUEUED} messages are queued already; this one is dropped")})).await;
        } else {
            let mut queue = self.ctx.queue.lock().await;
            queue.push(text);
            let position = queue.len();
            self.ctx
                .out
                .line(json!({"type": "system", "subtype": "queued", "position": position}))
                .await;
        }
    }

    async fn start_turn(&mut self, text: String) {
        self.ctx
            .out
            .line(json!({"type": "system", "subtype": "turn_accepted",
                "session_id": self.ctx.session_id, "timestamp": timestamp(SystemTime::now())}))
            .await;
        let (cancel, cancelled) = watch::channel(false);
        self.running = Some(cancel);
        tokio::spawn(self.ctx.clone().run(text, cancelled));
    }

    /// The running turn is over: its closing lines go out, and messages it did not take start
    /// the next one.
    async fn turn_finished(&mut self, closing: Vec<Value>) {
        self.running = None;
        for line in closing {
            self.ctx.out.line(line).await;
        }
        if self.faults.has("exits-when-idle") {
            self.idle_since = Some(tokio::time::Instant::now());
        }
        let mut next: Vec<String> = std::mem::take(&mut *self.ctx.queue.lock().await);
        next.append(&mut self.held);
        if !next.is_empty() {
            self.start_turn(next.join("\n")).await;
        }
    }

    /// Bad input: system/error (unless a fault says otherwise), and serving goes on.
    async fn bad(&mut self, why: String) -> Result<(), Stop> {
        if self.faults.has("exits-on-bad-input") {
            return Err(Stop::Fault(1));
        }
        if self.faults.has("silent-on-bad-input") {
            return Ok(());
        }
        self.ctx
            .out
            .line(json!({"type": "system", "subtype": "error", "message": why}))
            .await;
        Ok(())
    }
}
