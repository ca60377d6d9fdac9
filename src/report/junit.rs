//! JUnit XML: one testcase per case, named by its id and title, rule ids and sources as
//! properties, the failure's message (what was expected, what arrived) in its body, and the
//! transcript in system-out when the report keeps it. `warn` passes unless `--strict`; `info`
//! passes (it records, it does not judge) with its verdict as a property; `skip` is skipped.

use super::Report;
use crate::verdict::Verdict;
use quick_junit::{
    NonSuccessKind, Property, Report as JReport, TestCase, TestCaseStatus, TestSuite,
};
use std::time::Duration;

pub fn render(report: &Report, strict: bool) -> String {
    let mut suite = TestSuite::new(report.protocol.as_str());
    suite.add_property(Property::new("target", report.target.as_str()));
    suite.add_property(Property::new("wireprobe", report.wireprobe.as_str()));
    for case in &report.cases {
        let mut status = match case.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Warn if !strict => TestCaseStatus::success(),
            Verdict::Fail | Verdict::Warn => TestCaseStatus::non_success(NonSuccessKind::Failure),
            Verdict::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
            Verdict::Info => TestCaseStatus::success(),
            Verdict::Skip => TestCaseStatus::skipped(),
        };
        if !case.message.is_empty() {
            let headline: String = case.message.chars().take(200).collect();
            status.set_message(format!("{}: {headline}", case.verdict));
            if matches!(status, TestCaseStatus::NonSuccess { .. }) {
                status.set_description(case.message.as_str());
            }
        }
        let mut tc = TestCase::new(format!("{}: {}", case.id, case.title), status);
        if case.verdict == Verdict::Warn && !strict {
            // Passing under non-strict rules, but the finding must stay visible.
            tc.set_system_err(format!("warn: {}", case.message));
        }
        tc.set_classname(format!("wireprobe.{}", report.protocol));
        tc.set_time(Duration::from_millis(case.duration_ms));
        tc.add_property(Property::new("verdict", case.verdict.to_string()));
        tc.add_property(Property::new("level", case.level.to_string()));
        for rule_id in &case.rules {
            let source = report
                .rules
                .iter()
                .find(|r| &r.id == rule_id)
                .map_or("", |r| r.source.as_str());
            tc.add_property(Property::new(format!("rule:{rule_id}"), source));
        }
        if !case.transcript.is_empty() {
            let transcript: Vec<String> = case
                .transcript
                .iter()
                .map(|e| serde_json::to_string(e).unwrap_or_default())
                .collect();
            tc.set_system_out(transcript.join("\n"));
        }
        suite.add_test_case(tc);
    }
    let mut junit = JReport::new("wireprobe");
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot render JUnit: {e} -->\n"))
}
