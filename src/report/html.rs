//! A self-contained HTML compliance report: one file, inline CSS and a little JS, no network.
//!
//! Top: what was run and the overall result. Then the compliance table (every rule, failing
//! musts first, grouped by the spec section it cites, filterable by verdict and level), then
//! every case: its steps with the one it stopped at marked, what it expected and what came,
//! and its transcript with each violation pinned under the frame that broke it.

use super::{CaseReport, Report, RuleReport};
use crate::judge::FrameViolation;
use crate::rules::Level;
use crate::transcript::{Direction, Entry, Observation, Record};
use crate::verdict::Verdict;
use base64::Engine as _;
use serde_json::Value;
use std::fmt::Write;

const STYLE: &str = include_str!("html.css");
const SCRIPT: &str = include_str!("html.js");
/// A frame whose pretty JSON is longer than this is folded behind its one-line summary.
const FOLD_AT: usize = 600;
/// Bytes of a binary frame shown as hex.
const HEX_HEAD: usize = 32;

/// `s` with the five characters HTML treats specially escaped (text and attribute values).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The element id of a case's section (ids may hold `@` and dots; HTML5 allows both).
pub(super) fn case_anchor(id: &str) -> String {
    format!("case-{}", esc(id))
}

pub(crate) fn badge(v: Verdict) -> String {
    format!("<span class=\"badge v-{v}\">{v}</span>")
}

/// The start of a standalone page: doctype, title, inline style.
pub(crate) fn page_head(title: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        esc(title)
    )
}

/// The end of a standalone page, with the filtering script.
pub(crate) fn page_foot() -> String {
    format!("<script>\n{SCRIPT}</script>\n</body>\n</html>\n")
}

/// The verdict and level selects the script filters `.filterable` rows and cases by.
pub(crate) fn filters() -> &'static str {
    "<div class=\"filters\">\
     <label>verdict <select id=\"filter-verdict\"><option value=\"\">all</option>\
     <option>fail</option><option>error</option><option>warn</option><option>pass</option>\
     <option>info</option><option>skip</option></select></label> \
     <label>level <select id=\"filter-level\"><option value=\"\">all</option>\
     <option>must</option><option>should</option><option>may</option><option>info</option>\
     </select></label></div>"
}

pub fn render(report: &Report, strict: bool) -> String {
    let mut out = page_head(&format!(
        "wireprobe {} report: {}",
        report.protocol, report.target
    ));
    header(&mut out, report, strict);
    compliance(&mut out, report);
    cases(&mut out, report);
    let _ = writeln!(
        out,
        "<footer>wireprobe {} · written {}</footer>",
        esc(&report.wireprobe),
        esc(&report.started_at)
    );
    out.push_str(&page_foot());
    out
}

/// What the run's exit code is and why (before any `--known-failing` baseline).
fn overall(report: &Report, strict: bool) -> (bool, String) {
    let failing = report
        .cases
        .iter()
        .filter(|c| c.verdict.is_failing(strict))
        .count();
    let s = &report.summary;
    if failing > 0 {
        return (
            false,
            format!(
                "FAIL: exit 1. {failing} case(s) failed or could not be judged (error){}.",
                if strict {
                    ", warnings included (--strict)"
                } else {
                    ""
                }
            ),
        );
    }
    let mut text = "PASS: exit 0. No case failed.".to_owned();
    if s.warn > 0 {
        let _ = write!(
            text,
            " {} warning(s) on should rules do not fail the run; --strict makes them fail.",
            s.warn
        );
    }
    (true, text)
}

