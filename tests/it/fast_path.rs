//! The fast path of `check` never accepts what the schema rejects, and yields the same facts
//! as the full path: checked on one valid message per event type and on thousands of
//! mutations of them (every field removed, retyped, nulled; unknown fields; duplicate keys;
//! escaped strings; out-of-range numbers; objects written as arrays of their values).

use serde_json::{json, Value};
use wireprobe::fuzz::targets::haip_fast_path_on;
use wireprobe::protocol::haip::schema::schema;

fn envelope(ty: &str, payload: Value) -> Value {
    json!({"id": "123e4567-e89b-42d3-a456-426614174000", "session": "223e4567-e89b-42d3-a456-426614174001",
           "seq": "7", "ack": "3", "ts": "1690000000000", "channel": "AGENT", "type": ty, "payload": payload,
           "pv": 1, "run_id": "323e4567-e89b-42d3-a456-426614174002"})
}

fn valid_messages() -> Vec<Value> {
    let id = "423e4567-e89b-42d3-a456-426614174003";
    let mut audio_binary = envelope(
        "AUDIO_CHUNK",
        json!({"message_id": id, "mime": "audio/opus"}),
    );
    audio_binary["bin_len"] = json!(10);
    audio_binary["bin_mime"] = json!("audio/opus");
    let mut threaded = envelope("PING", json!({}));
    threaded["thread_id"] = json!("t-1");
    threaded["crit"] = json!(false);
    vec![
        envelope("PING", json!({"nonce": "n1"})),
        envelope("PONG", json!({})),
        threaded,
        envelope("REPLAY_REQUEST", json!({"from_seq": "3", "to_seq": "5"})),
        envelope(
            "TEXT_MESSAGE_START",
            json!({"message_id": id, "author": "agent", "text": "hi"}),
        ),
        envelope(
            "TEXT_MESSAGE_PART",
            json!({"message_id": id, "text": "hello"}),
        ),
        envelope(
            "TEXT_MESSAGE_END",
            json!({"message_id": id, "tokens": "12"}),
        ),
        envelope(
            "AUDIO_CHUNK",
            json!({"message_id": id, "mime": "audio/opus", "data": "AAECAw==", "duration_ms": "20"}),
        ),
        audio_binary,
        envelope(
            "TOOL_CALL",
            json!({"call_id": id, "tool": "t", "params": {"a": [1, 2]}}),
        ),
        envelope(
            "TOOL_UPDATE",
            json!({"call_id": id, "status": "RUNNING", "progress": 42.5, "partial": [1]}),
        ),
        envelope(
            "TOOL_DONE",
            json!({"call_id": id, "status": "OK", "result": {"x": null}}),
        ),
        envelope("TOOL_CANCEL", json!({"call_id": id, "reason": "bored"})),
        envelope(
            "TOOL_LIST",
            json!({"tools": [{"name": "a", "description": "b"}, {"name": "c"}]}),
        ),
        envelope(
            "TOOL_SCHEMA",
            json!({"tool": "a", "schema": {"type": "object"}}),
        ),
        envelope(
            "ERROR",
            json!({"code": "X", "message": "m", "related_id": id, "detail": {"k": 1}}),
        ),
        envelope("RUN_ERROR", json!({"code": "X", "message": "m"})),
        envelope(
            "FLOW_UPDATE",
            json!({"channel": "USER", "add_messages": 5, "add_bytes": 100}),
        ),
        envelope("PAUSE_CHANNEL", json!({"channel": "USER"})),
        envelope("RESUME_CHANNEL", json!({"channel": "USER"})),
        envelope("RUN_STARTED", json!({"anything": {"goes": true}})),
        envelope(
            "RUN_FINISHED",
            json!({"status": "CANCELLED", "summary": "s"}),
        ),
        envelope("RUN_CANCEL", json!({"run_id": id})),
    ]
}

/// Replacement values tried for every field.
fn odd_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(255),
        json!(256),
        json!(101),
        json!(18446744073709551615u64),
        json!(""),
        json!("x"),
        json!("1"),
        json!("01"),
        json!("123456789012345678901"),
        json!("a b"),
        json!("123e4567-e89b-62d3-a456-426614174000"),
        json!("123e4567-e89b-42d3-c456-426614174000"),
        json!("423e4567-e89b-42d3-a456-426614174003"),
        json!("QUEUED"),
        json!("OK"),
        json!("DONE"),
        json!("not base64!"),
        json!("x".repeat(129)),
        json!([]),
        json!({}),
        json!([{"name": "a", "extra": 1}]),
    ]
}

