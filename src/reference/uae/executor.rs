//! The reference API Executor: `echo` (the args back), `fail` (always TOOL_FAILED) and the
//! spec's own `weight_entry_save_batch` (rows with measured_at and weight_lbs > 0).

use super::stamp::Stamp;
use crate::protocol::json::is_rfc3339;
use serde_json::{json, Value};

/// A tool's outcome.
enum Outcome {
    Ok(Value),
    Failed {
        code: &'static str,
        message: String,
        details: Option<Value>,
    },
}

fn invalid(message: impl Into<String>, path: Value) -> Outcome {
    Outcome::Failed {
        code: "VALIDATION_ERROR",
        message: message.into(),
        details: Some(json!({"path": path})),
    }
}

/// Answers one `tool.call`; `None` for input it cannot use (another type, no trace_id).
pub fn handle(stamp: &mut Stamp, event: &Value) -> Option<Vec<Value>> {
    if event.get("type").and_then(Value::as_str) != Some("tool.call") {
        return None;
    }
    let trace = event.get("trace_id").and_then(Value::as_str)?.to_owned();
    let session = event.get("session_id").and_then(Value::as_str)?.to_owned();
    let tool = event.pointer("/payload/tool").and_then(Value::as_str);
    let args = event.pointer("/payload/args");
    let outcome = run(stamp, tool, args);
    let bare = stamp.variants().has("no-null-keys");
    let mut payload = match outcome {
        Outcome::Ok(result) => {
            let mut p = json!({"ok": true, "result": result, "error": null});
            if bare {
                p.as_object_mut().map(|p| p.remove("error"));
            }
            p
        }
        Outcome::Failed { .. } if stamp.faults().has("no-result-for-failures") => {
            return Some(Vec::new())
        }
        Outcome::Failed {
            code,
            message,
            details,
        } => {
            let mut error = json!({"code": code, "message": message});
            if let Some(details) = details {
                error["details"] = details;
            }
            let mut p = json!({"ok": false, "result": null, "error": error});
            if bare {
                p.as_object_mut().map(|p| p.remove("result"));
            }
            p
        }
    };
    payload["tool"] = json!(tool.unwrap_or(""));
    Some(vec![stamp.event(
        "tool.result",
        &session,
        Some(&trace),
        payload,
    )])
}

fn run(stamp: &mut Stamp, tool: Option<&str>, args: Option<&Value>) -> Outcome {
    let checks = !stamp.faults().has("no-validation");
    let Some(tool) = tool else {
        return invalid("the call names no tool", json!(["tool"]));
    };
    let empty = json!({});
    let args = match args {
        Some(a @ Value::Object(_)) => a,
        _ if !checks => &empty,
        _ => return invalid("args must be an object", json!(["args"])),
    };
    match tool {
        "echo" => Outcome::Ok(args.clone()),
        "fail" => Outcome::Failed {
            code: "TOOL_FAILED",
            message: "the fail tool always fails".into(),
            details: None,
        },
        "weight_entry_save_batch" => save_batch(stamp, args, checks),
        _ if stamp.faults().has("unknown-tool-ok") => Outcome::Ok(json!({})),
        other => Outcome::Failed {
            code: "UNKNOWN_TOOL",
            message: format!("no tool named {other:?}"),
            details: None,
        },
    }
}

fn save_batch(stamp: &mut Stamp, args: &Value, checks: bool) -> Outcome {
    let Some(rows) = args.get("rows").and_then(Value::as_array) else {
        return invalid("rows must be an array", json!(["rows"]));
    };
    if checks {
        for (i, row) in rows.iter().enumerate() {
            let date = row.get("measured_at").and_then(Value::as_str);
            if !date.is_some_and(|d| is_rfc3339(d) || is_date(d)) {
                return invalid(
                    "measured_at must be a date or an RFC 3339 time",
                    json!(["rows", i, "measured_at"]),
                );
            }
            let weight = row.get("weight_lbs").and_then(Value::as_f64);
            if !weight.is_some_and(|w| w > 0.0) {
                return invalid("weight_lbs must be > 0", json!(["rows", i, "weight_lbs"]));
            }
        }
    }
    let ids: Vec<String> = rows.iter().map(|_| stamp.fresh("wt")).collect();
    Outcome::Ok(json!({"saved": rows.len(), "ids": ids}))
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}
