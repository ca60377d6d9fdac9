//! The scripted agent: runs queued inputs one message turn at a time, each turn driven by the
//! input's directive. The variants and the faults of behaviour live here; the faults that
//! reshape a turn's events in [`super::event_faults`], the envelope-level ones in
//! [`super::envelope::render`].
//!
//! A permission-gated tool call is announced (TOOL_CALL_START/ARGS) only once it is approved,
//! so a denied call never starts and needs no closing. Tool calls are sent in one go (no
//! await inside), so an interrupt never finds one half open; it finds at most an open text
//! or reasoning block and an open agent turn, which it closes before MESSAGE_TURN_FINISHED.

use super::envelope::{render, AskKind};
use super::event_faults::TurnFaults;
use super::session::{switched_on, Session};
use crate::reference::directive::{Directive, MAX_ITERATIONS};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

mod asks;

/// The agent's name in every event that names it.
pub const AGENT_NAME: &str = "wireprobe";
const PERMISSION_SOURCE: &str = "PermissionMiddleware";
const CLARIFICATION_SOURCE: &str = "ClarificationMiddleware";
const CONTINUATION_SOURCE: &str = "ContinuationMiddleware";
/// A text block is streamed in at most this many deltas, whatever its length.
const MAX_DELTAS: usize = 64;
/// `slow` sends a delta about this often.
const SLOW_STEP_MS: u64 = 50;
/// The `paced` variant sends a delta this often ...
const PACED_DELTA: Duration = Duration::from_millis(20);
/// ... and ends a turn this long after its last block.
const PACED_END: Duration = Duration::from_millis(50);

/// Runs turns from the input queue until the server stops.
pub async fn run_agent(session: Arc<Session>, mut inputs: mpsc::Receiver<String>) {
    let mut shutdown = session.shutdown.clone();
    loop {
        let next = async {
            let Some(text) = inputs.recv().await else {
                return false;
            };
            Turn::new(&session).run(&text).await;
            true
        };
        tokio::select! {
            _ = switched_on(&mut shutdown) => break,
            more = next => if !more { break },
        }
    }
}

/// The turn stopped early on an interrupt.
struct Interrupted;

type Step<T = ()> = Result<T, Interrupted>;

/// How a turn's body ended, when not interrupted.
enum End {
    Done,
    Failed(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Reasoning,
}

impl BlockKind {
    /// START, DELTA and END type names.
    fn types(self) -> [&'static str; 3] {
        match self {
            BlockKind::Text => ["TEXT_MESSAGE_START", "TEXT_DELTA", "TEXT_MESSAGE_END"],
            BlockKind::Reasoning => [
                "REASONING_MESSAGE_START",
                "REASONING_DELTA",
                "REASONING_MESSAGE_END",
            ],
        }
    }
}

/// One message turn in progress.
struct Turn {
    s: Arc<Session>,
    turn_id: String,
    trace_id: String,
    interrupt: watch::Receiver<bool>,
    /// The open text or reasoning block, closed by an interrupt.
    block: Option<(BlockKind, String)>,
    /// The open agent turn (iteration).
    iteration: Option<u32>,
    started: Instant,
    /// What the turn faults keep over the turn (a lock, as the turn is shared across awaits).
    faults: std::sync::Mutex<TurnFaults>,
}

impl Turn {
    fn new(s: &Arc<Session>) -> Turn {
        Turn {
            turn_id: s.fresh_id("turn"),
            trace_id: s.fresh_id("trace"),
            interrupt: s.begin_turn(),
            s: s.clone(),
            block: None,
            iteration: None,
            started: Instant::now(),
            faults: Default::default(),
        }
    }

    fn fault(&self, name: &str) -> bool {
        self.s.config.faults.has(name)
    }

    fn variant(&self, name: &str) -> bool {
        self.s.config.variants.has(name)
    }

    async fn run(mut self, text: &str) {
        self.send(
            "MESSAGE_TURN_STARTED",
            json!({
                "messageTurnId": self.turn_id,
                "conversationId": self.s.conversation_id,
                "agentName": AGENT_NAME,
            }),
        );
        if self.variant("extra-fields") {
            self.send(
                "PLAN_UPDATED",
                json!({"plan": {"steps": [{"description": "answer the user", "status": "inProgress"}]}}),
            );
        }
        let mut end = self.body(text).await;
        if end.is_ok() && self.variant("paced") {
            end = self.pause(PACED_END).await.and(end);
        }
        if end.is_err() && self.variant("interruption-handled") {
            // As the framework does: the interrupted turn ends with INTERRUPTION_HANDLED alone.
            self.s.end_turn();
            self.send(
                "INTERRUPTION_HANDLED",
                json!({"reason": "Interrupted by client."}),
            );
            return;
        }
        self.close_block();
        self.end_iteration();
        // Over before its end is announced: an input sent on seeing the end finds no turn running.
        self.s.end_turn();
        match end {
            Ok(End::Failed(message)) => self.send(
                "MESSAGE_TURN_ERROR",
                json!({"message": message, "messageTurnId": self.turn_id}),
            ),
            Ok(End::Done) | Err(Interrupted) => self.send(
                "MESSAGE_TURN_FINISHED",
                json!({
                    "messageTurnId": self.turn_id,
                    "conversationId": self.s.conversation_id,
                    "agentName": AGENT_NAME,
                    "duration": self.duration(),
                }),
            ),
        }
    }

