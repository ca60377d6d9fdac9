//! What every client fuzz profile shares (`fuzz --client`). A spec says what a client does
//! with the server events it lists; for what else arrives (data that is not JSON, a type it
//! does not know, keys that pollute prototypes (`mutate::pollute`), an oversized message) it
//! says only that the client goes on. So each mutator toward a client is answered by surviving
//! it, and the profile's probe, a request the client must answer, shows that it still does: a
//! client that crashes, hangs or disconnects breaks the protocol's keeps-working rule.

use super::{mutate, Input, Rng};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{json, Value};

/// A mutator toward a client: `apply` makes the input, and surviving it is all the client owes
/// (`rule` is the keeps-working rule an unanswered probe afterwards breaks).
#[macro_export]
macro_rules! keeps_working {
    ($name:literal, $rule:expr, $apply:expr) => {
        $crate::fuzz_profile::Mutator {
            name: $name,
            breaks: $rule,
            answer: $crate::fuzz_profile::Answer::Survive,
            apply: $apply,
        }
    };
}

/// Size of an oversized string: over a megabyte, past what a client that buffers a frame of
/// "reasonable" size expects (the HUMA and HPD suites' oversize cases use the same).
pub const OVERSIZED: usize = 1_100_000;

/// A UUID drawn from `n`.
pub fn uuid(n: u128) -> String {
    uuid::Builder::from_random_bytes(n.to_le_bytes())
        .into_uuid()
        .to_string()
}

/// Fresh UUIDs.
pub fn ids() -> impl Strategy<Value = String> {
    any::<u128>().prop_map(uuid)
}

/// Short text of any characters: shorter than `max`, drawn from a seed, so that it shrinks to
/// a shorter text (a prefix of the same draw). A value tree per character, as a vector of
/// `any::<char>()` makes, was a quarter of the time drawing a HAIP sequence took.
pub fn text(max: usize) -> impl Strategy<Value = String> {
    (0..max.max(1), any::<u64>()).prop_map(|(len, seed)| {
        let mut rng = Rng::new(seed);
        (0..len).map(|_| any_char(&mut rng)).collect()
    })
}

/// Characters that break writers and parsers more than their share of the code space says:
/// JSON's escapes, controls, separators JavaScript reads as line ends, a byte-order mark,
/// noncharacters, the last code point, one outside the BMP.
const AWKWARD: &[char] = &[
    '"',
    '\\',
    '/',
    '\0',
    '\n',
    '\r',
    '\t',
    '\u{7f}',
    '\u{85}',
    '\u{a0}',
    '\u{2028}',
    '\u{2029}',
    '\u{feff}',
    '\u{fffd}',
    '\u{ffff}',
    '\u{10ffff}',
    '\u{1f600}',
    '$',
    '{',
    '}',
    '<',
    '&',
];

/// A quarter awkward, half printable ASCII, a quarter any code point.
fn any_char(rng: &mut Rng) -> char {
    match rng.below(4) {
        0 => *rng.pick(AWKWARD),
        1 | 2 => char::from(b' ' + rng.below(95) as u8),
        _ => loop {
            if let Some(c) = char::from_u32(rng.below(0x11_0000) as u32) {
                break c;
            }
        },
    }
}

/// Sequences of `len` events made of whole groups (a turn, a burst), cut to length: a group
/// cut short at the end is still valid as far as it goes.
pub fn of_groups(
    group: BoxedStrategy<Vec<Value>>,
    len: std::ops::RangeInclusive<usize>,
) -> BoxedStrategy<Vec<Value>> {
    let (min, max) = (*len.start(), (*len.end()).max(1));
    proptest::collection::vec(group, 1..=max)
        .prop_map(move |groups| {
            let mut all: Vec<Value> = groups.into_iter().flatten().collect();
            all.truncate(max);
            all
        })
        .prop_filter("too short", move |v| v.len() >= min)
        .boxed()
}

/// `event` with its `field` naming a type no spec lists.
pub fn unknown_type(event: &Value, field: &str, rng: &mut Rng) -> Option<Input> {
    let ty = event.get(field)?.as_str()?;
    let bad = match rng.below(3) {
        0 => format!("{ty}-wireprobe"),
        1 => "WIREPROBE_CUSTOM_PROGRESS".to_owned(),
        _ => "wireprobe.unknown".to_owned(),
    };
    mutate::set(event, &format!("/{field}"), json!(bad)).map(Input::Event)
}

/// `event` with the string at `path` made [`OVERSIZED`].
pub fn oversized(event: &Value, path: &str) -> Option<Input> {
    mutate::set(event, path, mutate::string_of(OVERSIZED)).map(Input::Event)
}

/// The rules a server event we send breaks by a client's lights: only text that is not JSON,
/// which the keeps-working `rule` covers (a client validates nothing else of ours).
pub fn not_json_breaks(input: &Input, rule: &'static str) -> Vec<&'static str> {
    match super::input_json(input) {
        Some(_) => Vec::new(),
        None => vec![rule],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_type_is_never_the_one_it_replaces() {
        let e = json!({"type": "tool-call"});
        for seed in 0..20 {
            let Some(Input::Event(out)) = unknown_type(&e, "type", &mut Rng::new(seed)) else {
                panic!("an event")
            };
            assert_ne!(out["type"], "tool-call");
        }
    }
}
