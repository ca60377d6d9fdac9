//! Tool calls across the run boundary (Tool Calls › Frontend tools): a frontend tool's call is
//! never answered by the producer, a run leaving one unanswered is not reported interrupted,
//! and `pendingToolCallIds` names exactly the calls the run left unanswered.

use super::conversation::{Conversation, MessageKind, MAX_IDS};
use super::events;
use crate::rules::ids::{AGUI_TOOL_001, AGUI_TOOL_002, AGUI_TOOL_003, AGUI_TOOL_004};
use crate::rules::Violation;
use serde_json::Value;

/// TOOL_CALL_RESULT: its message, and the call it answers.
pub fn result(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let (Some(call), Some(message)) = (
        events::text(event, "toolCallId"),
        events::text(event, "messageId"),
    ) else {
        return;
    };
    super::identity::note_message(conv, message, MessageKind::ToolResult(call.to_owned()), out);
    let frontend = conv
        .answer
        .as_ref()
        .map(|a| a.input.frontend.clone())
        .unwrap_or_default();
    let Some(run) = conv.run.as_mut() else {
        return;
    };
    let name = run
        .calls
        .iter()
        .find(|(id, _)| id == call)
        .and_then(|(_, name)| name.clone());
    // A result for a call whose tool is known, in a run whose input offered tools: whether
    // the tool is the client's own is judged.
    if name.is_some() && !frontend.is_empty() {
        conv.exercised.hit(AGUI_TOOL_001);
    }
    if let Some(name) = name.filter(|n| frontend.contains(n)) {
        out.push(Violation::new(
            AGUI_TOOL_001,
            format!("TOOL_CALL_RESULT answers call {call:?} of frontend tool {name:?}: the application answers its own tools"),
        ));
    }
    if run.answered.len() < MAX_IDS {
        run.answered.insert(call.to_owned());
    }
}

/// A MESSAGES_SNAPSHOT carries a tool message for `call`: when the call is a frontend tool's
/// that this run made, the producer fabricated its answer.
pub fn answered_in_snapshot(conv: &mut Conversation, call: &str, out: &mut Vec<Violation>) {
    let Some(run) = conv.run.as_ref() else {
        return;
    };
    let frontend = conv.answer.as_ref().map(|a| &a.input.frontend);
    let name = run
        .calls
        .iter()
        .find(|(id, _)| id == call)
        .and_then(|(_, name)| name.as_ref());
    if let (Some(name), Some(frontend)) = (name, frontend) {
        if !frontend.is_empty() {
            conv.exercised.hit(AGUI_TOOL_001);
        }
        if frontend.contains(name) {
            out.push(Violation::new(
                AGUI_TOOL_001,
                format!("MESSAGES_SNAPSHOT carries a tool message answering call {call:?} of frontend tool {name:?}: the application answers its own tools"),
            ));
        }
    }
}

/// RUN_FINISHED: the calls the run left unanswered, against its outcome.
pub fn finished(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let Some(run) = conv.run.as_ref() else {
        return;
    };
    let frontend = conv
        .answer
        .as_ref()
        .map(|a| a.input.frontend.clone())
        .unwrap_or_default();
    let pending: Vec<&str> = run
        .calls
        .iter()
        .filter(|(id, _)| !run.answered.contains(id))
        .map(|(id, _)| id.as_str())
        .collect();
    let outcome = event.get("outcome");
    let kind = outcome
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("success");
    let frontend_pending: Vec<&str> = run
        .calls
        .iter()
        .filter(|(id, name)| {
            !run.answered.contains(id) && name.as_ref().is_some_and(|n| frontend.contains(n))
        })
        .map(|(id, _)| id.as_str())
        .collect();
    // What the run left unanswered is owed an outcome that says so.
    if !frontend_pending.is_empty() {
        conv.exercised.hit(AGUI_TOOL_002);
    }
    if kind == "success" && !pending.is_empty() {
        conv.exercised.hit(AGUI_TOOL_003);
    }
    if kind == "interrupt" && !frontend_pending.is_empty() {
        out.push(Violation::new(
            AGUI_TOOL_002,
            format!("the run left frontend tool call(s) {frontend_pending:?} unanswered and finished as interrupted, not as success"),
        ));
    }
    if kind != "success" {
        return;
    }
    let listed = outcome
        .and_then(|o| o.get("pendingToolCallIds"))
        .and_then(Value::as_array);
    match listed {
        Some(listed) if !listed.is_empty() => {
            conv.exercised.hit(AGUI_TOOL_004);
            // Exactly the calls left: none missing, none extra, none twice.
            let mut named: Vec<&str> = listed.iter().filter_map(Value::as_str).collect();
            named.sort();
            let mut left: Vec<&str> = pending.clone();
            left.sort();
            if named != left {
                out.push(Violation::new(
                    AGUI_TOOL_004,
                    format!("pendingToolCallIds names {named:?}, but the calls the run started and did not answer are {pending:?}"),
                ));
            }
        }
        _ if !pending.is_empty() => out.push(Violation::new(
            AGUI_TOOL_003,
            format!("the run left tool call(s) {pending:?} unanswered and its RUN_FINISHED lists no pendingToolCallIds"),
        )),
        _ => {}
    }
}
