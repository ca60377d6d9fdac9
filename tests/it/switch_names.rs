//! Every fault and variant a reference target's code asks for (`faults.has("name")`) is one
//! its catalogue declares: a misspelt name would never be switched on, so a fault would break
//! nothing (the fault matrix would say so) or a variant would quietly be the default (nothing
//! would).

use std::path::Path;
use wireprobe::reference;

/// The names asked for as `.has("name")` in `text`, or through the `on("name")` a file of
/// transforms keeps for it.
fn asked(text: &str) -> Vec<&str> {
    [".has(\"", " on(\"", "!on(\"", "(on(\""]
        .iter()
        .flat_map(|opening| text.match_indices(opening))
        .filter_map(|(at, open)| {
            let rest = &text[at + open.len()..];
            rest.split_once("\")").map(|(name, _)| name)
        })
        .collect()
}

#[test]
fn every_switch_the_references_ask_for_is_declared() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/reference");
    let mut unknown = Vec::new();
    for protocol in wireprobe::protocol::all() {
        let Some(target) = reference::get(protocol.id()) else {
            continue;
        };
        let client = target.client.as_ref();
        let declared: Vec<&str> = target
            .faults
            .iter()
            .map(|f| f.name)
            .chain(target.variants.iter().map(|v| v.name))
            .chain(
                client
                    .into_iter()
                    .flat_map(|c| c.faults.iter().map(|f| f.name)),
            )
            .chain(
                client
                    .into_iter()
                    .flat_map(|c| c.variants.iter().map(|v| v.name)),
            )
            .collect();
        for file in crate::common::files_under(&root.join(protocol.id()), ".rs") {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for name in asked(&text) {
                if !declared.contains(&name) {
                    unknown.push(format!("{}: {name}", file.display()));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "asked for but never declared:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_walk_reads_each_ask() {
    assert_eq!(
        asked(r#"if self.faults.has("no-pong") || v.has("own-words") && !on("x-y") {"#),
        ["no-pong", "own-words", "x-y"]
    );
}
