//! Report formats, pinned by snapshots: the JSON schema is a contract CI pipelines read.

use crate::common;

use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};
use wireprobe::judge::FrameViolation;
use wireprobe::report::{self, Format, Gate, Report};
use wireprobe::results::CaseResult;
use wireprobe::rules::{Binds, Level, Rule};
use wireprobe::transcript::{Direction, Entry, Observation, Record};
use wireprobe::verdict::Verdict;

const RULES: &[Rule] = &[
    Rule {
        id: "T-SEQ-001",
        level: Level::Must,
        text: "seq starts at 1",
        quote: "",
        // A real spec's key: reports cite it by public title, version and section.
        source: "001_1704fd641f081645.txt §Sequencing and Replay",
        binds: Binds::Either,
    },
    Rule {
        id: "T-PING-002",
        level: Level::Should,
        text: "PONG echoes the nonce",
        quote: "",
        source: "spec.txt §Catalogue",
        binds: Binds::Either,
    },
    Rule {
        id: "T-AUTH-001",
        level: Level::Must,
        text: "no token, no entry",
        quote: "",
        source: "spec.txt §Auth",
        binds: Binds::Either,
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
                record: Record::Event {
                    event: json!({"type": "PING", "payload": {"nonce": "a"}}).into(),
                    sse: None,
                },
            },
            Entry {
                from: Direction::Server,
                at_ms: 3,
                record: Record::Event {
                    event: json!({"type": "PONG", "payload": {"nonce": "b"}}).into(),
                    sse: None,
                },
            },
            // What the transport observed has its own field, never the target's JSON.
            Entry {
                from: Direction::Server,
                at_ms: 4,
                record: Record::Observed(Observation::Close {
                    code: Some(1000),
                    reason: "done".into(),
                }),
            },
        ],
        steps: vec![
            r#"send {"type":"PING","payload":{"nonce":"a"}}"#.into(),
            r#"expect {"type":"PONG","payload":{"nonce":"a"}} within 2000 ms"#.into(),
        ],
        stopped_at: matches!(verdict, Verdict::Fail | Verdict::Warn).then_some(1),
        exercised: Vec::new(),
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
        rule: "T-PING-002".into(),
        level: Level::Should,
        message: "PONG nonce \"b\" does not echo \"a\"".into(),
        frame: 1,
        side: None,
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
fn sarif_report() {
    insta::assert_snapshot!(report::render(&sample(), Format::Sarif, false));
}

/// The SARIF 2.1.0 schema (OASIS, as `serde-sarif` ships it), vendored so the test runs
/// offline. One edit: the two `language` patterns read `^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`,
/// whose stray `]` is not a regex the validator compiles, so they are
/// `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$` here (wireprobe writes no `language`).
fn sarif_schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sarif-schema-2.1.0.json"
    );
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("schema file")).expect("JSON schema");
    jsonschema::draft7::new(&schema).expect("the SARIF schema compiles")
}

fn assert_valid_sarif(text: &str) -> serde_json::Value {
    let log: serde_json::Value = serde_json::from_str(text).expect("SARIF is JSON");
    let errors: Vec<String> = sarif_schema()
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF breaks the 2.1.0 schema: {errors:#?}"
    );
    log
}

/// One result per broken rule (error for a must, warning for a should), every rule of the
/// catalogue as a tool rule with its source, the harness's errors as notifications; valid
/// against the SARIF 2.1.0 schema. A schema that accepted anything would let a broken log
/// through: the same validator rejects a log without `version`.
#[test]
fn sarif_report_follows_the_2_1_0_schema() {
    let log = assert_valid_sarif(&report::render(&sample(), Format::Sarif, false));
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), RULES.len());
    assert!(rules[0]["help"]["text"].as_str().is_some_and(|h| h
        .contains("Human-Agent Interaction Protocol (HAIP) v1.1.2 §Sequencing and Replay")
        && !h.contains(".txt")));
    assert_eq!(rules[0]["helpUri"], "https://haiprotocol.com/");
    let results: Vec<(&str, &str)> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap_or(""),
                r["level"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(results.contains(&("T-SEQ-001", "error")), "{results:?}");
    let mut broken = log.clone();
    broken.as_object_mut().map(|o| o.remove("version"));
    assert!(!sarif_schema().is_valid(&broken));
}

