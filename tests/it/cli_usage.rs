//! Arguments that would quietly turn a build green are usage errors (exit 2), found before any
//! target is contacted: each command here points at a port nothing listens on, so a check
//! that let the run start would end it with exit 3 instead.

use std::process::Command;

const NOWHERE: &str = "ws://127.0.0.1:1/";

/// Runs `wireprobe ARGS`; its exit code and stderr.
fn wireprobe(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(args)
        .output()
        .expect("wireprobe runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_usage(args: &[&str], says: &str) {
    let (code, stderr) = wireprobe(args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(says),
        "{args:?} should say {says:?}: {stderr}"
    );
}

#[test]
fn patterns_that_select_nothing_are_usage_errors() {
    assert_usage(
        &[
            "run",
            "haip",
            "--target",
            NOWHERE,
            "--case",
            "haip.no-such.*",
        ],
        "\"haip.no-such.*\" matches no case",
    );
    assert_usage(
        &["run", "uae", "--target", NOWHERE, "--skip", "typo*"],
        "\"typo*\" matches no case",
    );
}

#[test]
fn a_baseline_naming_no_case_or_rule_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let baseline = dir.path().join("known-failing.txt");
    // Case ids, labelled case ids and rule ids are all known; the typo is not.
    std::fs::write(
        &baseline,
        "hpd.turn.ends@sse\nHPD-ENV-001\nhpd.turn.endz # a typo\n",
    )
    .expect("write");
    let path = baseline.to_string_lossy();
    assert_usage(
        &["run", "hpd", "--target", NOWHERE, "--known-failing", &path],
        "\"hpd.turn.endz\", which is neither a case nor a rule of hpd",
    );
}

