//! `wireprobe list`: protocols, and a protocol's rules, cases, faults and variants.

use super::{protocol_named, EXIT_OK};
use anyhow::Result;
use wireprobe::protocol;
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
        return super::explain::explain(Some(p), rule);
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
