//! What `fuzz hpd --client` sends a client: turns of text, with permission and clarification
//! requests in them (each answered, HPD-CLI-003), and among them what HPD-CLI-005 names a
//! client keeps working through: an event of a custom type, data that is not JSON, and (as
//! the client suite's oversize case) a text delta over a megabyte. The probe is one more
//! permission request, which the client answers naming its id.

use crate::fuzz_profile::keeps::{self, ids, text};
use crate::fuzz_profile::{mutate, FuzzProfile, Input, Mutator, Probe, PROBE_ID};
use crate::keeps_working;
use crate::rules::ids::{HPD_CLI_003, HPD_CLI_005};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The HPD client [`FuzzProfile`].
pub struct HpdClientFuzz;

/// The keeps-working rule.
const KEEPS: &str = HPD_CLI_005;

fn permission(id: &str, call: &str) -> Value {
    json!({"type": "PERMISSION_REQUEST", "permissionId": id, "sourceName": "PermissionMiddleware",
        "functionName": "read_file", "description": "Read notes.txt", "callId": call,
        "arguments": {"path": "notes.txt"}})
}

/// One turn of the agent's: text blocks, and sometimes a request for the client to answer.
fn turn() -> BoxedStrategy<Vec<Value>> {
    (
        ids(),
        ids(),
        proptest::collection::vec(text(24), 0..4),
        0u8..4,
        ids(),
    )
        .prop_map(|(turn, message, deltas, ask, request)| {
            let ids = json!({"messageTurnId": turn, "conversationId": "wireprobe-fuzz", "agentName": "wireprobe"});
            let with = |mut e: Value| {
                if let (Some(e), Some(ids)) = (e.as_object_mut(), ids.as_object()) {
                    e.extend(ids.clone());
                }
                e
            };
            let mut out = vec![with(json!({"type": "MESSAGE_TURN_STARTED"}))];
            out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": message}));
            out.extend(deltas.into_iter().map(|t| json!({"type": "TEXT_DELTA", "messageId": message, "text": t})));
            out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": message}));
            match ask {
                0 => out.push(permission(&request, &message)),
                1 => out.push(json!({"type": "CLARIFICATION_REQUEST", "requestId": request,
                    "sourceName": "ClarificationMiddleware", "question": "Which file?",
                    "agentName": "wireprobe", "options": ["notes.txt", "todo.txt"]})),
                _ => {}
            }
            out.push(with(json!({"type": "MESSAGE_TURN_FINISHED"})));
            out
        })
        .boxed()
}

static MUTATORS: &[Mutator] = &[
    keeps_working!("custom-type", KEEPS, |e, rng| keeps::unknown_type(
        e, "type", rng
    )),
    keeps_working!("not-json", KEEPS, |e, rng| Some(mutate::truncated(e, rng))),
    keeps_working!(
        "oversized-delta",
        KEEPS,
        |e, _| match e["type"] == "TEXT_DELTA" {
            true => keeps::oversized(e, "/text"),
            false => None,
        }
    ),
];

impl FuzzProfile for HpdClientFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        keeps::of_groups(turn(), len)
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        keeps::not_json_breaks(input, KEEPS)
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![permission(PROBE_ID, PROBE_ID)],
            answers: vec![json!({"type": "PERMISSION_RESPONSE", "permissionId": PROBE_ID})],
            error: Value::Null,
            rule: KEEPS,
            answered_by: HPD_CLI_003,
            ended: Some(KEEPS),
            scenario: false,
        }
    }
}
