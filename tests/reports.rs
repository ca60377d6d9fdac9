//! Report formats, pinned by snapshots: the JSON schema is a contract CI pipelines read.

use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};
use wireprobe::judge::FrameViolation;
use wireprobe::report::{self, Format, Gate, Report};
use wireprobe::rules::{Level, Rule};
use wireprobe::suite::runner::CaseResult;
use wireprobe::transcript::{Direction, Entry};
use wireprobe::verdict::Verdict;

const RULES: &[Rule] = &[
    Rule {
        id: "T-SEQ-001",
        level: Level::Must,
        text: "seq starts at 1",
        source: "spec.txt §Sequencing",
    },
    Rule {
        id: "T-PING-002",
        level: Level::Should,
        text: "PONG echoes the nonce",
        source: "spec.txt §Catalogue",
    },
    Rule {
        id: "T-AUTH-001",
        level: Level::Must,
        text: "no token, no entry",
        source: "spec.txt §Auth",
    },
];

fn result(id: &str, rule: &str, level: Level, verdict: Verdict, message: &str) -> CaseResult {
    CaseResult {
        id: id.into(),
        title: format!("title of {id}"),
        rules: vec![rule.into()],
        level,
        verdict,
        message: message.into(),
        duration_ms: 12,
        judged: [(rule.to_owned(), verdict)].into(),
        violations: Vec::new(),
        transcript: vec![
            Entry {
                from: Direction::Client,
                at_ms: 0,
                frame: json!({"type": "PING", "payload": {"nonce": "a"}}),
            },
            Entry {
                from: Direction::Server,
                at_ms: 3,
                frame: json!({"type": "PONG", "payload": {"nonce": "b"}}),
            },
        ],
    }
}

fn sample() -> Report {
    let results = vec![
        result(
            "t.seq.start",
            "T-SEQ-001",
            Level::Must,
            Verdict::Fail,
            "T-SEQ-001: the session's first seq is \"0\", not \"1\"",
        ),
        result(
            "t.ping.nonce",
            "T-PING-002",
            Level::Should,
            Verdict::Warn,
            "rejected for the wrong <reason> & more",
        ),
        result(
            "t.auth.none",
            "T-AUTH-001",
            Level::Must,
            Verdict::Skip,
            "needs --token or --jwt-secret",
        ),
    ];
    // The nonce case's transcript also shows the frame that broke its rule.
    let mut results = results;
    results[1].violations.push(FrameViolation {
        rule: "T-PING-002",
        level: Level::Should,
        message: "PONG nonce \"b\" does not echo \"a\"".into(),
        frame: 1,
    });
    let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000);
    Report::new("test", "ws://127.0.0.1:9/", started, 34, RULES, results)
}

#[test]
fn json_report_schema() {
    insta::assert_snapshot!(report::render(&sample(), Format::Json, false));
}

#[test]
fn junit_report() {
    insta::assert_snapshot!(report::render(&sample(), Format::Junit, false));
}

#[test]
fn junit_strict_turns_warn_into_failure() {
    let xml = report::render(&sample(), Format::Junit, true);
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(report::render(&sample(), Format::Markdown, false));
}

#[test]
fn gate_exit_codes_and_stale_baseline() {
    let r = sample();
    let none = BTreeSet::new();
    let gate = Gate::evaluate(&r, false, &none);
    assert_eq!(
        (gate.new_failures.clone(), gate.exit_code()),
        (vec!["t.seq.start".to_string()], 1)
    );
    let strict = Gate::evaluate(&r, true, &none);
    assert_eq!(strict.new_failures.len(), 2);
    let known: BTreeSet<String> = ["t.seq.start".to_string()].into();
    assert_eq!(Gate::evaluate(&r, false, &known).exit_code(), 0);
    // A baseline entry for a case that passes is stale, and stale fails the run.
    let known: BTreeSet<String> = ["t.seq.start".to_string(), "t.ping.nonce".to_string()].into();
    let gate = Gate::evaluate(&r, false, &known);
    assert_eq!(gate.stale, vec!["t.ping.nonce".to_string()]);
    assert_eq!(gate.exit_code(), 1);
    // A skipped case is not evidence either way.
    let known: BTreeSet<String> = ["t.seq.start".to_string(), "t.auth.none".to_string()].into();
    assert_eq!(Gate::evaluate(&r, false, &known).exit_code(), 0);
}

#[test]
fn report_target_parsing() {
    let t: report::ReportTarget = "junit=out/x.xml".parse().expect("parses");
    assert_eq!(t.format, Format::Junit);
    assert!("json=-"
        .parse::<report::ReportTarget>()
        .expect("parses")
        .path
        .is_none());
    assert!("pdf=x".parse::<report::ReportTarget>().is_err());
    assert!("json".parse::<report::ReportTarget>().is_err());
}
