//! The corpus: every protocol's spec examples pass its validator; HAIP's broken example fails
//! the schema for the reasons ERRATA.md gives.

use std::collections::BTreeSet;
use std::path::Path;
use wireprobe::protocol::haip::schema::schema;

fn rules_broken(file: &Path) -> BTreeSet<&'static str> {
    let text = std::fs::read_to_string(file).expect("corpus file");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
        schema().check(&event, &mut out);
    }
    out.into_iter().map(|v| v.rule).collect()
}

#[test]
fn valid_spec_examples_pass_the_schema() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/haip/valid");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        assert!(
            rules_broken(&path).is_empty(),
            "{} breaks the schema",
            path.display()
        );
        seen += 1;
    }
    assert!(seen >= 3);
}

#[test]
fn the_binary_audio_chunk_example_breaks_the_schema_as_errata_says() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/haip/invalid/spec-example-binary-audio-chunk.ndjson");
    let broken = rules_broken(&file);
    assert_eq!(broken, BTreeSet::from(["HAIP-ENV-005", "HAIP-MEDIA-004"]));
}

/// The JSON files of `corpus/PROTOCOL/valid` whose names start with `prefix`.
fn corpus_files(protocol: &str, prefix: &str) -> Vec<(String, serde_json::Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(protocol)
        .join("valid");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        if name.starts_with(prefix) {
            let text = std::fs::read_to_string(&path).expect("corpus file");
            out.push((
                name,
                serde_json::from_str(&text).expect("corpus file is JSON"),
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn huma_spec_examples_are_valid() {
    use wireprobe::protocol::huma::validate;
    let clients = corpus_files("huma", "spec-client-");
    assert!(clients.len() >= 9, "{clients:?}");
    for (name, event) in &clients {
        let broken = validate::client_event_violations(event);
        assert!(broken.is_empty(), "{name}: {broken:?}");
    }
    let servers = corpus_files("huma", "spec-server-");
    assert_eq!(servers.len(), 3);
    for (name, event) in &servers {
        let channel = if event["type"] == "error" {
            "error"
        } else {
            "event"
        };
        let broken = validate::server_event_violations(channel, event);
        assert!(broken.is_empty(), "{name}: {broken:?}");
    }
}

#[test]
fn nuum_spec_examples_are_valid() {
    use wireprobe::fuzz::Input;
    use wireprobe::protocol::nuum::validate;
    let fuzz = wireprobe::protocol::get("nuum")
        .and_then(|p| p.fuzzing())
        .expect("nuum fuzz profile");
    let inputs = corpus_files("nuum", "spec-input-");
    assert!(inputs.len() >= 6);
    for (name, line) in &inputs {
        let broken = fuzz.input_violations(&Input::Event(line.clone()));
        assert!(broken.is_empty(), "{name}: {broken:?}");
    }
    let outputs = corpus_files("nuum", "spec-output-");
    assert!(outputs.len() >= 12);
    for (name, line) in &outputs {
        let kind = validate::classify(line).expect("a Nuum output line");
        let mut broken = Vec::new();
        validate::shape_violations(kind, line, &mut broken);
        assert!(broken.is_empty(), "{name}: {broken:?}");
    }
}

/// `invalid/gen-MUTATOR--RULE.*` (written by scripts/gen-corpus.sh): each breaks the rule its
/// name gives, by the protocol's own validator, and that rule is its mutator's.
#[test]
fn generated_invalid_seeds_break_the_rule_they_name() {
    use wireprobe::fuzz::Input;
    for protocol in ["haip", "huma", "nuum"] {
        let profile = wireprobe::protocol::get(protocol)
            .and_then(|p| p.fuzzing())
            .expect("fuzzable protocol");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/{protocol}/invalid"));
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("corpus dir") {
            let path = entry.expect("entry").path();
            let name = path
                .file_stem()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let Some((mutator, rule)) = name.strip_prefix("gen-").and_then(|n| n.split_once("--"))
            else {
                continue;
            };
            let m = profile
                .mutators()
                .iter()
                .find(|m| m.name == mutator)
                .expect("known mutator");
            assert_eq!(m.breaks, rule, "{}", path.display());
            let bytes = std::fs::read(&path).expect("seed");
            let input = match path.extension().and_then(|e| e.to_str()) {
                Some("json") => Input::Event(serde_json::from_slice(&bytes).expect("JSON seed")),
                _ => Input::Raw(bytes),
            };
            let broken = profile.input_violations(&input);
            assert!(
                broken.contains(&rule),
                "{} breaks {broken:?}",
                path.display()
            );
            seen += 1;
        }
        // The script keeps one seed per mutator, but for a valid event out of its sequence and
        // for megabytes of one byte.
        let kept = profile
            .mutators()
            .iter()
            .filter(|m| m.answer != wireprobe::fuzz::Answer::Sequence)
            .filter(|m| {
                wireprobe::fuzz::gen::invalid(profile, Some(m.name), 1, 1)
                    .expect("generates")
                    .iter()
                    .all(|g| wireprobe::fuzz::gen::render(g).len() <= 1 << 20)
            })
            .count();
        assert_eq!(seen, kept, "{protocol}: one seed per mutator");
    }
}

/// Every `valid/*.json` seed of `protocol` passes `validate` (but for rules `recorded`, which
/// only record), and every `invalid/NAME--RULE.json` breaks exactly RULE; at least `min` seeds.
fn assert_seeds_are_what_they_say(
    protocol: &str,
    validate: fn(&serde_json::Value, &mut Vec<wireprobe::rules::Violation>),
    recorded: &[&str],
    min: usize,
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(protocol);
    let mut seen = 0;
    for dir in ["valid", "invalid"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("corpus dir") {
            let path = entry.expect("entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let event: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).expect("seed")).expect("JSON seed");
            let mut broken = Vec::new();
            validate(&event, &mut broken);
            let rules: Vec<&str> = broken.iter().map(|v| v.rule).collect();
            let name = path
                .file_stem()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            match name.split_once("--") {
                None => {
                    let judged: Vec<&&str> =
                        rules.iter().filter(|r| !recorded.contains(r)).collect();
                    assert!(judged.is_empty(), "{name}: {judged:?}")
                }
                Some((_, rule)) => assert_eq!(rules, [rule], "{name}"),
            }
            seen += 1;
        }
    }
    assert!(seen >= min, "{protocol}: {seen} seeds");
}

/// The HPD corpus: every valid envelope passes the validator; every invalid one breaks the
/// rule its name gives (`NAME--RULE.json`).
#[test]
fn hpd_corpus_is_what_it_says() {
    assert_seeds_are_what_they_say(
        "hpd",
        |event, out| {
            wireprobe::protocol::hpd::validate::envelope(event, out);
        },
        &[],
        20,
    );
}

/// The UAE corpus: the spec's examples pass the validator (trace_id left out where the spec
/// leaves it out is recorded, not judged); every invalid envelope breaks exactly the rule its
/// name gives.
#[test]
fn uae_corpus_is_what_it_says() {
    assert_seeds_are_what_they_say(
        "uae",
        |event, out| {
            wireprobe::protocol::uae::validate::check_event(event, out);
        },
        &["UAE-ENV-003"],
        24,
    );
}

/// The AG-UI corpus: every valid event passes the shape validator; every invalid one breaks the
/// rule its name gives.
#[test]
fn agui_corpus_is_what_it_says() {
    assert_seeds_are_what_they_say(
        "agui",
        |event, out| {
            wireprobe::protocol::agui::validate::shape(
                event,
                false,
                &mut wireprobe::rules::Exercised::default(),
                out,
            );
        },
        &[],
        40,
    );
}
