//! The scripted agent: what the reference target does for `wireprobe:` directives in user
//! text, and its two tools. Runs and tool calls are tasks that emit through the connection.

use super::outbox::Outgoing;
use super::Config;
use crate::protocol::haip::model::AGENT_CHANNEL;
use crate::reference::directive::{Directive, MAX_SLOW_MS};
use crate::reference::Variants;
use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// What a run does, from what a user message asks (see [`Directive`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// `wireprobe: say TEXT` — stream TEXT, a word per part; other text is echoed.
    Say(String),
    /// `wireprobe: slow MS` — a run that streams a part every 100 ms for MS.
    Slow(u64),
    /// `wireprobe: fail` — the run ends with RUN_ERROR.
    Fail,
    /// `wireprobe: audio N` — an AUDIO_CHUNK of N bytes.
    Audio(usize),
}

impl Plan {
    /// Reads a user message; anything that is not a directive this agent acts on is echoed.
    pub fn of(text: &str) -> Plan {
        match Directive::parse(text) {
            Directive::Say(words) => Plan::Say(words),
            Directive::Slow(ms) => Plan::Slow(ms),
            Directive::Fail => Plan::Fail,
            Directive::Audio(n) => Plan::Audio(n),
            _ => Plan::Say(format!("You said: {text}")),
        }
    }
}

/// What run and tool tasks tell the connection.
#[derive(Debug)]
pub enum Internal {
    Emit(Box<Outgoing>),
    RunEnded(String),
    ToolEnded(String),
}

/// Everything a run task needs.
pub struct RunSpec {
    /// The run, announced by the connection (RUN_STARTED) when the agent opened it.
    pub run_id: String,
    pub plan: Plan,
    /// The client accepts two-frame binary messages.
    pub binary_ok: bool,
    pub config: std::sync::Arc<Config>,
}

struct Emitter {
    tx: mpsc::Sender<Internal>,
    run_id: Option<String>,
}

impl Emitter {
    async fn emit(&self, ty: &str, payload: Value) -> bool {
        let o = Outgoing::new(ty, AGENT_CHANNEL, payload).in_run(self.run_id.as_deref());
        self.tx.send(Internal::Emit(Box::new(o))).await.is_ok()
    }
}

/// Runs one agent run to its end (or its cancellation).
pub async fn run(spec: RunSpec, tx: mpsc::Sender<Internal>, mut cancel: oneshot::Receiver<()>) {
    let f = &spec.config.faults;
    let whole_text = spec.config.variants.has("whole-text");
    let out = Emitter {
        tx: tx.clone(),
        run_id: Some(spec.run_id.clone()),
    };
    let message_id = spec.config.fresh_id();
    let mut cancelled = false;
    match &spec.plan {
        Plan::Say(text) => {
            if f.has("text-part-before-start") {
                out.emit(
                    "TEXT_MESSAGE_PART",
                    json!({"message_id": message_id, "text": ""}),
                )
                .await;
            }
            // Variant `whole-text`: the START carries all of it, and no PART follows.
            let mut start = json!({"message_id": message_id, "author": "agent"});
            if whole_text {
                start["text"] = json!(text);
            }
            out.emit("TEXT_MESSAGE_START", start).await;
            let parts: Vec<&str> = if whole_text {
                Vec::new()
            } else {
                text.split_inclusive(' ').collect()
            };
            for word in parts {
                if cancel.try_recv().is_ok() {
                    cancelled = true;
                    break;
                }
                out.emit(
                    "TEXT_MESSAGE_PART",
                    json!({"message_id": message_id, "text": word}),
                )
                .await;
            }
            out.emit("TEXT_MESSAGE_END", json!({"message_id": message_id}))
                .await;
        }
        Plan::Slow(ms) => {
            out.emit(
                "TEXT_MESSAGE_START",
                json!({"message_id": message_id, "author": "agent"}),
            )
            .await;
            let deadline = tokio::time::Instant::now() + Duration::from_millis(*ms);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    _ = &mut cancel => { cancelled = true; break; }
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = tick.tick() => {
                        out.emit("TEXT_MESSAGE_PART", json!({"message_id": message_id, "text": "."})).await;
                    }
                }
            }
            out.emit("TEXT_MESSAGE_END", json!({"message_id": message_id}))
                .await;
        }
        Plan::Fail => {
            let error = Outgoing::new(
                "RUN_ERROR",
                AGENT_CHANNEL,
                json!({"code": "AGENT_ERROR", "message": "scripted failure (wireprobe: fail)"}),
            );
            let error = error.in_run(Some(&spec.run_id));
            let _ = tx.send(Internal::Emit(Box::new(error))).await;
            let _ = tx.send(Internal::RunEnded(spec.run_id)).await;
            return;
        }
        Plan::Audio(n) => {
            let bytes: Vec<u8> = (0..*n).map(|i| (i % 251) as u8).collect();
            let mime = "audio/opus";
            let audio_id = spec.config.fresh_id();
            let payload = json!({"message_id": audio_id, "duration_ms": "20", "mime": mime});
            let mut chunk =
                Outgoing::new("AUDIO_CHUNK", AGENT_CHANNEL, payload).in_run(Some(&spec.run_id));
            if spec.binary_ok || f.has("binary-to-non-binary-peer") {
                chunk.binary = Some((bytes, mime.to_owned()));
            } else {
                chunk.payload["data"] =
                    json!(base64::engine::general_purpose::STANDARD.encode(&bytes));
            }
            let _ = tx.send(Internal::Emit(Box::new(chunk))).await;
        }
    }
    let status = if cancelled { "CANCELLED" } else { "OK" };
    out.emit("RUN_FINISHED", json!({"status": status})).await;
    let _ = tx.send(Internal::RunEnded(spec.run_id)).await;
}

