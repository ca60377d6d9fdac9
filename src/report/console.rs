//! The human summary on the console.

use super::{Gate, Report};
use crate::results::CaseResult;
use crate::rules::Level;
use crate::verdict::Verdict;
use std::fmt::Write;

/// One line for a finished case (printed as cases complete).
pub fn case_line(r: &CaseResult) -> String {
    let mut line = format!(
        "{:>5}  {}  ({} ms)",
        r.verdict.to_string(),
        r.id,
        r.duration_ms
    );
    if r.verdict != Verdict::Pass && !r.message.is_empty() {
        let _ = write!(line, "\n       {}", r.message);
    }
    // What the case saw broken under other rules counts for those rules; say so here too,
    // one line per rule.
    let mut others: Vec<(&str, Level, &str, usize)> = Vec::new();
    for v in r
        .violations
        .iter()
        .filter(|v| v.level > Level::Info && !r.rules.iter().any(|own| *own == v.rule))
    {
        match others.iter_mut().find(|(rule, ..)| *rule == v.rule) {
            Some((.., count)) => *count += 1,
            None => others.push((&v.rule, v.level, &v.message, 1)),
        }
    }
    for (rule, level, message, count) in others.iter().take(MAX_OTHERS_SHOWN) {
        let times = if *count > 1 {
            format!(", {count} times")
        } else {
            String::new()
        };
        let _ = write!(line, "\n       also saw {rule} ({level}{times}): {message}");
    }
    if others.len() > MAX_OTHERS_SHOWN {
        let _ = write!(
            line,
            "\n       … and {} more rules",
            others.len() - MAX_OTHERS_SHOWN
        );
    }
    line
}

/// Violations of other rules listed under one case line.
const MAX_OTHERS_SHOWN: usize = 3;

/// The closing summary.
pub fn summary(report: &Report, gate: &Gate) -> String {
    let s = &report.summary;
    let mut out = format!(
        "\n{} against {}: {} cases — {} pass, {} fail, {} warn, {} info, {} skip, {} error ({} ms)\n",
        report.protocol, report.target, s.total, s.pass, s.fail, s.warn, s.info, s.skip, s.error, report.duration_ms
    );
    // The rules table counts what every case's transcript showed, a passing case's too: say
    // so here, or a run whose cases all passed reads clean while rules warn.
    let broken = |v: Verdict| report.rules.iter().filter(move |r| r.verdict == v);
    let (fails, warns) = (broken(Verdict::Fail).count(), broken(Verdict::Warn).count());
    if fails + warns > 0 {
        let _ = writeln!(
            out,
            "rules: {fails} fail, {warns} warn of {} (the rules table)",
            report.rules.len()
        );
    }
    if !gate.new_failures.is_empty() {
        let _ = writeln!(out, "failing: {}", gate.new_failures.join(", "));
    }
    let named = |id: &str| {
        gate.new_failures
            .iter()
            .any(|f| f.split(' ').next() == Some(id))
    };
    let warned: Vec<String> = broken(Verdict::Warn)
        .filter(|r| !named(&r.id))
        .map(|r| report.rule_seen(&r.id))
        .collect();
    if !warned.is_empty() {
        let _ = writeln!(out, "warned: {}", warned.join(", "));
    }
    if !gate.stale.is_empty() {
        let _ = writeln!(
            out,
            "stale --known-failing entries (these now pass): {}",
            gate.stale.join(", ")
        );
    }
    out
}
