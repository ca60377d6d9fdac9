//! The library's modules stand on floors, and an import only goes down: the shared ground
//! (rules, verdicts, matching), then the transports that know no protocol, the transcript,
//! what a protocol gives the fuzzer, the protocols, and the engines that run them (judge,
//! suite, fuzz, check, proxy, reports), the reference targets above all. A module importing
//! one on its own floor or above would make a circle possible: this test refuses it, naming
//! the file and the import, so the map in README.md's "How it is built" cannot drift from
//! the code.

use std::path::Path;

/// Each top-level module of `src/` and its floor (0 is the ground). A new module gets a line.
const FLOORS: &[(&str, u8)] = &[
    ("auth", 0),
    ("citation", 0),
    ("matcher", 0),
    ("ndjson", 0),
    ("rules", 0),
    ("shard", 0),
    ("show", 0),
    ("workers", 0),
    ("transport", 1),
    ("verdict", 1),
    ("transcript", 2),
    ("fuzz_profile", 3),
    ("protocol", 4),
    ("judge", 5),
    ("check", 6),
    ("results", 6),
    ("suite", 7),
    ("fuzz", 8),
    ("report", 8),
    ("proxy", 9),
    ("reference", 10),
];

/// The binary's modules (`cli/`, `main.rs`) sit on top and import the library as `wireprobe`.
const ABOVE_ALL: &[&str] = &["cli", "main", "lib"];

fn floor_of(module: &str) -> Option<u8> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|(_, f)| *f)
}

/// The top-level modules `code` names as `crate::m` or inside `crate::{m, …}`.
fn named_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let words: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .collect(),
            None => vec![rest],
        };
        for word in words {
            let name: String = word
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn every_import_goes_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = crate::common::files_under(&src, ".rs");
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs").to_owned())
            .unwrap_or_default();
        if ABOVE_ALL.contains(&module.as_str()) {
            continue;
        }
        let Some(floor) = floor_of(&module) else {
            wrong.push(format!("src/{module} has no floor: give it one in FLOORS"));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (line, code) in crate::common::code_lines(&text) {
            for name in named_modules(code) {
                if name == module {
                    continue;
                }
                match floor_of(&name) {
                    Some(theirs) if theirs < floor => {}
                    Some(theirs) => wrong.push(format!(
                        "{}:{}: {module} (floor {floor}) imports {name} (floor {theirs})",
                        relative.display(),
                        line
                    )),
                    // A macro exported at the crate's root (`crate::fault!`) is no module.
                    None => {}
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not go down:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_walk_reads_imports_and_groups() {
    assert_eq!(
        named_modules("use crate::{rules::Rule, transport::Frame};"),
        ["rules", "transport"]
    );
    assert_eq!(named_modules("let x = crate::show::event(e);"), ["show"]);
}