/// A real run's SARIF (the UAE executor with a fault that breaks a must and one that breaks a
/// should) holds to the schema too, with a result for each broken rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sarif_of_a_real_run_follows_the_schema() {
    let target = common::Target {
        id: "uae",
        role: Some("executor"),
        transport: None,
    };
    let results =
        common::run_reference_as(target, &["two-results", "unknown-tool-ok"], &[], None).await;
    let p = wireprobe::protocol::get("uae").expect("uae is registered");
    let report = Report::new("uae", "builtin", SystemTime::now(), 1, p.rules(), results);
    let log = assert_valid_sarif(&report::render(&report, Format::Sarif, false));
    let broken: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    assert!(
        broken.contains(&"UAE-RES-001") && broken.contains(&"UAE-EXE-001"),
        "{broken:?}"
    );
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

/// A saved JSON report reads back as the same report: `report FILE.json` renders any format
/// from it as `run` would have.
#[test]
fn a_saved_json_report_reads_back_whole() {
    let json = report::render(&sample(), Format::Json, false);
    let saved: Report = serde_json::from_str(&json).expect("a JSON report reads back");
    assert_eq!(report::render(&saved, Format::Json, false), json);
    assert_eq!(
        report::render(&saved, Format::Markdown, false),
        report::render(&sample(), Format::Markdown, false)
    );
}

/// Regressed (now failing, new failing cases too), fixed, new, gone and other changes, by case
/// and by rule; exit 1 only on a regression.
#[test]
fn report_diff_names_regressions_and_fixes() {
    use wireprobe::report::diff::Diff;
    let old = sample();
    let mut new = sample();
    new.cases[0].verdict = Verdict::Pass; // t.seq.start fixed
    new.cases[2].verdict = Verdict::Fail; // t.auth.none regressed
    new.cases[1].id = "t.ping.renamed".into(); // one gone, one new (a warn: not failing)
    new.rules[0].verdict = Verdict::Pass;
    let diff = Diff::of(&old, &new, false);
    let ids = |list: &[wireprobe::report::diff::Change]| -> Vec<String> {
        list.iter().map(|c| c.id.clone()).collect()
    };
    assert_eq!(ids(&diff.regressed), ["t.auth.none"]);
    assert_eq!(ids(&diff.fixed), ["t.seq.start", "T-SEQ-001"]);
    assert_eq!(ids(&diff.new), ["t.ping.renamed"]);
    assert_eq!(ids(&diff.gone), ["t.ping.nonce"]);
    assert_eq!(diff.exit_code(), 1);
    assert_eq!(Diff::of(&new, &new, false).exit_code(), 0);
    // With --strict the new case's warn is a failure, so a regression too.
    assert!(ids(&Diff::of(&old, &new, true).regressed).contains(&"t.ping.renamed".to_owned()));
    insta::assert_snapshot!(diff.render());
}

/// The command on saved runs: `report diff` exits 1 on a regression and 0 without one, and
/// `report FILE --format sarif -o PATH` writes a log the schema accepts.
#[test]
fn the_report_command_works_on_saved_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = dir.path().join("old.json");
    let new = dir.path().join("new.json");
    let mut failing = sample();
    failing.cases[2].verdict = Verdict::Fail;
    std::fs::write(&old, report::render(&sample(), Format::Json, false)).expect("write");
    std::fs::write(&new, report::render(&failing, Format::Json, false)).expect("write");
    let wireprobe = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .arg("report")
            .args(args)
            .output()
            .expect("wireprobe runs")
    };
    let regressed = wireprobe(&[
        std::ffi::OsStr::new("diff"),
        old.as_os_str(),
        new.as_os_str(),
    ]);
    assert_eq!(regressed.status.code(), Some(1), "{regressed:?}");
    assert!(String::from_utf8_lossy(&regressed.stdout).contains("t.auth.none: skip → fail"));
    let same = wireprobe(&[
        std::ffi::OsStr::new("diff"),
        old.as_os_str(),
        old.as_os_str(),
    ]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let sarif = dir.path().join("run.sarif");
    let rendered = wireprobe(&[
        new.as_os_str(),
        std::ffi::OsStr::new("--format"),
        std::ffi::OsStr::new("sarif"),
        std::ffi::OsStr::new("-o"),
        sarif.as_os_str(),
    ]);
    assert_eq!(rendered.status.code(), Some(0), "{rendered:?}");
    assert_valid_sarif(&std::fs::read_to_string(&sarif).expect("SARIF written"));
    let not_a_report = wireprobe(&[sarif.as_os_str()]);
    assert_eq!(not_a_report.status.code(), Some(2), "{not_a_report:?}");
}

