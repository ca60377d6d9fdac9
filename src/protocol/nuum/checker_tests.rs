use super::*;
use serde_json::json;

/// The rules broken by `lines`: `(">", line)` from the host, `("<", line)` from the target.
fn broken(lines: &[(&str, Value)]) -> Vec<&'static str> {
    let mut checker = NuumChecker::default();
    let mut out = Vec::new();
    for (dir, line) in lines {
        let from = if *dir == ">" {
            Direction::Client
        } else {
            Direction::Server
        };
        checker.observe(from, 0, Observed::Event(line.into(), None), &mut out);
    }
    out.into_iter().map(|v| v.rule).collect()
}

fn init() -> Value {
    json!({"type":"system","subtype":"init","session_id":"s","version":"1","tools":[]})
}
fn user() -> Value {
    json!({"type":"user","message":{"role":"user","content":"hi"}})
}
fn accepted() -> Value {
    json!({"type":"system","subtype":"turn_accepted","session_id":"s"})
}
fn say(text: &str) -> Value {
    json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]},"session_id":"s"})
}
fn result() -> Value {
    json!({"type":"result","subtype":"success","duration_ms":1,"is_error":false,"num_turns":1,"session_id":"s"})
}
fn queued() -> Value {
    json!({"type":"system","subtype":"queued","position":1})
}

#[test]
fn a_clean_session_breaks_nothing() {
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", say("a")),
        (">", user()),
        ("<", queued()),
        (
            "<",
            json!({"type":"system","subtype":"injected","message_count":1}),
        ),
        ("<", say("b")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
}

#[test]
fn a_queued_message_the_turn_did_not_take_may_run_as_the_next_turn() {
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", say("a")),
        (">", user()),
        ("<", queued()),
        ("<", result()),
        ("<", accepted()),
        ("<", say("b")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
    // ...or be injected into it.
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", say("a")),
        (">", user()),
        ("<", queued()),
        ("<", result()),
        ("<", accepted()),
        (
            "<",
            json!({"type":"system","subtype":"injected","message_count":1}),
        ),
        ("<", say("b")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
}

/// The public build (sanity-labs/nuum 0.5.6) runs each message a failed turn left queued
/// as a turn of its own, with no turn_accepted, one result each; a result beyond them is
/// still a second result for a turn.
#[test]
fn each_queued_message_left_over_may_end_a_turn_of_its_own() {
    let mut lines = vec![("<", init()), (">", user())];
    lines.extend((0..3).map(|_| (">", user())));
    lines.push(("<", accepted()));
    lines.extend((0..3).map(|_| ("<", queued())));
    lines.extend((0..4).map(|_| ("<", result())));
    assert_eq!(broken(&lines), Vec::<&str>::new());
    lines.push(("<", result()));
    assert_eq!(broken(&lines), ["NUUM-RES-001"]);
    // Its turn may show output before its result, with no turn_accepted either.
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        (">", user()),
        ("<", queued()),
        ("<", result()),
        ("<", say("b")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
}

#[test]
fn a_message_queued_as_the_turn_ended_may_start_the_next_turn() {
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        (">", user()),
        ("<", say("a")),
        ("<", result()),
        ("<", queued()),
        ("<", accepted()),
        ("<", say("b")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
}

#[test]
fn an_output_after_a_tool_result_before_injection_breaks_inj_002() {
    let call = json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},"session_id":"s"});
    let done = json!({"type":"system","subtype":"tool_result","tool_result":{"type":"tool_result","tool_use_id":"t1","content":"ok"}});
    // Outputs of the model call under way when the message was queued may still come...
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", say("a")),
        (">", user()),
        ("<", queued()),
        ("<", say("b")),
        ("<", call.clone()),
        ("<", done.clone()),
        (
            "<",
            json!({"type":"system","subtype":"injected","message_count":1}),
        ),
        ("<", say("c")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
    // ...but after a tool result the next output is a new call that did not see it.
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", call),
        (">", user()),
        ("<", queued()),
        ("<", done),
        ("<", say("c")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), ["NUUM-INJ-002"]);
}

#[test]
fn a_turn_nobody_started_needs_no_turn_accepted_when_the_host_is_in_view() {
    let lines = [
        ("<", init()),
        (">", json!({"type":"control","action":"heartbeat"})),
        ("<", say("alarm fired")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), Vec::<&str>::new());
    // A user message's turn does.
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", say("a")),
        ("<", result()),
    ];
    assert_eq!(broken(&lines), ["NUUM-TURN-001"]);
    // A bare stdout capture cannot tell, and flags it.
    let lines = [("<", init()), ("<", say("a")), ("<", result())];
    assert_eq!(broken(&lines), ["NUUM-TURN-001"]);
}

#[test]
fn a_second_result_and_a_second_init_are_caught() {
    let lines = [
        ("<", init()),
        ("<", accepted()),
        ("<", result()),
        ("<", result()),
        ("<", init()),
    ];
    assert_eq!(broken(&lines), ["NUUM-RES-001", "NUUM-INIT-001"]);
}

/// A rule is exercised where the checker tests it on a line it is about: a clean turn with no
/// tool, task, queueing, error or restart exercises the turn and result rules, and none of
/// those about what it never contained, though lines flowed both ways.
#[test]
fn a_rule_counts_as_exercised_only_where_it_applies() {
    let mut checker = NuumChecker::default();
    let mut out = Vec::new();
    let mut hits = Vec::new();
    let lines = [
        ("<", init()),
        (">", user()),
        ("<", accepted()),
        ("<", say("a")),
        ("<", result()),
    ];
    for (dir, line) in &lines {
        let from = if *dir == ">" {
            Direction::Client
        } else {
            Direction::Server
        };
        checker.observe(from, 0, Observed::Event(line.into(), None), &mut out);
        checker.exercised(&mut hits);
    }
    assert!(out.is_empty(), "{out:?}");
    crate::rules::assert_exercised(
        &hits,
        &[
            "NUUM-TR-001",
            "NUUM-INIT-001",
            "NUUM-INIT-002",
            "NUUM-TURN-001",
            "NUUM-AST-001",
            "NUUM-AST-002",
            "NUUM-RES-001",
            "NUUM-RES-004",
            "NUUM-SID-001",
            "NUUM-HOST-001",
        ],
        &[
            "NUUM-TOOL-001",
            "NUUM-TOOL-002",
            "NUUM-TASK-001",
            "NUUM-TASK-003",
            "NUUM-SYS-001",
            "NUUM-INJ-002",
            "NUUM-SID-002",
            "NUUM-TR-002",
            "NUUM-CTL-006",
        ],
    );
}
