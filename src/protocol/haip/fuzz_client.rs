//! What `fuzz haip --client` sends a client: the server's side of a conversation (PINGs,
//! the agent's text messages, credit grants, keep-alive PONGs), with the same envelope and
//! schema mutators the server fuzzing sends. HAIP's rules about a malformed message bind
//! whichever side receives it (HAIP-ERR-001: "Any violation MUST trigger ERROR"; HAIP-ENV-008
//! for `crit`), so each is owed the same answer by a client. The probe is the server
//! fuzzing's PING pair: a client still serving answers it with PONG (HAIP-PING-001).

use super::fuzz::{envelopes, text, HaipFuzz, MUTATORS};
use crate::fuzz_profile::{Answer, FuzzProfile, Input, Mutator, Probe, SyncPoint};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::LazyLock;

static TOWARD_CLIENT: LazyLock<Vec<Mutator>> = LazyLock::new(|| {
    MUTATORS
        .iter()
        .filter(|m| m.answer != Answer::Unspecified)
        .copied()
        .collect()
});

/// The HAIP client [`FuzzProfile`]: HAIP's own, with the server's events.
pub struct HaipClientFuzz;

/// One server action before envelopes: a list of (type, payload) that belong together.
fn action() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    prop_oneof![
        3 => proptest::option::of(text(24)).prop_map(|nonce| vec![(
            "PING",
            nonce.map_or_else(|| json!({}), |n| json!({"nonce": n})),
        )]),
        4 => proptest::collection::vec(text(32), 0..4).prop_map(|parts| {
            let mut out = vec![("TEXT_MESSAGE_START", json!({"author": "agent"}))];
            out.extend(parts.into_iter().map(|t| ("TEXT_MESSAGE_PART", json!({"text": t}))));
            out.push(("TEXT_MESSAGE_END", json!({})));
            out
        }),
        1 => (1u64..1000).prop_map(|n| vec![("FLOW_UPDATE", json!({"channel": "USER", "add_messages": n}))]),
        1 => text(16).prop_map(|n| vec![("PONG", json!({"nonce": n}))]),
    ]
}

impl FuzzProfile for HaipClientFuzz {
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        let (min, max) = (*len.start(), (*len.end()).max(1));
        (proptest::collection::vec(action(), min..=max), any::<u64>())
            .prop_map(move |(actions, seed)| {
                // The first envelope is the HAI the session does itself; after it, at least
                // `min` actions of one message or more (so no filter: see HaipFuzz's).
                let mut all = envelopes(actions, seed);
                all.truncate(max + 1);
                all
            })
            .boxed()
    }

    /// The envelope and schema mutators; not the scenarios, which drive a server's flows, nor
    /// one whose answer the spec leaves open (the fuzzer would go on from a new connection,
    /// and a client under test connects once).
    fn mutators(&self) -> &'static [Mutator] {
        &TOWARD_CLIENT
    }

    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        HaipFuzz.input_violations(input)
    }

    fn probe(&self) -> Probe {
        HaipFuzz.probe()
    }

    fn answer_rule(&self, mutator: &Mutator) -> &'static str {
        HaipFuzz.answer_rule(mutator)
    }

    fn sync(&self, tag: u64) -> Option<SyncPoint> {
        HaipFuzz.sync(tag)
    }

    fn live_event(&self, original: &Value, sent: &Value) -> Option<Value> {
        HaipFuzz.live_event(original, sent)
    }

    fn live_valid(&self, event: Value) -> Option<Value> {
        HaipFuzz.live_valid(event)
    }
}
