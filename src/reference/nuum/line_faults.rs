//! The reference agent's line faults (listed in `faults.rs`) at work: each reshapes, doubles or
//! drops a line as it goes out ([`on_line`]), so the agent's turns and controls are written
//! as the spec has them and know none of these faults. The faults of behaviour (a turn that
//! ignores an interrupt, a queue never injected, a process that exits) act where the agent
//! decides, in `agent.rs` and `mod.rs`.

use crate::reference::Faults;
use serde_json::{json, Map, Value};

/// What `line` becomes under the configured line faults: none, one or more lines.
pub fn on_line(faults: &Faults, mut line: Value) -> Vec<Value> {
    // Every line the agent writes comes here: without a fault on, it goes as it is.
    if faults.is_empty() {
        return vec![line];
    }
    let on = |name: &str| faults.has(name);
    let ty = line["type"].as_str().unwrap_or_default().to_owned();
    let subtype = line["subtype"].as_str().unwrap_or_default().to_owned();
    let Some(fields) = line.as_object_mut() else {
        return vec![line];
    };
    match (ty.as_str(), subtype.as_str()) {
        ("system", "init") => {
            if on("init-without-version") {
                fields.remove("version");
            }
            if on("init-without-session-id") {
                fields.remove("session_id");
            }
            let mut lines = Vec::new();
            if on("init-not-first") {
                lines.push(json!({"type": "system", "subtype": "starting"}));
            }
            let times = if on("init-twice") { 2 } else { 1 };
            lines.extend(std::iter::repeat_n(line, times));
            return lines;
        }
        ("system", "turn_accepted") if on("no-turn-accepted") => return Vec::new(),
        ("system", "heartbeat_ack") if on("no-heartbeat-ack") => return Vec::new(),
        ("system", "tasks") if on("no-tasks-snapshot") => return Vec::new(),
        ("system", "tasks") => {
            let tasks = fields.get_mut("tasks").and_then(Value::as_array_mut);
            for task in tasks.into_iter().flatten().filter_map(Value::as_object_mut) {
                reshape_task(faults, task);
            }
        }
        ("system", "status_response") if on("status-subtype") => {
            fields.insert("subtype".into(), json!("status"));
        }
        ("system", "error") if on("error-without-message") => {
            if let Some(message) = fields.remove("message") {
                fields.insert("error".into(), message);
            }
        }
        ("system", "tool_result") if on("tool-result-wrong-id") => {
            if let Some(result) = fields.get_mut("tool_result") {
                result["tool_use_id"] = json!("call_unknown");
            }
        }
        ("assistant", _) => reshape_assistant(faults, fields),
        ("user", _) if on("tool-result-wrong-id") => {
            for block in blocks(fields).filter(|b| b["type"] == "tool_result") {
                block["tool_use_id"] = json!("call_unknown");
            }
        }
        ("result", _) => return reshape_result(faults, line),
        _ => {}
    }
    vec![line]
}

fn reshape_assistant(faults: &Faults, fields: &mut Map<String, Value>) {
    if faults.has("assistant-without-session-id") {
        fields.remove("session_id");
    }
    if faults.has("assistant-wrong-role") {
        if let Some(message) = fields.get_mut("message") {
            message["role"] = json!("model");
        }
    }
    if faults.has("tool-use-without-input") {
        let tool_uses = blocks(fields).filter(|b| b["type"] == "tool_use");
        for block in tool_uses.filter_map(Value::as_object_mut) {
            block.remove("input");
        }
    }
}

fn reshape_task(faults: &Faults, task: &mut Map<String, Value>) {
    if faults.has("task-without-timestamps") {
        task.remove("createdAt");
        task.remove("firesAt");
    }
    if faults.has("bad-task-status") && task.get("type") == Some(&json!("alarm")) {
        task.insert("status".into(), json!("scheduled"));
    }
}

fn reshape_result(faults: &Faults, mut line: Value) -> Vec<Value> {
    let on = |name: &str| faults.has(name);
    if let Some(fields) = line.as_object_mut() {
        match fields.get("subtype").and_then(Value::as_str) {
            Some("success") if on("is-error-on-success") => {
                fields.insert("is_error".into(), json!(true));
            }
            Some("error") if on("error-subtypes") => {
                fields.insert("subtype".into(), json!("error_during_execution"));
            }
            Some("error") if on("result-unknown-subtype") => {
                fields.insert("subtype".into(), json!("failed"));
            }
            _ => {}
        }
        if on("session-id-drift") {
            if let Some(Value::String(id)) = fields.get_mut("session_id") {
                id.push_str("_turn");
            }
        }
        if on("result-without-duration") {
            fields.remove("duration_ms");
        }
        if on("result-without-session-id") {
            fields.remove("session_id");
        }
    }
    let times = if on("double-result") { 2 } else { 1 };
    vec![line; times]
}

/// The content blocks of a message line.
fn blocks(fields: &mut Map<String, Value>) -> impl Iterator<Item = &mut Value> {
    fields
        .get_mut("message")
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}
