//! Sequences the checker must judge as the spec does: each a conforming producer may send
//! (no finding) or one it must not (the rule named), kept as the review against the spec found
//! them.

use super::checker::AguiChecker;
use crate::protocol::{Checker, Observed};
use crate::transcript::Direction;
use crate::transport::{Body, HttpAnswer};
use serde_json::{json, Value};

/// The rules `answers` (each a list of events, one POST's answer) break, in order: the agent's
/// alone, as a run judging it keeps them (what the inputs break is the client's).
fn judged(answers: &[Vec<Value>]) -> Vec<&'static str> {
    let mut checker = AguiChecker::default();
    let mut out = Vec::new();
    for (i, events) in answers.iter().enumerate() {
        let input = json!({"threadId": "t", "runId": format!("r{i}"), "protocolVersion": "1.1", "messages": []});
        let headers = vec![("accept".to_owned(), "text/event-stream".to_owned())];
        let post = Observed::Post {
            path: "",
            body: &Body::Json(input),
            headers: &headers,
        };
        checker.observe(Direction::Client, 0, post, &mut Vec::new());
        let head = HttpAnswer {
            method: "POST".into(),
            path: String::new(),
            status: 200,
            content_type: "text/event-stream".into(),
            body: Body::Empty,
        };
        checker.observe(Direction::Server, 0, Observed::Http(&head), &mut out);
        for e in events {
            checker.observe(
                Direction::Server,
                0,
                Observed::Event(e.into(), None),
                &mut out,
            );
        }
        checker.observe(
            Direction::Server,
            0,
            Observed::AnswerEnded { error: None },
            &mut out,
        );
    }
    out.into_iter().map(|v| v.rule).collect()
}

fn started(i: usize) -> Value {
    json!({"type": "RUN_STARTED", "threadId": "t", "runId": format!("r{i}"), "protocolVersion": "1.1"})
}

fn finished(i: usize) -> Value {
    json!({"type": "RUN_FINISHED", "threadId": "t", "runId": format!("r{i}")})
}

#[test]
fn an_untagged_continuation_of_a_subagents_message_stays_in_its_lane() {
    let run = vec![
        started(0),
        json!({"type": "SUBAGENT_STARTED", "subagentRunId": "S", "name": "helper"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "s1", "subagentRunId": "S"}),
        json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "p", "delta": "a"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "s1", "delta": "b"}),
        json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "c"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "s1"}),
        json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "S"}),
        finished(0),
    ];
    assert_eq!(judged(&[run]), Vec::<&str>::new());
}

#[test]
fn what_a_truncated_answer_left_open_does_not_follow_into_the_next() {
    let cut = vec![
        started(0),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"}),
    ];
    let next = vec![started(1), finished(1)];
    assert_eq!(judged(&[cut, next]), ["AGUI-RUN-005"]);
}

#[test]
fn a_tool_call_under_a_subagents_message_inherits_its_owner() {
    let run = vec![
        started(0),
        json!({"type": "SUBAGENT_STARTED", "subagentRunId": "S", "name": "helper"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "s1", "subagentRunId": "S"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "f", "parentMessageId": "s1"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "t1", "delta": "{}", "subagentRunId": "S"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "t1"}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "t1", "content": "x"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "s1"}),
        json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "S"}),
        finished(0),
    ];
    assert_eq!(judged(&[run]), Vec::<&str>::new());
    let other = vec![
        started(0),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "f", "parentMessageId": "m1", "subagentRunId": "S"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "t1"}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "t1", "content": "x"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        finished(0),
    ];
    assert_eq!(judged(&[other]), ["AGUI-SUB-004"]);
}

#[test]
fn an_operation_rfc_6902_does_not_define_is_dropped_and_the_rest_applies() {
    let run = vec![
        started(0),
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "merge", "path": "/n", "value": 5}, {"op": "replace", "path": "/n", "value": 2}]}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "test", "path": "/n", "value": 2}]}),
        finished(0),
    ];
    // The unknown op is the schema's unrecognised member (a should), not a failed patch.
    assert_eq!(judged(&[run]), ["AGUI-VAL-003"]);
}

#[test]
fn a_replay_restating_an_activity_is_a_baseline_for_its_deltas() {
    let replay = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "old", "protocolVersion": "1.1"}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a1", "role": "activity", "activityType": "p", "content": {"n": 1}}]}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "old"}),
        started(0),
        json!({"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "p", "patch": [{"op": "replace", "path": "/n", "value": 2}]}),
        finished(0),
    ];
    assert_eq!(judged(&[replay]), Vec::<&str>::new());
}

