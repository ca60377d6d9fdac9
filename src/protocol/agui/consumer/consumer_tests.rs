//! The client's duties, judged on transcripts as a served client makes them: its POSTs, and
//! the events wireprobe answered them with.

use crate::protocol::agui::checker::AguiChecker;
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{
    AGUI_CLI_001, AGUI_CLI_002, AGUI_CLI_003, AGUI_CLI_004, AGUI_CLI_005, AGUI_CLI_006,
    AGUI_CLI_008, AGUI_CLI_009, AGUI_CLI_010, AGUI_CLI_011, AGUI_CLI_012, AGUI_CLI_013,
    AGUI_CLI_015, AGUI_CLI_016, AGUI_CLI_018,
};
use crate::rules::Violation;
use crate::transcript::Direction;
use crate::transport::Body;
use serde_json::{json, Value};

/// The client rules broken across `items`: `Ok` a POST's body, `Err` an event of the agent's.
fn judged(items: &[Result<Value, Value>]) -> Vec<&'static str> {
    observed(items).0
}

/// The client rules broken across `items`, and the client rules exercised (drained after each
/// item, as the judge does).
fn observed(items: &[Result<Value, Value>]) -> (Vec<&'static str>, Vec<&'static str>) {
    let mut checker = AguiChecker::default();
    let headers = vec![
        ("accept".to_owned(), "text/event-stream".to_owned()),
        ("content-type".to_owned(), "application/json".to_owned()),
    ];
    let mut found = Vec::new();
    let mut exercised = Vec::new();
    for item in items {
        let mut out: Vec<Violation> = Vec::new();
        match item {
            Ok(input) => {
                let body = Body::Json(input.clone());
                let post = Observed::Post {
                    path: "",
                    body: &body,
                    headers: &headers,
                };
                checker.observe(Direction::Client, 0, post, &mut out);
                found.extend(out.iter().map(|v| v.rule));
            }
            Err(event) => checker.observe(
                Direction::Server,
                0,
                Observed::Event(event.into(), None),
                &mut out,
            ),
        }
        checker.exercised(&mut exercised);
    }
    found.retain(|r| r.starts_with("AGUI-CLI-"));
    exercised.retain(|r| r.starts_with("AGUI-CLI-"));
    (found, exercised)
}

fn input(run: &str, messages: Value) -> Value {
    json!({"threadId": "t", "runId": run, "protocolVersion": "1.1", "messages": messages,
        "tools": [{"name": "confirm", "description": "d", "parameters": {}}]})
}

fn user() -> Value {
    json!({"id": "u", "role": "user", "content": "hi"})
}

/// A run of `run` calling the client's tool as call `c`, with `extra` events before its end.
fn run_calling(run: &str, extra: &[Value]) -> Vec<Result<Value, Value>> {
    let mut events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": run}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "confirm", "parentMessageId": "a"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
    ];
    events.extend(extra.iter().cloned());
    events.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": run}));
    events.into_iter().map(Err).collect()
}

fn answered(run: &str, error: bool) -> Value {
    let mut tool = json!({"id": "r", "role": "tool", "toolCallId": "c", "content": "ok"});
    if error {
        tool["error"] = json!("declined");
    }
    input(
        run,
        json!([user(), {"id": "a", "role": "assistant", "toolCalls": [
            {"id": "c", "type": "function", "function": {"name": "confirm", "arguments": "{}"}}]},
            tool]),
    )
}

#[test]
fn a_thread_continued_as_the_spec_asks_breaks_nothing() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r1", &[]));
    items.push(Ok(answered("r2", false)));
    assert_eq!(judged(&items), Vec::<&str>::new());
}

#[test]
fn a_continuation_owes_a_fresh_run_id_and_the_call_s_result() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r1", &[]));
    items.push(Ok(input("r1", json!([user()]))));
    assert_eq!(judged(&items), [AGUI_CLI_004, AGUI_CLI_009, AGUI_CLI_010]);
}

#[test]
fn a_call_after_the_run_closed_is_not_answered_as_if_it_ran() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r0", &[]).into_iter().take(1));
    items.push(Err(
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
    ));
    items.extend(run_calling("r1", &[]).into_iter().skip(1).take(3));
    items.push(Ok(answered("r2", false)));
    assert_eq!(judged(&items), [AGUI_CLI_015]);
    // Saying it failed is an answer that says nothing ran.
    let last = items.len() - 1;
    items[last] = Ok(answered("r2", true));
    assert_eq!(judged(&items), Vec::<&str>::new());
}

