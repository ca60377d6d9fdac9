//! The reference agent's event faults (listed in `catalogue.rs`) at work: each rewrites a
//! finished script ([`apply`]); the HTTP ones act where the answer is made (`http.rs`).

use super::Config;
use serde_json::{json, Value};

/// The events `events` become under the configured event faults; `input` is what the run
/// answers.
pub fn apply(config: &Config, input: &Value, mut events: Vec<Value>) -> Vec<Value> {
    let on = |name: &str| config.faults.has(name);
    let of_type = |events: &[Value], ty: &str| events.iter().position(|e| e["type"] == ty);
    let last_of = |events: &[Value], ty: &str| events.iter().rposition(|e| e["type"] == ty);
    let Some(started) = of_type(&events, "RUN_STARTED").map(|i| events[i].clone()) else {
        return events;
    };
    let run_id = started["runId"].clone();
    let thread_id = started["threadId"].clone();
    let finish = last_of(&events, "RUN_FINISHED");
    let text_start = last_of(&events, "TEXT_MESSAGE_START");
    let text_id = text_start.map(|i| events[i]["messageId"].clone());
    let end_of = |events: &[Value], id: &Value| {
        events
            .iter()
            .rposition(|e| e["type"] == "TEXT_MESSAGE_END" && e["messageId"] == *id)
    };

    if on("malformed-field") {
        if let Some(i) = events.iter().rposition(|e| e["type"] == "RUN_FINISHED") {
            let restated = json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "msg-without-content", "role": "user"}]});
            events.insert(i, restated);
        }
    }
    if on("null-optional") {
        if let Some(i) = last_of(&events, "RUN_STARTED") {
            events[i]["parentRunId"] = Value::Null;
        }
    }
    if on("extra-field") {
        if let Some(i) = finish {
            events[i]["wireprobeNote"] = json!("not in the schema");
        }
    }
    if on("private-event") {
        if let Some(i) = finish {
            events.insert(i, json!({"type": "WIREPROBE_PRIVATE", "value": 1}));
        }
    }
    if on("no-version") || on("long-version") || on("echoes-version") {
        let newer = input.get("protocolVersion").filter(|v| {
            v.as_str()
                .and_then(crate::protocol::agui::conversation::version)
                .is_some_and(|v| v > (1, 1))
        });
        for e in events.iter_mut().filter(|e| e["type"] == "RUN_STARTED") {
            let m = e.as_object_mut().expect("an event is an object");
            if on("no-version") {
                m.remove("protocolVersion");
            } else if on("long-version") {
                m.insert("protocolVersion".into(), json!("1.1.0"));
            } else if let Some(newer) = newer {
                m.insert("protocolVersion".into(), newer.clone());
            }
        }
    }
    if on("own-thread-id") {
        for e in events
            .iter_mut()
            .filter(|e| e["type"] == "RUN_STARTED" || e["type"] == "RUN_FINISHED")
        {
            e["threadId"] = json!("thread-of-the-agent");
        }
    }
    if on("finishes-other-thread") {
        if let Some(i) = finish {
            events[i]["threadId"] = json!("thread-not-started");
        }
    }
    if on("reasoning-as-assistant") {
        for e in events
            .iter_mut()
            .filter(|e| e["type"] == "REASONING_MESSAGE_START")
        {
            e["role"] = json!("assistant");
        }
    }
    if on("finishes-other-run") {
        if let Some(i) = finish {
            events[i]["runId"] = json!("run-not-started");
        }
    }
    if on("reuses-message-id") {
        let user = input
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m.get("id"))
            .cloned();
        if let (Some(user), Some(id)) = (user, &text_id) {
            for e in events.iter_mut().filter(|e| e.get("messageId") == Some(id)) {
                e["messageId"] = user.clone();
            }
        }
    }
    if let (Some(start), Some(id)) = (text_start, &text_id) {
        if on("double-start") {
            let again = events[start].clone();
            events.insert(start + 1, again);
        }
        if on("reopens-as-user") {
            if let Some(end) = end_of(&events, id) {
                events.insert(
                    end + 1,
                    json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "user"}),
                );
                events.insert(
                    end + 2,
                    json!({"type": "TEXT_MESSAGE_END", "messageId": id}),
                );
            }
        }
        if on("other-owner") {
            if let Some(end) = end_of(&events, id) {
                events[end]["subagentRunId"] = json!("sub-stranger");
            }
        }
        if on("leaves-message-open") {
            if let Some(end) = end_of(&events, id) {
                events.remove(end);
            }
        }
    }
    if on("content-unopened") {
        if let Some(i) = last_of(&events, "RUN_FINISHED") {
            events.insert(i, json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-never-opened", "delta": "stray"}));
        }
    }
    chunk_faults(config, &mut events);
    if on("double-step") {
        if let Some(i) = of_type(&events, "STEP_STARTED") {
            let again = events[i].clone();
            events.insert(i + 1, again);
        }
    }
    if on("patch-misses") {
        if let Some(i) = of_type(&events, "STATE_DELTA") {
            events[i]["delta"] =
                json!([{"op": "replace", "path": "/wireprobe/not/there", "value": 1}]);
        }
    }
    let before_finish = |events: &[Value]| {
        events
            .iter()
            .rposition(|e| e["type"] == "RUN_FINISHED" || e["type"] == "RUN_ERROR")
            .unwrap_or(events.len())
    };
    if on("activity-without-snapshot") {
        let at = before_finish(&events);
        events.insert(at, json!({"type": "ACTIVITY_DELTA", "messageId": "act-unseen", "activityType": "progress", "patch": [{"op": "add", "path": "/done", "value": true}]}));
    }
    if on("activity-not-object") {
        let at = before_finish(&events);
        events.insert(at, json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "progress", "content": {"done": false}}));
        events.insert(at + 1, json!({"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "progress", "patch": [{"op": "replace", "path": "", "value": [1, 2]}]}));
    }
    tool_faults(config, &mut events);
    if on("same-interrupt-ids") {
        if let Some(i) = finish.filter(|i| events[*i]["outcome"]["type"] == "interrupt") {
            let first = events[i]["outcome"]["interrupts"][0].clone();
            if let Some(list) = events[i]["outcome"]["interrupts"].as_array_mut() {
                list.push(first);
            }
        }
    }
    subagent_faults(config, &mut events);
    if on("unknown-outcome") {
        if let Some(i) = last_of(&events, "RUN_FINISHED") {
            events[i]["outcome"] = json!({"type": "paused"});
        }
    }
    if on("cancelled-with-result") {
        if let Some(i) = last_of(&events, "RUN_FINISHED") {
            events[i]["outcome"] = json!({"type": "cancelled"});
            events[i]["result"] = json!({"partial": true});
        }
    }
    if on("nested-run") {
        if let Some(i) = of_type(&events, "RUN_STARTED") {
            let again = json!({"type": "RUN_STARTED", "threadId": thread_id, "runId": "run-nested", "protocolVersion": super::script::VERSION});
            events.insert(i + 1, again);
        }
    }
    if on("repeats-run") {
        if let Some(i) = last_of(&events, "RUN_FINISHED") {
            events.insert(i + 1, started.clone());
            events.insert(
                i + 2,
                json!({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}),
            );
        }
    }
    if on("starts-with-text") {
        events.insert(
            0,
            json!({"type": "CUSTOM", "name": "wireprobe.early", "value": 1}),
        );
    }
    if on("event-after-finish") {
        events.push(json!({"type": "CUSTOM", "name": "wireprobe.late", "value": 1}));
    }
    if on("truncates") {
        if let Some(i) = last_of(&events, "RUN_FINISHED") {
            events.truncate(i);
        }
    }
    events
}

/// Faults of the chunked form: they act on TEXT_MESSAGE_CHUNK events, when the run has them.
fn chunk_faults(config: &Config, events: &mut Vec<Value>) {
    let on = |name: &str| config.faults.has(name);
    let chunks: Vec<usize> = (0..events.len())
        .filter(|i| events[*i]["type"] == "TEXT_MESSAGE_CHUNK")
        .collect();
    let Some(&first) = chunks.first() else {
        return;
    };
    let id = events[first]["messageId"].clone();
    if on("chunk-without-id") {
        if let Some(m) = events[first].as_object_mut() {
            m.remove("messageId");
        }
    }
    if on("chunk-changes-role") {
        if let Some(&later) = chunks.get(1) {
            events[later]["role"] = json!("user");
        }
    }
    if on("mixes-forms") {
        if let Some(&last) = chunks.last() {
            events.insert(
                last + 1,
                json!({"type": "TEXT_MESSAGE_END", "messageId": id}),
            );
        }
    }
}

/// Faults of tool calls left for the application (with `frontend`).
fn tool_faults(config: &Config, events: &mut Vec<Value>) -> Option<()> {
    let on = |name: &str| config.faults.has(name);
    let finish = events.iter().rposition(|e| e["type"] == "RUN_FINISHED")?;
    let call = events[finish]["outcome"].get("pendingToolCallIds")?[0].clone();
    if on("frontend-interrupts") {
        events[finish]["outcome"] =
            json!({"type": "interrupt", "interrupts": [{"id": "int-frontend", "reason": "tool"}]});
    }
    if on("no-pending-list") {
        events[finish]["outcome"] = json!({"type": "success"});
    }
    if on("wrong-pending-list") {
        events[finish]["outcome"]["pendingToolCallIds"] = json!([call, "call-never-made"]);
    }
    if on("answers-frontend") {
        let end = events.iter().rposition(|e| e["type"] == "TOOL_CALL_END")?;
        let result = json!({"type": "TOOL_CALL_RESULT", "messageId": "result-frontend", "toolCallId": call, "content": "answered by the agent", "role": "tool"});
        events.insert(end + 1, result);
        // The call is answered now: it is pending no more.
        let finish = events.iter().rposition(|e| e["type"] == "RUN_FINISHED")?;
        events[finish]["outcome"] = json!({"type": "success"});
    }
    Some(())
}

/// Faults of subagent attribution, injected before the run's RUN_FINISHED.
fn subagent_faults(config: &Config, events: &mut Vec<Value>) {
    let on = |name: &str| config.faults.has(name);
    let Some(at) = events
        .iter()
        .rposition(|e| e["type"] == "RUN_FINISHED" || e["type"] == "RUN_ERROR")
    else {
        return;
    };
    let mut added = Vec::new();
    let started =
        |id: &str| json!({"type": "SUBAGENT_STARTED", "subagentRunId": id, "name": "helper"});
    let finished = |id: &str| json!({"type": "SUBAGENT_FINISHED", "subagentRunId": id});
    if on("announces-late") {
        added.push(json!({"type": "CUSTOM", "name": "wireprobe.work", "value": 1, "subagentRunId": "sub-late"}));
        added.push(started("sub-late"));
        added.push(finished("sub-late"));
    }
    if on("announces-twice") {
        added.push(started("sub-twice"));
        added.push(started("sub-twice"));
        added.push(finished("sub-twice"));
    }
    if on("subagent-paused") {
        added.push(started("sub-paused"));
        let mut paused = finished("sub-paused");
        paused["outcome"] = json!({"type": "paused"});
        added.push(paused);
    }
    if on("finishes-unannounced") {
        added.push(json!({"type": "CUSTOM", "name": "wireprobe.work", "value": 1, "subagentRunId": "sub-unannounced"}));
        added.push(finished("sub-unannounced"));
    }
    if on("unknown-parent") {
        let mut child = started("sub-child");
        child["parentSubagentRunId"] = json!("sub-never-announced");
        added.push(child);
        added.push(finished("sub-child"));
    }
    events.splice(at..at, added);
    if on("ambiguous-chunk") {
        // Right after RUN_STARTED, where the parent agent has no chunk stream open of its own.
        let Some(opened) = events.iter().position(|e| e["type"] == "RUN_STARTED") else {
            return;
        };
        let parallel = vec![
            started("sub-a"),
            started("sub-b"),
            json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "msg-a", "role": "assistant", "delta": "a", "subagentRunId": "sub-a"}),
            json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "msg-b", "role": "assistant", "delta": "b", "subagentRunId": "sub-b"}),
            json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "whose?"}),
            finished("sub-a"),
            finished("sub-b"),
        ];
        events.splice(opened + 1..opened + 1, parallel);
    }
}
