//! What `fuzz agui --client` sends a client: runs of an agent's events (text messages, backend
//! tool calls and their results, state snapshots and patches, steps, activity, custom and raw
//! events), with what the Processing Model says a consumer must survive among them: an event
//! of a type it does not know, a member no event describes, a content part of an unknown kind
//! (AGUI-CLI-014), and SSE comments and fields besides `data` (AGUI-CLI-017).
//!
//! The client's test mode (README: "An AG-UI client") decides the run's shape. It POSTs its
//! first run offering its tools; that input opens the exchange and binds the thread, the run
//! and the first tool's name. The probe is a call of that tool, then RUN_FINISHED and the end
//! of the stream: a client still working answers it with its next run, a tool message for the
//! call in its history. That input is the next run, whose stream opens with RUN_STARTED. A
//! probe follows each group of events, once no message, call or step is open (a run finishing
//! with one open is fatal at every conforming consumer): after a mutation it is judged under
//! the rule the mutation tests, after valid events alone under AGUI-CLI-009, so a client that
//! fails a valid run is found there and not blamed on a mutation that came later.
//!
//! Every event sent is valid, or unrecognised material the spec names: a malformed value
//! rightly fails the run, so none is sent (the client suite's `malformed-value` case judges
//! that). The consumer's rules (AGUI-CLI-009 to -013 and the input's shape) judge each input
//! the runs provoke, so a client that forgets the state or drops a call is found too.

use crate::fuzz_profile::keeps::{self, ids, text};
use crate::fuzz_profile::{
    mutate, FuzzProfile, Input, Mutator, Oracle, Probe, Rng, PROBE_ID, PROBE_UUIDS,
};
use crate::keeps_working;
use crate::rules::ids::{AGUI_CLI_001, AGUI_CLI_009, AGUI_CLI_014, AGUI_CLI_017};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// The AG-UI client [`FuzzProfile`].
pub struct AguiClientFuzz;

/// Unknown event types, undescribed members and unknown union members.
const KEEPS: &str = AGUI_CLI_014;
/// SSE comments and fields besides `data`.
const SSE_FIELDS: &str = AGUI_CLI_017;

/// A tool the agent runs itself: no client offers it, so each call comes with its result.
const BACKEND_TOOL: &str = "wireprobe_backend_lookup";

/// The version the agent's RUN_STARTED declares, as the client suite's do.
const VERSION: &str = super::session::VERSION;

