//! `wireprobe check`: recorded traffic judged by the protocol's checker.

use super::{protocol_named, usage, Failure};
use anyhow::{anyhow, Context, Result};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::time::{Instant, SystemTime};
use wireprobe::check::{self, CheckSummary};
use wireprobe::protocol::Protocol;
use wireprobe::report::{self, Gate, Report};
use wireprobe::results::CaseResult;
use wireprobe::rules::{self, Level};
use wireprobe::transcript::Direction;
use wireprobe::verdict::Verdict;

pub(super) fn check(
    id: &str,
    file: Option<std::path::PathBuf>,
    from: Option<&str>,
    cut: bool,
    reports: &[report::ReportTarget],
    strict: bool,
) -> Result<u8, Failure> {
    let p = protocol_named(id).map_err(usage)?;
    let bare_from = from.map(|f| {
        if f == "client" {
            Direction::Client
        } else {
            Direction::Server
        }
    });
    let started_at = SystemTime::now();
    let started = Instant::now();
    let shown = file
        .as_ref()
        .map_or("-".to_owned(), |f| f.display().to_string());
    let reader: Box<dyn BufRead> = match file.as_deref() {
        None => Box::new(std::io::stdin().lock()),
        Some(path) if path.as_os_str() == "-" => Box::new(std::io::stdin().lock()),
        Some(path) => Box::new(std::io::BufReader::with_capacity(
            256 * 1024,
            std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))
                .map_err(usage)?,
        )),
    };
    let mut printed = 0usize;
    let capture = check::Capture { bare_from, cut };
    let summary = check::check_stream(p, reader, capture, |f| {
        if printed < 50 {
            let from = if f.from == Direction::Client {
                "client"
            } else {
                "server"
            };
            let level = rules::find(p.rules(), f.violation.rule).map_or(Level::Info, |r| r.level);
            say!(
                "line {} ({from}) [{level}] {} {}",
                f.line,
                f.violation.rule,
                f.violation.message
            );
        }
        printed += 1;
    })
    .with_context(|| format!("reading {shown}"))
    .map_err(usage)?;
    if printed > 50 {
        say!("… and {} more findings", printed - 50);
    }
    for bad in summary.bad_lines.iter().take(20) {
        eprintln!("line {}: {}", bad.line, bad.reason);
    }
    // Rules left unjudged for one reason are named together.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for unjudged in &summary.unjudged {
        match reasons.iter_mut().find(|(why, _)| *why == unjudged.why) {
            Some((_, rules)) => rules.push(unjudged.rule),
            None => reasons.push((unjudged.why, vec![unjudged.rule])),
        }
    }
    for (why, rules) in reasons {
        eprintln!("not judged: {} ({why})", rules.join(", "));
    }
    let report = check_report(
        p,
        &shown,
        started_at,
        started.elapsed().as_millis() as u64,
        &summary,
    );
    let gate = Gate::evaluate(&report, strict, &BTreeSet::new());
    eprintln!(
        "{}: {} lines, {} events, {} findings, {} unreadable lines",
        shown,
        summary.lines,
        summary.events,
        summary.per_rule.values().sum::<u64>(),
        summary.bad_line_count
    );
    let write = report::WriteOptions {
        strict,
        transcripts: None,
    };
    report::write_all(&report, reports, write)
        .context("writing a report")
        .map_err(usage)?;
    if summary.bad_line_count > 0 && summary.events == 0 {
        return Err(usage(anyhow!("{shown} holds no transcript lines")));
    }
    Ok(gate.exit_code() as u8)
}

/// A check's findings as a report: one entry per rule, failed when the transcript breaks it.
fn check_report(
    p: &dyn Protocol,
    input: &str,
    started_at: SystemTime,
    duration_ms: u64,
    summary: &CheckSummary,
) -> Report {
    let results = p
        .rules()
        .iter()
        .map(|rule| {
            let count = summary.per_rule.get(rule.id).copied().unwrap_or(0);
            let first = summary
                .findings
                .iter()
                .find(|f| f.violation.rule == rule.id);
            let unjudged = summary.unjudged.iter().find(|u| u.rule == rule.id);
            let verdict = match (count, unjudged) {
                (0, Some(_)) => Verdict::Skip,
                (0, None) => Verdict::Pass,
                _ => Verdict::broken(rule.level),
            };
            let message = match (first, unjudged) {
                (Some(f), _) => format!(
                    "{count} violation(s); first at line {}: {}",
                    f.line, f.violation.message
                ),
                (None, Some(u)) => format!("not judged: {}", u.why),
                (None, None) => String::new(),
            };
            CaseResult {
                id: format!("check.{}", rule.id),
                title: rule.text.to_owned(),
                rules: vec![rule.id.to_owned()],
                level: rule.level,
                verdict,
                message,
                duration_ms: 0,
                judged: [(rule.id.to_owned(), verdict)].into(),
                violations: Vec::new(),
                transcript: Vec::new(),
                steps: Vec::new(),
                stopped_at: None,
                exercised: Vec::new(),
            }
        })
        .collect();
    Report::new(p.id(), input, started_at, duration_ms, p.rules(), results)
}
