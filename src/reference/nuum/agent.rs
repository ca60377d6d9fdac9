//! One turn of the reference agent: a scripted "model" driven by directives in the user's text,
//! with mid-turn injection before every assistant output and a cancellation point everywhere.

use super::variants::tool_names;
use super::Out;
use crate::protocol::json::timestamp;
use crate::reference::directive::Directive;
use crate::reference::{Faults, Variants};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{mpsc, watch};

/// How a turn ended.
enum Outcome {
    Success(String),
    Error(String),
    Cancelled,
}

/// Background tasks and alarms, as the tasks snapshot shows them.
pub type Tasks = Arc<Mutex<Vec<Value>>>;

/// Everything a running turn needs.
#[derive(Clone)]
pub struct TurnCtx {
    pub out: Out,
    pub session_id: String,
    pub faults: Faults,
    pub variants: Variants,
    /// Messages queued mid-turn, waiting for injection. Held while `queued` or `injected` is
    /// written, so the host never reads an injection before the message's `queued`.
    pub queue: Arc<tokio::sync::Mutex<Vec<String>>>,
    pub tasks: Tasks,
    pub ids: Arc<AtomicU64>,
    /// Takes the turn's closing lines (its result): the agent loop marks the turn over before
    /// it writes them, so a `status` the host sends after reading the result never sees the
    /// turn still running.
    pub done: mpsc::Sender<Vec<Value>>,
}

impl TurnCtx {
    /// Plays one turn for `text` to its result; `cancel` turning true interrupts it.
    pub async fn run(self, text: String, mut cancel: watch::Receiver<bool>) {
        let started = Instant::now();
        let outcome = if self.faults.has("ignores-interrupt") {
            self.play(&text).await
        } else {
            tokio::select! {
                outcome = self.play(&text) => outcome,
                _ = cancel.wait_for(|c| *c) => Outcome::Cancelled,
            }
        };
        let closing = self.finish(outcome, started.elapsed());
        let _ = self.done.send(closing).await;
    }

    /// What the user's `text` asks for (a directive, or chat), played to its outcome.
    async fn play(&self, text: &str) -> Outcome {
        let [echo, research, alarm] = tool_names(&self.variants);
        match Directive::parse(text) {
            Directive::Say(text) => {
                self.say_with("Sure, here it is:", &text).await;
                Outcome::Success(text)
            }
            // Nuum's agent has no reasoning, permissions, questions, audio, views, client tools,
            // state, steps, interrupts or chunked text: text.
            Directive::Chat(_)
            | Directive::Reason(_)
            | Directive::Permission(_)
            | Directive::Clarify(_)
            | Directive::Continue(_)
            | Directive::Audio(_)
            | Directive::View
            | Directive::Frontend { .. }
            | Directive::State(_)
            | Directive::Step(_)
            | Directive::Interrupt(_)
            | Directive::Chunks(_) => {
                let reply = format!("You said: {text}");
                self.say_with("I read your message.", &reply).await;
                Outcome::Success(reply)
            }
            Directive::Tool { name, args: input } => {
                let content = input.to_string();
                let name = if self.variants.has("own-tools") {
                    echo
                } else {
                    &name
                };
                self.call_tool(name, input, content).await;
                self.say(self.words("done", "All set: the tool answered."))
                    .await;
                Outcome::Success("done".into())
            }
            Directive::Slow(ms) => {
                let late = self.variants.has("text-after-slow");
                if !late {
                    self.say(self.words("slow: started", "Working on it, this takes a while."))
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(ms)).await;
                self.say(self.words("slow: done", "Finished the long job."))
                    .await;
                Outcome::Success("slow: done".into())
            }
            Directive::SlowTool(ms) => {
                let input = json!({"ms": ms});
                let took = Duration::from_millis(ms);
                self.call_tool_taking(echo, input, format!("waited {ms} ms"), took)
                    .await;
                self.say(self.words("slow: done", "Finished the long job."))
                    .await;
                Outcome::Success("slow: done".into())
            }
            Directive::Research(description) => {
                let id = self.next_id("bgtask");
                let task = json!({"id": id, "type": "research", "description": description,
                    "status": "running", "createdAt": timestamp(SystemTime::now())});
                let input = json!({"description": description});
                self.tool_with_task(
                    research,
                    input,
                    format!("started {id}"),
                    task,
                    id,
                    Duration::from_millis(500),
                )
                .await;
                self.say(self.words(
                    "research started",
                    "I am looking into it in the background.",
                ))
                .await;
                Outcome::Success("research started".into())
            }
            Directive::Alarm {
                seconds,
                description,
            } => {
                let id = self.next_id("alarm");
                let fires = SystemTime::now() + Duration::from_secs(seconds);
                let task = json!({"id": id, "type": "alarm", "description": description,
                    "status": "pending",
                    "firesAt": timestamp(fires)});
                let input = json!({"seconds": seconds, "description": description});
                self.tool_with_task(
                    alarm,
                    input,
                    format!("set {id}"),
                    task,
                    id,
                    Duration::from_secs(seconds),
                )
                .await;
                self.say(self.words("alarm set", "I will remind you."))
                    .await;
                Outcome::Success("alarm set".into())
            }
            Directive::Fail => {
                self.say(self.words("fail: failing on purpose", "Something broke on my side."))
                    .await;
                Outcome::Error("failing on purpose".into())
            }
        }
    }

