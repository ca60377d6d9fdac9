//! What a protocol brings, held for every protocol the registry lists: adding one is its two
//! folders, its suites and a line in each of the two registries (README, "How it is built"),
//! and this test names whatever else a new one forgot.

use std::path::Path;

/// The files every protocol has, by what they are for (`{id}` is the protocol's id).
const EVERY_PROTOCOL_HAS: &[(&str, &str)] = &[
    (
        "src/protocol/{id}/mod.rs",
        "its Protocol: the descriptor and what it gives the engines",
    ),
    (
        "src/protocol/{id}/rules.rs",
        "its rule catalogue (build.rs makes the rules' constants)",
    ),
    (
        "src/protocol/{id}/session.rs",
        "what a run sends it and waits for",
    ),
    ("src/protocol/{id}/fuzz.rs", "its server fuzz profile"),
    (
        "src/reference/{id}/mod.rs",
        "its reference target, listed in the reference registry",
    ),
    (
        "src/reference/{id}/faults.rs",
        "its reference faults at work",
    ),
    ("suites/{id}/ERRATA.md", "the readings of its spec"),
    (
        "tests/it/{id}_faults.rs",
        "its fault matrix: each check shown able to fail",
    ),
    (
        "fuzz/fuzz_targets/check_{id}.rs",
        "its cargo-fuzz target over `check`",
    ),
];

#[test]
fn every_protocol_brings_what_the_map_says_and_is_named_where_users_look() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml reads");
    let description = manifest
        .lines()
        .find(|l| l.starts_with("description"))
        .unwrap_or_default()
        .to_ascii_lowercase()
        .replace('-', "");
    let mut missing = Vec::new();
    for p in wireprobe::protocol::all() {
        let id = p.id();
        for (path, what) in EVERY_PROTOCOL_HAS {
            let path = path.replace("{id}", id);
            if !root.join(&path).exists() {
                missing.push(format!("{id}: no {path} ({what})"));
            }
        }
        let target = format!("check_{id}");
        if !wireprobe::fuzz::targets::ALL
            .iter()
            .any(|(name, _)| *name == target)
        {
            missing.push(format!("{id}: fuzz::targets::ALL has no {target}"));
        }
        if !description.contains(id) {
            missing.push(format!("{id}: Cargo.toml's description does not name it"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
