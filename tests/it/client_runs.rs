//! Judging clients: wireprobe serves, the client under test connects. The reference client
//! passes its protocol's client suite; each of its faults fails exactly the cases written for
//! the rules it breaks; a client that never connects is an error saying so.

use serde_json::Value;
use std::process::Command;
use wireprobe::reference;

use crate::common::bounded;
use bounded::{within, Slot, RUN_LIMIT};

fn wireprobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wireprobe"))
}

/// `run P --client` with `args`: the exit code and the JSON report's cases.
fn client_run(protocol: &str, args: &[&str]) -> (i32, Vec<Value>) {
    let _slot = Slot::take();
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    // A HAIP client is handed a token to present (haip.client.token).
    let credentials: &[&str] = match protocol {
        "haip" => &["--jwt-secret", "wireprobe-client-tests"],
        _ => &[],
    };
    let mut run = wireprobe();
    run.args(["run", protocol, "--client", "--timeout-ms", "3000"])
        .args(credentials)
        .args(args)
        .arg("--report")
        .arg(format!("json={}", report.display()));
    let output = within(RUN_LIMIT, run, &format!("run {protocol} --client {args:?}"));
    let text = std::fs::read_to_string(&report).unwrap_or_else(|_| {
        panic!(
            "no report; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let report: Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(
        report["side"], "client",
        "the report says a client was judged"
    );
    let cases = report["cases"].as_array().cloned().unwrap_or_default();
    // A rule broken outside the cases' own fails the run too: say which, for a failure seen
    // once (the test's output shows it).
    if output.status.code() == Some(1) {
        let broken: Vec<String> = cases
            .iter()
            .flat_map(|c| c["violations"].as_array().cloned().unwrap_or_default())
            .map(|v| format!("{} {}", v["rule"], v["message"]))
            .collect();
        eprintln!("run {protocol} --client {args:?} exited 1; violations: {broken:#?}");
    }
    (output.status.code().unwrap_or(-1), cases)
}

fn with_verdict<'a>(cases: &'a [Value], verdict: &str) -> Vec<&'a str> {
    cases
        .iter()
        .filter(|c| c["verdict"] == verdict)
        .filter_map(|c| c["id"].as_str())
        .collect()
}

/// Protocols whose clients wireprobe judges.
const JUDGED: &[&str] = &["haip", "huma", "hpd", "uae", "nuum", "agui"];

/// Cases whose rules are all `info`: what they record is never a pass or a fail.
fn info_only(protocol: &str) -> Vec<String> {
    let p = wireprobe::protocol::get(protocol).expect("a protocol");
    let suite = wireprobe::suite::load_bundled_client(p).expect("the client suite loads");
    suite
        .cases
        .iter()
        .filter(|c| {
            c.rules.iter().all(|r| {
                wireprobe::rules::find(p.rules(), r)
                    .is_some_and(|r| r.level == wireprobe::rules::Level::Info)
            })
        })
        .map(|c| c.id.clone())
        .collect()
}

/// Every case passes, but those that only record (`info`).
fn assert_all_pass(protocol: &str, what: &str, code: i32, cases: &[Value]) {
    assert!(!cases.is_empty());
    let recorded = info_only(protocol);
    for case in cases {
        let id = case["id"].as_str().unwrap_or_default();
        let expected = match recorded.iter().any(|r| r == id) {
            true => "info",
            false => "pass",
        };
        assert_eq!(case["verdict"], expected, "{protocol} {what}: {case:#}");
    }
    assert_eq!(code, 0, "{protocol} {what}");
}

#[test]
fn the_reference_clients_pass_their_client_suites() {
    for protocol in JUDGED {
        for transport in forms(protocol) {
            let args = ["--target", "builtin", "--transport", transport];
            let (mut code, mut cases) = client_run(protocol, &args);
            // Once more before failing, as the variants are (see there): a loaded machine can
            // starve a client's start past its budget.
            if !passed(protocol, code, &cases) {
                eprintln!("{protocol} builtin over {transport} did not pass under load; once more");
                (code, cases) = client_run(protocol, &args);
            }
            assert_all_pass(protocol, &format!("builtin over {transport}"), code, &cases);
        }
    }
}

