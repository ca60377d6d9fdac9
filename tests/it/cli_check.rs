//! `wireprobe check`: real traffic from the reference target passes, recorded bad traffic is
//! caught rule by rule, bare captured lines work with --from, and bad input is reported.

use crate::common;

use std::io::Write;
use std::process::{Command, Output};
use wireprobe::verdict::Verdict;

fn check(args: &[&str], stdin: Option<&[u8]>) -> Output {
    check_protocol("haip", args, stdin)
}

fn check_protocol(protocol: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wireprobe"));
    cmd.arg("check").arg(protocol).args(args);
    match stdin {
        None => cmd.output().expect("wireprobe runs"),
        Some(input) => {
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("wireprobe runs");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input)
                .expect("write stdin");
            child.wait_with_output().expect("wireprobe ends")
        }
    }
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/haip/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The target's findings above `info` in `check`'s output.
fn server_findings(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(server)") && !l.contains("[info]"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_traffic_has_no_findings() {
    // Real transcripts: every case the correct reference target passes, back to back.
    let results = common::run_builtin_results(&[], None).await;
    let mut ndjson = Vec::new();
    for r in results.iter().filter(|r| r.verdict == Verdict::Pass) {
        for e in &r.transcript {
            serde_json::to_writer(&mut ndjson, e).expect("serialise");
            ndjson.push(b'\n');
        }
    }
    let out = check(&["-"], Some(&ndjson));
    // The suite provokes the target on purpose (gaps, duplicates, bad input), so the client
    // side has findings; the target's side must have none.
    let findings = server_findings(&out);
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn recorded_bad_server_is_caught_rule_by_rule() {
    let out = check(&[&fixture("bad-server.ndjson"), "--report", "json=-"], None);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let expected = std::fs::read_to_string(fixture("bad-server.expected")).expect("expectations");
    for rule in expected.lines().filter(|l| !l.is_empty()) {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains("(server)") && l.contains(rule)),
            "{rule} not found in:\n{stdout}"
        );
    }
    // The JSON report follows the findings on stdout.
    let json_start = stdout.find("{\n").expect("JSON report on stdout");
    let report: serde_json::Value =
        serde_json::from_str(&stdout[json_start..]).expect("valid JSON");
    assert!(report["summary"]["fail"].as_u64().unwrap_or(0) >= 6);
}

#[test]
fn bare_captured_lines_with_from_server() {
    let out = check(
        &[&fixture("captured-stdout.ndjson"), "--from", "server"],
        None,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("line 2 (server) [must] HAIP-ENV-001"),
        "{stdout}"
    );
    assert!(
        stdout.contains("line 3 (server) [must] HAIP-SEQ-001"),
        "{stdout}"
    );
}