/// Every single-point mutation of `v`: remove a key, replace a value, add an unknown key.
fn mutations(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match v {
        Value::Object(map) => {
            let mut extra = map.clone();
            extra.insert("x_unknown".into(), json!(1));
            out.push(Value::Object(extra));
            // The object as an array of its values, which serde's derived structs read as
            // their fields in order (and the schema refuses).
            out.push(Value::Array(map.values().cloned().collect()));
            for (k, child) in map {
                let mut removed = map.clone();
                removed.shift_remove(k);
                out.push(Value::Array(removed.values().cloned().collect()));
                out.push(Value::Object(removed));
                for odd in odd_values() {
                    let mut replaced = map.clone();
                    replaced.insert(k.clone(), odd);
                    out.push(Value::Object(replaced));
                }
                for m in mutations(child) {
                    let mut nested = map.clone();
                    nested.insert(k.clone(), m);
                    out.push(Value::Object(nested));
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                for m in mutations(child) {
                    let mut copy = items.clone();
                    copy[i] = m;
                    out.push(Value::Array(copy));
                }
            }
        }
        _ => {}
    }
    out
}

/// Text-level variants JSON values cannot express: duplicate keys and escaped strings.
fn text_variants(v: &Value) -> Vec<String> {
    let text = v.to_string();
    let mut out = vec![text.clone()];
    out.push(text.replacen("\"seq\":\"7\"", "\"seq\":\"7\",\"seq\":\"x\"", 1));
    out.push(text.replacen("\"seq\":\"7\"", "\"seq\":\"x\",\"seq\":\"7\"", 1));
    out.push(text.replacen("AGENT", "AG\\u0045NT", 1));
    out.push(text.replacen("123e4567", "\\u0031\\u0032\\u0033e4567", 1));
    out.push(text.replacen("\"pv\":1", "\"pv\":1.0", 1));
    out.push(text.replacen("\"pv\":1", "\"pv\":1e0", 1));
    out.push(text.replacen("}", ",\"payload\":{}}", 1));
    // A second type after the first, before or after the payload read as the first's struct.
    out.push(text.replacen("\"payload\"", "\"type\":\"PING\",\"payload\"", 1));
    out.push(text.replacen("\"pv\"", "\"type\":\"PING\",\"pv\"", 1));
    out.push(text.replacen("\"type\"", "\"typ\\u0065\"", 1));
    out.extend(payload_first(v).map(|v| v.to_string()));
    out
}

/// `v` with its payload before every other field (its type among them), when it has one: the
/// fast path then reads the payload's text once the type is known.
fn payload_first(v: &Value) -> Option<Value> {
    let map = v.as_object()?;
    let payload = map.get("payload")?;
    let mut first = serde_json::Map::new();
    first.insert("payload".into(), payload.clone());
    for (k, value) in map {
        first.entry(k.clone()).or_insert_with(|| value.clone());
    }
    Some(Value::Object(first))
}

/// What the fast path made of one message's text, and of the tree it parses to.
#[derive(Default)]
struct Accepted {
    text: usize,
    tree: usize,
}

/// The fast path holds to the schema on `text` and on its tree (the cargo-fuzz target
/// `haip_fast_path`'s check); counts which it accepted.
fn check_one(text: &str, accepted: &mut Accepted) {
    let taken = haip_fast_path_on(text);
    accepted.text += usize::from(taken.text);
    accepted.tree += usize::from(taken.tree);
}

#[test]
fn valid_messages_take_the_fast_path_with_the_same_facts() {
    for msg in valid_messages() {
        let reordered = payload_first(&msg).expect("a payload");
        for text in [msg.to_string(), reordered.to_string()] {
            let mut accepted = Accepted::default();
            check_one(&text, &mut accepted);
            assert_eq!(accepted.text, 1, "the fast path should accept {text}");
            assert_eq!(
                accepted.tree, 1,
                "the fast path should accept the tree of {text}"
            );
        }
    }
}

#[test]
fn mutations_are_never_wrongly_accepted() {
    let mut tried = 0;
    let mut accepted = Accepted::default();
    for msg in valid_messages() {
        for m in mutations(&msg) {
            for text in text_variants(&m) {
                tried += 1;
                check_one(&text, &mut accepted);
            }
        }
    }
    // Enough of them must stay on the fast path for this test to mean something.
    let Accepted { text, tree } = accepted;
    assert!(
        tried > 20_000 && text > 1_000 && tree > 1_000,
        "tried {tried}, accepted {text} texts and {tree} trees"
    );
}

/// What the schema's whole list of errors makes the first rejection: what
/// [`Schema::rejection`](wireprobe::protocol::haip::schema::Schema::rejection) answers from
/// the validator's first error, falling back to this list when that one is an unknown field.
fn first_rejection_of_every_error(event: &Value) -> Option<(&'static str, String)> {
    let mut problems = Vec::new();
    schema().check(event, &mut problems);
    problems
        .into_iter()
        .find(|v| v.rule != "HAIP-ENV-005")
        .map(|v| (v.rule, v.message))
}

#[test]
fn a_rejection_is_the_first_of_every_error_the_schema_lists() {
    let (mut rejected, mut passed) = (0, 0);
    for msg in valid_messages() {
        for m in mutations(&msg) {
            // An unknown field first as well: the validator's first error is then one the
            // receiver may ignore, and the rejection is one of the others.
            let mut with_unknown = m.clone();
            if let Some(map) = with_unknown.as_object_mut() {
                map.shift_insert(0, "a_unknown".into(), json!(true));
            }
            for event in [m, with_unknown] {
                let expected = first_rejection_of_every_error(&event);
                let got = schema().rejection(&event).map(|v| (v.rule, v.message));
                assert_eq!(got, expected, "{event}");
                match got {
                    Some(_) => rejected += 1,
                    None => passed += 1,
                }
            }
        }
    }
    assert!(
        rejected > 1_000 && passed > 100,
        "{rejected} rejected, {passed} passed"
    );
}