/// The transports `protocol` serves clients over whose client cases differ: each is a form of
/// client of its own (UAE: a Web UI over the WebSocket, an agent calling its executor over
/// stdio). HPD's WebSocket runs the SSE suite less resuming: it has a test of its own.
fn forms(protocol: &str) -> Vec<&'static str> {
    let p = wireprobe::protocol::get(protocol).expect("a protocol");
    let serves: Vec<_> = p
        .transports()
        .iter()
        .copied()
        .filter(|t| p.serving_session(*t).is_some())
        .collect();
    match protocol {
        "uae" => serves.iter().map(|t| t.name()).collect(),
        _ => serves.first().map(|t| t.name()).into_iter().collect(),
    }
}

/// The client cases a run over `transport` runs.
fn runs_over<'a>(
    suite: &'a wireprobe::suite::Suite,
    transport: &str,
) -> impl Iterator<Item = &'a wireprobe::suite::model::Case> + 'a {
    let want = format!("transport:{transport}");
    suite.cases.iter().filter(move |c| {
        c.requires
            .iter()
            .map(|r| r.name())
            .all(|n| !n.starts_with("transport:") || n == want)
    })
}

#[test]
fn a_client_run_s_rules_table_holds_what_a_client_can_break() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let output = wireprobe()
        .args(["run", "huma", "--client", "--target", "builtin"])
        .args(["--case", "huma.client.unknown-tool", "--report"])
        .arg(format!("json={}", report.display()))
        .output()
        .expect("wireprobe runs");
    assert!(output.status.success());
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("JSON");
    let ids: Vec<&str> = report["rules"]
        .as_array()
        .expect("a rules table")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(ids.contains(&"HUMA-CLI-003"), "{ids:?}");
    // What only a server can break (rejecting an invalid event, say) is not listed.
    assert!(ids.iter().all(|id| id.starts_with("HUMA-CLI-")), "{ids:?}");
}

#[test]
fn each_reference_client_fault_fails_exactly_its_rules_cases() {
    // Every protocol's runs at once (as many as MAX_RUNS allows): most of a run is waiting.
    let matrices: Vec<_> = JUDGED
        .iter()
        .map(|protocol| std::thread::spawn(move || fault_matrix(protocol)))
        .collect();
    for matrix in matrices {
        matrix.join().expect("the fault matrix holds");
    }
}

fn fault_matrix(protocol: &'static str) {
    let p = wireprobe::protocol::get(protocol).expect("a protocol");
    // Every rule that binds only clients has a client case, and each must among them a fault.
    let client_suite = wireprobe::suite::load_bundled_client(p).expect("the client suite loads");
    let client_faults = reference::get(protocol)
        .and_then(|r| r.client.as_ref())
        .map(|c| c.faults)
        .unwrap_or_default();
    let client_only = p.rules().iter().filter(|r| !r.binds.applies(true));
    for rule in client_only {
        assert!(
            client_suite
                .cases
                .iter()
                .any(|c| c.rules.iter().any(|r| r == rule.id)),
            "client rule {} has no case",
            rule.id
        );
        if rule.level == wireprobe::rules::Level::Must {
            assert!(
                client_faults.iter().any(|f| f.breaks.contains(&rule.id)),
                "must client rule {} has no fault",
                rule.id
            );
        }
    }
    let suite = wireprobe::suite::load_bundled_client(p).expect("the client suite loads");
    let client = reference::get(protocol)
        .and_then(|r| r.client.as_ref())
        .expect("a reference client");
    assert!(!client.faults.is_empty());
    let runs: Vec<_> = client
        .faults
        .iter()
        .flat_map(|fault| {
            // Each form of client whose cases name a rule the fault breaks.
            let over: Vec<&'static str> = forms(protocol)
                .into_iter()
                .filter(|t| {
                    runs_over(&suite, t)
                        .any(|c| c.rules.iter().any(|r| fault.breaks.contains(&r.as_str())))
                })
                .collect();
            assert!(!over.is_empty(), "fault {} has no case to fail", fault.name);
            over.into_iter().map(move |transport| {
                let name = fault.name;
                let run = std::thread::spawn(move || fault_run(protocol, name, transport));
                (fault, transport, run)
            })
        })
        .collect();
    // A fault fails a case in at least one form of client (one that breaks UAE-ROB-001 as a
    // caller has nothing to break as a Web UI, whose cases name that rule too).
    let mut failing = std::collections::BTreeSet::new();
    for (fault, transport, run) in runs {
        let (code, cases) = run.join().expect("the run finishes");
        // A run with an `error`, or a failure outside the fault's rules, is run once more before
        // it fails the test: two cores running the whole test binary can starve a client's
        // start past its budget (an AG-UI client that did not connect within 10 s, seen twice
        // at a load average of 16). The first run's disagreement is printed; the second must hold.
        let strays = |cases: &[Value]| {
            with_verdict(cases, "error").len()
                + with_verdict(cases, "fail")
                    .into_iter()
                    .chain(with_verdict(cases, "warn"))
                    .filter(|id| {
                        let case = suite.cases.iter().find(|c| c.id == *id);
                        !case.is_some_and(|c| {
                            c.rules.iter().any(|r| fault.breaks.contains(&r.as_str()))
                        })
                    })
                    .count()
        };
        let (code, cases) = match strays(&cases) {
            0 => (code, cases),
            _ => {
                eprintln!(
                    "{protocol} --fault {} over {transport} strayed under load; once more",
                    fault.name
                );
                fault_run(protocol, fault.name, transport)
            }
        };
        let failed = with_verdict(&cases, "fail");
        let warned = with_verdict(&cases, "warn");
        if !failed.is_empty() || !warned.is_empty() {
            failing.insert(fault.name);
        }
        // A should-level rule warns: the run still exits 0 unless --strict.
        assert_eq!(code, i32::from(!failed.is_empty()), "fault {}", fault.name);
        for id in failed.into_iter().chain(warned) {
            let case = suite.cases.iter().find(|c| c.id == id).expect("a case");
            assert!(
                case.rules
                    .iter()
                    .any(|r| fault.breaks.contains(&r.as_str())),
                "fault {} fails {id}, which lists none of {:?}",
                fault.name,
                fault.breaks
            );
        }
        assert!(
            with_verdict(&cases, "error").is_empty(),
            "fault {}: {cases:#?}",
            fault.name
        );
    }
    for fault in client.faults {
        assert!(
            failing.contains(fault.name),
            "fault {} fails no case",
            fault.name
        );
    }
}

