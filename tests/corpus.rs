//! The corpus: the spec's valid examples pass the schema; its broken example fails it for the
//! reasons ERRATA.md gives.

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