/// JUnit keeps only the transcripts of cases that did not pass unless told otherwise; JSON
/// keeps them all unless `--transcripts` says otherwise.
#[test]
fn transcripts_are_trimmed_per_format() {
    use wireprobe::report::{ReportTarget, Transcripts, WriteOptions};
    let mut run = sample();
    run.cases[2].verdict = Verdict::Pass;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name);
    let target = |format, name: &str| ReportTarget {
        format,
        path: Some(path(name)),
    };
    let targets = [
        target(Format::Junit, "run.xml"),
        target(Format::Json, "run.json"),
    ];
    report::write_all(&run, &targets, WriteOptions::default()).expect("written");
    let xml = std::fs::read_to_string(path("run.xml")).expect("JUnit");
    assert_eq!(xml.matches("<system-out>").count(), 2, "{xml}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path("run.json")).expect("JSON")).expect("JSON");
    assert!(json["cases"][2]["transcript"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    let none = WriteOptions {
        strict: false,
        transcripts: Some(Transcripts::None),
    };
    report::write_all(&run, &targets[1..], none).expect("written");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path("run.json")).expect("JSON")).expect("JSON");
    let kept: usize = (0..3)
        .map(|i| {
            json["cases"][i]["transcript"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(kept, 0);
}

/// A published matrix: each cell links to the frame that decided the rule in that run's own
/// report (saved beside its JSON), a column is labelled with what was run, and an
/// implementation that could not be run is a column saying why.
#[test]
fn a_matrix_links_each_verdict_to_its_frame_and_keeps_what_could_not_run() {
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["uae-reference", "uae-epoch-ts"] {
        let json = dir.path().join(format!("{name}.json"));
        std::fs::copy(runs.join(format!("{name}.json")), &json).expect("copy");
    }
    let wireprobe = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("wireprobe runs")
    };
    let page = wireprobe(&[
        "report",
        "uae-epoch-ts.json",
        "--format",
        "html",
        "-o",
        "uae-epoch-ts.html",
    ]);
    assert_eq!(page.status.code(), Some(0), "{page:?}");
    let matrix = wireprobe(&[
        "report",
        "matrix",
        "uae-reference.json",
        "uae-epoch-ts.json",
        "--label",
        "uae-epoch-ts=epoch-ts 0.1",
        "--absent",
        "uae-py=its wheel needs a compiler",
        "--format",
        "html",
        "-o",
        "matrix.html",
    ]);
    assert_eq!(matrix.status.code(), Some(0), "{matrix:?}");
    let html = std::fs::read_to_string(dir.path().join("matrix.html")).expect("the matrix");
    assert!(
        html.contains(">epoch-ts 0.1<"),
        "the label names the column"
    );
    assert!(
        html.contains("not run: its wheel needs a compiler"),
        "the absent column says why"
    );
    // The failing rule links into the page where it broke (the case: this run kept no
    // transcript to point into); the run without a page beside it links nowhere.
    let linked = html
        .find("href=\"uae-epoch-ts.html#case-")
        .expect("a link to a case");
    let anchor: String = html[linked + 6..]
        .chars()
        .take_while(|c| *c != '"')
        .collect();
    let at = anchor.rsplit_once('#').map(|(_, a)| a).unwrap_or_default();
    let report = std::fs::read_to_string(dir.path().join("uae-epoch-ts.html")).expect("page");
    assert!(report.contains(&format!("id=\"{at}\"")), "{anchor}");
    assert!(!html.contains("href=\"uae-reference.html"));
}

/// Saved runs of three UAE implementations (the reference, and two with faults):
/// `report matrix` puts them side by side, `report diff` finds what the faults regressed.
#[test]
fn report_matrix_and_diff_work_on_saved_runs() {
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let saved = [
        "uae-reference.json",
        "uae-epoch-ts.json",
        "uae-untraced-calls.json",
    ]
    .map(|f| runs.join(f));
    let wireprobe = |args: &[&str], files: &[std::path::PathBuf]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .arg("report")
            .args(args)
            .args(files)
            .output()
            .expect("wireprobe runs")
    };
    let matrix = wireprobe(&["matrix"], &saved);
    assert_eq!(matrix.status.code(), Some(0), "{matrix:?}");
    let matrix = String::from_utf8_lossy(&matrix.stdout).into_owned();
    insta::assert_snapshot!("matrix_markdown", matrix);

    let html = wireprobe(&["matrix", "--format", "html"], &saved);
    let html = String::from_utf8_lossy(&html.stdout).into_owned();
    assert!(
        html.starts_with("<!doctype html>")
            && !html.contains("http://")
            && !html.contains("<script src")
    );
    assert_eq!(
        html.matches("<tr class=\"filterable\"").count(),
        27,
        "one row per UAE rule"
    );

    let diff = wireprobe(&["diff"], &saved[..2]);
    assert_eq!(diff.status.code(), Some(1), "{diff:?}");
    let diff = String::from_utf8_lossy(&diff.stdout).into_owned();
    assert!(diff.contains("UAE-ENV-001: pass → fail"), "{diff}");

    let not_a_run = wireprobe(&["matrix"], &[runs.join("../sarif-schema-2.1.0.json")]);
    assert_eq!(not_a_run.status.code(), Some(2), "{not_a_run:?}");
    // A run saved before observations were typed (`{"$connect": …}` in `frame`) still
    // renders in every format, and diffs and sits in a matrix beside a new one.
    let before = [runs.join("uae-before-typed-transcripts.json")];
    for format in ["json", "junit", "markdown", "sarif", "html"] {
        let rendered = wireprobe(&["--format", format], &before);
        assert_eq!(rendered.status.code(), Some(0), "{format}: {rendered:?}");
        let text = String::from_utf8_lossy(&rendered.stdout);
        // SARIF names only cases that broke a rule; this run broke none.
        let named = format == "sarif" || text.contains("uae.agent.tool");
        assert!(named, "{format}: {text}");
    }
    let both = [before[0].clone(), saved[0].clone()];
    assert_eq!(wireprobe(&["diff"], &both).status.code(), Some(0));
    assert_eq!(wireprobe(&["matrix"], &both).status.code(), Some(0));
}

/// The HTML report is one self-contained page: nothing fetched, the target's text escaped,
/// failing musts first in the compliance table, the stopped step beside what arrived, and
/// each violation under the frame that broke it. (`tests/html_report.rs` opens it in a browser.)
#[test]
fn html_report_is_self_contained_and_pins_violations() {
    let html = report::render(&sample(), Format::Html, false);
    assert!(html.starts_with("<!doctype html>"));
    assert!(
        !html.contains("src=\"http") && !html.contains("<link"),
        "no network"
    );
    assert!(html.contains("rejected for the wrong &lt;reason&gt; &amp; more"));
    assert!(!html.contains("wrong <reason>"), "target text is escaped");
    let first_rule = html.find("id=\"rule-").map(|i| &html[i..i + 20]);
    assert_eq!(
        first_rule,
        Some("id=\"rule-T-SEQ-001\">"),
        "the failing must leads"
    );
    assert!(html.contains("<a href=\"https://haiprotocol.com/\">§Sequencing and Replay</a>"));
    assert!(
        html.contains("<li class=\"stopped\">"),
        "the step the case stopped at"
    );
    assert!(html.contains("class=\"server violated\" id=\"case-t.ping.nonce-f1\""));
    assert!(html.contains("<b class=\"mono\">T-PING-002</b> should: PONG nonce"));
    assert!(html.contains("FAIL: exit 1. 1 case(s) failed"));
    let strict = report::render(&sample(), Format::Html, true);
    assert!(strict.contains("FAIL: exit 1. 2 case(s) failed"));

    // A rule seen broken in a case not written for it: that case is folded behind a count.
    let mut cases = sample().cases;
    cases[1].violations.push(FrameViolation {
        rule: "T-SEQ-001".into(),
        level: Level::Must,
        message: "seq 0".into(),
        frame: 1,
        side: None,
    });
    let seen = Report::new(
        "test",
        "ws://127.0.0.1:9/",
        SystemTime::UNIX_EPOCH,
        1,
        RULES,
        cases,
    );
    let html = report::render(&seen, Format::Html, false);
    assert!(
        html.contains("seen broken in 1 other case(s)</summary><a href=\"#case-t.ping.nonce\">")
    );
}