/// `run PROTOCOL --client` of the reference client with `fault`, over `transport`.
fn fault_run(protocol: &str, fault: &str, transport: &str) -> (i32, Vec<Value>) {
    let args = [
        "--target",
        "builtin",
        "--fault",
        fault,
        "--transport",
        transport,
    ];
    client_run(protocol, &args)
}

#[test]
fn a_client_that_never_connects_is_an_error_with_its_output() {
    let exec = "sh -c 'echo starting; echo cannot reach >&2; exit 4'";
    let (code, cases) = client_run("haip", &["--exec", exec, "--case", "haip.client.pong"]);
    assert_eq!(code, 3, "{cases:#?}");
    let case = &cases[0];
    assert_eq!(case["verdict"], "error");
    let message = case["message"].as_str().unwrap_or_default();
    assert!(message.contains("did not connect"), "{message}");
    assert!(message.contains("exit status: 4"), "{message}");
    assert!(message.contains("cannot reach"), "{message}");
    let transcript = case["transcript"].to_string();
    assert!(transcript.contains("cannot reach"), "{transcript}");
    assert!(transcript.contains("starting"), "{transcript}");
}

#[test]
fn a_transport_a_protocol_serves_no_client_over_is_refused_naming_those_it_does() {
    for (protocol, asked, says) in [
        (
            "huma",
            "ws",
            "huma serves clients over socketio only, not ws",
        ),
        ("nuum", "ws", "nuum serves clients over stdio only, not ws"),
    ] {
        let output = wireprobe()
            .args([
                "run",
                protocol,
                "--client",
                "--target",
                "builtin",
                "--transport",
                asked,
            ])
            .output()
            .expect("wireprobe runs");
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn an_hpd_client_over_the_websocket_is_judged_by_the_same_suite() {
    let (code, cases) = client_run("hpd", &["--target", "builtin", "--transport", "ws"]);
    assert_all_pass("hpd", "over the WebSocket", code, &cases);
    // Resuming is the SSE stream's: the case is not run over the WebSocket.
    assert!(cases.iter().all(|c| c["id"] != "hpd.client.resume"));
}

#[test]
fn every_reference_client_variant_passes_its_client_suite() {
    let runs: Vec<_> = JUDGED
        .iter()
        .flat_map(|protocol| {
            let client = reference::get(protocol)
                .and_then(|r| r.client.as_ref())
                .expect("a reference client");
            assert!(!client.variants.is_empty(), "{protocol} has no variant");
            client.variants.iter().flat_map(move |variant| {
                forms(protocol).into_iter().map(move |transport| {
                    let name = variant.name;
                    let run = std::thread::spawn(move || {
                        let args = ["--target", "builtin", "--variant", name];
                        client_run(protocol, &[&args[..], &["--transport", transport]].concat())
                    });
                    (protocol, name, transport, run)
                })
            })
        })
        .collect();
    // A run where a case did not pass is run once more, alone, before it fails the test: two
    // cores running the whole suite beside a dozen runs can starve a client past its step's
    // budget (a 1.1 MB event, then a request answered after 3 s, seen in CI). The first run's
    // disagreement is printed; the second must pass.
    let mut again = Vec::new();
    for (protocol, name, transport, run) in runs {
        let (code, cases) = run.join().expect("the run finishes");
        if passed(protocol, code, &cases) {
            continue;
        }
        let first = cases
            .iter()
            .find(|c| c["verdict"] != "pass" && c["verdict"] != "info");
        eprintln!(
            "{protocol} --variant {name} over {transport} did not pass under load; once more alone: {}",
            first.map_or(String::new(), |c| format!("{} {}", c["id"], c["message"]))
        );
        again.push((protocol, name, transport));
    }
    for (protocol, name, transport) in again {
        let args = [
            "--target",
            "builtin",
            "--variant",
            name,
            "--transport",
            transport,
        ];
        let (code, cases) = client_run(protocol, &args);
        assert_all_pass(protocol, &format!("--variant {name}"), code, &cases);
    }
}

/// Every case passed, but those that only record (see [`assert_all_pass`]).
fn passed(protocol: &str, code: i32, cases: &[Value]) -> bool {
    let recorded = info_only(protocol);
    code == 0
        && !cases.is_empty()
        && cases.iter().all(|c| {
            let id = c["id"].as_str().unwrap_or_default();
            let expected = if recorded.iter().any(|r| r == id) {
                "info"
            } else {
                "pass"
            };
            c["verdict"] == expected
        })
}

#[test]
fn huma_cases_that_need_a_tool_skip_naming_the_flag() {
    let exec = format!(
        "{} client huma --target {{url}}",
        env!("CARGO_BIN_EXE_wireprobe")
    );
    let (code, cases) = client_run("huma", &["--exec", &exec]);
    assert_eq!(code, 0, "{cases:#?}");
    let skipped = |id: &str| {
        let case = cases.iter().find(|c| c["id"] == id).expect("the case ran");
        assert_eq!(case["verdict"], "skip", "{case:#}");
        case["message"].as_str().unwrap_or_default().to_owned()
    };
    assert!(skipped("huma.client.tool-result").contains("--tool NAME"));
    assert!(skipped("huma.client.cancel").contains("--slow-tool NAME"));
    // Cases that need no tool of the client's still judge it.
    let unknown = cases.iter().find(|c| c["id"] == "huma.client.unknown-tool");
    assert_eq!(unknown.map(|c| c["verdict"].clone()), Some("pass".into()));
}

#[test]
fn a_harness_s_clients_run_one_case_each_in_suite_order() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let mut run = wireprobe()
        .args(["run", "haip", "--client", "--listen", "127.0.0.1:0"])
        .args([
            "--case",
            "haip.client.pong",
            "--case",
            "haip.client.hai-first",
        ])
        .arg("--report")
        .arg(format!("json={}", report.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("wireprobe runs");
    let mut announced = String::new();
    let stderr = run.stderr.take().expect("stderr");
    BufReader::new(stderr)
        .read_line(&mut announced)
        .expect("announces where it serves");
    let url = announced
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .unwrap_or_else(|| panic!("no URL in {announced:?}"))
        .to_owned();
    // The harness starts a client per case; each ends when its case does.
    for _ in 0..2 {
        let status = wireprobe()
            .args(["client", "haip", "--target", &url])
            .status()
            .expect("the client runs");
        assert!(status.success());
    }
    assert_eq!(run.wait().expect("the run ends").code(), Some(0));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("JSON");
    let cases = report["cases"].as_array().expect("cases");
    let ids: Vec<&str> = cases.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["haip.client.hai-first", "haip.client.pong"]);
    for case in cases {
        assert_eq!(case["verdict"], "pass", "{case:#}");
        let connected = case["transcript"].to_string();
        assert!(connected.contains("(from 127.0.0.1:"), "{connected}");
    }
}

#[test]
fn list_shows_the_client_side_when_asked() {
    let listed = |args: &[&str]| {
        let output = wireprobe().args(args).output().expect("wireprobe runs");
        assert!(output.status.success());
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let cases = listed(&["list", "haip", "--cases", "--client"]);
    assert!(cases.contains("haip.client.pong"), "{cases}");
    assert!(!cases.contains("haip.handshake."), "{cases}");
    let faults = listed(&["list", "haip", "--faults", "--client"]);
    assert!(faults.contains("no-pong"), "{faults}");
    assert!(!faults.contains("hai-not-first"), "{faults}");
}

/// What a server run has works for a client run: a configuration file that is the whole job
/// (`client = true`), a known-failing list that excuses a fault, saved reports that `report
/// diff` and `report matrix` read.
#[test]
fn a_client_run_is_a_ci_job_like_a_server_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let at = |name: &str| dir.path().join(name);
    std::fs::write(
        // Not the default name: the clean run below must not read it.
        at("ci.toml"),
        r#"
protocol = "haip"
client = true
target = "builtin"
faults = ["no-pong"]
timeout_ms = 3000
case = ["haip.client.pong", "haip.client.hai-first"]
known_failing = "known-failing.txt"
reports = ["json=faulty.json"]
"#,
    )
    .expect("write");
    std::fs::write(at("known-failing.txt"), "haip.client.pong\n").expect("write");
    let in_dir = |args: &[&str]| {
        let _slot = Slot::take();
        wireprobe()
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("wireprobe runs")
    };
    let faulty = in_dir(&["run", "--config", "ci.toml"]);
    assert_eq!(
        faulty.status.code(),
        Some(0),
        "the failure is known: {faulty:?}"
    );
    let saved: Value =
        serde_json::from_slice(&std::fs::read(at("faulty.json")).expect("a report")).expect("JSON");
    assert_eq!(saved["side"], "client");
    let pong = saved["cases"]
        .as_array()
        .and_then(|cases| cases.iter().find(|c| c["id"] == "haip.client.pong"))
        .expect("the pong case ran");
    assert_eq!(pong["verdict"], "fail", "{pong:#}");

    let clean = in_dir(&[
        "run",
        "haip",
        "--client",
        "--target",
        "builtin",
        "--case",
        "haip.client.pong",
        "--case",
        "haip.client.hai-first",
        "--report",
        "json=clean.json",
    ]);
    assert_eq!(clean.status.code(), Some(0), "{clean:?}");
    let fixed = in_dir(&["report", "diff", "faulty.json", "clean.json"]);
    assert_eq!(fixed.status.code(), Some(0), "{fixed:?}");
    let said = String::from_utf8_lossy(&fixed.stdout);
    assert!(said.contains("haip.client.pong"), "{said}");
    let regressed = in_dir(&["report", "diff", "clean.json", "faulty.json"]);
    assert_eq!(regressed.status.code(), Some(1), "{regressed:?}");
    let matrix = in_dir(&["report", "matrix", "clean.json", "faulty.json"]);
    assert_eq!(matrix.status.code(), Some(0), "{matrix:?}");
    // The matrix is by rule: the fault's rule passes in one run and fails in the other.
    let said = String::from_utf8_lossy(&matrix.stdout);
    assert!(
        said.contains("| HAIP-PING-001 | must | pass | **fail** |"),
        "{said}"
    );
}

/// Over AG-UI's protobuf binding wireprobe answers in protobuf frames exactly when the client's
/// `Accept` admits the media type (HTTP + Protobuf › Negotiation), and in SSE otherwise; the
/// reference client passes either way, reading what it is given.
#[test]
fn an_ag_ui_client_admitting_protobuf_is_answered_in_it() {
    for (variant, media) in [
        (Some("accept-proto"), "application/vnd.ag-ui.event+proto"),
        (None, "text/event-stream"),
    ] {
        let mut args = vec!["--target", "builtin", "--transport", "proto"];
        args.extend(variant.iter().flat_map(|v| ["--variant", *v]));
        let (code, cases) = client_run("agui", &args);
        assert_all_pass("agui", &format!("over proto, {variant:?}"), code, &cases);
        let answered = cases[0]["transcript"].to_string();
        assert!(
            answered.contains(&format!("\"content_type\":\"{media}\"")),
            "{variant:?}: {answered}"
        );
    }
}