fn header(out: &mut String, report: &Report, strict: bool) {
    let s = &report.summary;
    let (passed, result) = overall(report, strict);
    let _ = writeln!(
        out,
        "<header>\n<h1>wireprobe report: {}</h1>",
        esc(&report.protocol)
    );
    let _ = writeln!(out, "<dl class=\"facts\">");
    let facts = [
        ("target", report.target.clone()),
        (
            "protocol",
            match &report.spec {
                Some(spec) => format!("{} ({spec})", report.protocol),
                None => report.protocol.clone(),
            },
        ),
        ("wireprobe", report.wireprobe.clone()),
        ("started", report.started_at.clone()),
        (
            "duration",
            format!("{:.1} s", report.duration_ms as f64 / 1000.0),
        ),
    ];
    for (k, v) in facts {
        let _ = writeln!(out, "<dt>{k}</dt><dd id=\"fact-{k}\">{}</dd>", esc(&v));
    }
    let _ = writeln!(out, "</dl>");
    let _ = writeln!(out, "<div class=\"counts\" id=\"counts\">");
    for (name, n) in [
        ("total", s.total),
        ("pass", s.pass),
        ("fail", s.fail),
        ("warn", s.warn),
        ("info", s.info),
        ("skip", s.skip),
        ("error", s.error),
    ] {
        let _ = writeln!(
            out,
            "<div class=\"count v-{name}\" id=\"count-{name}\"><b>{n}</b><span>{name}</span></div>"
        );
    }
    let _ = writeln!(out, "</div>");
    let _ = writeln!(
        out,
        "<p id=\"result\" class=\"result {}\">{}</p>\n</header>",
        if passed { "ok" } else { "bad" },
        esc(&result)
    );
}

/// The section a rule's citation names (the whole citation when it names none).
fn section(source: &str) -> &str {
    source.rsplit_once(" §").map_or(source, |(_, s)| s)
}

/// Rules in reading order: failing musts, then every other broken or erroring rule, then the
/// rest; each band grouped by the section it cites (in catalogue order), then by id.
fn ordered_rules(rules: &[RuleReport]) -> Vec<&RuleReport> {
    let mut first_seen: Vec<&str> = Vec::new();
    for r in rules {
        let s = section(&r.source);
        if !first_seen.contains(&s) {
            first_seen.push(s);
        }
    }
    let band = |r: &RuleReport| match (r.verdict, r.level) {
        (Verdict::Fail, Level::Must) => 0,
        (Verdict::Fail | Verdict::Error | Verdict::Warn, _) => 1,
        _ => 2,
    };
    let mut ordered: Vec<&RuleReport> = rules.iter().collect();
    ordered.sort_by_key(|r| {
        let s = section(&r.source);
        (
            band(r),
            first_seen.iter().position(|x| *x == s),
            r.id.clone(),
        )
    });
    ordered
}

fn compliance(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "<section id=\"compliance\">\n<h2>Compliance by rule</h2>\n{}",
        filters()
    );
    let _ = writeln!(
        out,
        "<table class=\"rules\">\n<thead><tr><th>verdict</th><th>rule</th><th>level</th>\
         <th>spec section</th><th>statement</th><th>cases</th></tr></thead>\n<tbody>"
    );
    for r in ordered_rules(&report.rules) {
        // The spec's title is in the header; the cell names the section, the whole
        // citation is its tooltip.
        let section = match &r.url {
            Some(url) => format!("<a href=\"{}\">§{}</a>", esc(url), esc(section(&r.source))),
            None => format!("§{}", esc(section(&r.source))),
        };
        let cases = rule_cases(report, r);
        let _ = writeln!(
            out,
            "<tr class=\"filterable\" data-verdict=\"{v}\" data-level=\"{l}\" id=\"rule-{id}\">\
             <td>{badge}</td><td class=\"mono nowrap\">{id}</td><td>{l}</td>\
             <td title=\"{source}\">{section}</td>\
             <td>{text}{quote}</td><td class=\"mono small\">{cases}</td></tr>",
            v = r.verdict,
            l = r.level,
            id = esc(&r.id),
            badge = badge(r.verdict),
            source = esc(&r.source),
            text = esc(&r.text),
            quote = spec_words(&report.protocol, &r.id),
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
}

/// The spec's own words a rule rests on, under our statement of it (nothing for a rule the
/// catalogue no longer has: a saved report renders with today's catalogue).
fn spec_words(protocol: &str, rule: &str) -> String {
    let Some(rule) =
        crate::protocol::get(protocol).and_then(|p| crate::rules::find(p.rules(), rule))
    else {
        return String::new();
    };
    rule.excerpts()
        .map(|excerpt| format!("<blockquote class=\"spec\">{}</blockquote>", esc(excerpt)))
        .collect()
}

/// The cases written for a rule, linked; the cases that only saw it broken in passing folded
/// behind their count (a rule every frame breaks would otherwise list the whole suite).
fn rule_cases(report: &Report, rule: &RuleReport) -> String {
    let link = |c: &String| format!("<a href=\"#{}\">{}</a>", case_anchor(c), esc(c));
    let written_for = |id: &String| {
        report
            .cases
            .iter()
            .any(|c| &c.id == id && c.rules.contains(&rule.id))
    };
    let (own, seen): (Vec<&String>, Vec<&String>) = rule.cases.iter().partition(|c| written_for(c));
    let mut html: Vec<String> = own.into_iter().map(link).collect();
    if !seen.is_empty() {
        html.push(format!(
            "<details class=\"seen\"><summary>seen broken in {} other case(s)</summary>{}</details>",
            seen.len(),
            seen.into_iter().map(link).collect::<Vec<_>>().join(" ")
        ));
    }
    html.join(" ")
}

fn cases(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "<section id=\"cases\">\n<h2>Cases</h2>\n<p class=\"small\">\
         <button type=\"button\" id=\"open-problems\">open every failing case</button> \
         <button type=\"button\" id=\"close-all\">close all</button></p>"
    );
    let mut ordered: Vec<&CaseReport> = report.cases.iter().collect();
    // Problems first, each band in suite order.
    ordered.sort_by_key(|c| std::cmp::Reverse(c.verdict.severity().min(3)));
    for case in ordered {
        case_section(out, report, case);
    }
    let _ = writeln!(out, "</section>");
}