#[test]
fn unreadable_input_is_a_clear_error() {
    let out = check(&["/nonexistent/transcript.ndjson"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
    let out = check(&["-"], Some(b"not a transcript\n{\"also\": \"not\"}\n"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 1:") && stderr.contains("line 2:"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huma_traffic_is_checked_from_its_socket_io_text() {
    let results = common::run_protocol_results("huma", &[], Some("huma.messaging.order")).await;
    let mut good = Vec::new();
    for e in results.iter().flat_map(|r| &r.transcript) {
        serde_json::to_writer(&mut good, e).expect("serialise");
        good.push(b'\n');
    }
    let out = check_protocol("huma", &["-"], Some(&good));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The same traffic with the burst's typing_start turned into a typing_end.
    let bad = String::from_utf8(good)
        .expect("UTF-8")
        .replace("typing_start", "typing_end");
    let out = check_protocol("huma", &["-"], Some(bad.as_bytes()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("(server) [must] HUMA-LC-001"), "{stdout}");
}

/// The stdout of `wireprobe serve nuum --stdio` (with `faults`) fed a few turns.
fn nuum_capture(faults: &[&str]) -> Vec<u8> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wireprobe"));
    cmd.args(["serve", "nuum", "--stdio"]);
    for f in faults {
        cmd.args(["--fault", f]);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("reference agent starts");
    let mut stdin = child.stdin.take().expect("stdin");
    for line in [
        r#"{"type":"control","action":"heartbeat"}"#,
        r#"{"type":"user","message":{"role":"user","content":"wireprobe: say hello"}}"#,
        r#"{"type":"user","message":{"role":"user","content":"wireprobe: tool echo {\"x\":1}"}}"#,
        r#"{"type":"user","message":{"role":"user","content":"wireprobe: fail"}}"#,
        r#"{"type":"control","action":"status"}"#,
        "not json",
    ] {
        writeln!(stdin, "{line}").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(stdin);
    child.wait_with_output().expect("agent ends").stdout
}

#[test]
fn captured_nuum_stdout_is_checked_with_from_server() {
    let good = nuum_capture(&[]);
    assert!(good.len() > 500, "{}", String::from_utf8_lossy(&good));
    let out = check_protocol("nuum", &["--from", "server", "-"], Some(&good));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("[must]"), "{stdout}");

    for (fault, rule) in [
        ("double-result", "NUUM-RES-001"),
        ("result-without-session-id", "NUUM-RES-003"),
        ("init-not-first", "NUUM-INIT-001"),
        ("stdout-log-lines", "NUUM-TR-001"),
        ("session-id-drift", "NUUM-SID-001"),
        ("no-turn-accepted", "NUUM-TURN-001"),
    ] {
        let bad = nuum_capture(&[fault]);
        let out = check_protocol("nuum", &["--from", "server", "-"], Some(&bad));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{fault}: {stdout}");
        assert!(
            stdout.contains(rule),
            "{fault} should break {rule}: {stdout}"
        );
    }
}

/// Fuzz runs against the correct reference that resumed their session: our first HAI granted
/// one message of credit and a resume announced a million, or a channel paused before the
/// resume was never resumed; the target went by the new connection. Whether a resuming HAI
/// resets credit and pauses is open (ERRATA 21), so neither reading is a finding.
#[test]
fn a_resume_may_reset_credit_and_pauses() {
    for name in [
        "resume-readvertises-credit.ndjson",
        "resume-ends-pauses.ndjson",
    ] {
        let findings = server_findings(&check(&[&fixture(name)], None));
        assert!(findings.is_empty(), "{name}: {findings:#?}");
    }
}

/// A `seq` that is not a decimal string (a server numbering by time in base 36) breaks the
/// sequence rules, not only the envelope's: it cannot start at "1" and go up by one.
#[test]
fn a_base36_seq_breaks_the_sequence_rules() {
    let out = check(&[&fixture("base36-seq.ndjson")], None);
    let findings = server_findings(&out);
    assert!(
        findings.iter().any(|f| f.contains("HAIP-SEQ-001")),
        "{findings:#?}"
    );
    assert!(
        findings.iter().any(|f| f.contains("HAIP-ENV-003")),
        "{findings:#?}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Raw SSE text (a `curl -N …/events/live` capture) is read as the live stream would have
/// delivered it: BOM, CRLF, comments, multi-line data, a line the parser drops.
#[test]
fn a_raw_sse_capture_is_checked_event_by_event() {
    let capture = concat!(
        "\u{feff}: heartbeat\r\n",
        "id: 1\r\ndata: {\"version\":\"1.0\",\"type\":\"MESSAGE_TURN_STARTED\",\"messageTurnId\":\"t\"}\r\n\r\n",
        "id: 1\ndata: {\"version\":\"1.0\",\"type\":\"TEXT_DELTA\",\n",
        "data: \"text\":\"x\",\"messageId\":\"m\",\"usage\":null}\n\n",
        "not a field\n",
        "id: 3\ndata: heartbeat\n\n",
    );
    let out = check_protocol("hpd", &["-"], Some(capture.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let shown =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    for rule in ["HPD-ENV-005", "HPD-SSE-001", "HPD-ENV-001"] {
        assert!(shown.contains(rule), "{rule} not in:\n{shown}");
    }
    let clean = "id: 1\ndata: {\"version\":\"1.0\",\"type\":\"MESSAGE_TURN_STARTED\",\"messageTurnId\":\"t\"}\n\n";
    let out = check_protocol("hpd", &["-"], Some(clean.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A UAE transcript names its three parties (`ui`, `agent`, `executor`): the spec's own flow
/// passes, and the UI's own rules (which live runs cannot judge: wireprobe is the UI there)
/// fail on a recorded transcript that breaks them, beside the executor's.
#[test]
fn a_three_party_uae_transcript_is_checked_party_by_party() {
    let fixture = |name: &str| format!("{}/tests/fixtures/uae/{name}", env!("CARGO_MANIFEST_DIR"));
    let good = check_protocol("uae", &[&fixture("three-party.ndjson")], None);
    assert_eq!(good.status.code(), Some(0), "{good:?}");
    let findings = |out: &Output| -> Vec<String> {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("line ") && !l.contains("[info]"))
            .map(|l| l.split_whitespace().take(5).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert!(findings(&good).is_empty(), "{:?}", findings(&good));
    let bad = check_protocol("uae", &[&fixture("three-party-bad.ndjson")], None);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert_eq!(
        findings(&bad),
        [
            "line 1 (client) [must] UAE-UI-001",
            "line 3 (client) [must] UAE-UI-002",
            "line 3 (client) [should] UAE-UI-003",
            "line 5 (server) [must] UAE-RES-004",
            "line 6 (server) [must] UAE-RES-001",
        ]
    );
}
