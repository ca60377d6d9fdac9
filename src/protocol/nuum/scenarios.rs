//! Nuum flows the fuzzer drives through the README's directives, each ending in what the spec
//! says the process owes: a turn interrupted mid-way ends `cancelled` (NUUM-CTL-001), a
//! message sent mid-turn is `queued` (NUUM-INJ-001) and, sent while a tool runs, injected
//! before the output after its result (NUUM-INJ-002), a failing turn still ends with a result
//! (NUUM-RES-001), a research task is announced by a tasks snapshot (NUUM-TASK-003), a message
//! of text blocks starts a turn that ends in a result (NUUM-TURN-002), `status` is answered
//! with `status_response` (NUUM-CTL-002), and a restart on the same database keeps the
//! session_id (NUUM-SID-002, judged by the checker). A target that does not obey a
//! directive ends the run as skipped, never failed.

use crate::fuzz_profile::{mutate, Input, Mutator, Oracle};
use crate::rules::ids::{
    NUUM_CTL_001, NUUM_CTL_002, NUUM_INJ_001, NUUM_INJ_002, NUUM_RES_001, NUUM_SID_002,
    NUUM_TASK_003, NUUM_TURN_002,
};
use crate::sequence_mutator;
use serde_json::{json, Value};

/// `e`, a user message, with `text` as its content.
fn saying(e: &Value, text: &str) -> Option<Input> {
    if e["type"] != "user" {
        return None;
    }
    mutate::set(e, "/message/content", json!(text)).map(Input::Event)
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}})
}

/// An assistant line with a content block matching `block`.
fn assistant(block: Value) -> Value {
    json!({"type": "assistant", "message": {"content": [block]}})
}

fn slow_started() -> Oracle {
    Oracle::Reply {
        patterns: vec![assistant(json!({"type": "text", "text": "slow: started"}))],
        rule: NUUM_CTL_001,
        scenario: true,
    }
}

pub static MUTATORS: &[Mutator] = &[
    sequence_mutator!("interrupt-mid-turn", NUUM_CTL_001, |e, _| saying(
        e,
        "wireprobe: slow 2000"
    )),
    sequence_mutator!("message-mid-turn", NUUM_INJ_001, |e, _| saying(
        e,
        "wireprobe: slow 1000"
    )),
    sequence_mutator!("message-mid-tool", NUUM_INJ_002, |e, _| saying(
        e,
        "wireprobe: slow-tool 1000"
    )),
    sequence_mutator!("failing-turn", NUUM_RES_001, |e, _| saying(
        e,
        "wireprobe: fail"
    )),
    sequence_mutator!("research-task", NUUM_TASK_003, |e, _| saying(
        e,
        "wireprobe: task research scenario"
    )),
    sequence_mutator!("content-blocks", NUUM_TURN_002, |e, _| {
        if e["type"] != "user" {
            return None;
        }
        let blocks = json!([{"type": "text", "text": "wireprobe: say blocks"}]);
        mutate::set(e, "/message/content", blocks).map(Input::Event)
    }),
    sequence_mutator!("restart", NUUM_SID_002, |e, _| {
        (e["type"] == "control")
            .then(|| Input::Event(json!({"type": "control", "action": "heartbeat"})))
    }),
    sequence_mutator!("status", NUUM_CTL_002, |e, _| {
        (e["type"] == "control")
            .then(|| Input::Event(json!({"type": "control", "action": "status"})))
    }),
];

/// What the process owes after the input of scenario `name`.
pub fn oracles(name: &str) -> Vec<Oracle> {
    match name {
        "interrupt-mid-turn" => vec![
            slow_started(),
            Oracle::Send(json!({"type": "control", "action": "interrupt"})),
            Oracle::Reply {
                patterns: vec![json!({"type": "result", "subtype": "cancelled"})],
                rule: NUUM_CTL_001,
                scenario: false,
            },
        ],
        "message-mid-turn" => vec![
            slow_started(),
            Oracle::Send(user("wireprobe-mid-turn")),
            Oracle::Reply {
                patterns: vec![json!({"type": "system", "subtype": "queued"})],
                rule: NUUM_INJ_001,
                scenario: false,
            },
        ],
        // A message queued while a tool runs has the model call after its result to be
        // injected before (the checker judges the output that follows, NUUM-INJ-002).
        "message-mid-tool" => vec![
            Oracle::Reply {
                patterns: vec![json!({"type": "assistant",
                    "message": {"content": {"$contains": {"type": "tool_use"}}}})],
                rule: NUUM_INJ_002,
                scenario: true,
            },
            Oracle::Send(user("wireprobe-mid-tool")),
            Oracle::Reply {
                patterns: vec![json!({"type": "system", "subtype": "queued"})],
                rule: NUUM_INJ_001,
                scenario: false,
            },
        ],
        "failing-turn" => vec![
            Oracle::Reply {
                patterns: vec![assistant(
                    json!({"type": "text", "text": "fail: failing on purpose"}),
                )],
                rule: NUUM_RES_001,
                scenario: true,
            },
            Oracle::Reply {
                patterns: vec![json!({"type": "result"})],
                rule: NUUM_RES_001,
                scenario: false,
            },
        ],
        // The spec promises a tasks snapshot when a task is created, not a visible tool call:
        // an agent that takes no directive shows neither, and the scenario is not reached.
        "research-task" => vec![Oracle::Reply {
            patterns: vec![json!({"type": "system", "subtype": "tasks",
                "tasks": {"$contains": {"type": "research"}}})],
            rule: NUUM_TASK_003,
            scenario: true,
        }],
        // Whoever answers, the turn a text-block message starts ends in a result.
        "content-blocks" => vec![Oracle::Reply {
            patterns: vec![json!({"type": "result"})],
            rule: NUUM_TURN_002,
            scenario: false,
        }],
        // The process started again on the same database: its init is judged by the checker.
        "restart" => vec![Oracle::Restart],
        "status" => vec![Oracle::Reply {
            patterns: vec![
                json!({"type": "system", "subtype": "status_response"}),
                json!({"type": "system", "subtype": "status"}),
            ],
            rule: NUUM_CTL_002,
            scenario: false,
        }],
        _ => Vec::new(),
    }
}
