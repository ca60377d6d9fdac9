//! The HUMA reference target: a correct HUMA server on socketioxide with a scripted agent
//! driven by `context.wireprobe` directives, and the faults in [`faults::FAULTS`].
//!
//! Directives (in a triggering context-update's `context.wireprobe`):
//! - `{"do": "tool-call", "tool": NAME, "arguments": {...}}` — a tool-call;
//! - `{"do": "hold-tool", "tool": NAME}` — a tool-call left outstanding, so the next triggering
//!   event cancels it;
//! - `{"do": "say", "messages": [TEXT, ...]}` — a messaging burst that waits for each
//!   confirmation (up to the confirmation timeout).

use crate::rules::ids::{
    HUMA_VAL_001, HUMA_VAL_002, HUMA_VAL_003, HUMA_VAL_004, HUMA_VAL_005, HUMA_VAL_006,
    HUMA_VAL_008,
};
mod burst;
pub mod client;
pub mod faults;
pub mod variants;

use super::{start_socketio, Faults, RunningTarget, ServeError, ServeOptions, Variants};
use crate::protocol::huma::validate;
use burst::Burst;
use serde_json::{json, Value};
use socketioxide::extract::{Data, SocketRef};
use socketioxide::handler::ConnectHandler;
use socketioxide::SocketIo;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The spec's confirmation timeout.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// Tunables of the reference target.
#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
    pub variants: Variants,
    /// How long a burst waits for each confirmation (the spec's 30 s, scalable for tests).
    pub confirm_timeout: Duration,
}

/// What one client connection has going on.
#[derive(Default)]
struct ConnState {
    /// Outstanding tool calls: toolCallId -> toolName.
    outstanding: HashMap<String, String>,
    burst: Option<Burst>,
}

type Shared = Arc<Mutex<ConnState>>;

/// The HUMA reference target, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::huma::Huma,
    faults: faults::FAULTS,
    variants: variants::VARIANTS,
    listen: Some(|addr, opts| Box::pin(start(addr, opts))),
    stdio: None,
    keeps_database: false,
    client: Some(crate::reference::ReferenceClient {
        faults: faults::CLIENT_FAULTS,
        variants: variants::CLIENT_VARIANTS,
        dial: |url, opts| Box::pin(client::run(url, opts)),
        tools: &[client::QUICK_TOOL],
        slow_tools: &[client::SLOW_TOOL],
        leaves_when_answered: false,
    }),
};

/// Starts the target on `addr`.
pub async fn start(addr: SocketAddr, opts: &ServeOptions) -> Result<RunningTarget, ServeError> {
    let config = Arc::new(Config {
        faults: Faults::parse(faults::FAULTS, &opts.faults)?,
        variants: Variants::parse(variants::VARIANTS, &opts.variants)?,
        confirm_timeout: opts.confirm_timeout.unwrap_or(CONFIRM_TIMEOUT),
    });
    let limited = config.variants.has("socket-io-limits");
    // Two socketioxide behaviours shape this. Message handlers are spawned, so two quick
    // events could be handled out of order: the handler closure itself (which socketioxide
    // calls in packet order) only queues the event, and one worker per connection handles the
    // queue. And a socket is marked connected only after the CONNECT reply is sent, emits
    // failing until then: the worker waits for that before handling anything. Registering in
    // a connect middleware (awaited before the reply) means no event can miss the handler.
    let register = move |s: SocketRef| {
        let config = config.clone();
        async move {
            let (queue, events) = mpsc::unbounded_channel::<Value>();
            tokio::spawn(worker(s.clone(), events, config));
            s.on("message", move |Data::<Value>(event)| {
                let _ = queue.send(event);
                async {}
            });
            Ok::<(), std::convert::Infallible>(())
        }
    };
    // Node socket.io's maxHttpBufferSize (1e6), which its WebSocket transport enforces too.
    const SOCKET_IO_LIMIT: usize = 1_000_000;
    let builder = match limited {
        true => SocketIo::builder()
            .max_payload(SOCKET_IO_LIMIT as u64)
            .ws_max_message_size(SOCKET_IO_LIMIT)
            .ws_max_frame_size(SOCKET_IO_LIMIT),
        false => SocketIo::builder(),
    };
    start_socketio(addr, builder, move |io| {
        io.ns("/", (async |_: SocketRef| {}).with(register));
    })
    .await
}

/// Handles one connection's events in arrival order.
async fn worker(s: SocketRef, mut events: mpsc::UnboundedReceiver<Value>, config: Arc<Config>) {
    let waited = tokio::time::Instant::now();
    while !s.connected() && waited.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let state: Shared = Arc::default();
    while let Some(event) = events.recv().await {
        on_message(s.clone(), event, state.clone(), config.clone());
    }
}

/// The reasons the target rejects `event`, less those a fault makes it overlook.
fn rejections(event: &Value, f: &Faults) -> Vec<String> {
    validate::client_event_violations(event)
        .into_iter()
        .filter(|v| match v.rule {
            HUMA_VAL_001 => !f.has("accepts-unknown-type"),
            HUMA_VAL_002 if v.message.contains("name") && name_too_long(event) => {
                !f.has("no-name-limit")
            }
            HUMA_VAL_003 if v.message.contains("outcome") => !f.has("accepts-bad-outcome"),
            HUMA_VAL_004 => !f.has("no-result-limit"),
            HUMA_VAL_005 if v.message.contains("data") => !f.has("accepts-addon-without-data"),
            HUMA_VAL_006 | HUMA_VAL_008 => !f.has("accepts-forbidden-keys"),
            _ => true,
        })
        .map(|v| v.message)
        .collect()
}

