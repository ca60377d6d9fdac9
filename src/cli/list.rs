//! `wireprobe list`: protocols, and a protocol's rules, cases, faults and variants.

use super::{protocol_named, EXIT_OK};
use anyhow::{anyhow, Result};
use wireprobe::protocol::{self, Protocol};
use wireprobe::reference;
use wireprobe::suite as suites;

pub(super) fn list(args: &super::args::ListArgs) -> Result<u8> {
    let super::args::ListArgs {
        rules,
        cases,
        faults,
        variants,
        ..
    } = *args;
    if args.suite_schema {
        say!("{:#}", wireprobe::suite::file_schema());
        return Ok(EXIT_OK);
    }
    let Some(id) = args.protocol.as_deref() else {
        for p in protocol::all() {
            say!(
                "{:<6} {}  ({} rules; spec: {})",
                p.id(),
                p.title(),
                p.rules().len(),
                {
                    let c = wireprobe::citation::cite(p.spec_file());
                    match c.url {
                        Some(url) => format!("{}, {url}", c.text),
                        None => c.text,
                    }
                }
            );
        }
        return Ok(EXIT_OK);
    };
    let p = protocol_named(id)?;
    if let Some(rule) = &args.rule {
        return list_rule(p, rule);
    }
    let all = !rules && !cases && !faults && !variants;
    if rules || all {
        for r in p.rules() {
            say!(
                "{:<15} {:<6} {}\n{:<22} source: {}",
                r.id,
                r.level.to_string(),
                r.text,
                "",
                wireprobe::citation::cite(r.source).text
            );
        }
    }
    if cases || all {
        let suite = match args.client {
            true => suites::load_bundled_client(p)?,
            false => suites::load_bundled(p)?,
        };
        for c in &suite.cases {
            say!("{:<44} [{}] {}", c.id, c.rules.join(", "), c.title);
        }
    }
    let reference = reference::of(p);
    let (known_faults, known_variants) = match (args.client, reference) {
        (false, Some(r)) => (r.faults, r.variants),
        (true, Some(r)) => r
            .client
            .as_ref()
            .map_or((&[][..], &[][..]), |c| (c.faults, c.variants)),
        (_, None) => (&[][..], &[][..]),
    };
    if faults {
        for f in known_faults {
            say!(
                "{:<28} breaks {:<32} {}",
                f.name,
                f.breaks.join(","),
                f.description
            );
        }
    }
    if variants {
        for v in known_variants {
            say!("{:<28} {}", v.name, v.description);
        }
    }
    Ok(EXIT_OK)
}

/// `list P --rule ID`: a rule with the spec's words it rests on and everything that tests it.
fn list_rule(p: &dyn Protocol, id: &str) -> Result<u8> {
    let rule = wireprobe::rules::find(p.rules(), id).ok_or_else(|| {
        anyhow!(
            "{} has no rule {id:?} (`wireprobe list {} --rules` lists them)",
            p.id(),
            p.id()
        )
    })?;
    say!("{} ({})", rule.id, rule.level);
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
    let named = |names: Vec<String>| match names.is_empty() {
        true => "  (none)".to_owned(),
        false => names
            .iter()
            .map(|n| format!("  {n}"))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let suite = suites::load_bundled(p)?;
    let cases = suite
        .cases
        .iter()
        .filter(|c| c.rules.iter().any(|r| r == rule.id))
        .map(|c| format!("{} — {}", c.id, c.title))
        .collect();
    say!("cases written for it:\n{}", named(cases));
    let reference = reference::of(p);
    let faults = reference
        .map_or(&[][..], |r| r.faults)
        .iter()
        .filter(|f| f.breaks.contains(&rule.id))
        .map(|f| format!("{} — {}", f.name, f.description))
        .collect();
    say!("reference faults that break it:\n{}", named(faults));
    let variants = reference
        .map_or(&[][..], |r| r.variants)
        .iter()
        .map(|v| format!("{} — {}", v.name, v.description))
        .collect();
    say!(
        "reference variants it must pass (every variant passes every rule):\n{}",
        named(variants)
    );
    Ok(EXIT_OK)
}