    /// The default's words, or the `own-words` variant's.
    fn words(&self, default: &'static str, own: &'static str) -> &'static str {
        if self.variants.has("own-words") {
            own
        } else {
            default
        }
    }

    /// One assistant text line.
    async fn say(&self, text: &str) {
        self.assistant(vec![json!({"type": "text", "text": text})])
            .await;
    }

    /// `text`, after a line of `preamble` in the `own-words` variant.
    async fn say_with(&self, preamble: &str, text: &str) {
        if self.variants.has("own-words") {
            self.say(preamble).await;
        }
        self.say(text).await;
    }

    /// A tool call that creates a task: the task's snapshot follows the call (or, in the
    /// `tasks-before-tool` variant, comes first; in `tasks-without-tool` the call is not
    /// shown at all).
    async fn tool_with_task(
        &self,
        name: &str,
        input: Value,
        content: String,
        task: Value,
        id: String,
        lasts: Duration,
    ) {
        if self.variants.has("tasks-without-tool") {
            self.add_task(task, id, lasts).await;
        } else if self.variants.has("tasks-before-tool") {
            self.add_task(task, id, lasts).await;
            self.call_tool(name, input, content).await;
        } else {
            self.call_tool(name, input, content).await;
            self.add_task(task, id, lasts).await;
        }
    }

    /// A tool_use and, once "executed", its result.
    async fn call_tool(&self, name: &str, input: Value, content: String) {
        self.call_tool_taking(name, input, content, Duration::ZERO)
            .await
    }

    /// [`Self::call_tool`] with a tool that runs for `took`.
    async fn call_tool_taking(&self, name: &str, input: Value, content: String, took: Duration) {
        let id = self.next_id("call");
        let block = json!({"type": "tool_use", "id": id, "name": name, "input": input});
        self.assistant(vec![block]).await;
        if !took.is_zero() {
            tokio::time::sleep(took).await;
        }
        let result = json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": false});
        if self.variants.has("tool-results-as-user") {
            self.out
                .line(json!({"type": "user", "message": {"role": "user", "content": [result]}}))
                .await;
        } else {
            self.out
                .line(json!({"type": "system", "subtype": "tool_result", "tool_result": result}))
                .await;
        }
    }

    /// Adds a task, shows the snapshot, and removes it (with another snapshot) after `lasts`.
    async fn add_task(&self, task: Value, id: String, lasts: Duration) {
        self.tasks.lock().map(|mut t| t.push(task)).ok();
        self.snapshot().await;
        let later = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(lasts).await;
            later
                .tasks
                .lock()
                .map(|mut t| t.retain(|x| x["id"] != id.as_str()))
                .ok();
            later.snapshot().await;
        });
    }

    async fn snapshot(&self) {
        let tasks = self.tasks.lock().map(|t| t.clone()).unwrap_or_default();
        self.out.line(json!({"type": "system", "subtype": "tasks", "tasks": tasks, "session_id": self.session_id})).await;
    }

    /// An assistant output: queued messages are injected first (the "next model call").
    async fn assistant(&self, content: Vec<Value>) {
        if !self.faults.has("no-injection") {
            let mut queue = self.queue.lock().await;
            let injected = std::mem::take(&mut *queue).len();
            if injected > 0 {
                self.out
                    .line(
                        json!({"type": "system", "subtype": "injected", "message_count": injected}),
                    )
                    .await;
            }
        }
        let line = json!({"type": "assistant",
            "message": {"role": "assistant", "content": content, "model": "wireprobe-reference"},
            "session_id": self.session_id});
        self.out.line(line).await;
    }

    /// The lines that end the turn.
    fn finish(&self, outcome: Outcome, took: Duration) -> Vec<Value> {
        let (subtype, is_error, result) = match outcome {
            Outcome::Success(text) => ("success", false, Some(text)),
            Outcome::Error(why) if self.faults.has("no-result-on-fail") => {
                return vec![json!({"type": "system", "subtype": "error", "message": why})];
            }
            Outcome::Error(why) => ("error", true, Some(why)),
            Outcome::Cancelled => ("cancelled", false, None),
        };
        vec![json!({"type": "result", "subtype": subtype,
            "duration_ms": took.as_millis() as u64, "is_error": is_error, "num_turns": 1,
            "session_id": self.session_id, "result": result,
            "usage": {"input_tokens": 0, "output_tokens": 0}})]
    }

    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }
}