fn case_section(out: &mut String, report: &Report, case: &CaseReport) {
    let rules: Vec<String> = case
        .rules
        .iter()
        .map(|r| format!("<a class=\"mono\" href=\"#rule-{0}\">{0}</a>", esc(r)))
        .collect();
    let _ = writeln!(
        out,
        "<details class=\"case filterable\" id=\"{anchor}\" data-verdict=\"{v}\" data-level=\"{l}\">\
         <summary>{badge} <span class=\"mono\">{id}</span> {title} \
         <span class=\"small muted\">{ms} ms</span></summary>\n<div class=\"body\">",
        anchor = case_anchor(&case.id),
        v = case.verdict,
        l = case.level,
        badge = badge(case.verdict),
        id = esc(&case.id),
        title = esc(&case.title),
        ms = case.duration_ms,
    );
    let _ = writeln!(
        out,
        "<p class=\"small\">rules: {} · level {}</p>",
        rules.join(", "),
        case.level
    );
    // A case that stopped at a step shows its message there, beside the step.
    if !case.message.is_empty() && case.stopped_at.is_none() {
        let _ = writeln!(
            out,
            "<p class=\"message v-{}\">{}</p>",
            case.verdict,
            esc(&case.message)
        );
    }
    steps(out, case);
    transcript(out, report, case);
    let _ = writeln!(out, "</div>\n</details>");
}

/// The steps, with the one the case stopped at beside what arrived instead.
fn steps(out: &mut String, case: &CaseReport) {
    if case.steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h3>Steps</h3>\n<ol class=\"steps\">");
    for (i, step) in case.steps.iter().enumerate() {
        let state = match case.stopped_at {
            Some(at) if at == i => "stopped",
            Some(at) if i > at => "unreached",
            _ => "done",
        };
        let _ = write!(out, "<li class=\"{state}\"><code>{}</code>", esc(step));
        if state == "stopped" && !case.message.is_empty() {
            let _ = write!(
                out,
                "<div class=\"mismatch\"><div><b>expected</b> <code>{}</code></div>\
                 <div><b>received</b> <code class=\"got\">{}</code></div></div>",
                esc(step),
                esc(&case.message)
            );
        }
        let _ = writeln!(out, "</li>");
    }
    let _ = writeln!(out, "</ol>");
}

