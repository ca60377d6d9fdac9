//! Small readings and makings of HAIP values that the fuzzer's generators and its scenarios
//! share: a message's type among some, a decimal counter, a uuid drawn from the run's seed.

use crate::fuzz_profile::Rng;
use serde_json::Value;

/// A uuid drawn from `rng` (so a run's ids follow from its seed).
pub(super) fn uuid_from(rng: &mut Rng) -> String {
    let bytes = (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())).to_le_bytes();
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// True when `e`'s type is one of `types`.
pub(super) fn of_types(e: &Value, types: &[&str]) -> bool {
    e["type"].as_str().is_some_and(|t| types.contains(&t))
}

/// A decimal counter field's value.
pub(super) fn counter(e: &Value, field: &str) -> Option<u64> {
    e.get(field)?.as_str()?.parse().ok()
}
