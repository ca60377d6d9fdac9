//! What each Nuum output line is, and whether it has the shape the spec gives it. The lifecycle
//! (which line may come when) is the checker's business; this module looks at one line.

use crate::protocol::json::{is_rfc3339, json_kind};
use crate::rules::ids::{
    NUUM_AST_001, NUUM_AST_002, NUUM_CTL_006, NUUM_INIT_002, NUUM_INIT_003, NUUM_OUT_002,
    NUUM_RES_002, NUUM_RES_003, NUUM_RES_004, NUUM_SYS_001, NUUM_TASK_001, NUUM_TASK_002,
};
use crate::rules::{Exercised, Violation};
use serde_json::Value;

/// An output line, by its `type` and `subtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    Init,
    TurnAccepted,
    Assistant,
    /// `system/tool_result`.
    ToolResult,
    /// A `user` line carrying tool_result blocks (what newer public builds send instead).
    ToolResultAsUser,
    Result,
    Tasks,
    Error,
    Queued,
    Injected,
    StatusResponse,
    HeartbeatAck,
    /// A system subtype the spec does not list.
    OtherSystem(&'a str),
    /// A type the spec does not list for output.
    Other(&'a str),
}

/// The kind of `line`, or why it has no form of a Nuum message (not an object with a string
/// type: NUUM-OUT-002, since only the examples show that form).
pub fn classify(line: &Value) -> Result<Kind<'_>, String> {
    let Some(obj) = line.as_object() else {
        return Err(format!("a JSON {} line, not an object", json_kind(line)));
    };
    let Some(ty) = obj.get("type").and_then(Value::as_str) else {
        return Err("an object without a string type".into());
    };
    Ok(match ty {
        "assistant" => Kind::Assistant,
        "result" => Kind::Result,
        "user" if tool_result_blocks(line).next().is_some() => Kind::ToolResultAsUser,
        "system" => match obj.get("subtype").and_then(Value::as_str).unwrap_or("") {
            "init" => Kind::Init,
            "turn_accepted" => Kind::TurnAccepted,
            "tool_result" => Kind::ToolResult,
            "tasks" => Kind::Tasks,
            "error" => Kind::Error,
            "queued" => Kind::Queued,
            "injected" => Kind::Injected,
            // A public build answers status with system/status: the answer still, judged as
            // one, its name found wanting (NUUM-CTL-006; suites/nuum/ERRATA.md).
            "status_response" | "status" => Kind::StatusResponse,
            "heartbeat_ack" => Kind::HeartbeatAck,
            other => Kind::OtherSystem(other),
        },
        other => Kind::Other(other),
    })
}

/// The tool_result blocks of a `user` line.
pub fn tool_result_blocks(line: &Value) -> impl Iterator<Item = &Value> {
    line.pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
}

/// Shape violations of one line of `kind`.
pub fn shape_violations(kind: Kind<'_>, line: &Value, out: &mut Vec<Violation>) {
    shape_checks(kind, line, out, &mut Exercised::default());
}

