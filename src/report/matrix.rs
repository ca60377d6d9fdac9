//! `wireprobe report matrix`: implementations × rules, one column per saved run, the way
//! Autobahn's report index shows every client against every case. The page a protocol
//! community would publish.

use super::html::{badge, esc, filters, page_foot, page_head};
use super::markdown::cell;
use super::{Report, RuleReport};
use crate::rules::Level;
use crate::verdict::Verdict;
use std::fmt::Write;

/// One column: an implementation, by the name it is shown under.
pub struct Column {
    pub name: String,
    pub shown: Shown,
}

/// What a column shows.
pub enum Shown {
    /// A saved run, and where its own HTML report is (a cell links to the case and frame that
    /// decided the rule there), when there is one.
    Run {
        report: Box<Report>,
        page: Option<String>,
    },
    /// An implementation that could not be run, and why: it stays in the matrix, never
    /// silently absent.
    Absent(String),
}

impl Column {
    fn report(&self) -> Option<&Report> {
        match &self.shown {
            Shown::Run { report, .. } => Some(report),
            Shown::Absent(_) => None,
        }
    }
}

/// One row: a rule, and its verdict in each column (`None`: that run did not have the rule,
/// a run of another protocol or an older catalogue, or no run).
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
    for report in columns.iter().filter_map(Column::report) {
        for rule in &report.rules {
            if rows.iter().any(|r| r.rule.id == rule.id) {
                continue;
            }
            let verdicts = columns
                .iter()
                .map(|c| {
                    let rules = c.report().map_or(&[][..], |r| &r.rules[..]);
                    rules.iter().find(|r| r.id == rule.id).map(|r| r.verdict)
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
    for report in columns.iter().filter_map(Column::report) {
        if !seen.contains(&report.protocol.as_str()) {
            seen.push(&report.protocol);
        }
    }
    seen.join(", ")
}

/// When the newest run started (the matrix is as of then).
fn as_of(columns: &[Column]) -> String {
    let newest = columns
        .iter()
        .filter_map(Column::report)
        .map(|r| &r.started_at)
        .max();
    newest.map_or_else(String::new, |at| format!(" as of {at}"))
}

/// Where a cell links: the first frame of the column's run that broke the rule (its case, when
/// the run kept no transcript of it), else the rule's row in that run's report.
fn link(column: &Column, rule: &str) -> Option<String> {
    let Shown::Run {
        report,
        page: Some(page),
    } = &column.shown
    else {
        return None;
    };
    let broke = report.cases.iter().find_map(|case| {
        let v = case.violations.iter().find(|v| v.rule == rule)?;
        let anchor = super::html::case_anchor(&case.id);
        Some(match case.transcript.get(v.frame) {
            Some(_) => format!("{anchor}-f{}", v.frame),
            None => anchor,
        })
    });
    Some(format!(
        "{}#{}",
        esc(page),
        broke.unwrap_or_else(|| format!("rule-{}", esc(rule)))
    ))
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
         {} implementation(s){}; one column per saved run, one row per rule. A cell is the \
         rule's verdict in that run, linked to the frame that decided it where the run's own \
         report is beside it; — means the run did not have the rule, or there was no run.</p>\n</header>",
        esc(&protocols(columns)),
        columns.len(),
        esc(&as_of(columns))
    );
    let _ = writeln!(out, "<section id=\"matrix\">\n{}", filters());
    let _ = write!(
        out,
        "<table class=\"matrix\">\n<thead><tr><th>rule</th><th>level</th><th>statement</th>"
    );
    for c in columns {
        let _ = match &c.shown {
            Shown::Run { report, .. } => write!(
                out,
                "<th title=\"{target} ({started})\">{name}<div class=\"small muted\">{tally}</div></th>",
                target = esc(&report.target),
                started = esc(&report.started_at),
                name = esc(&c.name),
                tally = tally(report),
            ),
            Shown::Absent(why) => write!(
                out,
                "<th>{name}<div class=\"small muted\">not run: {why}</div></th>",
                name = esc(&c.name),
                why = esc(why),
            ),
        };
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
        for (v, c) in row.verdicts.iter().zip(columns) {
            let shown = v.map_or_else(|| "<span class=\"muted\">—</span>".to_owned(), badge);
            let _ = match (v, link(c, &r.id)) {
                (Some(_), Some(href)) => write!(out, "<td><a href=\"{href}\">{shown}</a></td>"),
                _ => write!(out, "<td>{shown}</td>"),
            };
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
        "# wireprobe compliance matrix: {}{}\n",
        protocols(columns),
        as_of(columns)
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
        let _ = match &c.shown {
            Shown::Run { report, .. } => write!(out, " {} |", tally(report)),
            Shown::Absent(why) => write!(out, " not run: {} |", cell(why)),
        };
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
