//! What `fuzz nuum --client` sends a host, as its agent: a turn's output (accepted, the
//! assistant's text), and among it what NUUM-HOST-003 names a host keeps going through: an
//! output type or subtype it does not know, a line that is not JSON, a system error, a failed
//! turn. The probe ends the turn with a result; a host in its test mode
//! (`suites/nuum/client/host.toml`) sends its next message, and one that sends none leaves
//! the run unjudged rather than failed.

use crate::fuzz_profile::keeps::{self, text};
use crate::fuzz_profile::{mutate, FuzzProfile, Input, Mutator, Oracle, Probe};
use crate::keeps_working;
use crate::rules::ids::NUUM_HOST_003;
use proptest::prelude::*;
use serde_json::{json, Value};

/// The Nuum host [`FuzzProfile`].
pub struct NuumHostFuzz;

/// The keeps-working rule.
const KEEPS: &str = NUUM_HOST_003;

fn assistant(t: String) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant",
        "content": [{"type": "text", "text": t}], "model": "wireprobe"}})
}

/// Output within a turn (a result would end it: only the probe sends one, so every next
/// message of the host's answers a probe).
fn output() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(json!({"type": "system", "subtype": "turn_accepted", "timestamp": "2026-02-05T15:30:00.000Z"})),
        4 => text(48).prop_map(assistant),
    ]
    .boxed()
}

static MUTATORS: &[Mutator] = &[
    keeps_working!("unknown-type", KEEPS, |e, rng| keeps::unknown_type(
        e, "type", rng
    )),
    keeps_working!("unknown-subtype", KEEPS, |_, rng| {
        let sub = *rng.pick(&["consolidation", "wireprobe_progress"]);
        Some(Input::Event(
            json!({"type": "system", "subtype": sub, "detail": {"n": 3}}),
        ))
    }),
    keeps_working!("not-json", KEEPS, |e, rng| Some(mutate::truncated(e, rng))),
    keeps_working!("system-error", KEEPS, |_, _| {
        Some(Input::Event(
            json!({"type": "system", "subtype": "error", "message": "wireprobe: something went wrong"}),
        ))
    }),
    // A failed turn ends the turn too: the host's next message answers it (see `oracles`).
    crate::sequence_mutator!("failed-turn", NUUM_HOST_003, |_, _| {
        Some(Input::Event(
            json!({"type": "result", "subtype": "error", "duration_ms": 12,
            "is_error": true, "num_turns": 1, "result": "wireprobe: the model call failed"}),
        ))
    }),
];

impl FuzzProfile for NuumHostFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        proptest::collection::vec(output(), len).boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        MUTATORS
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        keeps::not_json_breaks(input, KEEPS)
    }

    /// A raw line ends with its line break, as the agent's output does.
    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        super::fuzz::NuumFuzz.raw_frame(bytes)
    }

    /// After a failed turn the host sends its next message, as after any result.
    fn oracles(&self, _mutator: &Mutator, _input: &Input) -> Vec<Oracle> {
        vec![Oracle::Reply {
            patterns: vec![json!({"type": "user"})],
            rule: KEEPS,
            scenario: false,
        }]
    }

    fn probe(&self) -> Probe {
        Probe {
            sends: vec![
                json!({"type": "result", "subtype": "success", "duration_ms": 12,
                "is_error": false, "num_turns": 1, "result": "Done!"}),
            ],
            answers: vec![json!({"type": "user"})],
            error: Value::Null,
            rule: KEEPS,
            answered_by: KEEPS,
            ended: Some(KEEPS),
            scenario: true,
        }
    }
}