/// [`shape_violations`], noting in `ex` each rule whose check ran on this line (a rule about a
/// field of another kind of line, or a block or task the line lacks, is not noted).
pub fn shape_checks(kind: Kind<'_>, line: &Value, out: &mut Vec<Violation>, ex: &mut Exercised) {
    let mut need = |rule: &'static str, ok: bool, what: &str| {
        if !ok {
            out.push(Violation::new(rule, format!("{}: {what}", describe(kind))));
        }
    };
    // A field the spec says is there: its absence breaks `rule`; a type only the examples
    // show, NUUM-OUT-002.
    let string_field = |rule: &'static str, name: &str| match line.get(name) {
        None => Some((rule, format!("no {name}"))),
        Some(v) if !v.is_string() => Some((NUUM_OUT_002, format!("{name} is not a string"))),
        Some(_) => None,
    };
    let session = string_field(
        match kind {
            Kind::Init => NUUM_INIT_002,
            Kind::Assistant => NUUM_AST_001,
            Kind::Result => NUUM_RES_003,
            _ => NUUM_OUT_002,
        },
        "session_id",
    );
    match kind {
        Kind::Init => {
            ex.hit(NUUM_INIT_002);
            ex.hit(NUUM_INIT_003);
            if let Some((rule, what)) = session {
                need(rule, false, &what);
            }
            need(NUUM_INIT_003, is_str(line, "version"), "no string version");
            need(
                NUUM_INIT_003,
                line.get("tools")
                    .and_then(Value::as_array)
                    .is_some_and(|t| t.iter().all(Value::is_string)),
                "tools is not an array of strings",
            );
        }
        Kind::Assistant => {
            ex.hit(NUUM_AST_001);
            need(NUUM_AST_001, line.get("message").is_some(), "no message");
            if let Some((rule, what)) = session {
                need(rule, false, &what);
            }
            let role = line.pointer("/message/role").and_then(Value::as_str);
            need(
                NUUM_OUT_002,
                role == Some("assistant"),
                &format!("message.role is {role:?}, not \"assistant\""),
            );
            need(
                NUUM_OUT_002,
                line.pointer("/message/content")
                    .is_some_and(Value::is_array),
                "message.content is not an array of content blocks",
            );
            need(
                NUUM_OUT_002,
                line.pointer("/message/model").is_none_or(Value::is_string),
                "message.model is not a string",
            );
            for block in content_blocks(line) {
                block_violations(block, out, ex);
            }
        }
        Kind::ToolResult => {
            let block = line.get("tool_result");
            need(
                NUUM_OUT_002,
                block.is_some_and(tool_result_block_ok),
                "tool_result is not a block with type tool_result, a string tool_use_id, content and (if present) a boolean is_error",
            );
        }
        Kind::ToolResultAsUser => {
            for block in tool_result_blocks(line) {
                need(
                    NUUM_OUT_002,
                    tool_result_block_ok(block),
                    "a tool_result block without a string tool_use_id or content",
                );
            }
        }
        Kind::Result => {
            let subtype = line.get("subtype").and_then(Value::as_str);
            ex.hit(NUUM_RES_002);
            ex.hit(NUUM_RES_003);
            // is_error is judged against the two subtypes it has a value for.
            if matches!(subtype, Some("success" | "error")) {
                ex.hit(NUUM_RES_004);
            }
            // The spec lists the subtypes: a public build's own names for an error break the
            // list as any other name does, and the message says whose they are.
            let whose = match subtype {
                Some(s) if PUBLIC_ERROR_SUBTYPES.contains(&s) => {
                    " (the public build's name for an error; the spec lists error)"
                }
                _ => "",
            };
            need(
                NUUM_RES_002,
                matches!(subtype, Some("success" | "error" | "cancelled")),
                &format!(
                    "subtype {} is not success, error or cancelled{whose}",
                    crate::show::quoted_or_none(subtype)
                ),
            );
            for field in ["duration_ms", "num_turns"] {
                need(
                    NUUM_OUT_002,
                    line.get(field).is_some_and(|v| v.is_u64()),
                    &format!("{field} is not a non-negative integer"),
                );
            }
            let is_error = line.get("is_error").and_then(Value::as_bool);
            need(
                NUUM_OUT_002,
                is_error.is_some(),
                "is_error is not a boolean",
            );
            if let Some((rule, what)) = session {
                need(rule, false, &what);
            }
            match (subtype, is_error) {
                (Some("success"), Some(true)) => {
                    need(NUUM_RES_004, false, "is_error is true on success")
                }
                (Some("error"), Some(false)) => {
                    need(NUUM_RES_004, false, "is_error is false on error")
                }
                _ => {}
            }
        }
        Kind::Tasks => tasks_violations(line, out, ex),
        Kind::Error => {
            ex.hit(NUUM_SYS_001);
            need(NUUM_SYS_001, is_str(line, "message"), "no string message");
        }
        Kind::Queued => need(
            NUUM_OUT_002,
            is_positive(line, "position"),
            "position is not a positive integer",
        ),
        Kind::Injected => need(
            NUUM_OUT_002,
            is_positive(line, "message_count"),
            "message_count is not a positive integer",
        ),
        Kind::StatusResponse => {
            ex.hit(NUUM_CTL_006);
            need(
                NUUM_CTL_006,
                line.get("subtype").and_then(Value::as_str) == Some("status_response"),
                "system/status, the public build's name for the status answer; the spec's \
                 example names it status_response",
            );
            need(
                NUUM_OUT_002,
                line.get("running").is_some_and(Value::is_boolean),
                "running is not a boolean",
            );
            if let Some((rule, what)) = session {
                need(rule, false, &what);
            }
        }
        Kind::TurnAccepted | Kind::HeartbeatAck | Kind::OtherSystem(_) | Kind::Other(_) => {}
    }
}

