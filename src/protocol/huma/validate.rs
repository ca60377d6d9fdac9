//! Validation of HUMA events: what a server must reject from a client, and what a server may
//! send. Each finding names the rule it breaks.

use crate::rules::ids::{
    HUMA_ERR_001, HUMA_SRV_001, HUMA_SRV_002, HUMA_SRV_003, HUMA_SRV_004, HUMA_TR_001,
    HUMA_VAL_001, HUMA_VAL_002, HUMA_VAL_003, HUMA_VAL_004, HUMA_VAL_005, HUMA_VAL_006,
    HUMA_VAL_008,
};
use crate::rules::{Exercised, Violation};
use serde_json::Value;

/// Keys that must not appear anywhere in a record field (prototype pollution).
pub const FORBIDDEN_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];
/// Longest context-update name, in characters.
pub const MAX_NAME: usize = 128;
/// Longest tool-result result, JSON-serialised, in characters.
pub const MAX_RESULT: usize = 65_536;
/// The client event types.
pub const CLIENT_TYPES: [&str; 3] = ["context-update", "tool-result", "addon-tool-event"];
/// The tool-result outcomes.
pub const OUTCOMES: [&str; 3] = ["success", "failure", "canceled"];

/// The path of the first forbidden key in `v` (searched iteratively, so depth cannot
/// overflow the stack), like `context.a.0.__proto__`.
/// A `messageIndex` read as the spec types it, a number: 1.0 is index 1; anything that is not
/// a whole number from 0 up is none.
pub fn message_index(value: Option<&Value>) -> Option<u64> {
    value
        .and_then(Value::as_f64)
        .filter(|i| i.fract() == 0.0 && *i >= 0.0)
        .map(|i| i as u64)
}

pub fn forbidden_key_path(v: &Value) -> Option<String> {
    let mut stack: Vec<(&Value, String)> = vec![(v, String::new())];
    while let Some((node, path)) = stack.pop() {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_owned()
            } else {
                format!("{path}.{k}")
            }
        };
        match node {
            Value::Object(map) => {
                for (k, child) in map {
                    if FORBIDDEN_KEYS.contains(&k.as_str()) {
                        return Some(join(k));
                    }
                    stack.push((child, join(k)));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((child, join(&i.to_string())));
                }
            }
            _ => {}
        }
    }
    None
}

fn is_str(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

fn is_bool(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(_)))
}

fn is_obj(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Object(_)))
}

/// Every reason a server must reject this client event (empty: it must be accepted).
pub fn client_event_violations(event: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(obj) = event.as_object() else {
        out.push(Violation::new(
            HUMA_VAL_001,
            "the event is not a JSON object",
        ));
        return out;
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let field = |k: &str| obj.get(k);
    let mut need = |ok: bool, rule: &'static str, what: &str| {
        if !ok {
            out.push(Violation::new(rule, format!("{ty}: {what}")));
        }
    };
    match ty {
        "context-update" => {
            need(
                is_bool(field("triggering")),
                HUMA_VAL_002,
                "triggering must be a boolean",
            );
            let name_len = field("name")
                .and_then(Value::as_str)
                .map(|n| n.chars().count());
            need(
                matches!(name_len, Some(1..=MAX_NAME)),
                HUMA_VAL_002,
                "name must be a string of 1 to 128 characters",
            );
            need(
                is_obj(field("context")),
                HUMA_VAL_002,
                "context must be an object",
            );
            need(
                is_str(field("description")),
                HUMA_VAL_002,
                "description must be a string",
            );
        }
        "tool-result" => {
            need(
                is_bool(field("triggering")),
                HUMA_VAL_003,
                "triggering must be a boolean",
            );
            need(
                is_str(field("toolCallId")),
                HUMA_VAL_003,
                "toolCallId must be a string",
            );
            need(
                is_str(field("toolName")),
                HUMA_VAL_003,
                "toolName must be a string",
            );
            let outcome = field("outcome").and_then(Value::as_str);
            need(
                outcome.is_some_and(|o| OUTCOMES.contains(&o)),
                HUMA_VAL_003,
                "outcome must be success, failure or canceled",
            );
            need(
                field("error").is_none_or(Value::is_string),
                HUMA_VAL_003,
                "error must be a string",
            );
            if let Some(result) = field("result") {
                let len = serde_json::to_string(result).map_or(usize::MAX, |s| s.chars().count());
                need(
                    len <= MAX_RESULT,
                    HUMA_VAL_004,
                    &format!("result is {len} characters serialised, over {MAX_RESULT}"),
                );
            }
        }
        "addon-tool-event" => {
            need(
                is_str(field("toolCallId")),
                HUMA_VAL_005,
                "toolCallId must be a string",
            );
            need(
                is_obj(field("data")),
                HUMA_VAL_005,
                "data must be an object",
            );
        }
        other => {
            out.push(Violation::new(
                HUMA_VAL_001,
                format!(
                    "type {other:?} is not one of context-update, tool-result, addon-tool-event"
                ),
            ));
            return out;
        }
    }
    // The Record fields the Validation Limits name (context, data) must be free of forbidden
    // keys; a tool-result's result is typed "any", so there the check is a should.
    for (key, rule) in [
        ("context", HUMA_VAL_006),
        ("data", HUMA_VAL_006),
        ("result", HUMA_VAL_008),
    ] {
        if let Some(v @ (Value::Object(_) | Value::Array(_))) = field(key) {
            if let Some(path) = forbidden_key_path(v) {
                out.push(Violation::new(
                    rule,
                    format!("{ty}: forbidden key at {key}.{path}"),
                ));
            }
        }
    }
    out
}

