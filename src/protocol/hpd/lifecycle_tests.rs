//! The lifecycle checker's tests, beside it (lifecycle.rs stays near 600 lines).

use super::*;
use crate::protocol::hpd::events;
use serde_json::json;

/// The rules broken by `stream`, a list of server envelopes.
fn broken(stream: &[Value]) -> Vec<&'static str> {
    let mut life = Lifecycle::default();
    let mut out = Vec::new();
    for event in stream {
        let Value::Object(m) = event else { continue };
        let kind = m["type"].as_str().unwrap_or("");
        if let Some(k) = events::known(kind) {
            life.observe(k.family, k.name, m, &mut out);
        }
    }
    out.iter().map(|v| v.rule).collect()
}

fn ev(kind: &str, fields: Value) -> Value {
    let mut e = json!({"type": kind});
    crate::protocol::merge(&mut e, &fields);
    e
}

#[test]
fn joining_mid_turn_blames_nothing() {
    let stream = [
        ev("TEXT_DELTA", json!({"messageId": "old", "text": "x"})),
        ev("TEXT_MESSAGE_END", json!({"messageId": "old"})),
        ev("TOOL_CALL_RESULT", json!({"callId": "old-call"})),
        ev("MESSAGE_TURN_FINISHED", json!({"messageTurnId": "before"})),
        ev("MESSAGE_TURN_STARTED", json!({"messageTurnId": "t"})),
        ev("TEXT_MESSAGE_START", json!({"messageId": "m"})),
        ev("TEXT_MESSAGE_END", json!({"messageId": "m"})),
        ev("MESSAGE_TURN_FINISHED", json!({"messageTurnId": "t"})),
    ];
    assert!(broken(&stream).is_empty(), "{:?}", broken(&stream));
}

#[test]
fn a_whole_turn_is_held_to_its_lifecycles() {
    let stream = [
        ev("MESSAGE_TURN_STARTED", json!({"messageTurnId": "t"})),
        ev(
            "TEXT_DELTA",
            json!({"messageId": "never-started", "text": "x"}),
        ),
        ev("TEXT_MESSAGE_START", json!({"messageId": "m"})),
        ev("TOOL_CALL_START", json!({"callId": "c"})),
        ev("TOOL_CALL_END", json!({"callId": "c"})),
        ev("MESSAGE_TURN_FINISHED", json!({"messageTurnId": "t"})),
        ev("TEXT_DELTA", json!({"messageId": "m", "text": "late"})),
    ];
    assert_eq!(
        broken(&stream),
        [
            "HPD-STREAM-002",
            "HPD-TOOL-003",
            "HPD-STREAM-001",
            "HPD-TURN-004"
        ]
    );
}

#[test]
fn end_and_result_come_in_either_order() {
    let turn = |middle: [Value; 2]| {
        let mut s = vec![
            ev("MESSAGE_TURN_STARTED", json!({"messageTurnId": "t"})),
            ev("TOOL_CALL_START", json!({"callId": "c"})),
        ];
        s.extend(middle);
        s.push(ev("MESSAGE_TURN_FINISHED", json!({"messageTurnId": "t"})));
        broken(&s)
    };
    let end = ev("TOOL_CALL_END", json!({"callId": "c"}));
    let result = ev("TOOL_CALL_RESULT", json!({"callId": "c"}));
    assert!(turn([end.clone(), result.clone()]).is_empty());
    assert!(turn([result, end]).is_empty());
}
