//! `wireprobe explain RULE` (and `list P --rule RULE`): everything about one rule on one
//! screen — its statement, level and side, the spec's words and section, where the code names
//! it, the cases written for it, the reference faults that break it, the variants it must
//! pass, and the ERRATA readings that name it.

use super::EXIT_OK;
use anyhow::{anyhow, Result};
use wireprobe::protocol::{self, Protocol};
use wireprobe::reference;
use wireprobe::rules::{Binds, Rule};
use wireprobe::suite as suites;

/// Explains rule `id` of `protocol`, or of whichever protocol has it.
pub(super) fn explain(protocol: Option<&'static dyn Protocol>, id: &str) -> Result<u8> {
    let id = id.trim().to_ascii_uppercase();
    let (p, rule) = find(protocol, &id)?;
    let side = match rule.binds {
        Binds::Server => "binds the server: judged by a run against a server",
        Binds::Client => "binds the client: judged by `run --client`",
        Binds::Either => "binds either side: judged whichever side a run judges",
    };
    say!("{} ({}; {side})", rule.id, rule.level);
    say!("  {}", rule.text);
    say!("the spec says:");
    for excerpt in rule.excerpts() {
        say!("  \"{excerpt}\"");
    }
    let citation = wireprobe::citation::cite(rule.source);
    match citation.url {
        Some(url) => say!("source: {}, {url}", citation.text),
        None => say!("source: {}", citation.text),
    }
    say!("named in the code at:\n{}", listed(sites(rule.id)));
    let mut cases = Vec::new();
    for client in [false, true] {
        let suite = match client {
            false => suites::load_bundled(p)?,
            true if p.descriptor().client_suite.is_empty() => continue,
            true => suites::load_bundled_client(p)?,
        };
        let side = if client { " (client suite)" } else { "" };
        cases.extend(
            suite
                .cases
                .iter()
                .filter(|c| c.rules.iter().any(|r| r == rule.id))
                .map(|c| format!("{} — {}{side}", c.id, c.title)),
        );
    }
    say!("cases written for it:\n{}", listed(cases));
    let mut faults = Vec::new();
    let mut variants = Vec::new();
    if let Some(target) = reference::of(p) {
        let client = target.client.as_ref().map(|c| (c.faults, c.variants));
        for (is_client, part) in [
            (false, Some((target.faults, target.variants))),
            (true, client),
        ] {
            let Some((its_faults, its_variants)) = part else {
                continue;
            };
            let side = if is_client { " (reference client)" } else { "" };
            faults.extend(
                its_faults
                    .iter()
                    .filter(|f| f.breaks.contains(&rule.id))
                    .map(|f| format!("{} — {}{side}{}", f.name, f.description, failing(f))),
            );
            if rule.binds.applies(!is_client) {
                variants.extend(
                    its_variants
                        .iter()
                        .map(|v| format!("{} — {}{side}", v.name, v.description)),
                );
            }
        }
    }
    say!("reference faults that break it:\n{}", listed(faults));
    say!(
        "reference variants it must pass (every variant passes every rule):\n{}",
        listed(variants)
    );
    say!(
        "readings of suites/{}/ERRATA.md that name it:\n{}",
        p.id(),
        listed(readings(p.errata(), rule.id))
    );
    Ok(EXIT_OK)
}

/// The rule `id` in `protocol`'s catalogue, or in the one catalogue that has it.
fn find(
    protocol: Option<&'static dyn Protocol>,
    id: &str,
) -> Result<(&'static dyn Protocol, &'static Rule)> {
    let candidates = protocol.map_or_else(|| protocol::all().to_vec(), |p| vec![p]);
    candidates
        .into_iter()
        .find_map(|p| wireprobe::rules::find(p.rules(), id).map(|r| (p, r)))
        .ok_or_else(|| match protocol {
            Some(p) => anyhow!(
                "{} has no rule {id:?} (`wireprobe list {} --rules` lists them)",
                p.id(),
                p.id()
            ),
            None => anyhow!(
                "no protocol has a rule {id:?} (`wireprobe list P --rules` lists a protocol's)"
            ),
        })
}

