//! The human summary on the console.

use super::{Gate, Report};
use crate::suite::runner::CaseResult;
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
    line
}

/// The closing summary.
pub fn summary(report: &Report, gate: &Gate) -> String {
    let s = &report.summary;
    let mut out = format!(
        "\n{} against {}: {} cases — {} pass, {} fail, {} warn, {} info, {} skip, {} error ({} ms)\n",
        report.protocol, report.target, s.total, s.pass, s.fail, s.warn, s.info, s.skip, s.error, report.duration_ms
    );
    if !gate.new_failures.is_empty() {
        let _ = writeln!(out, "failing: {}", gate.new_failures.join(", "));
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
