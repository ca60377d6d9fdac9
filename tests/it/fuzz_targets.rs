//! Every cargo-fuzz target's body runs over every corpus and seed file, whole, cut short at a
//! few points, and with bytes flipped: the deterministic part of what `scripts/fuzz-smoke.sh`
//! does with libFuzzer, so a target that panics on known input fails `cargo test`.

use std::path::Path;
use wireprobe::fuzz::targets::ALL;

/// The input itself, a few prefixes, and copies with one byte flipped.
fn variations(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![data.to_vec()];
    for cut in [
        1,
        2,
        data.len() / 3,
        data.len() / 2,
        data.len().saturating_sub(1),
    ] {
        out.push(data[..cut.min(data.len())].to_vec());
    }
    for at in [
        0,
        data.len() / 4,
        data.len() / 2,
        data.len().saturating_sub(2),
    ] {
        if let Some(b) = data.get(at) {
            let mut flipped = data.to_vec();
            flipped[at] = b ^ 0x5a;
            out.push(flipped);
        }
    }
    out
}

#[test]
fn every_target_survives_the_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = Vec::new();
    inputs.extend(crate::common::files_under(&root.join("corpus"), ""));
    inputs.extend(crate::common::files_under(&root.join("fuzz/seeds"), ""));
    assert!(inputs.len() > 50, "the corpus is there");
    for path in &inputs {
        let data = std::fs::read(path).expect("corpus file");
        for input in variations(&data) {
            for (name, target) in ALL {
                let caught = std::panic::catch_unwind(|| target(&input));
                assert!(
                    caught.is_ok(),
                    "{name} panicked on {} ({} bytes)",
                    path.display(),
                    input.len()
                );
            }
        }
    }
}

/// What `cargo fuzz list` reads: `fuzz/Cargo.toml` declares one binary per body the library
/// has, each at `fuzz_targets/NAME.rs` calling that body, and no other (CI builds no
/// cargo-fuzz; `scripts/fuzz-smoke.sh` does).
#[test]
fn the_fuzz_crate_declares_exactly_the_librarys_targets() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let text = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml reads");
    let manifest: toml::Table = toml::from_str(&text).expect("fuzz/Cargo.toml is TOML");
    assert_eq!(
        manifest
            .get("package")
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("cargo-fuzz"))
            .and_then(toml::Value::as_bool),
        Some(true),
        "cargo-fuzz knows its crate by package.metadata.cargo-fuzz"
    );
    let mut declared: Vec<String> = Vec::new();
    let bins = manifest.get("bin").and_then(toml::Value::as_array);
    for bin in bins.into_iter().flatten() {
        let name = bin
            .get("name")
            .and_then(toml::Value::as_str)
            .expect("a name");
        let path = bin
            .get("path")
            .and_then(toml::Value::as_str)
            .expect("a path");
        assert_eq!(path, format!("fuzz_targets/{name}.rs"), "{name}'s path");
        let body = std::fs::read_to_string(fuzz.join(path)).expect("the target's file");
        assert!(
            body.contains(&format!("wireprobe::fuzz::targets::{name}(data)")),
            "{path} calls wireprobe::fuzz::targets::{name}"
        );
        declared.push(name.to_owned());
    }
    declared.sort();
    let mut bodies: Vec<String> = ALL.iter().map(|(name, _)| name.to_string()).collect();
    bodies.sort();
    assert_eq!(
        declared, bodies,
        "fuzz/Cargo.toml's binaries and fuzz::targets::ALL"
    );
    let files = crate::common::files_under(&fuzz.join("fuzz_targets"), ".rs");
    assert_eq!(
        files.len(),
        declared.len(),
        "a file in fuzz_targets/ no binary names"
    );
}
