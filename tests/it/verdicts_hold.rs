//! Verdicts that hold on implementations wireprobe was not built with: a greeting sent on
//! connect, a refusal racing the first send, target URLs of every form, and violations judged
//! in every case's transcript, whatever the case was written for (and whether it skipped).

use crate::common;

use common::{run_reference, test_config, TEST_SECRET};
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};
use wireprobe::protocol;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::report::{Gate, Report};
use wireprobe::results::CaseResult;
use wireprobe::suite::filter::CaseFilter;
use wireprobe::suite::runner::{run_suite, RunConfig, RunError};
use wireprobe::suite::{self, Suite};
use wireprobe::verdict::Verdict;

fn config(url: &str, glob: Option<&str>) -> RunConfig {
    test_config(RunConfig::new(url), glob)
}

async fn haip_target(faults: &[&str]) -> reference::RunningTarget {
    let opts = ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        jwt_secret: Some(TEST_SECRET.into()),
        ..ServeOptions::default()
    };
    reference::start("haip", SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
        .await
        .expect("reference target starts")
}

fn suite_from(text: &str) -> Suite {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("case.toml");
    std::fs::write(&path, text).expect("suite written");
    suite::load_path(protocol::get("haip").expect("haip"), &path).expect("suite loads")
}

fn report_of(results: Vec<CaseResult>) -> Report {
    let p = protocol::get("haip").expect("haip");
    Report::new("haip", "test", SystemTime::now(), 0, p.rules(), results)
}

fn verdicts(results: &[CaseResult]) -> Vec<(String, Verdict)> {
    results.iter().map(|r| (r.id.clone(), r.verdict)).collect()
}

/// A server that sends its HAI the moment the socket opens: every case is judged the same way
/// on every run (the greeting used to be drained into a queue the handshake never looked at).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_greeting_sent_on_connect_gives_the_same_verdicts_every_time() {
    let first = verdicts(&run_reference("haip", &[], &["hai-on-connect"], None).await);
    let broken: Vec<_> = first
        .iter()
        .filter(|(_, v)| !matches!(v, Verdict::Pass | Verdict::Info))
        .collect();
    assert!(broken.is_empty(), "not passing: {broken:?}");
    for run in 1..5 {
        let again = verdicts(&run_reference("haip", &[], &["hai-on-connect"], None).await);
        assert_eq!(first, again, "run {run} differs from the first");
    }
}

/// A WebSocket server that accepts the upgrade and at once closes with 1008 when the request
/// carries no `?token=` (or always, with `refuse_all`), as servers refusing a token after the
/// upgrade do; otherwise it stays silent. Returns its URL.
async fn refusing_server(refuse_all: bool) -> String {
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut has_token = false;
                // The large error type is tungstenite's callback contract.
                #[allow(clippy::result_large_err)]
                let seen = |req: &Request, resp: Response| {
                    has_token = req.uri().query().is_some_and(|q| q.contains("token="));
                    Ok(resp)
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, seen).await else {
                    return;
                };
                use tokio_tungstenite::tungstenite::protocol::{
                    frame::coding::CloseCode, CloseFrame,
                };
                use tokio_tungstenite::tungstenite::Message;
                if refuse_all || !has_token {
                    let close = CloseFrame {
                        code: CloseCode::Policy,
                        reason: "Invalid token".into(),
                    };
                    let _ = ws.send(Message::Close(Some(close))).await;
                }
                while let Some(Ok(_)) = ws.next().await {}
            });
        }
    });
    format!("ws://{addr}/")
}

/// A refusal that closes the socket before wireprobe's first frame is a refusal, not a
/// target that "ended before this step could send".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_close_before_the_first_send_is_a_refusal() {
    let url = refusing_server(false).await;
    let p = protocol::get("haip").expect("haip");
    let bundled = suite::load_bundled(p).expect("suite");
    let cfg = config(&url, Some("haip.auth.missing-token"));
    for _ in 0..10 {
        let results = run_suite(p, &bundled, &cfg, &|_| {})
            .await
            .expect("reachable");
        let case = results
            .iter()
            .find(|r| r.id == "haip.auth.missing-token")
            .expect("case ran");
        assert_eq!(case.verdict, Verdict::Pass, "{}", case.message);
    }
}