/// Every rule a server event breaks; `channel` is the Socket.IO event name it arrived on.
pub fn server_event_violations(channel: &str, event: &Value) -> Vec<Violation> {
    server_event_checks(channel, event, &mut Exercised::default())
}

/// [`server_event_violations`], noting in `hits` each rule whose check ran on this emit: the
/// rules of the emit's own channel and type, not every rule for every emit.
pub(super) fn server_event_checks(
    channel: &str,
    event: &Value,
    hits: &mut Exercised,
) -> Vec<Violation> {
    let mut out = Vec::new();
    // Anything on 'event' is held to the server event types, an object first among them.
    if channel == "event" {
        hits.hit(HUMA_SRV_001);
    }
    let Some(obj) = event.as_object() else {
        out.push(Violation::new(
            HUMA_SRV_001,
            format!("a {channel:?} emit that is not an object"),
        ));
        return out;
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let field = |k: &str| obj.get(k);
    let mut need = |ok: bool, rule: &'static str, what: &str| {
        if !ok {
            out.push(Violation::new(rule, format!("{ty}: {what}")));
        }
    };
    // The channel every server emit is on is judged, whatever it holds.
    hits.hit(HUMA_TR_001);
    if channel == "error" {
        hits.hit(HUMA_ERR_001);
    }
    match (channel, ty) {
        ("error", "error") => {
            need(
                is_str(field("message")),
                HUMA_ERR_001,
                "message must be a string",
            );
            need(
                field("code").is_none_or(Value::is_string),
                HUMA_ERR_001,
                "code must be a string",
            );
        }
        ("error", _) => need(
            false,
            HUMA_ERR_001,
            "an 'error' emit must have type \"error\"",
        ),
        ("event", "error") => out.push(Violation::new(
            HUMA_TR_001,
            "an error event was emitted on 'event'; errors belong on 'error'",
        )),
        ("event", "tool-call") => {
            hits.hit(HUMA_SRV_002);
            let id = field("toolCallId").and_then(Value::as_str);
            need(
                id.is_some_and(|i| uuid::Uuid::parse_str(i).is_ok()),
                HUMA_SRV_002,
                "toolCallId must be a UUID",
            );
            need(
                is_str(field("toolName")),
                HUMA_SRV_002,
                "toolName must be a string",
            );
            need(
                is_obj(field("arguments")),
                HUMA_SRV_002,
                "arguments must be an object",
            );
        }
        ("event", "cancel-tool-call") => {
            hits.hit(HUMA_SRV_003);
            need(
                is_str(field("toolCallId")),
                HUMA_SRV_003,
                "toolCallId must be a string",
            );
            need(
                is_str(field("toolName")),
                HUMA_SRV_003,
                "toolName must be a string",
            );
            need(
                field("reason").is_none_or(Value::is_string),
                HUMA_SRV_003,
                "reason must be a string",
            );
        }
        ("event", "messaging") => {
            hits.hit(HUMA_SRV_004);
            let kind = field("event").and_then(Value::as_str).unwrap_or("");
            need(
                matches!(kind, "typing_start" | "message_sent" | "typing_end"),
                HUMA_SRV_004,
                "event must be typing_start, message_sent or typing_end",
            );
            if kind == "message_sent" {
                need(
                    is_str(field("message")),
                    HUMA_SRV_004,
                    "message_sent needs a string message",
                );
                let index = field("messageIndex").and_then(Value::as_f64);
                let count = field("messageCount").and_then(Value::as_f64);
                need(
                    matches!((index, count), (Some(i), Some(c)) if i >= 0.0 && i < c),
                    HUMA_SRV_004,
                    "message_sent needs numbers messageIndex < messageCount",
                );
            }
            for k in ["toolCallId", "reason", "message"] {
                need(
                    field(k).is_none_or(Value::is_string),
                    HUMA_SRV_004,
                    &format!("{k} must be a string"),
                );
            }
            need(
                field("extra_args").is_none_or(Value::is_object),
                HUMA_SRV_004,
                "extra_args must be an object",
            );
        }
        ("event", other) => need(
            false,
            HUMA_SRV_001,
            &format!("unknown server event type {other:?}"),
        ),
        (other, _) => out.push(Violation::new(
            HUMA_TR_001,
            format!("server emitted on {other:?}; HUMA uses 'event' and 'error'"),
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(v: &[Violation]) -> Vec<&'static str> {
        v.iter().map(|x| x.rule).collect()
    }

    fn ctx(name: &str) -> Value {
        json!({"type": "context-update", "triggering": true, "name": name, "context": {"a": 1}, "description": "d"})
    }

    #[test]
    fn spec_examples_are_valid() {
        assert!(client_event_violations(&ctx("new-message")).is_empty());
        let result = json!({"type": "tool-result", "triggering": true, "toolCallId": "550e8400-e29b-41d4-a716-446655440000",
                            "toolName": "lookup_movie", "outcome": "success", "result": {"title": "Inception"}});
        assert!(client_event_violations(&result).is_empty());
        let addon = json!({"type": "addon-tool-event", "toolCallId": "", "data": {"messageIndex": 0, "success": true}});
        assert!(client_event_violations(&addon).is_empty());
    }

    #[test]
    fn name_boundaries() {
        assert_eq!(rules(&client_event_violations(&ctx(""))), ["HUMA-VAL-002"]);
        assert!(client_event_violations(&ctx("a")).is_empty());
        assert!(client_event_violations(&ctx(&"a".repeat(128))).is_empty());
        assert_eq!(
            rules(&client_event_violations(&ctx(&"a".repeat(129)))),
            ["HUMA-VAL-002"]
        );
    }

    #[test]
    fn result_boundaries_are_serialised_length() {
        let with = |r: Value| json!({"type": "tool-result", "triggering": false, "toolCallId": "x", "toolName": "t", "outcome": "success", "result": r});
        // A string of 65,534 characters serialises (with quotes) to exactly 65,536.
        assert!(client_event_violations(&with(json!("x".repeat(65_534)))).is_empty());
        assert_eq!(
            rules(&client_event_violations(&with(json!("x".repeat(65_535))))),
            ["HUMA-VAL-004"]
        );
    }

    #[test]
    fn forbidden_keys_anywhere() {
        for key in FORBIDDEN_KEYS {
            let top = json!({"type": "context-update", "triggering": true, "name": "n", "context": {key: 1}, "description": "d"});
            assert_eq!(
                rules(&client_event_violations(&top)),
                ["HUMA-VAL-006"],
                "{key}"
            );
        }
        let deep = json!({"a": {"b": {"c": {"d": {"prototype": {}}}}}});
        assert_eq!(
            forbidden_key_path(&deep).as_deref(),
            Some("a.b.c.d.prototype")
        );
        let in_array = json!({"list": [1, {"constructor": 2}]});
        assert_eq!(
            forbidden_key_path(&in_array).as_deref(),
            Some("list.1.constructor")
        );
        assert_eq!(forbidden_key_path(&json!({"proto": 1, "__proto": 2})), None);
        // Deep nesting built in memory cannot overflow the stack.
        let mut v = json!({"prototype": 1});
        for _ in 0..10_000 {
            v = Value::Array(vec![v]);
        }
        assert!(forbidden_key_path(&v).is_some());
        std::mem::forget(v); // serde_json's recursive drop would overflow on this depth
    }

    #[test]
    fn bad_client_events() {
        assert_eq!(
            rules(&client_event_violations(&json!("text"))),
            ["HUMA-VAL-001"]
        );
        assert_eq!(
            rules(&client_event_violations(&json!({"type": "Context-Update"}))),
            ["HUMA-VAL-001"]
        );
        let no_trigger = json!({"type": "context-update", "triggering": "yes", "name": "n", "context": {}, "description": "d"});
        assert_eq!(
            rules(&client_event_violations(&no_trigger)),
            ["HUMA-VAL-002"]
        );
        let outcome = json!({"type": "tool-result", "triggering": true, "toolCallId": "x", "toolName": "t", "outcome": "done"});
        assert_eq!(rules(&client_event_violations(&outcome)), ["HUMA-VAL-003"]);
    }

    #[test]
    fn server_events() {
        let call = json!({"type": "tool-call", "toolCallId": "550e8400-e29b-41d4-a716-446655440000", "toolName": "t", "arguments": {}});
        assert!(server_event_violations("event", &call).is_empty());
        assert_eq!(
            rules(&server_event_violations(
                "event",
                &json!({"type": "tool-call", "toolCallId": "1", "toolName": "t", "arguments": {}})
            )),
            ["HUMA-SRV-002"]
        );
        let sent = json!({"type": "messaging", "event": "message_sent", "message": "hi", "messageIndex": 1, "messageCount": 1});
        assert_eq!(
            rules(&server_event_violations("event", &sent)),
            ["HUMA-SRV-004"]
        );
        let err = json!({"type": "error", "message": "m", "code": "INVALID_EVENT"});
        assert!(server_event_violations("error", &err).is_empty());
        assert_eq!(
            rules(&server_event_violations("message", &err)),
            ["HUMA-TR-001"]
        );
    }
}