/// A body POSTed as exact bytes is recorded as a client frame, not a POST; it is an exchange
/// all the same. Answers lagging one POST behind (a loaded target) must still pair each with
/// its own POST: the 400 with the malformed bytes, the 200 with the valid input after them.
#[test]
fn a_raw_post_is_an_exchange_when_answers_lag_behind() {
    let mut checker = AguiChecker::default();
    let mut out = Vec::new();
    let headers = vec![("accept".to_owned(), "text/event-stream".to_owned())];
    let valid = |i: usize| {
        Body::Json(
            json!({"threadId": "t", "runId": format!("r{i}"), "protocolVersion": "1.1", "messages": []}),
        )
    };
    let (first, probe) = (valid(0), valid(1));
    let head = |status: u16| HttpAnswer {
        method: "POST".into(),
        path: String::new(),
        status,
        content_type: match status {
            200 => "text/event-stream".into(),
            _ => "application/json".into(),
        },
        body: Body::Empty,
    };
    let (ok, refused) = (head(200), head(400));
    let events: Vec<Vec<Value>> = (0..2).map(|i| vec![started(i), finished(i)]).collect();
    let number = json!(42);
    let malformed = [
        Observed::Garbage("{\"messages\":[{\"role\":\"user\""),
        Observed::Event((&number).into(), None),
        Observed::Binary(7),
    ];
    for bytes in malformed {
        let post = |body| Observed::Post {
            path: "",
            body,
            headers: &headers,
        };
        checker.observe(Direction::Client, 0, post(&first), &mut Vec::new());
        checker.observe(Direction::Client, 0, bytes, &mut Vec::new());
        checker.observe(Direction::Client, 0, post(&probe), &mut Vec::new());
        for (i, answer) in [(0, &ok), (usize::MAX, &refused), (1, &ok)] {
            checker.observe(Direction::Server, 0, Observed::Http(answer), &mut out);
            for e in events.get(i).into_iter().flatten() {
                checker.observe(
                    Direction::Server,
                    0,
                    Observed::Event(e.into(), None),
                    &mut out,
                );
            }
            let end = Observed::AnswerEnded { error: None };
            checker.observe(Direction::Server, 0, end, &mut out);
        }
    }
    let rules: Vec<&str> = out.iter().map(|v| v.rule).collect();
    assert!(rules.is_empty(), "{rules:?}");
}

/// A rule counts as exercised where its check ran on an item it applies to: a valid exchange
/// with one text message exercises the text message's, the run's and the head's rules, and
/// none about an activity, a step, a malformed input or a pending tool call, which it never
/// contained, though traffic flowed.
#[test]
fn a_rule_counts_as_exercised_only_where_it_applies() {
    use crate::rules::ids::{
        AGUI_ACT_001, AGUI_HTTP_002, AGUI_IN_003, AGUI_RUN_004, AGUI_RUN_005, AGUI_STEP_001,
        AGUI_STR_001, AGUI_STR_002, AGUI_TOOL_004, AGUI_VAL_001,
    };
    let mut checker = AguiChecker::default();
    let mut hits = Vec::new();
    let headers = vec![("accept".to_owned(), "text/event-stream".to_owned())];
    let input = Body::Json(
        json!({"threadId": "t", "runId": "r0", "protocolVersion": "1.1", "messages": []}),
    );
    let post = Observed::Post {
        path: "",
        body: &input,
        headers: &headers,
    };
    checker.observe(Direction::Client, 0, post, &mut Vec::new());
    checker.exercised(&mut hits);
    let head = HttpAnswer {
        method: "POST".into(),
        path: String::new(),
        status: 200,
        content_type: "text/event-stream".into(),
        body: Body::Empty,
    };
    let mut out = Vec::new();
    checker.observe(Direction::Server, 0, Observed::Http(&head), &mut out);
    checker.exercised(&mut hits);
    let events = [
        started(0),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        finished(0),
    ];
    for e in &events {
        let event = Observed::Event(e.into(), None);
        checker.observe(Direction::Server, 0, event, &mut out);
        checker.exercised(&mut hits);
    }
    let end = Observed::AnswerEnded { error: None };
    checker.observe(Direction::Server, 0, end, &mut out);
    checker.exercised(&mut hits);
    let rules: Vec<&str> = out.iter().map(|v| v.rule).collect();
    assert!(rules.is_empty(), "{rules:?}");
    crate::rules::assert_exercised(
        &hits,
        &[
            AGUI_VAL_001,
            AGUI_STR_001,
            AGUI_STR_002,
            AGUI_RUN_004,
            AGUI_RUN_005,
            AGUI_HTTP_002,
        ],
        &[AGUI_ACT_001, AGUI_STEP_001, AGUI_IN_003, AGUI_TOOL_004],
    );
}