#[test]
fn reports_that_would_mix_or_cannot_be_written_are_usage_errors() {
    assert_usage(
        &[
            "run", "uae", "--target", NOWHERE, "--report", "json=-", "--report", "junit=-",
        ],
        "more than one --report goes to stdout",
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_string_lossy().into_owned();
    assert_usage(
        &[
            "run",
            "uae",
            "--target",
            NOWHERE,
            "--report",
            &format!("json={path}"),
        ],
        "cannot be written: it is a directory",
    );
}

#[test]
fn fuzzing_for_nothing_is_a_usage_error() {
    for flag in ["--duration", "--runs"] {
        let (code, stderr) = wireprobe(&["fuzz", "uae", "--target", NOWHERE, flag, "0"]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
    }
}

#[test]
fn a_role_the_protocol_does_not_have_is_a_usage_error() {
    assert_usage(
        &["run", "haip", "--target", NOWHERE, "--role", "agent"],
        "--role applies to protocols whose targets play one of several parts",
    );
    assert_usage(
        &["run", "uae", "--target", NOWHERE, "--role", "ui"],
        "uae targets play no role \"ui\"",
    );
}

/// A URL whose scheme the protocol's transport cannot speak says which scheme to use (exit 2),
/// instead of calling the target unreachable (exit 3).
#[test]
fn a_target_of_the_wrong_scheme_says_which_to_use() {
    assert_usage(
        &["run", "haip", "--target", "http://127.0.0.1:1/"],
        "haip targets are ws/wss URLs",
    );
    assert_usage(
        &["run", "hpd", "--target", "ws://127.0.0.1:1/"],
        "hpd targets are http/https URLs",
    );
    assert_usage(
        &["fuzz", "uae", "--target", "127.0.0.1:1"],
        "not a URL without a scheme",
    );
}

/// `--rule` picks the cases written for matching rules; a rule pattern that matches no rule,
/// or a selection that leaves no case for the role the target plays, is a usage error.
#[test]
fn rule_patterns_and_empty_selections_are_checked() {
    assert_usage(
        &["run", "uae", "--target", NOWHERE, "--rule", "UAE-NOPE-*"],
        "--rule \"UAE-NOPE-*\" matches no rule",
    );
    assert_usage(
        &[
            "run",
            "uae",
            "--target",
            NOWHERE,
            "--role",
            "executor",
            "--case",
            "uae.agent.*",
        ],
        "select no case for a target playing executor",
    );
    // A selection that holds runs: against nothing listening, that is exit 3.
    let (code, stderr) = wireprobe(&[
        "run",
        "uae",
        "--target",
        NOWHERE,
        "--rule",
        "UAE-RES-*",
        "--role",
        "executor",
    ]);
    assert_eq!(code, Some(3), "{stderr}");
}

/// `--max-failures N` starts no case once N have failed: the rest are skipped and say why.
#[test]
fn max_failures_stops_starting_cases() {
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args([
            "run",
            "uae",
            "--target",
            "builtin",
            "--jobs",
            "1",
            "--max-failures",
            "1",
        ])
        .args([
            "--fault",
            "epoch-ts",
            "--fault",
            "session-drift",
            "--report",
            "json=-",
        ])
        .output()
        .expect("wireprobe runs");
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let cases = report["cases"].as_array().expect("cases");
    let failed = cases.iter().filter(|c| c["verdict"] == "fail").count();
    let stopped = cases
        .iter()
        .filter(|c| {
            c["message"]
                .as_str()
                .is_some_and(|m| m.contains("--max-failures 1"))
        })
        .count();
    assert_eq!(failed, 1, "{cases:#?}");
    assert_eq!(stopped, cases.len() - 1);
}

/// A known-flaky case that fails is run again: one that then passes reports its history and
/// passes; one that keeps failing reports it and does not fail the run either.
#[test]
fn known_flaky_cases_are_rerun_and_never_fail_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let me = env!("CARGO_BIN_EXE_wireprobe");
    // Spawn 1 is the probe, spawn 2 the case's first run (faulty), later spawns are correct.
    let script = format!(
        "n=$(cat {d}/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {d}/count; \
         if [ $n -eq 2 ]; then exec {me} serve uae --stdio --fault session-drift; \
         else exec {me} serve uae --stdio; fi",
        d = dir.path().display()
    );
    let flaky = dir.path().join("flaky.txt");
    std::fs::write(&flaky, "uae.agent.session\n").expect("write");
    // The run's one case (the exit code must be 0 either way: a flaky case never fails it).
    let case_of = |exec: &str| -> serde_json::Value {
        let out = Command::new(me)
            .args(["run", "uae", "--exec", exec, "--case", "uae.agent.session"])
            .arg("--known-flaky")
            .arg(&flaky)
            .args(["--report", "json=-"])
            .output()
            .expect("wireprobe runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        report["cases"][0].clone()
    };
    let message = |case: &serde_json::Value| case["message"].as_str().unwrap_or("").to_owned();
    let case = case_of(&format!("sh -c '{script}'"));
    assert_eq!(case["verdict"], "pass", "{case}");
    assert!(
        message(&case).starts_with("known flaky (fail → pass)"),
        "{case}"
    );
    // Always failing: still reported as failing, with its history, and the run still passes.
    let case = case_of(&format!("{me} serve uae --stdio --fault session-drift"));
    assert_eq!(case["verdict"], "fail", "{case}");
    assert!(
        message(&case).contains("fail → fail → fail → fail"),
        "{case}"
    );
}

#[test]
fn a_rule_is_listed_with_its_sentence_cases_faults_and_variants() {
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["list", "haip", "--rule", "HAIP-SEQ-001"])
        .output()
        .expect("wireprobe runs");
    assert!(out.status.success(), "{out:?}");
    let out = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "HAIP-SEQ-001 (must; binds either side",
        "named in the code at:\n  src/protocol/haip/checker/sequencing.rs:",
        "readings of suites/haip/ERRATA.md that name it:",
        "the spec says:\n  \"Incrementing `seq` (starting at `\"1\"`).\"",
        "§Sequencing and Replay",
        "haip.seq.server-numbering",
        "seq-starts-at-0",
        "whole-text",
    ] {
        assert!(out.contains(shown), "{shown:?} not in:\n{out}");
    }
    assert_usage(&["list", "haip", "--rule", "HAIP-NOPE-1"], "has no rule");
}

/// `explain` finds the rule's protocol by itself, and shows the same screen.
#[test]
fn a_rule_is_explained_from_its_id_alone() {
    let explained = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["explain", "nuum-inj-002"])
        .output()
        .expect("wireprobe runs");
    assert!(explained.status.success(), "{explained:?}");
    let out = String::from_utf8_lossy(&explained.stdout);
    for shown in [
        "NUUM-INJ-002 (must; binds the server",
        "src/protocol/nuum/checker.rs:",
        "no-injection — queued messages are not injected",
        "nuum.inject.injected",
        "How the document is read › Injection — ",
    ] {
        assert!(out.contains(shown), "{shown:?} not in:\n{out}");
    }
    assert_usage(&["explain", "NUUM-NOPE-001"], "no protocol has a rule");
}