/// A target that refuses even the best token wireprobe has (HTTP 401 on the upgrade, or a
/// 1008 close right after it) stops the run with one line naming the flags that help.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_target_refusing_every_token_is_one_line() {
    let p = protocol::get("haip").expect("haip");
    let bundled = suite::load_bundled(p).expect("suite");
    let closing = refusing_server(true).await;
    let target = haip_target(&[]).await;
    let mut wrong_secret = config(&target.url, None);
    wrong_secret.credentials.jwt_secret = Some("not-the-secret".into());
    for cfg in [config(&closing, None), wrong_secret] {
        match run_suite(p, &bundled, &cfg, &|_| {}).await {
            Err(RunError::Refused(why)) => {
                assert!(why.contains("--claims") && why.contains("--token"), "{why}")
            }
            Err(other) => panic!("{}: {other}", cfg.target_url),
            Ok(_) => panic!("{}: the run went ahead", cfg.target_url),
        }
    }
}

/// `ws://host:port` (no path), a path, and a query of its own all reach the target, with the
/// token added to the query either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_url_form_reaches_the_target() {
    let target = haip_target(&[]).await;
    let base = format!("ws://{}", target.addr);
    let p = protocol::get("haip").expect("haip");
    let bundled = suite::load_bundled(p).expect("suite");
    for url in [
        base.clone(),
        format!("{base}/haip/v1"),
        format!("{base}?tenant=a"),
        format!("{base}/haip?tenant=a&x=1"),
    ] {
        let cfg = config(
            &url,
            Some("haip.{ping.pong,auth.valid-token-query,auth.missing-token}"),
        );
        let results = run_suite(p, &bundled, &cfg, &|_| {})
            .await
            .expect("reachable");
        for r in results.iter().filter(|r| cfg.filter.selects(&r.id)) {
            assert!(
                matches!(r.verdict, Verdict::Pass | Verdict::Info),
                "{url}: {} {}: {}",
                r.verdict,
                r.id,
                r.message
            );
        }
    }
}

/// A violation sitting in the transcript of a case written for another rule is reported
/// under its own rule (with the case and the frame), fails the rule and gates the run, and
/// leaves the observing case's verdict alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_violation_seen_in_another_case_is_reported_under_its_rule() {
    let target = haip_target(&["bad-uuid"]).await;
    let p = protocol::get("haip").expect("haip");
    let bundled = suite::load_bundled(p).expect("suite");
    let cfg = config(&target.url, Some("haip.ping.pong"));
    let results = run_suite(p, &bundled, &cfg, &|_| {})
        .await
        .expect("reachable");
    let case = results
        .iter()
        .find(|r| r.id == "haip.ping.pong")
        .expect("case ran")
        .clone();
    assert_eq!(case.verdict, Verdict::Pass, "{}", case.message);
    let seen = case
        .violations
        .iter()
        .find(|v| v.rule == "HAIP-ENV-002")
        .expect("the non-UUID ids are reported");
    assert!(
        case.transcript[seen.frame]
            .event()
            .is_some_and(|e| e.get("id").is_some()),
        "the violation points at the frame"
    );
    let report = report_of(results);
    let rule = report
        .rules
        .iter()
        .find(|r| r.id == "HAIP-ENV-002")
        .expect("rule");
    assert_eq!(rule.verdict, Verdict::Fail);
    assert!(rule.cases.contains(&"haip.ping.pong".to_owned()));
    let gate = Gate::evaluate(&report, false, &Default::default());
    assert_eq!(gate.exit_code(), 1, "{gate:?}");
    assert!(gate
        .new_failures
        .iter()
        .any(|f| f.starts_with("HAIP-ENV-002")));
    let known = ["HAIP-ENV-002".to_owned()].into();
    assert_eq!(Gate::evaluate(&report, false, &known).exit_code(), 0);
}