/// The names of the agent's two tools: `(echo, slow)` (the `other-tools` variant names them
/// differently).
pub fn tool_names(variants: &Variants) -> (&'static str, &'static str) {
    if variants.has("other-tools") {
        ("util.mirror", "util.sleep")
    } else {
        ("wireprobe.echo", "wireprobe.slow")
    }
}

/// The tools the reference agent advertises.
pub fn tool_list(variants: &Variants) -> Value {
    let (echo, slow) = tool_names(variants);
    json!({"tools": [
        {"name": echo, "description": "Completes at once with its params as the result."},
        {"name": slow, "description": "Reports progress for params.ms milliseconds (default 3000), then completes; cancellable."},
    ]})
}

/// The schema of each advertised tool's params.
pub fn tool_schemas(variants: &Variants) -> [Value; 2] {
    let (echo, slow) = tool_names(variants);
    [
        json!({"tool": echo, "schema": {"type": "object"}}),
        json!({"tool": slow, "schema": {"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}}}),
    ]
}

/// Runs one tool call to TOOL_DONE (or its cancellation).
pub async fn call_tool(
    call_id: String,
    tool: String,
    params: Value,
    config: &Config,
    tx: mpsc::Sender<Internal>,
    mut cancel: oneshot::Receiver<()>,
) {
    let faults = &config.faults;
    let (echo, slow) = tool_names(&config.variants);
    let out = Emitter {
        tx: tx.clone(),
        run_id: None,
    };
    match tool.as_str() {
        name if name == echo => {
            out.emit(
                "TOOL_UPDATE",
                json!({"call_id": call_id, "status": "RUNNING", "progress": 50}),
            )
            .await;
            if !faults.has("no-tool-done") {
                out.emit(
                    "TOOL_DONE",
                    json!({"call_id": call_id, "status": "OK", "result": params}),
                )
                .await;
                if faults.has("tool-update-after-done") {
                    out.emit(
                        "TOOL_UPDATE",
                        json!({"call_id": call_id, "status": "RUNNING"}),
                    )
                    .await;
                }
            }
        }
        name if name == slow => {
            let ms = params
                .get("ms")
                .and_then(Value::as_u64)
                .unwrap_or(3000)
                .min(MAX_SLOW_MS);
            out.emit(
                "TOOL_UPDATE",
                json!({"call_id": call_id, "status": "QUEUED", "progress": 0}),
            )
            .await;
            let started = tokio::time::Instant::now();
            let deadline = started + Duration::from_millis(ms);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let ignore_cancel = faults.has("ignores-tool-cancel");
            loop {
                tokio::select! {
                    _ = &mut cancel, if !ignore_cancel => {
                        out.emit("TOOL_UPDATE", json!({"call_id": call_id, "status": "CANCELLING"})).await;
                        out.emit("TOOL_DONE", json!({"call_id": call_id, "status": "CANCELLED"})).await;
                        let _ = tx.send(Internal::ToolEnded(call_id)).await;
                        return;
                    }
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = tick.tick() => {
                        let done = started.elapsed().as_millis() as u64 * 100 / ms.max(1);
                        out.emit("TOOL_UPDATE", json!({"call_id": call_id, "status": "RUNNING", "progress": done.min(99)})).await;
                    }
                }
            }
            out.emit(
                "TOOL_DONE",
                json!({"call_id": call_id, "status": "OK", "result": {"slept_ms": ms}}),
            )
            .await;
        }
        other => {
            out.emit("TOOL_DONE", json!({"call_id": call_id, "status": "ERROR", "result": {"error": format!("unknown tool {other:?}")}})).await;
        }
    }
    let _ = tx.send(Internal::ToolEnded(call_id)).await;
}
