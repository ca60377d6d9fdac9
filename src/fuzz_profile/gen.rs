//! Deterministic generation: valid sequences and mutated inputs from a seed (`wireprobe gen`).

use super::{FuzzProfile, Input, Mutator, Rng};
use base64::Engine as _;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};

/// Why nothing could be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("no mutator {name:?}; known: {known}")]
    UnknownMutator { name: String, known: String },
    #[error("mutator {0:?} applied to none of {1} generated events")]
    NeverApplies(&'static str, usize),
    #[error("the generator failed: {0}")]
    Strategy(String),
}

/// What `gen --kind` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Valid,
    /// Any of the protocol's mutators.
    Invalid,
    /// One mutator, by name.
    Mutator(String),
}

impl Kind {
    pub fn parse(s: &str) -> Kind {
        match s {
            "valid" => Kind::Valid,
            "invalid" => Kind::Invalid,
            other => Kind::Mutator(other.to_owned()),
        }
    }
}

/// One mutated input and the mutator that made it.
#[derive(Debug, Clone)]
pub struct Mutation {
    pub mutator: &'static Mutator,
    pub input: Input,
}

/// A proptest runner whose every draw follows from `seed`.
pub fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    let mut rng = Rng::new(seed);
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// `count` valid events forming one consistent sequence.
pub fn valid(profile: &dyn FuzzProfile, count: usize, seed: u64) -> Result<Vec<Value>, GenError> {
    let mut runner = runner(seed);
    profile
        .valid_sequence(count..=count)
        .new_tree(&mut runner)
        .map(|tree| tree.current())
        .map_err(|e| GenError::Strategy(e.to_string()))
}

/// `count` mutated inputs: from any of the protocol's mutators, or only `only`.
pub fn invalid(
    profile: &dyn FuzzProfile,
    only: Option<&str>,
    count: usize,
    seed: u64,
) -> Result<Vec<Mutation>, GenError> {
    let all = profile.mutators();
    let chosen: Vec<&'static Mutator> = match only {
        None => all.iter().collect(),
        Some(name) => {
            let m =
                all.iter()
                    .find(|m| m.name == name)
                    .ok_or_else(|| GenError::UnknownMutator {
                        name: name.to_owned(),
                        known: all.iter().map(|m| m.name).collect::<Vec<_>>().join(", "),
                    })?;
            vec![m]
        }
    };
    let mut runner = runner(seed);
    let mut rng = Rng::new(seed ^ 0x5EED);
    let events = profile.valid_sequence(1..=8);
    let mut out = Vec::with_capacity(count);
    // Each mutator gets many chances: some apply to one event type only.
    const TRIES: usize = 200;
    while out.len() < count {
        let mutator = *rng.pick(&chosen);
        let mut made = None;
        for _ in 0..TRIES {
            let sequence = events
                .new_tree(&mut runner)
                .map_err(|e| GenError::Strategy(e.to_string()))?
                .current();
            let event = rng.pick(&sequence).clone();
            if let Some(input) = (mutator.apply)(&event, &mut rng) {
                made = Some(input);
                break;
            }
        }
        let input = made.ok_or(GenError::NeverApplies(mutator.name, TRIES))?;
        out.push(Mutation { mutator, input });
    }
    Ok(out)
}

/// A mutation as one NDJSON line: the mutator, the rule, the answer the spec requires, and the
/// input (`event`, or `raw` text, or `raw_base64` when the bytes are not UTF-8).
pub fn render(m: &Mutation) -> String {
    let mut line = json!({
        "mutator": m.mutator.name,
        "breaks": m.mutator.breaks,
        "answer": m.mutator.answer.describe(),
    });
    match &m.input {
        Input::Event(e) => line["event"] = e.clone(),
        Input::Raw(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => line["raw"] = json!(text),
            Err(_) => {
                line["raw_base64"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
        },
    }
    line.to_string()
}
