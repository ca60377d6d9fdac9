//! What `fuzz huma --client` sends a client: tool-calls for a tool no client has (answered
//! with a failed result, HUMA-CLI-003) and messaging bursts (confirmed, HUMA-CLI-007), with the
//! server events HUMA-CLI-009 names among them: an error event, a type the spec does not list,
//! tool-call arguments holding `__proto__` keys, an oversized message. The probe is one more
//! tool-call for the unknown tool, which every client answers.

use crate::fuzz_profile::keeps::{self, ids, text};
use crate::fuzz_profile::{mutate, FuzzProfile, Input, Mutator, Probe, PROBE_ID};
use crate::keeps_working;
use crate::rules::ids::{HUMA_CLI_003, HUMA_CLI_009};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The HUMA client [`FuzzProfile`].
pub struct HumaClientFuzz;

/// A tool no client can have: every client answers it with a failed result.
const NO_SUCH_TOOL: &str = "wireprobe_no_such_tool";

/// The keeps-working rule.
const KEEPS: &str = HUMA_CLI_009;

fn tool_call(id: String, args: Value) -> Value {
    json!({"type": "tool-call", "toolCallId": id, "toolName": NO_SUCH_TOOL, "arguments": args})
}

/// One server action: a tool-call, or a whole messaging burst.
fn action() -> BoxedStrategy<Vec<Value>> {
    prop_oneof![
        3 => (ids(), text(16)).prop_map(|(id, t)| vec![tool_call(id, json!({"q": t}))]),
        2 => (ids(), proptest::collection::vec(text(40), 1..4)).prop_map(|(id, messages)| {
            let count = messages.len();
            let mut out = vec![json!({"type": "messaging", "event": "typing_start", "toolCallId": id})];
            out.extend(messages.into_iter().enumerate().map(|(i, m)| json!({
                "type": "messaging", "event": "message_sent", "toolCallId": id,
                "message": m, "messageIndex": i, "messageCount": count,
            })));
            out.push(json!({"type": "messaging", "event": "typing_end", "toolCallId": id}));
            out
        }),
    ]
    .boxed()
}

static MUTATORS: &[Mutator] = &[
    keeps_working!("error-event", KEEPS, |_, rng| {
        let code = *rng.pick(&["INVALID_EVENT", "INTERNAL", "WIREPROBE"]);
        Some(Input::Event(
            json!({"type": "error", "message": "wireprobe: an error event", "code": code}),
        ))
    }),
    keeps_working!("unknown-type", KEEPS, |e, rng| keeps::unknown_type(
        e, "type", rng
    )),
    keeps_working!("polluted-arguments", KEEPS, |e, rng| {
        let call = match e["type"] == "tool-call" {
            true => e.clone(),
            false => tool_call(keeps::uuid(u128::from(rng.next_u64())), json!({})),
        };
        let key = *rng.pick(&["__proto__", "constructor", "prototype"]);
        mutate::pollute(&call, "/arguments", key, rng.below(6), rng.below(2) == 0).map(Input::Event)
    }),
    keeps_working!("oversized-message", KEEPS, |e, _| {
        match e["event"] == "message_sent" {
            true => keeps::oversized(e, "/message"),
            false => None,
        }
    }),
];

impl FuzzProfile for HumaClientFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        keeps::of_groups(action(), len)
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        keeps::not_json_breaks(input, KEEPS)
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![tool_call(PROBE_ID.into(), json!({}))],
            answers: vec![json!({"channel": "message",
                "event": {"type": "tool-result", "toolCallId": PROBE_ID}})],
            error: Value::Null,
            rule: KEEPS,
            answered_by: HUMA_CLI_003,
            ended: Some(KEEPS),
            scenario: false,
        }
    }

    /// Raw text goes out as the payload of an emit on `event`, where server events arrive.
    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        let mut frame = b"42[\"event\",".to_vec();
        frame.extend_from_slice(bytes);
        frame.push(b']');
        frame
    }
}