/// A case that skipped had already received frames; what they break still counts, for the
/// case's own rules and for every other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_skipped_case_still_reports_what_it_saw() {
    let target = haip_target(&["bad-uuid"]).await;
    let p = protocol::get("haip").expect("haip");
    let suite = suite_from(
        r#"
[[case]]
id = "t.skips-after-handshake"
title = "Waits for a scenario the target never reaches"
rules = ["HAIP-ENV-002"]
steps = [{ expect = { type = "NEVER_SENT" }, within_ms = 200, scenario = true }]

[[case]]
id = "t.skips-for-another-rule"
title = "Waits for a scenario the target never reaches"
rules = ["HAIP-PING-001"]
steps = [{ expect = { type = "NEVER_SENT" }, within_ms = 200, scenario = true }]
"#,
    );
    let cfg = config(&target.url, None);
    let results = run_suite(p, &suite, &cfg, &|_| {})
        .await
        .expect("reachable");
    let own = &results[0];
    assert_eq!(own.verdict, Verdict::Fail, "{}", own.message);
    assert_eq!(own.judged.get("HAIP-ENV-002"), Some(&Verdict::Fail));
    let other = &results[1];
    assert_eq!(other.verdict, Verdict::Skip, "{}", other.message);
    assert!(other.violations.iter().any(|v| v.rule == "HAIP-ENV-002"));
    let report = report_of(results);
    let verdict_of = |id: &str| report.rules.iter().find(|r| r.id == id).map(|r| r.verdict);
    assert_eq!(verdict_of("HAIP-ENV-002"), Some(Verdict::Fail));
    assert_eq!(verdict_of("HAIP-PING-001"), Some(Verdict::Skip));
}

/// A rule's verdict is never below what its level allows: a case of a must and a should rule
/// that fails on the should step warns the should rule and leaves the must rule unjudged.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_must_rule_never_shows_warn() {
    let target = haip_target(&["pong-nonce"]).await;
    let p = protocol::get("haip").expect("haip");
    let suite = suite_from(
        r#"
[[case]]
id = "t.must-and-should"
title = "PONG answers PING and echoes its nonce"
rules = ["HAIP-PING-001", "HAIP-PING-002"]
steps = [
  { send = { type = "PING", channel = "SYSTEM", payload = { nonce = "n-1" } } },
  { expect = { type = "PONG", payload = { nonce = "n-1" } }, rule = "HAIP-PING-002" },
]
"#,
    );
    let cfg = config(&target.url, None);
    let results = run_suite(p, &suite, &cfg, &|_| {})
        .await
        .expect("reachable");
    assert_eq!(results[0].verdict, Verdict::Warn, "{}", results[0].message);
    let report = report_of(results);
    for rule in &report.rules {
        if rule.level == wireprobe::rules::Level::Must {
            assert_ne!(rule.verdict, Verdict::Warn, "{} shows warn", rule.id);
        }
    }
    let ping = report
        .rules
        .iter()
        .find(|r| r.id == "HAIP-PING-002")
        .expect("rule");
    assert_eq!(ping.verdict, Verdict::Warn);
}

/// Tool cases call what the target offers: the tools it advertises under its own names, and
/// before those any tool given with `--tool NAME=JSON` (with its params).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tool_cases_call_the_tools_the_target_offers() {
    let opts = ServeOptions {
        variants: vec!["other-tools".into()],
        jwt_secret: Some(TEST_SECRET.into()),
        ..ServeOptions::default()
    };
    let target = reference::start("haip", SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
        .await
        .expect("reference target starts");
    let p = protocol::get("haip").expect("haip");
    let bundled = suite::load_bundled(p).expect("suite");
    let called = |results: &[CaseResult], id: &str| -> Vec<String> {
        let case = results.iter().find(|r| r.id == id).expect("case ran");
        assert_eq!(case.verdict, Verdict::Pass, "{id}: {}", case.message);
        case.transcript
            .iter()
            .filter_map(|e| e.event())
            .filter(|e| e["type"] == "TOOL_CALL")
            .map(|e| e["payload"].to_string())
            .collect()
    };
    let cfg = config(&target.url, Some("haip.tool.*"));
    let results = run_suite(p, &bundled, &cfg, &|_| {})
        .await
        .expect("reachable");
    assert!(called(&results, "haip.tool.echo-completes")[0].contains("util.mirror"));
    assert!(called(&results, "haip.tool.cancel")[0].contains("util.sleep"));

    let mut cfg = config(&target.url, Some("haip.tool.echo-completes"));
    cfg.tools = vec!["util.sleep={\"ms\": 50}".parse().expect("a tool offer")];
    let results = run_suite(p, &bundled, &cfg, &|_| {})
        .await
        .expect("reachable");
    let calls = called(&results, "haip.tool.echo-completes");
    assert!(
        calls[0].contains("util.sleep") && calls[0].contains("\"ms\":50"),
        "{calls:?}"
    );
}