fn name_too_long(event: &Value) -> bool {
    event
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| n.chars().count() > validate::MAX_NAME)
}

fn emit_error(s: &SocketRef, f: &Faults, message: &str) {
    let mut error = json!({"type": "error", "code": if f.has("wrong-error-code") { "BAD_EVENT" } else { "INVALID_EVENT" }});
    if !f.has("error-without-message") {
        error["message"] = json!(message);
    }
    let channel = if f.has("error-on-event-channel") {
        "event"
    } else {
        "error"
    };
    s.emit(channel, &error).ok();
}

fn on_message(s: SocketRef, event: Value, state: Shared, config: Arc<Config>) {
    let f = &config.faults;
    let rejected = rejections(&event, f);
    let canceled_result = event.get("outcome").and_then(Value::as_str) == Some("canceled");
    if let Some(first) = rejected.first() {
        emit_error(&s, f, first);
        if f.has("disconnects-after-error") {
            s.disconnect().ok();
        }
        return;
    }
    if canceled_result && f.has("rejects-canceled-results") {
        emit_error(&s, f, "tool-result: canceled results are not accepted");
        return;
    }
    let text = |k: &str| {
        event
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let Ok(mut st) = state.lock() else { return };
    match event.get("type").and_then(Value::as_str) {
        Some("context-update") => {
            if event.get("triggering") != Some(&Value::Bool(true)) {
                return;
            }
            // A new triggering event interrupts the agent (spec §cancel-tool-call).
            if !f.has("no-interrupt") {
                for (id, name) in &st.outstanding {
                    let cancel = json!({"type": "cancel-tool-call", "toolCallId": id, "toolName": name,
                                        "reason": "interrupted by a new triggering event"});
                    s.emit("event", &cancel).ok();
                }
            }
            if let Some(burst) = st.burst.take() {
                burst.abort();
            }
            if f.has("cancels-unknown-tool-call") {
                let cancel = json!({"type": "cancel-tool-call", "toolCallId": uuid::Uuid::new_v4().to_string(), "toolName": "nothing"});
                s.emit("event", &cancel).ok();
            }
            if f.has("unknown-server-event") {
                s.emit("event", &json!({"type": "thinking"})).ok();
            }
            let directive = event
                .pointer("/context/wireprobe")
                .cloned()
                .unwrap_or(Value::Null);
            match directive.get("do").and_then(Value::as_str) {
                Some("tool-call" | "hold-tool") => {
                    let id = if f.has("bad-tool-call-id") {
                        "call-1".to_owned()
                    } else {
                        uuid::Uuid::new_v4().to_string()
                    };
                    let asked = directive
                        .get("tool")
                        .and_then(Value::as_str)
                        .unwrap_or("wireprobe_tool");
                    // Variant `own-tool-names`: the agent calls its own tool for the job.
                    let tool = if config.variants.has("own-tool-names") {
                        format!("agent_{asked}")
                    } else {
                        asked.to_owned()
                    };
                    let arguments = directive
                        .get("arguments")
                        .cloned()
                        .filter(Value::is_object)
                        .unwrap_or(json!({}));
                    st.outstanding.insert(id.clone(), tool.clone());
                    s.emit("event", &json!({"type": "tool-call", "toolCallId": id, "toolName": tool, "arguments": arguments})).ok();
                }
                Some("say") => {
                    let messages: Vec<String> = directive
                        .get("messages")
                        .and_then(Value::as_array)
                        .map(|m| {
                            m.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    st.burst = Some(Burst::start(
                        s.clone(),
                        messages,
                        config.clone(),
                        state.clone(),
                    ));
                }
                _ => {}
            }
        }
        Some("tool-result") => {
            let id = text("toolCallId");
            let v = &config.variants;
            let refusal = match st.outstanding.get(&id) {
                // A result for a call never issued: the spec leaves its answer open.
                None if v.has("refuses-unknown-calls") => Some("tool-result: no such tool call"),
                // "The tool name from the original tool-call event" (a server may check it).
                Some(name) if v.has("own-tool-names") && *name != text("toolName") => {
                    Some("tool-result: toolName is not the tool-call's")
                }
                _ => None,
            };
            if let Some(why) = refusal {
                drop(st);
                emit_error(&s, f, why);
                return;
            }
            st.outstanding.remove(&id);
        }
        Some("addon-tool-event") => {
            let index = event.pointer("/data/messageIndex").and_then(Value::as_u64);
            if let (Some(burst), Some(index)) = (st.burst.as_ref(), index) {
                // Without the burst's id on its events, a confirmation names '' (as the spec's
                // examples do).
                let bare = config.variants.has("messaging-without-call-id");
                let named = text("toolCallId");
                if burst.id() == named || (bare && named.is_empty()) {
                    burst.confirm(index);
                }
            }
        }
        _ => {}
    }
}
