//! The AG-UI reference agent: `POST /agent` answered with a scripted run (`wireprobe:`
//! directives, [`script`]), over HTTP + Server-Sent Events, with the faults and variants in
//! [`faults`].

mod catalogue;
pub mod client;
mod client_catalogue;
pub mod faults;
mod http;
mod run_state;
pub mod script;

use super::{serve_http, Faults, RunningTarget, ServeError, ServeOptions, Variants};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What the agent is switched to.
#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
    pub variants: Variants,
}

/// Most threads whose runs `replays` remembers, and runs per thread.
const MAX_THREADS: usize = 1000;
const MAX_RUNS: usize = 20;

/// A thread's earlier runs, as a replay restates them: the run id and its messages.
type Replays = Vec<(String, Vec<Value>)>;

/// What every request of one agent shares.
pub struct Shared {
    config: Config,
    threads: Mutex<HashMap<String, Replays>>,
}

impl Shared {
    /// The earlier runs of `input`'s thread.
    fn history(&self, input: &Value) -> Replays {
        let thread = input["threadId"].as_str().unwrap_or_default();
        let threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        threads.get(thread).cloned().unwrap_or_default()
    }

    /// Remembers the run `events` streamed for `input`, for later replays.
    fn remember(&self, input: &Value, events: &[Value]) {
        let (Some(thread), Some(run)) = (input["threadId"].as_str(), input["runId"].as_str())
        else {
            return;
        };
        let mut messages: Vec<Value> = input["messages"].as_array().cloned().unwrap_or_default();
        for start in events.iter().filter(|e| e["type"] == "TEXT_MESSAGE_START") {
            let id = &start["messageId"];
            let text: String = events
                .iter()
                .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT" && e["messageId"] == *id)
                .filter_map(|e| e["delta"].as_str())
                .collect();
            messages.push(json!({"id": id, "role": "assistant", "content": text}));
        }
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        if threads.len() >= MAX_THREADS && !threads.contains_key(thread) {
            return;
        }
        let runs = threads.entry(thread.to_owned()).or_default();
        if runs.len() < MAX_RUNS {
            runs.push((run.to_owned(), messages));
        }
    }
}

/// The AG-UI reference agent, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::agui::Agui,
    faults: catalogue::FAULTS,
    variants: catalogue::VARIANTS,
    listen: Some(|addr, opts| Box::pin(start(addr, opts))),
    stdio: None,
    keeps_database: false,
    client: Some(crate::reference::ReferenceClient {
        faults: client_catalogue::CLIENT_FAULTS,
        variants: client_catalogue::CLIENT_VARIANTS,
        dial: |url, opts| Box::pin(client::run(url, opts)),
        tools: &[],
        slow_tools: &[],
        leaves_when_answered: false,
    }),
};

/// Starts the agent on `addr`; it answers at `http://ADDR/agent`.
pub async fn start(addr: SocketAddr, opts: &ServeOptions) -> Result<RunningTarget, ServeError> {
    // The AG-UI schema's validators are compiled before the first request, not by it: on a
    // busy machine a debug build took over 2 s, and the first run's input timed out against
    // a target that was only starting (every AG-UI replay of a loaded test suite errored).
    let _ = tokio::task::spawn_blocking(crate::protocol::agui::schema::schema).await;
    let shared = Arc::new(Shared {
        config: Config {
            faults: Faults::parse(catalogue::FAULTS, &opts.faults)?,
            variants: Variants::parse(catalogue::VARIANTS, &opts.variants)?,
        },
        threads: Mutex::new(HashMap::new()),
    });
    let mut running = serve_http(addr, "http", move |_, req| {
        http::answer(shared.clone(), req)
    })
    .await?;
    running.url = format!("http://{}{}", running.addr, http::ROUTE);
    Ok(running)
}
