//! An AG-UI frontend's test mode on the community Rust client `ag-ui-client` 0.1.0: one run
//! with a user message and one frontend tool; when a run finishes with a call to that tool
//! unanswered, answer it and run again, carrying the messages and state the run returned.
//! Only the crate's public API is used. Usage: `ag-ui-client-test-mode URL`.

use ag_ui_client::agent::RunAgentParams;
use ag_ui_client::subscriber::Subscribers;
use ag_ui_client::{Agent, HttpAgent};
use ag_ui_core::types::ids::MessageId;
use ag_ui_core::types::message::Message;
use ag_ui_core::types::tool::Tool;
use serde_json::{json, Value};
use std::collections::HashSet;

const TOOL: &str = "confirm";

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: ag-ui-client-test-mode URL");
        std::process::exit(2);
    };
    let agent = match HttpAgent::builder().with_url_str(&url).and_then(|b| b.build()) {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("cannot build the agent: {e}");
            std::process::exit(2);
        }
    };
    let tool = Tool::new(
        TOOL.into(),
        "Asks the user to confirm; answers whether they did.".into(),
        json!({"type": "object", "properties": {}}),
    );
    let mut messages = vec![Message::User {
        id: MessageId::random(),
        content: "Please confirm, using your tool.".into(),
        name: None,
    }];
    let mut state = json!({});
    for run in 1..=8 {
        let params: RunAgentParams<Value, Value> = RunAgentParams {
            run_id: None,
            tools: Some(vec![tool.clone()]),
            context: None,
            forwarded_props: Some(json!({})),
            messages: messages.clone(),
            state: state.clone(),
        };
        let result = match agent.run_agent(&params, Subscribers::new(Vec::new())).await {
            Ok(result) => result,
            Err(e) => {
                // A run that failed finished nothing: the test mode stops.
                eprintln!("run {run} failed: {e}");
                break;
            }
        };
        messages.extend(result.new_messages);
        state = result.new_state;
        let answered: HashSet<String> = messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { tool_call_id, .. } => Some(tool_call_id.to_string()),
                _ => None,
            })
            .collect();
        let pending: Vec<_> = messages
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { tool_calls: Some(calls), .. } => Some(calls.clone()),
                _ => None,
            })
            .flatten()
            .filter(|c| c.function.name == TOOL && !answered.contains(&c.id.to_string()))
            .collect();
        // What the run left, for the transcript (a test mode's stderr is kept).
        eprintln!(
            "run {run}: {} messages, state {state}, {} call(s) of {TOOL} pending",
            messages.len(),
            pending.len()
        );
        if pending.is_empty() {
            break;
        }
        for call in pending {
            messages.push(Message::Tool {
                id: MessageId::random(),
                content: "confirmed".into(),
                tool_call_id: call.id,
                error: None,
            });
        }
    }
}