/// Where the code names `id`, a line a file: `src/protocol/nuum/checker.rs:123, 170`.
fn sites(id: &str) -> Vec<String> {
    let mut by_file: Vec<(&str, Vec<String>)> = Vec::new();
    for (_, file, line) in wireprobe::rules::ids::SITES
        .iter()
        .filter(|(r, _, _)| *r == id)
    {
        match by_file.iter_mut().find(|(f, _)| f == file) {
            Some((_, lines)) => lines.push(line.to_string()),
            None => by_file.push((file, vec![line.to_string()])),
        }
    }
    by_file
        .into_iter()
        .map(|(file, lines)| format!("{file}:{}", lines.join(", ")))
        .collect()
}

/// The readings of an ERRATA file that name `id`: each paragraph or list item that does, by
/// its section, its bold title when it has one, and the sentences that name the rule.
fn readings(errata: &str, id: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut section = "";
    let mut block: Vec<&str> = Vec::new();
    let reading = |section: &str, block: &mut Vec<&str>| {
        let text = block.join(" ");
        block.clear();
        if !names(&text, id) {
            return None;
        }
        let body = text
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == ' ');
        let (title, rest) = match body.strip_prefix("**").and_then(|b| b.split_once("**")) {
            Some((title, rest)) => (format!("{} — ", title.trim_end_matches('.')), rest),
            None => (String::new(), body),
        };
        let said: Vec<&str> = sentences(rest).filter(|s| names(s, id)).collect();
        Some(format!("{section} › {title}{}", said.join(" ")))
    };
    for line in errata.lines() {
        let trimmed = line.trim();
        // A table's row is a reading of its own, shown whole.
        if let Some(row) = trimmed.strip_prefix('|') {
            found.extend(reading(section, &mut block));
            let cells: Vec<&str> = row
                .trim_end_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let rule = cells
                .iter()
                .all(|c| c.chars().all(|c| c == '-' || c == ':'));
            if !rule && names(row, id) {
                found.push(format!("{section} › {}", cells.join(" | ")));
            }
            continue;
        }
        let starts_item = trimmed.starts_with("- ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if trimmed.is_empty() || trimmed.starts_with('#') || starts_item {
            found.extend(reading(section, &mut block));
        }
        if let Some(heading) = trimmed.strip_prefix('#') {
            section = heading.trim_start_matches('#').trim();
        } else if !trimmed.is_empty() {
            block.push(trimmed);
        }
    }
    found.extend(reading(section, &mut block));
    found
}

/// True when `text` names rule `id` (and not a longer id it begins).
fn names(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| {
        !text[at + id.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// `text`'s sentences: each ends at a full stop followed by a space.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(". ").map(str::trim)
}

/// The cases a fault declares it fails, as `; fails case (verdict), …`.
fn failing(fault: &reference::Fault) -> String {
    let cases: Vec<String> = fault
        .fails
        .iter()
        .map(|(case, verdict)| format!("{case} ({verdict})"))
        .collect();
    match cases.is_empty() {
        true => String::new(),
        false => format!("; fails {}", cases.join(", ")),
    }
}

/// Each of `names` on a line of its own, or `(none)`.
fn listed(names: Vec<String>) -> String {
    match names.is_empty() {
        true => "  (none)".to_owned(),
        false => names
            .iter()
            .map(|n| format!("  {n}"))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_its_section_title_and_the_sentences_naming_the_rule() {
        let errata = "# T\n\n## How it is read\n\n1. **Injection** first. wireprobe judges NUUM-INJ-002\n   here. Not this one.\n2. **Other** NUUM-INJ-002X is not it.\n\nA paragraph on NUUM-INJ-002.\n\n| does | says |\n|---|---|\n| this | NUUM-INJ-002 |\n";
        assert_eq!(
            readings(errata, "NUUM-INJ-002"),
            [
                "How it is read › Injection — wireprobe judges NUUM-INJ-002 here.",
                "How it is read › A paragraph on NUUM-INJ-002.",
                "How it is read › this | NUUM-INJ-002"
            ]
        );
    }
}
