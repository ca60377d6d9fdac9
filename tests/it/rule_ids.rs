//! Every rule id the code and the bundled suites name is a rule of its protocol's catalogue.
//! The judge reads an id it cannot find as `info`, so a misspelt id in a check, a case, a
//! fault or a mutator would quietly turn a MUST into a note: this walks them all.

use std::collections::BTreeSet;
use std::path::Path;
use wireprobe::protocol;

/// The words of `text` shaped like a rule id: `LETTERS-AREA-DIGITS`, the first part two to
/// six capitals, the area capitals and digits, the last part digits.
fn id_shaped(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| {
            let parts: Vec<&str> = word.split('-').collect();
            matches!(parts.as_slice(), [prefix, area, number]
                if (2..=6).contains(&prefix.len())
                    && prefix.chars().all(|c| c.is_ascii_uppercase())
                    && !area.is_empty()
                    && area.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                    && area.chars().any(|c| c.is_ascii_uppercase())
                    && !number.is_empty()
                    && number.chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

#[test]
fn every_rule_id_named_anywhere_is_in_its_protocols_catalogue() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    sources.extend(crate::common::files_under(&root.join("src"), ".rs"));
    sources.extend(crate::common::files_under(&root.join("suites"), ".toml"));
    sources.extend(crate::common::files_under(&root.join("fuzz"), ".rs"));
    // Each protocol's ids start with its own prefix (HAIP-SEQ-003 is haip's).
    let catalogues: Vec<(String, BTreeSet<&str>)> = protocol::all()
        .iter()
        .map(|p| {
            let ids: BTreeSet<&str> = p.rules().iter().map(|r| r.id).collect();
            let prefix = ids
                .iter()
                .next()
                .and_then(|id| id.split('-').next())
                .expect("a catalogue with rules")
                .to_owned();
            (prefix, ids)
        })
        .collect();
    let mut unknown = Vec::new();
    let mut seen = 0;
    for path in &sources {
        let text = std::fs::read_to_string(path).expect("readable source");
        for id in id_shaped(&text) {
            seen += 1;
            let prefix = id.split('-').next().unwrap_or_default();
            match catalogues.iter().find(|(p, _)| p == prefix) {
                Some((_, ids)) if ids.contains(id) => {}
                Some(_) => unknown.push(format!("{}: {id} is no rule", path.display())),
                None => unknown.push(format!("{}: {id} names no protocol", path.display())),
            }
        }
    }
    assert!(seen > 1000, "the walk found only {seen} ids");
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

/// Outside the catalogues and tests the code names a rule by its constant
/// (`wireprobe::rules::ids`), never by a string: a string in a rule's shape is a rule misspelt
/// or named around the compiler's check.
#[test]
fn the_code_names_rules_by_their_constants() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut strings = Vec::new();
    for path in crate::common::files_under(&src, ".rs") {
        let name = path.display().to_string();
        if name.ends_with("rules.rs") || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        for (line, code) in crate::common::code_lines(&text) {
            let literals = code.split('"').skip(1).step_by(2);
            let shaped = literals.filter(|s| id_shaped(s) == [*s]);
            strings.extend(shaped.map(|s| format!("{name}:{line}: \"{s}\"")));
        }
    }
    assert!(
        strings.is_empty(),
        "name these by their constants (wireprobe::rules::ids):\n{}",
        strings.join("\n")
    );
}

/// The shape the walk looks for, against near misses a typo makes.
#[test]
fn the_walk_sees_what_a_typo_makes() {
    assert_eq!(
        id_shaped(r#"rule = "HAIP-SEQ-03", x: "HIAP-SEQ-003" UTF-8 ISO-8601 R-A-001 HPD-ENV-002."#),
        vec!["HAIP-SEQ-03", "HIAP-SEQ-003", "HPD-ENV-002"]
    );
}