#[test]
fn a_malformed_value_fails_the_run_and_the_call_it_had_open() {
    let malformed = json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": 42});
    let mut items = vec![Ok(input("r1", json!([user()])))];
    let mut run = run_calling("r1", &[]);
    run.insert(3, Err(malformed));
    items.extend(run);
    items.push(Ok(answered("r2", false)));
    assert_eq!(judged(&items), [AGUI_CLI_016]);
}

#[test]
fn each_input_is_judged_for_its_shape() {
    let mut bad = input(
        "r1",
        json!([user(), user(), {"id": "v", "role": "activity",
        "activityType": "PLAN", "content": {}}]),
    );
    bad["parentRunId"] = Value::Null;
    bad["extra"] = json!(1);
    bad.as_object_mut().map(|m| m.remove("protocolVersion"));
    assert_eq!(
        judged(&[Ok(bad)]),
        [
            AGUI_CLI_002,
            AGUI_CLI_003,
            AGUI_CLI_005,
            AGUI_CLI_008,
            AGUI_CLI_006
        ]
    );
    assert_eq!(judged(&[Ok(json!({"threadId": 1}))])[0], AGUI_CLI_001);
}

#[test]
fn a_stray_event_after_the_close_fails_the_run_but_refuses_no_call_it_had_ended() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r1", &[]));
    items.push(Err(json!({"type": "TOOL_CALL_END", "toolCallId": "c"})));
    // The failed run is not read for pending calls, and running its ended call is no fault.
    items.push(Ok(answered("r2", false)));
    assert_eq!(judged(&items), Vec::<&str>::new());
    items.pop();
    items.push(Ok(input("r2", json!([user()]))));
    assert_eq!(judged(&items), Vec::<&str>::new());
}

#[test]
fn a_call_id_another_thread_refused_is_this_thread_s_own_call_when_it_made_one() {
    let on = |thread: &str, mut v: Value| {
        v["threadId"] = json!(thread);
        v
    };
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r0", &[]).into_iter().take(1));
    items.push(Err(
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
    ));
    items.extend(run_calling("r1", &[]).into_iter().skip(1).take(3));
    // Thread u makes, ends and leaves pending a call of the same id, and answers it.
    items.push(Ok(on("u", input("u1", json!([user()])))));
    items.extend(run_calling("u1", &[]));
    items.push(Ok(on("u", answered("u2", false))));
    assert_eq!(judged(&items), Vec::<&str>::new());
}

#[test]
fn a_client_whose_agent_declared_no_version_may_omit_its_own() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r1", &[]));
    let mut next = answered("r2", false);
    next.as_object_mut().map(|m| m.remove("protocolVersion"));
    items.push(Ok(next.clone()));
    assert_eq!(judged(&items), Vec::<&str>::new());
    // The first input knows nothing of its peer: it declares.
    let mut first = input("r1", json!([user()]));
    first.as_object_mut().map(|m| m.remove("protocolVersion"));
    assert_eq!(judged(&[Ok(first)]), [AGUI_CLI_006]);
}

#[test]
fn a_rule_counts_as_exercised_only_where_it_applies() {
    let mut items = vec![Ok(input("r1", json!([user()])))];
    items.extend(run_calling("r1", &[]));
    items.push(Ok(answered("r2", false)));
    let (broken, exercised) = observed(&items);
    assert_eq!(broken, Vec::<&str>::new());
    // The continuation was judged for the call the run left to the client's tool, and for a
    // fresh runId, though it broke nothing.
    for rule in [
        AGUI_CLI_001,
        AGUI_CLI_004,
        AGUI_CLI_009,
        AGUI_CLI_010,
        AGUI_CLI_018,
    ] {
        assert!(exercised.contains(&rule), "{rule} not exercised");
    }
    // No state event came and no call was refused: their rules were never judged.
    for rule in [
        AGUI_CLI_011,
        AGUI_CLI_012,
        AGUI_CLI_013,
        AGUI_CLI_015,
        AGUI_CLI_016,
    ] {
        assert!(!exercised.contains(&rule), "{rule} exercised");
    }
    // A first input continues nothing: it owes neither a fresh runId nor a call's result.
    let (_, first) = observed(&items[..items.len() - 1]);
    assert!(first.contains(&AGUI_CLI_001));
    assert!(!first.contains(&AGUI_CLI_004) && !first.contains(&AGUI_CLI_009));
}
