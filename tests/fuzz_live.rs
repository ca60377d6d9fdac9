//! `wireprobe fuzz` against the reference targets: with a fixed seed it finds every fault it
//! can reach and names one of the fault's rules; it finds nothing against the correct targets;
//! a finding it writes replays to the same failure with `wireprobe run --suite`. Faults out of
//! the fuzzer's reach are listed with the reason (the suite's cases judge them).

use std::path::Path;
use std::process::Command;
use wireprobe::reference;

const SEED: &str = "1";

/// Runs `wireprobe fuzz`; the rule of the finding, if any.
fn fuzz(protocol: &str, fault: Option<&str>, runs: u32, out: &Path) -> Option<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wireprobe"));
    cmd.args(["fuzz", protocol, "--target", "builtin", "--seed", SEED])
        .args([
            "--runs",
            &runs.to_string(),
            "--jobs",
            "4",
            "--timeout-ms",
            "2000",
        ])
        .arg("--out")
        .arg(out);
    if let Some(f) = fault {
        cmd.args(["--fault", f]);
    }
    let output = cmd.output().expect("wireprobe runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rule = stdout
        .lines()
        .find_map(|l| l.strip_prefix("finding: "))
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_owned);
    let expected = if rule.is_some() { 1 } else { 0 };
    assert_eq!(
        output.status.code(),
        Some(expected),
        "{protocol} {fault:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    rule
}

