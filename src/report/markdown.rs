//! A Markdown compliance report: summary, failures first, then every case and every rule.

use super::Report;
use crate::verdict::Verdict;
use std::fmt::Write;

/// `s` as one Markdown table cell: pipes escaped, on one line.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn render(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let _ = writeln!(out, "# wireprobe {} report\n", report.protocol);
    let _ = writeln!(out, "- target: `{}`", report.target);
    let _ = writeln!(
        out,
        "- started: {} ({} ms)",
        report.started_at, report.duration_ms
    );
    let _ = writeln!(out, "- wireprobe {}\n", report.wireprobe);
    let _ = writeln!(out, "| total | pass | fail | warn | info | skip | error |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} |\n",
        s.total, s.pass, s.fail, s.warn, s.info, s.skip, s.error
    );

    let problems: Vec<_> = report
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Error | Verdict::Warn))
        .collect();
    if !problems.is_empty() {
        let _ = writeln!(out, "## Problems\n");
        for c in problems {
            let _ = writeln!(
                out,
                "- **{}** `{}` ({}): {}",
                c.verdict,
                c.id,
                c.rules.join(", "),
                cell(&c.message)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "## Cases\n");
    let _ = writeln!(out, "| verdict | case | rules | message |");
    let _ = writeln!(out, "|---|---|---|---|");
    for c in &report.cases {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} |",
            c.verdict,
            c.id,
            c.rules.join(", "),
            cell(&c.message)
        );
    }
    let _ = writeln!(out, "\n## Rules\n");
    let _ = writeln!(out, "| verdict | rule | level | source | statement |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for r in &report.rules {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            r.verdict,
            r.id,
            r.level,
            cell(&r.source),
            cell(&r.text)
        );
    }
    out
}
