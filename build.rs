//! Makes each rule of the catalogues (`src/protocol/*/rules.rs`) a constant the code names it
//! by (`NUUM-INJ-002` is `NUUM_INJ_002`), so a misspelt rule in a check, a fuzz profile or a
//! reference fault does not build; and records where the code names each one, which
//! `wireprobe list --rule` shows beside the rule. Plain std: it runs before every build.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    let catalogues = rust_files(Path::new("src/protocol"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "rules.rs"));
    let mut ids = BTreeSet::new();
    for file in catalogues {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        ids.extend(
            string_literals(&text)
                .filter(|s| is_rule_id(s))
                .map(str::to_owned),
        );
    }
    let mut out = String::new();
    for id in &ids {
        let _ = writeln!(out, "pub const {}: &str = {id:?};", const_name(id));
    }
    out.push_str(
        "\n/// Every rule's constant, as (name, id).\npub static ALL: &[(&str, &str)] = &[\n",
    );
    for id in &ids {
        let _ = writeln!(out, "    ({:?}, {}),", const_name(id), const_name(id));
    }
    out.push_str("];\n\n/// Where the code names each rule, outside tests: (id, file, line).\n");
    out.push_str("pub static SITES: &[(&str, &str, u32)] = &[\n");
    let names: BTreeSet<String> = ids.iter().map(|id| const_name(id)).collect();
    for file in rust_files(Path::new("src")) {
        let shown = file.to_string_lossy().replace('\\', "/");
        if shown.ends_with("rules.rs") || shown.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        // An import names the rules its file uses, which is no site of its own.
        let mut importing = false;
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            if importing || code.starts_with("use ") || code.starts_with("pub use ") {
                importing = !code.contains(';');
                continue;
            }
            // A test module written inline closes a file, by this project's habit: its names
            // are no sites.
            if code.starts_with("#[cfg(test)]")
                && lines.get(at + 1).is_some_and(|l| l.contains('{'))
            {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if names.contains(word) {
                    let id = word.replace('_', "-");
                    let _ = writeln!(out, "    ({id:?}, {shown:?}, {}),", at + 1);
                }
            }
        }
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dest.join("rule_ids.rs"), out).expect("OUT_DIR is writable");
}

/// The `.rs` files under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The contents of the string literals in `text`, outside `//` comments (a catalogue: no char
/// literal holds a quote).
fn string_literals(text: &str) -> impl Iterator<Item = &str> {
    let mut found = Vec::new();
    let mut start = None;
    let mut escaped = false;
    let mut comment = false;
    for (at, c) in text.char_indices() {
        match (start, c) {
            _ if comment => comment = c != '\n',
            (None, '/') => comment = text[at..].starts_with("//"),
            (None, '"') => start = Some(at + 1),
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(from), '"') => {
                found.push(&text[from..at]);
                start = None;
            }
            _ => {}
        }
    }
    found.into_iter()
}

/// `AREA-WORDS-NNN`: capitals, digits and hyphens, two hyphens or more, three digits last.
fn is_rule_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() >= 3
        && parts[0]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
        && parts
            .last()
            .is_some_and(|p| p.len() == 3 && p.chars().all(|c| c.is_ascii_digit()))
}

fn const_name(id: &str) -> String {
    id.replace('-', "_")
}
