//! `wireprobe report matrix`: implementations × rules, one column per saved run, the way
//! Autobahn's report index shows every client against every case. The page a protocol
//! community would publish.

use super::html::{badge, esc, filters, page_foot, page_head};
use super::markdown::cell;
use super::{Report, RuleReport};
use crate::rules::Level;
use crate::verdict::Verdict;
use std::fmt::Write;

/// One column: a saved run and the name it is shown under.
pub struct Column {
    pub name: String,
    pub report: Report,
}

/// One row: a rule, and its verdict in each column (`None`: that run did not have the rule,
/// a run of another protocol or an older catalogue).
struct Row<'a> {
    rule: &'a RuleReport,
    verdicts: Vec<Option<Verdict>>,
}

impl Row<'_> {
    fn worst(&self) -> Verdict {
        self.verdicts
            .iter()
            .flatten()
            .fold(Verdict::Skip, |w, v| w.worst(*v))
    }
}

/// Every rule of every run, in the order the runs list them, each once.
fn rows(columns: &[Column]) -> Vec<Row<'_>> {
    let mut rows: Vec<Row> = Vec::new();
    for column in columns {
        for rule in &column.report.rules {
            if rows.iter().any(|r| r.rule.id == rule.id) {
                continue;
            }
            let verdicts = columns
                .iter()
                .map(|c| {
                    c.report
                        .rules
                        .iter()
                        .find(|r| r.id == rule.id)
                        .map(|r| r.verdict)
                })
                .collect();
            rows.push(Row { rule, verdicts });
        }
    }
    rows
}

/// The columns' protocols, once each, in order.
fn protocols(columns: &[Column]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for c in columns {
        if !seen.contains(&c.report.protocol.as_str()) {
            seen.push(&c.report.protocol);
        }
    }
    seen.join(", ")
}

/// A failing count per column, the line under its name.
fn tally(report: &Report) -> String {
    let s = &report.summary;
    format!(
        "{} pass · {} fail · {} warn · {} error",
        s.pass, s.fail, s.warn, s.error
    )
}

/// The matrix as a self-contained HTML page.
pub fn html(columns: &[Column]) -> String {
    let mut out = page_head(&format!("wireprobe matrix: {}", protocols(columns)));
    let _ = writeln!(
        out,
        "<header>\n<h1>wireprobe compliance matrix: {}</h1>\n<p class=\"small muted\">\
         {} implementation(s); one column per saved run, one row per rule. A cell is the \
         rule's verdict in that run; — means the run did not have the rule.</p>\n</header>",
        esc(&protocols(columns)),
        columns.len()
    );
    let _ = writeln!(out, "<section id=\"matrix\">\n{}", filters());
    let _ = write!(
        out,
        "<table class=\"matrix\">\n<thead><tr><th>rule</th><th>level</th><th>statement</th>"
    );
    for c in columns {
        let _ = write!(
            out,
            "<th title=\"{target} ({started})\">{name}<div class=\"small muted\">{tally}</div></th>",
            target = esc(&c.report.target),
            started = esc(&c.report.started_at),
            name = esc(&c.name),
            tally = tally(&c.report),
        );
    }
    let _ = writeln!(out, "</tr></thead>\n<tbody>");
    for row in rows(columns) {
        let r = row.rule;
        let _ = write!(
            out,
            "<tr class=\"filterable\" data-verdict=\"{v}\" data-level=\"{l}\">\
             <td class=\"mono nowrap\" title=\"{source}\">{id}</td><td>{l}</td><td class=\"small\">{text}</td>",
            v = row.worst(),
            l = r.level,
            source = esc(&r.source),
            id = esc(&r.id),
            text = esc(&r.text),
        );
        for v in &row.verdicts {
            let _ = write!(
                out,
                "<td>{}</td>",
                v.map_or_else(|| "<span class=\"muted\">—</span>".to_owned(), badge)
            );
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
    out.push_str(&page_foot());
    out
}

/// The matrix as a Markdown table; failing musts are bold so they stand out in plain text.
pub fn markdown(columns: &[Column]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# wireprobe compliance matrix: {}\n",
        protocols(columns)
    );
    let _ = write!(out, "| rule | level |");
    for c in columns {
        let _ = write!(out, " {} |", cell(&c.name));
    }
    let _ = write!(out, "\n|---|---|");
    for _ in columns {
        out.push_str("---|");
    }
    let _ = write!(out, "\n| | totals |");
    for c in columns {
        let _ = write!(out, " {} |", tally(&c.report));
    }
    out.push('\n');
    for row in rows(columns) {
        let _ = write!(out, "| {} | {} |", row.rule.id, row.rule.level);
        for v in &row.verdicts {
            let shown = match v {
                None => "—".to_owned(),
                Some(Verdict::Fail) if row.rule.level == Level::Must => "**fail**".to_owned(),
                Some(v) => v.to_string(),
            };
            let _ = write!(out, " {shown} |");
        }
        out.push('\n');
    }
    out
}