fn transcript(out: &mut String, report: &Report, case: &CaseReport) {
    if case.transcript.is_empty() {
        if !case.violations.is_empty() {
            let _ = writeln!(
                out,
                "<h3>Violations</h3>\n{}",
                violations(report, &case.violations)
            );
        }
        return;
    }
    let _ = writeln!(
        out,
        "<h3>Transcript</h3>\n<table class=\"transcript\">\n<thead><tr><th>#</th><th></th>\
         <th>ms</th><th>frame</th></tr></thead>\n<tbody>"
    );
    for (i, entry) in case.transcript.iter().enumerate() {
        let broken: Vec<_> = case.violations.iter().filter(|v| v.frame == i).collect();
        let (arrow, side) = match entry.from {
            Direction::Client => ("→", "client"),
            Direction::Server => ("←", "server"),
        };
        let _ = write!(
            out,
            "<tr class=\"{side}{}\" id=\"{}-f{i}\"><td class=\"muted\">{i}</td>\
             <td title=\"{side}\">{arrow}</td><td class=\"muted\">{}</td><td>{}",
            if broken.is_empty() { "" } else { " violated" },
            case_anchor(&case.id),
            entry.at_ms,
            frame(entry)
        );
        if !broken.is_empty() {
            out.push_str(&violations(report, broken));
        }
        let _ = writeln!(out, "</td></tr>");
    }
    let _ = writeln!(out, "</tbody>\n</table>");
}

/// A list of violations, each with its rule, level, message and the section the rule cites.
fn violations<'a>(report: &Report, found: impl IntoIterator<Item = &'a FrameViolation>) -> String {
    let items: String = found
        .into_iter()
        .map(|v| {
            let source = report
                .rules
                .iter()
                .find(|r| r.id == v.rule)
                .map(|r| format!(" <span class=\"muted small\">({})</span>", esc(&r.source)))
                .unwrap_or_default();
            format!(
                "<li><b class=\"mono\">{}</b> {}: {}{source}</li>",
                esc(&v.rule),
                v.level,
                esc(&v.message)
            )
        })
        .collect();
    format!("<ul class=\"violations\">{items}</ul>")
}

/// One entry: an event as JSON (folded when long), an observation in words, binary as its
/// length and a hex head.
fn frame(entry: &Entry) -> String {
    let observed = match &entry.record {
        Record::Event { event, sse } => {
            let pretty = serde_json::to_string_pretty(event).unwrap_or_default();
            let sse = sse.as_ref().map_or(String::new(), |m| {
                format!(
                    "<span class=\"marker\">sse</span> <code>{}</code>",
                    esc(&m.as_value().to_string())
                )
            });
            return if pretty.len() > FOLD_AT {
                format!(
                    "{sse}<details class=\"frame\"><summary><code>{}</code></summary><pre>{}</pre></details>",
                    esc(&crate::show::event(event)),
                    esc(&pretty)
                )
            } else {
                format!("{sse}<pre>{}</pre>", esc(&pretty))
            };
        }
        Record::Observed(o) => o,
    };
    let marker = |name: &str, shown: &str| {
        format!(
            "<span class=\"marker\">{}</span> <code>{}</code>",
            esc(name),
            esc(shown)
        )
    };
    match observed {
        Observation::Binary { base64: b, len } | Observation::InvalidUtf8 { base64: b, len } => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b)
                .unwrap_or_default();
            let hex: Vec<String> = bytes
                .iter()
                .take(HEX_HEAD)
                .map(|b| format!("{b:02x}"))
                .collect();
            let what = match observed {
                Observation::Binary { .. } => "binary",
                _ => "text that is not UTF-8",
            };
            format!(
                "<span class=\"marker\">{what}, {len} bytes</span> <code>{}{}</code>",
                hex.join(" "),
                if *len > HEX_HEAD { " …" } else { "" }
            )
        }
        Observation::Text { text, .. } => marker("text", text),
        Observation::Post { path, body, .. } => {
            marker(&format!("POST {path}"), &body.as_value().to_string())
        }
        Observation::Http(answer) => {
            marker(&answer.describe(), &answer.body.as_value().to_string())
        }
        other => {
            let value = serde_json::to_value(other).unwrap_or_default();
            let (name, detail) = match value {
                Value::Object(m) => m.into_iter().next().unwrap_or_default(),
                v => (v.as_str().unwrap_or_default().to_owned(), Value::Null),
            };
            let shown = detail
                .as_str()
                .map_or_else(|| detail.to_string(), str::to_owned);
            marker(&name, &shown)
        }
    }
}