    /// What the user's `text` asks for (a directive, or chat).
    async fn body(&mut self, text: &str) -> Step<End> {
        let own = self.variant("other-words");
        let pick = |default: String, other: &str| if own { other.to_owned() } else { default };
        match Directive::parse(text) {
            Directive::Say(text) => {
                self.begin_iteration(1)?;
                let text = pick(text, "Here is my answer, in words of my own.");
                self.text(&text).await?;
            }
            // HPD's agent has no background tasks, alarms, audio, views, client tools, state,
            // steps, interrupts, chunked text or slow tools: those are text.
            Directive::Chat(_)
            | Directive::SlowTool(_)
            | Directive::Research(_)
            | Directive::Alarm { .. }
            | Directive::Audio(_)
            | Directive::View
            | Directive::Frontend { .. }
            | Directive::State(_)
            | Directive::Step(_)
            | Directive::Interrupt(_)
            | Directive::Chunks(_) => {
                self.begin_iteration(1)?;
                let text = pick(format!("You said: {text}"), "I read your message.");
                self.text(&text).await?;
            }
            Directive::Reason(text) => {
                self.begin_iteration(1)?;
                let thought = pick(text, "Let me think this through.");
                let chunks = self.chunks(&thought);
                self.block(BlockKind::Reasoning, chunks, None).await?;
                let said = pick("I have thought it through.".into(), "Done thinking.");
                self.text(&said).await?;
            }
            Directive::Tool { name, args } => {
                self.begin_iteration(1)?;
                let call = self.s.fresh_id("call");
                self.tool_call(&call, &name, &args)?;
                self.end_iteration();
                self.begin_iteration(2)?;
                let said = pick(format!("{name} returned {args}."), "The tool has answered.");
                self.text(&said).await?;
            }
            Directive::Permission(name) => self.permission(&name, own).await?,
            Directive::Clarify(question) => {
                self.begin_iteration(1)?;
                let id = self.s.fresh_id("ask");
                let (_pending, answer) = self.s.ask(AskKind::Clarification, &id);
                self.emit(
                    "CLARIFICATION_REQUEST",
                    json!({
                        "requestId": id,
                        "sourceName": CLARIFICATION_SOURCE,
                        "question": question.as_deref().unwrap_or("What do you mean?"),
                        "agentName": AGENT_NAME,
                    }),
                )?;
                let said = match self.wait(answer).await? {
                    Some(body) => {
                        let answer = match body.get("answer") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        pick(format!("You answered: {answer}"), "Thank you, that helps.")
                    }
                    None => pick(
                        "No answer came, so I stopped here.".into(),
                        "I heard nothing back.",
                    ),
                };
                self.text(&said).await?;
            }
            Directive::Continue(n) => self.continuation(n, own).await?,
            Directive::Slow(ms) => {
                self.begin_iteration(1)?;
                let steps = (ms / SLOW_STEP_MS).clamp(1, 200);
                let word = if own { "working" } else { "tick" };
                let (chunks, pace) = if self.variant("whole-text") {
                    let all = (1..=steps).map(|i| format!("{word} {i} ")).collect();
                    (vec![all], ms)
                } else {
                    (
                        (1..=steps).map(|i| format!("{word} {i} ")).collect(),
                        ms / steps,
                    )
                };
                self.block(BlockKind::Text, chunks, Some(Duration::from_millis(pace)))
                    .await?;
            }
            Directive::Fail => {
                self.begin_iteration(1)?;
                return Ok(End::Failed("wireprobe: this turn fails on purpose".into()));
            }
        }
        Ok(End::Done)
    }

    async fn iteration_text(&mut self, i: u32, of: u32, own: bool) -> Step {
        self.begin_iteration(i)?;
        let said = if own {
            "Still going.".to_owned()
        } else {
            format!("Step {i} of {of}.")
        };
        self.text(&said).await?;
        self.end_iteration();
        Ok(())
    }

    /// Waits for the answer to an interactive request: `None` when `ask_timeout` runs out.
    async fn wait(
        &mut self,
        answer: oneshot::Receiver<Map<String, Value>>,
    ) -> Step<Option<Map<String, Value>>> {
        let timeout = self.s.config.ask_timeout;
        tokio::select! {
            _ = switched_on(&mut self.interrupt) => Err(Interrupted),
            got = tokio::time::timeout(timeout, answer) => Ok(got.ok().and_then(Result::ok)),
        }
    }

    /// Sleeps, unless interrupted first.
    async fn pause(&mut self, d: Duration) -> Step {
        tokio::select! {
            _ = switched_on(&mut self.interrupt) => Err(Interrupted),
            _ = tokio::time::sleep(d) => Ok(()),
        }
    }

    async fn text(&mut self, text: &str) -> Step {
        let chunks = self.chunks(text);
        self.block(BlockKind::Text, chunks, None).await
    }

