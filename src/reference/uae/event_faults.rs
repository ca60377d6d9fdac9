//! The UAE target's event faults (listed in `faults.rs`) at work: each reshapes, doubles or
//! re-ids an event as it goes out ([`on_event`]), so the agent, the executor and the envelope
//! writer write events as the spec has them and know none of these faults. The faults of
//! behaviour (a session of its own, an echo, a stall, a result never sent, arguments never
//! checked) act where the peer decides, in `agent.rs`, `executor.rs` and `mod.rs`.

use super::stamp::Stamp;
use crate::reference::Faults;
use serde_json::{json, Map, Value};
use std::time::SystemTime;

/// What `event` becomes under the configured event faults: one event, or two.
pub fn on_event(stamp: &mut Stamp, mut event: Value) -> Vec<Value> {
    // Every event the peer sends comes here: without a fault on, it goes as it is.
    if stamp.faults().is_empty() {
        return vec![event];
    }
    // A copy, as the stamp makes the fresh ids some faults write.
    let faults = stamp.faults().clone();
    let on = |name: &str| faults.has(name);
    let ty = event["type"].as_str().unwrap_or_default().to_owned();
    let Some(fields) = event.as_object_mut() else {
        return vec![event];
    };
    if let Some(Value::Object(payload)) = fields.get_mut("payload") {
        match ty.as_str() {
            "tool.result" => reshape_result(&faults, payload),
            "tool.call" => reshape_call(&faults, payload),
            "assistant.view" => reshape_view(&faults, payload),
            "assistant.message" if on("message-without-text") => {
                if let Some(text) = payload.remove("text") {
                    payload.insert("content".into(), text);
                }
            }
            _ => {}
        }
    }
    let untraced = match ty.as_str() {
        "tool.call" => on("call-without-trace"),
        "tool.result" => on("result-without-trace"),
        _ => false,
    };
    if untraced {
        fields.remove("trace_id");
    }
    if ty == "tool.result" && on("result-other-trace") {
        fields.insert("trace_id".into(), json!(stamp.fresh("tr")));
    }
    if on("no-session-id") {
        fields.remove("session_id");
    }
    if let Some(ts) = timestamp(&faults) {
        fields.insert("ts".into(), ts);
    }
    if on("payload-string") {
        let text = fields.get("payload").map(Value::to_string);
        fields.insert("payload".into(), json!(text.unwrap_or_default()));
    }
    let copies = match ty == "tool.result" && on("two-results") {
        true => 2,
        false => 1,
    };
    let re_id = on("duplicate-ids") || on("id-without-prefix");
    (0..copies)
        .map(|n| {
            let mut copy = event.clone();
            if re_id || n > 0 {
                copy["id"] = json!(id(stamp, &faults));
            }
            copy
        })
        .collect()
}

/// The id an event goes out with: a fresh one for each, as the writer gives them, unless an
/// id fault is on.
fn id(stamp: &mut Stamp, faults: &Faults) -> String {
    match (faults.has("duplicate-ids"), faults.has("id-without-prefix")) {
        (true, _) => "evt_1".to_owned(),
        (_, true) => stamp.next_number().to_string(),
        _ => stamp.fresh("evt"),
    }
}

/// The `ts` a timestamp fault writes, when one is on.
fn timestamp(faults: &Faults) -> Option<Value> {
    let now = SystemTime::now();
    if faults.has("epoch-ts") {
        let millis = now.duration_since(SystemTime::UNIX_EPOCH);
        return Some(json!(millis.map_or(0, |d| d.as_millis() as u64)));
    }
    if faults.has("ts-without-millis") {
        return Some(json!(humantime::format_rfc3339_seconds(now).to_string()));
    }
    faults
        .has("ts-not-rfc3339")
        .then(|| json!("Thu Jan  8 12:34:56 2026"))
}

fn reshape_result(faults: &Faults, payload: &mut Map<String, Value>) {
    let ok = payload.get("ok") == Some(&Value::Bool(true));
    if ok && faults.has("ok-true-with-error") {
        payload.insert(
            "error".into(),
            json!({"code": "NONE", "message": "no error"}),
        );
    }
    if !ok && faults.has("error-without-code") {
        if let Some(Value::Object(error)) = payload.get_mut("error") {
            error.remove("code");
        }
    }
    if !ok && faults.has("ok-false-with-result") {
        payload.insert("result".into(), json!({"saved": 0}));
    }
    if faults.has("result-other-tool") {
        payload.insert("tool".into(), json!("another_tool"));
    }
    if faults.has("ok-not-boolean") {
        payload.insert("ok".into(), json!(ok.to_string()));
    }
}

fn reshape_call(faults: &Faults, payload: &mut Map<String, Value>) {
    if faults.has("call-without-tool") {
        payload.remove("tool");
    }
    if faults.has("args-not-object") {
        let args = payload
            .get("args")
            .map(Value::to_string)
            .unwrap_or_default();
        payload.insert("args".into(), json!(args));
    }
}

fn reshape_view(faults: &Faults, payload: &mut Map<String, Value>) {
    let Some(Value::Object(view)) = payload.get_mut("view") else {
        return;
    };
    if faults.has("view-without-view-id") {
        view.remove("view_id");
    }
    if faults.has("view-kind-other") {
        view.insert("kind".into(), json!("html"));
    }
}
