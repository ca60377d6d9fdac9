//! SARIF 2.1.0 (via `serde-sarif`), for code-scanning UIs: the whole rule catalogue as the
//! tool's rules (text, help with the spec section it cites, level), one result per rule the
//! run found broken (`error` for a must, `warning` for a should) naming the cases that saw it,
//! and the cases the harness could not complete as tool notifications.

use super::{Report, RuleReport};
use crate::rules::Level;
use crate::verdict::Verdict;
use serde_json::{json, Value};
use serde_sarif::sarif::{
    Invocation, LogicalLocation, Message, MultiformatMessageString, Notification, PropertyBag,
    ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    Tool, ToolComponent,
};
use std::collections::BTreeMap;

/// Where the SARIF 2.1.0 schema is published (the `$schema` of every log).
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Most case names a result lists in its message (the logical locations hold them all).
const MAX_NAMED_CASES: usize = 5;

pub fn render(report: &Report, strict: bool) -> String {
    let rules: Vec<ReportingDescriptor> = report.rules.iter().map(descriptor).collect();
    let results: Vec<SarifResult> = report
        .rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.verdict.is_broken())
        .map(|(index, rule)| result(report, index, rule, strict))
        .collect();
    let notifications: Vec<Notification> = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Error)
        .map(|c| {
            Notification::builder()
                .level(json!("error"))
                .message(text(format!("{}: {}", c.id, c.message)))
                .build()
        })
        .collect();
    let invocation = Invocation::builder()
        .execution_successful(notifications.is_empty())
        .tool_execution_notifications(notifications)
        .start_time_utc(report.started_at.clone())
        .build();
    let driver = ToolComponent::builder()
        .name("wireprobe")
        .version(report.wireprobe.clone())
        .semantic_version(report.wireprobe.clone())
        .rules(rules)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .properties(bag(BTreeMap::from([
            ("protocol".to_owned(), json!(report.protocol)),
            ("target".to_owned(), json!(report.target)),
            ("summary".to_owned(), json!(report.summary)),
        ])))
        .build();
    let log = Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    serde_json::to_string_pretty(&log)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render SARIF: {e}\"}}\n"))
}

/// The level a broken rule's results take.
fn level(level: Level) -> &'static str {
    match level {
        Level::Must => "error",
        Level::Should => "warning",
        _ => "note",
    }
}

fn text(s: impl Into<String>) -> Message {
    Message::builder().text(s.into()).build()
}

fn multiformat(s: impl Into<String>) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s.into()).build()
}

fn bag(values: BTreeMap<String, Value>) -> PropertyBag {
    PropertyBag::builder().additional_properties(values).build()
}

/// A rule of the catalogue, as code-scanning UIs show it.
fn descriptor(rule: &RuleReport) -> ReportingDescriptor {
    let short = rule
        .text
        .split_once(". ")
        .map_or(rule.text.as_str(), |(first, _)| first);
    let mut descriptor = ReportingDescriptor::builder()
        .id(rule.id.clone())
        .name(rule.id.clone())
        .short_description(multiformat(short))
        .full_description(multiformat(rule.text.clone()))
        .help(multiformat(format!(
            "{} ({} rule; source: {})",
            rule.text, rule.level, rule.source
        )))
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level(rule.level)))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(vec![rule.level.to_string()])
                .additional_properties(BTreeMap::from([
                    ("source".to_owned(), json!(rule.source)),
                    ("level".to_owned(), json!(rule.level)),
                ]))
                .build(),
        )
        .build();
    descriptor.help_uri = rule.url.clone();
    descriptor
}

/// The one result of a broken rule: what broke it and in which cases.
fn result(report: &Report, index: usize, rule: &RuleReport, strict: bool) -> SarifResult {
    let broken_in: Vec<&super::CaseReport> = report
        .cases
        .iter()
        .filter(|c| {
            c.judged.get(&rule.id).is_some_and(|v| v.is_broken())
                || c.violations.iter().any(|v| v.rule == rule.id)
        })
        .collect();
    let first = broken_in.first().map(|c| {
        let message = c
            .violations
            .iter()
            .find(|v| v.rule == rule.id)
            .map_or(c.message.as_str(), |v| v.message.as_str());
        let named = format!("{}: ", rule.id);
        message.strip_prefix(&named).unwrap_or(message).to_owned()
    });
    let names: Vec<&str> = broken_in
        .iter()
        .take(MAX_NAMED_CASES)
        .map(|c| c.id.as_str())
        .collect();
    let more = broken_in.len().saturating_sub(MAX_NAMED_CASES);
    let message = format!(
        "{} broken ({}): {}.{} Cases: {}{}.",
        rule.id,
        rule.verdict,
        first.unwrap_or_default(),
        if strict || rule.verdict == Verdict::Fail {
            ""
        } else {
            " (a should: it fails the run only with --strict)"
        },
        names.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    let locations: Vec<serde_sarif::sarif::Location> = broken_in
        .iter()
        .map(|c| {
            serde_sarif::sarif::Location::builder()
                .logical_locations(vec![LogicalLocation::builder()
                    .name(c.id.clone())
                    .fully_qualified_name(format!("{}/{}", report.protocol, c.id))
                    .kind("test")
                    .build()])
                .message(text(c.title.clone()))
                .build()
        })
        .collect();
    SarifResult::builder()
        .rule_id(rule.id.clone())
        .rule_index(index as i64)
        .level(match rule.level {
            Level::Must => ResultLevel::Error,
            Level::Should => ResultLevel::Warning,
            _ => ResultLevel::Note,
        })
        .message(text(message))
        .locations(locations)
        .build()
}