    /// Splits a text into deltas of a few words (one in `whole-text`); their concatenation
    /// is the text.
    fn chunks(&self, text: &str) -> Vec<String> {
        if self.variant("whole-text") || text.is_empty() {
            return vec![text.to_owned()];
        }
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        let size = words.len().div_ceil(MAX_DELTAS).max(3);
        words.chunks(size).map(|c| c.concat()).collect()
    }

    /// One text or reasoning block: START, the deltas (paced if asked), END.
    async fn block(
        &mut self,
        kind: BlockKind,
        chunks: Vec<String>,
        pace: Option<Duration>,
    ) -> Step {
        let [start, delta, _] = kind.types();
        let id = self.s.fresh_id("msg");
        let pace = pace.or_else(|| self.variant("paced").then_some(PACED_DELTA));
        self.emit(start, json!({"messageId": id, "role": "assistant"}))?;
        self.block = Some((kind, id.clone()));
        for chunk in chunks {
            if let Some(pace) = pace {
                self.pause(pace).await?;
            }
            self.emit(delta, json!({"text": chunk, "messageId": id}))?;
        }
        self.close_block();
        Ok(())
    }

    /// Ends the open block, if any.
    fn close_block(&mut self) {
        let Some((kind, id)) = self.block.take() else {
            return;
        };
        self.send(kind.types()[2], json!({"messageId": id}));
    }

    /// A whole tool call (START, ARGS, END, RESULT) with `args` echoed as its result.
    fn tool_call(&mut self, call: &str, name: &str, args: &Value) -> Step {
        self.check()?;
        let message = self.s.fresh_id("msg");
        self.send(
            "TOOL_CALL_START",
            json!({"callId": call, "name": name, "messageId": message}),
        );
        self.send(
            "TOOL_CALL_ARGS",
            json!({"callId": call, "argsJson": args.to_string()}),
        );
        let output = match self.fault("denied-runs-text-tool") {
            true => json!(format!("{name} ran with {args}")),
            false => args.clone(),
        };
        let result = json!({"callId": call, "result": output});
        let end = json!({"callId": call});
        if self.variant("end-after-result") {
            self.send("TOOL_CALL_RESULT", result);
            self.send("TOOL_CALL_END", end);
        } else {
            self.send("TOOL_CALL_END", end);
            self.send("TOOL_CALL_RESULT", result);
        }
        Ok(())
    }

    fn begin_iteration(&mut self, iteration: u32) -> Step {
        self.check()?;
        self.iteration = Some(iteration);
        if !self.variant("no-agent-turns") {
            self.send("AGENT_TURN_STARTED", json!({"iteration": iteration}));
        }
        if self.variant("extra-fields") {
            self.send(
                "STATE_SNAPSHOT",
                json!({
                    "currentIteration": iteration,
                    "maxIterations": MAX_ITERATIONS,
                    "isTerminated": false,
                    "consecutiveErrorCount": 0,
                    "completedFunctions": [],
                    "agentName": AGENT_NAME,
                }),
            );
        }
        Ok(())
    }

    /// The turn's duration as the envelope carries it: milliseconds, or (variant
    /// `dotnet-types`) a .NET TimeSpan string, as the public framework writes it.
    fn duration(&self) -> Value {
        let elapsed = self.started.elapsed();
        if !self.variant("dotnet-types") {
            return json!(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        }
        let secs = elapsed.as_secs();
        let ticks = elapsed.subsec_nanos() / 100;
        json!(format!(
            "{:02}:{:02}:{:02}.{ticks:07}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        ))
    }

    /// Ends the open agent turn, if any.
    fn end_iteration(&mut self) {
        let Some(iteration) = self.iteration.take() else {
            return;
        };
        if !self.variant("no-agent-turns") {
            self.send("AGENT_TURN_FINISHED", json!({"iteration": iteration}));
        }
    }

    /// `Err` once the turn is interrupted: nothing new starts after that.
    fn check(&self) -> Step {
        if *self.interrupt.borrow() {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }

    /// Sends a new piece of output, unless the turn was interrupted.
    fn emit(&self, ty: &str, fields: Value) -> Step {
        self.check()?;
        self.send(ty, fields);
        Ok(())
    }

    /// Sends one event to every subscriber (closing events go here directly: an interrupted
    /// turn still closes what it opened).
    fn send(&self, ty: &str, fields: Value) {
        let Value::Object(mut fields) = fields else {
            return;
        };
        if self.variant("extra-fields") {
            fields.insert(
                "executionContext".into(),
                json!({"agentName": AGENT_NAME, "agentId": "wireprobe-agent", "depth": 0}),
            );
            fields.insert("traceId".into(), self.trace_id.clone().into());
            fields.insert(
                "spanId".into(),
                uuid::Uuid::new_v4().simple().to_string().into(),
            );
            fields.insert("sessionId".into(), self.s.conversation_id.clone().into());
        }
        let events = self
            .faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_event(&self.s, ty, fields);
        for (ty, fields) in events {
            let (ty, json) = render(&self.s.config.faults, &ty, fields);
            self.s.hub.publish(ty, json);
        }
    }
}