/// A Nuum agent whose turns all fail at once (no model): the cases whose setup needs a turn's
/// output skip, saying why, instead of failing the rule they were going to judge; a status
/// answered in another form is judged at once, not after the step's timeout; nothing errors.
/// The public build's own forms are reported at the document's grade (ERRATA 19): its status
/// answer warns under NUUM-CTL-006, its error result fails NUUM-RES-002.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_modelless_agent_is_skipped_not_blamed() {
    let p = protocol::get("nuum").expect("nuum");
    let bundled = suite::load_bundled(p).expect("suite");
    let script = format!(
        "{}/tests/fixtures/nuum/modelless-agent.sh",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cfg = RunConfig::new(script.clone());
    cfg.exec = vec![script];
    cfg.step_timeout = Duration::from_millis(5000);
    cfg.filter = CaseFilter::new(
        &[
            "nuum.control.*".into(),
            "nuum.session.*".into(),
            "nuum.inject.*".into(),
            "nuum.assistant.*".into(),
            "nuum.result.error-turn".into(),
        ],
        &[],
    )
    .expect("globs");
    let results = run_suite(p, &bundled, &cfg, &|_| {}).await.expect("starts");
    let verdict = |id: &str| {
        results
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("{id} ran"))
    };
    for id in [
        "nuum.session.same-id",
        "nuum.control.interrupt",
        "nuum.control.status-running",
        "nuum.inject.queued",
        "nuum.inject.injected",
        "nuum.assistant.shape",
    ] {
        let r = verdict(id);
        assert_eq!(r.verdict, Verdict::Skip, "{id}: {}", r.message);
    }
    // system/status is the public agent's answer to status: an answer, at once, under a name
    // the spec's example does not give it.
    let status = verdict("nuum.control.status");
    assert_eq!(status.verdict, Verdict::Warn, "{}", status.message);
    assert!(
        status.message.contains("NUUM-CTL-006"),
        "{}",
        status.message
    );
    assert!(status.duration_ms < 2000, "{} ms", status.duration_ms);
    let error_turn = verdict("nuum.result.error-turn");
    assert_eq!(error_turn.verdict, Verdict::Fail, "{}", error_turn.message);
    assert!(
        error_turn
            .message
            .contains("the public build's name for an error"),
        "{}",
        error_turn.message
    );
    assert!(
        results.iter().all(|r| r.verdict != Verdict::Error),
        "{:?}",
        verdicts(&results)
    );
}

/// The case lines and the summary are `run`'s output, on stdout, counting only the cases
/// `--case` selected; a report written to stdout moves them to stderr.
#[test]
fn run_prints_its_results_on_stdout() {
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .args([
                "run",
                "haip",
                "--target",
                "builtin",
                "--case",
                "haip.ping.pong",
            ])
            .args(extra)
            .output()
            .expect("wireprobe runs")
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("pass  haip.ping.pong"), "{stdout}");
    assert!(stdout.contains(": 1 cases — 1 pass"), "{stdout}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run(&["--report", "json=-"]);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is the JSON report alone");
    assert_eq!(report["summary"]["total"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass  haip.ping.pong"));
}
