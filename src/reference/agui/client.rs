//! The AG-UI reference client: a correct frontend in the test mode the client suite assumes
//! (`run agui --client --target builtin`), with faults and variants in [`super::client_catalogue`].
//!
//! It POSTs a run with one user message and one frontend tool to the agent at the URL it is
//! given, and reads the answer's event stream as a consumer must: an event of a type it does
//! not know is passed over, an event after its run closed is rejected, a malformed known value
//! fails the run. When a run finishes with a call to its tool pending, it runs the tool and
//! starts the next run on the same thread: the call in history, the tool's result, the state
//! the run's snapshots and deltas left. It ends when a run leaves nothing to do.

use super::run_state::{RunState, StreamedCall};
use crate::protocol::agui::proto::decode;
use crate::protocol::agui::session::VERSION;
use crate::protocol::agui::PROTO_MEDIA_TYPE;
use crate::reference::{ClientEnd, ClientOptions, Faults, ServeError, Variants};
use crate::transport::length_prefixed::Splitter;
use crate::transport::sse::{self, Captured};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The frontend tool it offers.
pub const TOOL: &str = "wireprobe_confirm";
/// Longest SSE line read.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Most runs one session starts: an agent that calls the tool forever is left, and a fuzzed
/// session (one run per probe, a probe after each adversarial event) stays well inside it.
const MAX_RUNS: usize = 256;
/// Longest one run is read.
const MAX_RUN: Duration = Duration::from_secs(120);

/// Plays one session against the agent at `url`: runs until one leaves nothing to do.
pub async fn run(url: &str, opts: &ClientOptions) -> Result<ClientEnd, ServeError> {
    let faults = Faults::parse(super::client_catalogue::CLIENT_FAULTS, &opts.faults)?;
    // The schema every event is read against compiles on first use: before the first POST,
    // so the time it takes is the client's start-up, not a pause between two runs.
    let _ = crate::protocol::agui::schema::schema();
    let variants = Variants::parse(super::client_catalogue::CLIENT_VARIANTS, &opts.variants)?;
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| ServeError::Connect(e.to_string()))?;
    let mut client = Client {
        url: url.to_owned(),
        http,
        ids: Ids {
            numbered: variants.has("numbered-ids"),
            next: 0,
        },
        faults,
        variants,
        messages: Vec::new(),
        state: json!({}),
    };
    client.session().await
}

/// Reads an answer of length-prefixed protobuf frames (HTTP + Protobuf), each event decoded and
/// taken as its JSON; a frame that does not decode fails the run.
async fn read_frames(response: reqwest::Response, run: &mut RunState) {
    let mut splitter = Splitter::new(MAX_LINE);
    let mut body = response.bytes_stream();
    while let Some(Ok(chunk)) = body.next().await {
        let mut frames = Vec::new();
        if splitter.push(&chunk, |f| frames.push(f)).is_err() {
            run.fail();
            return;
        }
        for frame in frames {
            let taken = match decode(&frame) {
                Ok(event) => run.take(&event.to_string()),
                Err(_) => run.fail(),
            };
            if !taken {
                return;
            }
        }
    }
}

/// Ids as the client mints them.
struct Ids {
    numbered: bool,
    next: u64,
}

impl Ids {
    fn mint(&mut self, prefix: &str) -> String {
        self.next += 1;
        match self.numbered {
            true => format!("{prefix}-{}", self.next),
            false => format!("{prefix}-{}", uuid::Uuid::new_v4()),
        }
    }
}

struct Client {
    url: String,
    http: reqwest::Client,
    ids: Ids,
    faults: Faults,
    variants: Variants,
    /// The thread's history as the client keeps it (activity messages included).
    messages: Vec<Value>,
    state: Value,
}

impl Client {
    async fn session(&mut self) -> Result<ClientEnd, ServeError> {
        let thread = self.ids.mint("thread");
        let user = self.ids.mint("m");
        let content = match self.faults.has("malformed-input") {
            true => json!(42),
            false => json!("Please confirm, using your tool."),
        };
        self.messages
            .push(json!({"id": user, "role": "user", "content": content}));
        if self.faults.has("duplicate-message-id") {
            self.messages.insert(
                0,
                json!({"id": user, "role": "developer", "content": "Be brief."}),
            );
        }
        let mut thread = thread;
        let mut run_id = self.ids.mint("run");
        for _ in 0..MAX_RUNS {
            let input = self.input(&thread, &run_id);
            let Some(run) = self.one_run(&input).await else {
                return Ok(ClientEnd::Closed);
            };
            if !self.carry(run) {
                return Ok(ClientEnd::Closed);
            }
            if !self.faults.has("reuses-run-id") {
                run_id = self.ids.mint("run");
            }
            if self.faults.has("new-thread-per-run") {
                thread = self.ids.mint("thread");
            }
        }
        Ok(ClientEnd::TimedOut)
    }