/// The content blocks of an assistant line.
pub fn content_blocks(line: &Value) -> impl Iterator<Item = &Value> {
    line.pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn block_violations(block: &Value, out: &mut Vec<Violation>, ex: &mut Exercised) {
    let ty = block.get("type").and_then(Value::as_str);
    // NUUM-AST-002 is about text and tool_use blocks (and a block with no type at all).
    if matches!(ty, None | Some("text" | "tool_use")) {
        ex.hit(NUUM_AST_002);
    }
    let ok = match ty {
        Some("text") => is_str(block, "text"),
        Some("tool_use") => {
            is_str(block, "id")
                && is_str(block, "name")
                && block.get("input").is_some_and(Value::is_object)
        }
        // Other block types are recorded (NUUM-OUT-001), not judged.
        Some(_) => true,
        None => false,
    };
    if !ok {
        let shown: String = block.to_string().chars().take(120).collect();
        out.push(Violation::new(
            NUUM_AST_002,
            format!("content block {shown} lacks the fields of its type"),
        ));
    }
}

fn tool_result_block_ok(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
        && is_str(block, "tool_use_id")
        && block.get("content").is_some()
        && block.get("is_error").is_none_or(Value::is_boolean)
}

fn tasks_violations(line: &Value, out: &mut Vec<Violation>, ex: &mut Exercised) {
    let mut push = |rule: &'static str, what: String| {
        out.push(Violation::new(rule, format!("system/tasks: {what}")));
    };
    if !is_str(line, "session_id") {
        push(NUUM_OUT_002, "no string session_id".into());
    }
    let Some(tasks) = line.get("tasks").and_then(Value::as_array) else {
        push(NUUM_OUT_002, "tasks is not an array".into());
        return;
    };
    for task in tasks {
        let id = task.get("id").and_then(Value::as_str).unwrap_or("?");
        if !is_str(task, "id") || !is_str(task, "description") {
            push(
                NUUM_OUT_002,
                format!("task {id}: no string id or description"),
            );
        }
        let ty = task.get("type").and_then(Value::as_str);
        let status = task.get("status").and_then(Value::as_str);
        ex.hit(NUUM_TASK_001);
        let (want, stamp) = match ty {
            Some("research" | "reflect") => ("running", "createdAt"),
            Some("alarm") => ("pending", "firesAt"),
            _ => {
                push(
                    NUUM_TASK_001,
                    format!("task {id}: type {ty:?} is not research, reflect or alarm"),
                );
                continue;
            }
        };
        // Only a task of a listed type has a timestamp the spec names.
        ex.hit(NUUM_TASK_002);
        if status != Some(want) {
            push(
                NUUM_TASK_001,
                format!(
                    "task {id}: a {} has status {status:?}, not {want:?}",
                    ty.unwrap_or("")
                ),
            );
        }
        if !task
            .get(stamp)
            .and_then(Value::as_str)
            .is_some_and(is_rfc3339)
        {
            push(
                NUUM_TASK_002,
                format!("task {id}: {stamp} is not an RFC 3339 timestamp"),
            );
        }
    }
}

/// The result subtypes the public build writes for an error (specs/README.md), named in the
/// message of the rule they break (NUUM-RES-002; suites/nuum/ERRATA.md).
const PUBLIC_ERROR_SUBTYPES: &[&str] = &["error_during_execution", "error_max_turns"];

/// How a line is named in messages.
pub fn describe(kind: Kind<'_>) -> String {
    match kind {
        Kind::Init => "system/init".into(),
        Kind::TurnAccepted => "system/turn_accepted".into(),
        Kind::Assistant => "assistant".into(),
        Kind::ToolResult => "system/tool_result".into(),
        Kind::ToolResultAsUser => "a user line with tool_result blocks".into(),
        Kind::Result => "result".into(),
        Kind::Tasks => "system/tasks".into(),
        Kind::Error => "system/error".into(),
        Kind::Queued => "system/queued".into(),
        Kind::Injected => "system/injected".into(),
        Kind::StatusResponse => "system/status_response".into(),
        Kind::HeartbeatAck => "system/heartbeat_ack".into(),
        Kind::OtherSystem(s) => format!("system/{s}"),
        Kind::Other(t) => format!("type {t:?}"),
    }
}

fn is_str(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(Value::is_string)
}

fn is_positive(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_u64).is_some_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_of(line: &Value) -> Vec<&'static str> {
        let mut out = Vec::new();
        shape_violations(classify(line).expect("a Nuum line"), line, &mut out);
        out.iter().map(|v| v.rule).collect()
    }

    /// A public build's error subtype is none the spec lists (a must), and its status answer
    /// is named otherwise than the example (a should); a type only the example shows is graded
    /// `should` (NUUM-OUT-002), a field the spec names as present `must`.
    #[test]
    fn shapes() {
        let line = serde_json::json!({"type":"result","subtype":"error_during_execution","duration_ms":-1,"is_error":false,"num_turns":1,"session_id":"s"});
        assert_eq!(rules_of(&line), ["NUUM-RES-002", "NUUM-OUT-002"]);
        let mut found = Vec::new();
        shape_violations(Kind::Result, &line, &mut found);
        assert!(
            found[0].message.contains("the public build's name"),
            "{found:?}"
        );
        let line = serde_json::json!({"type":"result","subtype":"bogus","duration_ms":1,"is_error":false,"num_turns":1});
        assert_eq!(rules_of(&line), ["NUUM-RES-002", "NUUM-RES-003"]);
        let line = serde_json::json!({"type":"assistant","message":{"role":"model","content":"hi"},"session_id":7});
        assert_eq!(rules_of(&line), ["NUUM-OUT-002"; 3]);
        let line =
            serde_json::json!({"type":"system","subtype":"status","running":true,"session_id":"s"});
        assert_eq!(classify(&line), Ok(Kind::StatusResponse));
        assert_eq!(rules_of(&line), ["NUUM-CTL-006"]);
        let line = serde_json::json!({"type":"system","subtype":"status_response","running":true,"session_id":"s"});
        assert!(rules_of(&line).is_empty());
    }
}