/// Every fault in `reachable` is found (naming one of its rules) within `runs`, and
/// `reachable` plus `out_of_reach` is the whole catalogue.
fn assert_faults_found(
    protocol: &str,
    reachable: &[&str],
    out_of_reach: &[(&str, &str)],
    runs: u32,
) {
    let catalogue = reference::faults(protocol).expect("protocol has faults");
    for fault in catalogue {
        let listed = reachable.contains(&fault.name) as u8
            + out_of_reach.iter().any(|(n, _)| *n == fault.name) as u8;
        assert_eq!(
            listed, 1,
            "{protocol} fault {} must be listed exactly once",
            fault.name
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut missed = Vec::new();
    for name in reachable {
        let fault = catalogue
            .iter()
            .find(|f| f.name == *name)
            .expect("known fault");
        match fuzz(protocol, Some(name), runs, dir.path()) {
            Some(rule) if fault.breaks.contains(&rule.as_str()) => {}
            other => missed.push(format!(
                "{name} (breaks {:?}): found {other:?}",
                fault.breaks
            )),
        }
    }
    assert!(missed.is_empty(), "{protocol}: {missed:#?}");
}

#[test]
fn correct_references_give_no_finding() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (protocol, runs) in [("haip", 400), ("nuum", 150), ("huma", 40)] {
        assert_eq!(fuzz(protocol, None, runs, dir.path()), None, "{protocol}");
    }
}

#[test]
fn a_written_finding_replays_with_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rule = fuzz("haip", Some("no-pong"), 20, dir.path()).expect("a finding");
    let case = std::fs::read_dir(dir.path())
        .expect("out dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "toml"))
        .expect("a written case");
    assert!(
        case.with_extension("ndjson").exists(),
        "the transcript is written too"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args([
            "run", "haip", "--target", "builtin", "--fault", "no-pong", "--suite",
        ])
        .arg(&case)
        .output()
        .expect("wireprobe runs");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(shown.contains(&rule), "{rule} not in:\n{shown}");
    // Against the correct target the same case passes.
    let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["run", "haip", "--target", "builtin", "--suite"])
        .arg(&case)
        .output()
        .expect("wireprobe runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Faults the HAIP handshake cases judge: the fuzzer's session does its own HAI.
const HAIP_HANDSHAKE: &str =
    "the handshake is the session's own; the fuzzer does not mutate our HAI (handshake cases)";
/// Sequence-level behaviour over time or across reconnects.
const HAIP_SEQUENCE: &str =
    "gaps, replay windows and resumes are judged over time or across reconnects (sequencing cases)";
/// Answers owed later, to an id only known at run time.
const OWED_LATER: &str =
    "an answer owed later to an id the target chose needs a capture and a deadline (suite cases)";
const HAIP_AUTH: &str =
    "the fuzzer connects with valid credentials; tokens are the auth cases' job";
const HAIP_CREDIT: &str =
    "our session grants ample credit and never exhausts the target's (flow cases)";
const HAIP_BASE64: &str = "needs a client without binary_frames (media cases)";

#[test]
fn fuzzing_finds_haip_faults() {
    assert_faults_found(
        "haip",
        &[
            "hai-not-first",
            "hai-missing-accept-events",
            "bad-version-string",
            "no-timestamp",
            "bad-uuid",
            "numeric-seq",
            "bad-channel",
            "extra-envelope-field",
            "unknown-event-type",
            "bad-pv",
            "crit-ignored",
            "bad-ping-payload",
            "binary-len-mismatch",
            "audio-without-mime",
            "seq-starts-at-0",
            "seq-skips",
            "ack-beyond",
            "run-finished-twice",
            "run-id-reuse",
            "run-error-without-run-id",
            "bad-run-status",
            "no-pong",
            "pong-nonce",
            "text-part-before-start",
            "bad-message-id",
            "tool-update-after-done",
            "bad-tool-progress",
            "ignores-pause",
            "lenient-envelope",
            "error-without-message",
        ],
        &[
            ("no-version-check", HAIP_HANDSHAKE),
            ("wrong-error-code", HAIP_HANDSHAKE),
            ("no-close-on-version", HAIP_HANDSHAKE),
            ("ignores-accept-events", HAIP_HANDSHAKE),
            ("base64-with-bin-mime", HAIP_BASE64),
            ("binary-to-non-binary-peer", HAIP_BASE64),
            ("no-replay-request", HAIP_SEQUENCE),
            ("eager-replay-request", HAIP_SEQUENCE),
            ("no-duplicate-drop", HAIP_SEQUENCE),
            ("small-replay-window", HAIP_SEQUENCE),
            ("silent-replay-too-old", HAIP_SEQUENCE),
            ("no-resume", HAIP_SEQUENCE),
            ("resume-unknown-accepted", HAIP_SEQUENCE),
            ("ignores-run-cancel", OWED_LATER),
            (
                "no-run-limit",
                "needs more runs held open at once than the target allows (run cases)",
            ),
            ("no-tool-done", OWED_LATER),
            ("ignores-tool-cancel", OWED_LATER),
            ("ignores-client-credit", HAIP_CREDIT),
            ("no-flow-enforcement", HAIP_CREDIT),
            ("zero-credit-grant", HAIP_CREDIT),
            ("auth-optional", HAIP_AUTH),
            ("auth-accepts-garbage", HAIP_AUTH),
            ("auth-ignores-signature", HAIP_AUTH),
            ("token-expiry", HAIP_AUTH),
            ("auth-ignores-iat", HAIP_AUTH),
            ("auth-query-ignored", HAIP_AUTH),
        ],
        100,
    );
}

#[test]
fn fuzzing_finds_nuum_faults() {
    assert_faults_found(
        "nuum",
        &[
            "stdout-log-lines",
            "init-not-first",
            "init-twice",
            "init-without-version",
            "assistant-wrong-role",
            "tool-use-without-input",
            "tool-result-wrong-id",
            "tool-result-as-user",
            "double-result",
            "result-error-subtype",
            "result-without-duration",
            "is-error-on-success",
            "no-turn-accepted",
            "bad-task-status",
            "task-without-timestamps",
            "error-without-message",
            "session-id-drift",
            "no-heartbeat-ack",
            "no-injection",
            "exits-on-bad-input",
            "silent-on-bad-input",
        ],
        &[
            (
                "exits-when-idle",
                "needs 800 ms of idleness after a turn (transport cases)",
            ),
            ("no-result-on-fail", OWED_LATER),
            (
                "rejects-content-blocks",
                "a refusal of valid input is an answer the fuzzer does not wait for (turn cases)",
            ),
            ("no-tasks-snapshot", OWED_LATER),
            (
                "new-session-id",
                "needs a restart against the same database (session cases)",
            ),
            ("ignores-interrupt", OWED_LATER),
            (
                "status-subtype",
                "the status answer's shape is judged by the control cases",
            ),
            (
                "status-always-idle",
                "needs a status asked while a turn is known to run (control cases)",
            ),
            ("no-queueing", OWED_LATER),
            (
                "stalls-on-huge-line",
                "needs a line over the target's limit, megabytes long (bad-input cases)",
            ),
        ],
        100,
    );
}

/// HUMA fuzzes slowly (each probe is 300 ms of silence), so only faults found in the first
/// few runs are held here; more are found with more runs (no-result-limit, forbidden keys),
/// and the suite judges every one.
#[test]
fn fuzzing_finds_huma_faults() {
    let dir = tempfile::tempdir().expect("temp dir");
    let catalogue = reference::faults("huma").expect("protocol has faults");
    for name in [
        "accepts-unknown-type",
        "no-name-limit",
        "accepts-bad-outcome",
        "error-on-event-channel",
        "unknown-server-event",
    ] {
        let fault = catalogue
            .iter()
            .find(|f| f.name == name)
            .expect("known fault");
        let rule = fuzz("huma", Some(name), 40, dir.path());
        assert!(
            rule.as_deref().is_some_and(|r| fault.breaks.contains(&r)),
            "{name} (breaks {:?}): found {rule:?}",
            fault.breaks
        );
    }
}