    /// The RunAgentInput of a run.
    fn input(&self, thread: &str, run_id: &str) -> Value {
        let keeps_activity = self.faults.has("keeps-activity");
        let messages: Vec<Value> = self
            .messages
            .iter()
            .filter(|m| keeps_activity || m["role"] != "activity")
            .cloned()
            .collect();
        let mut input = Map::new();
        input.insert("threadId".into(), json!(thread));
        input.insert("runId".into(), json!(run_id));
        if !self.faults.has("no-protocol-version") {
            let version = match self.variants.has("version-1-0") {
                true => "1.0",
                false => VERSION,
            };
            input.insert("protocolVersion".into(), json!(version));
        }
        input.insert("messages".into(), Value::Array(messages));
        input.insert(
            "tools".into(),
            json!([{
                "name": TOOL,
                "description": "Asks the user to confirm; answers whether they did.",
                "parameters": {"type": "object", "properties": {}}
            }]),
        );
        let empty = self.state.as_object().is_some_and(Map::is_empty);
        let explicit = self.variants.has("explicit-empty");
        if !self.faults.has("forgets-state") && (!empty || explicit) {
            input.insert("state".into(), self.state.clone());
        }
        if explicit {
            input.insert("context".into(), json!([]));
            input.insert("forwardedProps".into(), json!({}));
        }
        if self.faults.has("null-member") {
            input.insert("parentRunId".into(), Value::Null);
        }
        if self.faults.has("extra-member") {
            input.insert("wireprobeClientNote".into(), json!("not in the schema"));
        }
        Value::Object(input)
    }

    /// POSTs `input` and reads its answer; `None` when the agent did not answer with a stream.
    async fn one_run(&self, input: &Value) -> Option<RunState> {
        let accept = match (
            self.faults.has("accepts-anything"),
            self.variants.has("accept-proto"),
        ) {
            (true, _) => "*/*".to_owned(),
            (false, true) => format!("{PROTO_MEDIA_TYPE}, text/event-stream"),
            (false, false) => "text/event-stream".to_owned(),
        };
        let response = self
            .http
            .post(&self.url)
            .header("accept", accept)
            .header("content-type", "application/json")
            .body(input.to_string())
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let framed = response
            .headers()
            .get("content-type")
            .and_then(|t| t.to_str().ok())
            .is_some_and(|t| t.starts_with(PROTO_MEDIA_TYPE));
        let mut run = RunState::new(&self.faults, self.state.clone());
        let fails_on_fields = self.faults.has("fails-on-sse-fields");
        let read = async {
            if framed {
                return read_frames(response, &mut run).await;
            }
            let mut events = Box::pin(sse::events(response, MAX_LINE));
            while let Some(captured) = events.next().await {
                match captured {
                    Captured::Event { data, meta } => {
                        let fielded =
                            meta.id.is_some() || meta.event.is_some() || meta.retry.is_some();
                        if fielded && fails_on_fields {
                            run.fail();
                            break;
                        }
                        if !run.take(&data) {
                            break;
                        }
                    }
                    Captured::Notice(_) => {}
                    Captured::Failed(_) => break,
                }
            }
        };
        let _ = tokio::time::timeout(MAX_RUN, read).await;
        Some(run)
    }

    /// Carries what `run` delivered into the thread; true when the next run is due (a call to
    /// the client's tool is pending).
    fn carry(&mut self, run: RunState) -> bool {
        let RunState {
            messages,
            calls,
            state,
            succeeded,
            ..
        } = run;
        self.state = state;
        self.messages.extend(messages);
        if !succeeded {
            return false;
        }
        let pending: Vec<_> = calls
            .iter()
            .filter(|c| c.name == TOOL && c.ended && !c.answered)
            .collect();
        if !calls.is_empty() && !self.faults.has("no-call-in-history") {
            self.record_calls(&calls);
        }
        if pending.is_empty() {
            return false;
        }
        if !self.faults.has("drops-tool-result") {
            for call in pending {
                let mut answer = json!({"id": self.ids.mint("m"), "role": "tool",
                    "toolCallId": call.id, "content": "confirmed"});
                if self.variants.has("tool-error") {
                    answer["content"] = json!("the user did not answer");
                    answer["error"] = json!("declined");
                }
                self.messages.push(answer);
            }
        }
        true
    }

    /// Puts the run's calls in the history as ToolCalls on an assistant message: the one their
    /// parent names when the run streamed it, else a new one, before the calls' results.
    fn record_calls(&mut self, calls: &[StreamedCall]) {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.args}})
            })
            .collect();
        let parent = calls.iter().find_map(|c| c.parent.clone());
        let streamed = parent.as_ref().and_then(|p| {
            self.messages
                .iter_mut()
                .find(|m| m["id"] == p.as_str() && m["role"] == "assistant")
        });
        if let Some(message) = streamed {
            message["toolCalls"] = Value::Array(tool_calls);
            return;
        }
        let id = parent.unwrap_or_else(|| self.ids.mint("m"));
        let at = self
            .messages
            .iter()
            .position(|m| {
                m["role"] == "tool" && calls.iter().any(|c| m["toolCallId"] == c.id.as_str())
            })
            .unwrap_or(self.messages.len());
        let assistant = json!({"id": id, "role": "assistant", "toolCalls": tool_calls});
        self.messages.insert(at, assistant);
    }
}
