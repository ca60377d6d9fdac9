//! What `fuzz uae --client` sends a Web UI: the agent's messages and views, and among them
//! what UAE-ROB-001 names a target keeps serving through: a frame that is not JSON, JSON that
//! is not an envelope, an event of a type the spec does not define. The probe is one more
//! view, which a UI in its test mode submits (`suites/uae/client/ui.toml`): a UI that submits
//! none leaves the run unjudged rather than failed.

use crate::fuzz_profile::keeps::{self, ids, text};
use crate::fuzz_profile::{mutate, FuzzProfile, Input, Mutator, Probe, PROBE_ID};
use crate::keeps_working;
use crate::rules::ids::UAE_ROB_001;
use proptest::prelude::*;
use serde_json::{json, Value};

/// The UAE Web UI [`FuzzProfile`].
pub struct UaeUiFuzz;

/// The keeps-working rule.
const KEEPS: &str = UAE_ROB_001;

fn view(id: &str) -> Value {
    json!({"type": "assistant.view", "payload": {"view": {"kind": "a2ui.v1", "view_id": id,
        "tree": {"type": "form", "id": "entry", "children": [{"type": "submit", "label": "Save"}]}}}})
}

fn event() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => text(48).prop_map(|t| json!({"type": "assistant.message", "payload": {"text": t}})),
        1 => ids().prop_map(|id| view(&format!("view_{id}"))),
    ]
    .boxed()
}

static MUTATORS: &[Mutator] = &[
    keeps_working!("not-json", KEEPS, |e, rng| Some(mutate::truncated(e, rng))),
    keeps_working!("not-an-envelope", KEEPS, |e, rng| {
        Some(Input::Event(match rng.below(3) {
            0 => json!([e]),
            1 => json!("assistant.message"),
            _ => json!(42),
        }))
    }),
    keeps_working!("unknown-type", KEEPS, |e, rng| keeps::unknown_type(
        e, "type", rng
    )),
];

impl FuzzProfile for UaeUiFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        proptest::collection::vec(event(), len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        keeps::not_json_breaks(input, KEEPS)
    }

    fn probe(&self) -> Probe {
        let id = format!("view_{PROBE_ID}");
        Probe {
            sends: vec![view(&id)],
            answers: vec![json!({"type": "ui.action", "payload": {"view_id": id}})],
            error: Value::Null,
            rule: KEEPS,
            answered_by: KEEPS,
            ended: Some(KEEPS),
            scenario: true,
        }
    }
}