/// A small JSON value of any kind but null (a required member of CUSTOM and RAW is "any JSON
/// value", and null there is a reading better left out of a fuzzer's valid runs).
fn value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        // Integers a JavaScript client holds exactly.
        (-(1i64 << 53)..(1i64 << 53)).prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        text(16).prop_map(Value::from),
    ];
    prop_oneof![
        3 => leaf.clone(),
        1 => proptest::collection::vec(leaf.clone(), 0..4).prop_map(Value::from),
        1 => proptest::collection::btree_map(key(), leaf, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
    .boxed()
}

/// An object key: any text but the ones a JavaScript client's object would take for its own
/// prototype (a patch to `/__proto__` is refused by common patch libraries; that is their
/// protection, not the run's content).
fn key() -> impl Strategy<Value = String> {
    text(10).prop_filter("a prototype key", |k| {
        !["__proto__", "constructor", "prototype"].contains(&k.as_str())
    })
}

/// A JSON Pointer token for `key` (RFC 6901: `~` and `/` escaped).
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A streamed assistant text message (its role left to the default now and then).
fn text_message(id: &str, role: bool, deltas: Vec<String>) -> Vec<Value> {
    let mut start = json!({"type": "TEXT_MESSAGE_START", "messageId": id});
    if role {
        start["role"] = json!("assistant");
    }
    let mut out = vec![start];
    out.extend(
        deltas
            .into_iter()
            .map(|d| json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": d})),
    );
    out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
    out
}

/// A backend tool call, its arguments in pieces, and its result; held by an assistant message
/// streamed just before when `parent`.
fn backend_call() -> BoxedStrategy<Vec<Value>> {
    (ids(), ids(), ids(), text(16), 0usize..3, text(24), any::<bool>())
        .prop_map(|(call, result, parent, q, cuts, content, with_parent)| {
            let mut out = Vec::new();
            let mut start =
                json!({"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": BACKEND_TOOL});
            if with_parent {
                out.extend(text_message(&parent, true, vec!["Looking it up.".into()]));
                start["parentMessageId"] = json!(parent);
            }
            out.push(start);
            let args: Vec<char> = json!({"q": q}).to_string().chars().collect();
            let size = args.len().div_ceil(cuts + 1).max(1);
            out.extend(args.chunks(size).map(|piece| {
                let delta: String = piece.iter().collect();
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": delta})
            }));
            out.push(json!({"type": "TOOL_CALL_END", "toolCallId": call}));
            out.push(json!({"type": "TOOL_CALL_RESULT", "messageId": result, "toolCallId": call,
                "content": content, "role": "tool"}));
            out
        })
        .boxed()
}

/// A snapshot of the state, then patches that each apply to what came before (each names a
/// key the state holds, or adds one), so what the client carries into its next run is known.
fn state() -> BoxedStrategy<Vec<Value>> {
    (
        proptest::collection::btree_map(key(), value(), 0..4),
        proptest::collection::vec((0u8..3, key(), value(), any::<u64>()), 0..4),
    )
        .prop_map(|(snapshot, ops)| {
            let mut keys: Vec<String> = snapshot.keys().cloned().collect();
            let snapshot: Map<String, Value> = snapshot.into_iter().collect();
            let mut out = vec![json!({"type": "STATE_SNAPSHOT", "snapshot": snapshot})];
            for (op, new_key, v, pick) in ops {
                let existing = (!keys.is_empty()).then(|| (pick % keys.len() as u64) as usize);
                let delta = match (op, existing) {
                    (1, Some(i)) => {
                        json!({"op": "replace", "path": format!("/{}", token(&keys[i])), "value": v})
                    }
                    (2, Some(i)) => {
                        let gone = keys.remove(i);
                        json!({"op": "remove", "path": format!("/{}", token(&gone))})
                    }
                    _ => {
                        if !keys.contains(&new_key) {
                            keys.push(new_key.clone());
                        }
                        json!({"op": "add", "path": format!("/{}", token(&new_key)), "value": v})
                    }
                };
                out.push(json!({"type": "STATE_DELTA", "delta": [delta]}));
            }
            out
        })
        .boxed()
}

/// One group of events that leaves nothing open.
fn group() -> BoxedStrategy<Vec<Value>> {
    prop_oneof![
        4 => (ids(), any::<bool>(), proptest::collection::vec(text(24), 0..4))
            .prop_map(|(id, role, deltas)| text_message(&id, role, deltas)),
        3 => backend_call(),
        2 => state(),
        2 => (text(12), value(), any::<Option<u32>>()).prop_map(|(name, value, at)| {
            let mut e = json!({"type": "CUSTOM", "name": name, "value": value});
            if let Some(at) = at {
                e["timestamp"] = json!(1_700_000_000_000u64 + u64::from(at));
            }
            vec![e]
        }),
        1 => value().prop_map(|event| vec![json!({"type": "RAW", "event": event, "source": "wireprobe"})]),
        1 => text(12).prop_map(|name| vec![
            json!({"type": "STEP_STARTED", "stepName": name}),
            json!({"type": "STEP_FINISHED", "stepName": name}),
        ]),
        1 => (ids(), proptest::collection::vec(text(12), 0..3)).prop_map(|(id, steps)| vec![
            json!({"type": "ACTIVITY_SNAPSHOT", "messageId": id, "activityType": "PLAN",
                "content": {"steps": steps}}),
        ]),
    ]
    .boxed()
}

/// Whole groups, as many as fit in `len` (a group cut short would leave a message open where a
/// probe must finish the run), and at least one event.
fn sequence(len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
    let max = (*len.end()).max(1);
    proptest::collection::vec(group(), 1..=max)
        .prop_map(move |groups| {
            let mut all = Vec::new();
            for g in groups.into_iter().filter(|g| !g.is_empty()) {
                if all.len() + g.len() <= max {
                    all.extend(g);
                }
            }
            if all.is_empty() {
                all.push(json!({"type": "CUSTOM", "name": "wireprobe", "value": 0}));
            }
            all
        })
        .boxed()
}

/// Events that can go without leaving the stream broken: none opens or closes anything, and
/// nothing later refers to them.
fn droppable(e: &Value) -> bool {
    matches!(
        e["type"].as_str(),
        Some("CUSTOM" | "RAW" | "TEXT_MESSAGE_CONTENT" | "ACTIVITY_SNAPSHOT")
    )
}

/// Members no event of 1.1 describes (two of them keys a JavaScript object holds already).
const UNDESCRIBED: &[&str] = &[
    "wireprobeNote",
    "futureField",
    "x_extension",
    "__proto__",
    "constructor",
];

/// `e` with a member no event describes.
fn undescribed(e: &Value, rng: &mut Rng) -> Option<Input> {
    let mut out = e.clone();
    let name = *rng.pick(UNDESCRIBED);
    let v = match rng.below(4) {
        0 => json!("a member 1.1 does not describe"),
        1 => json!(rng.below(1000)),
        2 => json!({"polluted": true}),
        _ => json!([1, {"nested": {"deep": true}}]),
    };
    out.as_object_mut()?.insert(name.to_owned(), v);
    Some(Input::Event(out))
}

/// `e`, a tool result, with its content as parts and one of a kind 1.1 does not name.
fn unknown_part(e: &Value, rng: &mut Rng) -> Option<Input> {
    if e["type"] != "TOOL_CALL_RESULT" {
        return None;
    }
    let text = e["content"].as_str()?;
    let known = json!({"type": "text", "text": text});
    let unknown =
        json!({"type": "wireprobe-future-part", "payload": "a part of a kind 1.1 does not name"});
    let parts = match rng.below(2) {
        0 => vec![known, unknown],
        _ => vec![unknown, known],
    };
    mutate::set(e, "/content", Value::from(parts)).map(Input::Event)
}

/// In place of a droppable event: SSE lines a consumer ignores (a comment, `event:`, `id:`,
/// `retry:`), ended by a blank line or left to ride on the next event's `data:`.
fn sse_lines(e: &Value, rng: &mut Rng) -> Option<Input> {
    if !matches!(e["type"].as_str(), Some("CUSTOM" | "RAW")) {
        return None;
    }
    let word = *rng.pick(&["agui", "message", "wireprobe", "RUN_FINISHED", ""]);
    let mut lines: Vec<String> = (0..1 + rng.below(3))
        .map(|_| match rng.below(5) {
            0 => ": keep-alive".to_owned(),
            1 => format!(":{word}"),
            2 => format!("event: {word}"),
            3 => format!("id: {}", rng.below(100)),
            _ => format!("retry: {}", rng.below(5000)),
        })
        .collect();
    if rng.below(2) == 0 {
        lines.push(String::new());
    }
    Some(Input::Event(json!({"$stream": {"lines": lines}})))
}

static MUTATORS: &[Mutator] = &[
    keeps_working!("unknown-type", KEEPS, |e, rng| match droppable(e) {
        true => keeps::unknown_type(e, "type", rng),
        false => None,
    }),
    keeps_working!("undescribed-member", KEEPS, undescribed),
    keeps_working!("unknown-content-part", KEEPS, unknown_part),
    keeps_working!("sse-fields", SSE_FIELDS, sse_lines),
];

/// The RUN_STARTED that opens the stream answering the input that bound `${thread}` and
/// `${run}`.
fn run_started() -> Value {
    json!({"type": "RUN_STARTED", "threadId": "${thread}", "runId": "${run}", "protocolVersion": VERSION})
}

impl FuzzProfile for AguiClientFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        sequence(len)
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    /// Every event sent is valid or material a consumer must survive.
    fn input_violations(&self, _input: &Input) -> Vec<&'static str> {
        Vec::new()
    }

    /// The client's first run, offering a tool (a client that offers none has no test mode
    /// the probe can reach: its runs are skipped), and the start of its stream.
    fn preamble(&self) -> Vec<Oracle> {
        vec![
            Oracle::Reply {
                patterns: vec![
                    json!({"threadId": "$capture:thread", "runId": "$capture:run",
                    "tools": {"$contains": {"name": "$capture:tool"}}}),
                ],
                rule: AGUI_CLI_001,
                scenario: true,
            },
            Oracle::Send(run_started()),
        ]
    }

    fn probe(&self) -> Probe {
        // A uuid, as every id wireprobe mints: a client may (wrongly) insist on one.
        let message = format!("{PROBE_UUIDS}-message}}");
        Probe {
            sends: vec![
                json!({"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"}),
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": "Checking."}),
                json!({"type": "TEXT_MESSAGE_END", "messageId": message}),
                json!({"type": "TOOL_CALL_START", "toolCallId": PROBE_ID, "toolCallName": "${tool}",
                    "parentMessageId": message}),
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": PROBE_ID, "delta": "{}"}),
                json!({"type": "TOOL_CALL_END", "toolCallId": PROBE_ID}),
                json!({"type": "RUN_FINISHED", "threadId": "${thread}", "runId": "${run}"}),
                json!({"$stream": {"close": true}}),
            ],
            // The thread is captured again, not required: a client that moves to another
            // breaks AGUI-CLI-018, which the checker judges, not the probe.
            answers: vec![
                json!({"threadId": "$capture:thread", "runId": "$capture:run",
                "messages": {"$contains": {"role": "tool", "toolCallId": PROBE_ID}}}),
            ],
            error: Value::Null,
            rule: KEEPS,
            answered_by: AGUI_CLI_009,
            // A client's test mode may end its process when a run leaves it nothing to do: an
            // unanswered probe is what judges it.
            ended: None,
            scenario: true,
        }
    }

    fn after_probe(&self) -> Vec<Value> {
        vec![run_started()]
    }

    fn opened_by(&self, event: &Value) -> i64 {
        match event["type"].as_str() {
            Some("TEXT_MESSAGE_START" | "TOOL_CALL_START" | "STEP_STARTED") => 1,
            Some("TEXT_MESSAGE_END" | "TOOL_CALL_END" | "STEP_FINISHED") => -1,
            _ => 0,
        }
    }

    /// A client that fails a valid run (one that insists on a member the spec makes
    /// optional) stops its test mode there: the probe after each group says where.
    fn probes_valid_input(&self) -> bool {
        true
    }

    fn probe_rule(&self, mutator: &Mutator) -> Option<&'static str> {
        Some(mutator.breaks)
    }
}

#[cfg(test)]
#[path = "fuzz_client_tests.rs"]
mod tests;
