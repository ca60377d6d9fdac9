//! The JSON report of every builtin run and every `list` listing, pinned by snapshots.
//!
//! Refactors of the engine (the step vocabulary, the protocol registry, where shared types
//! live) must not change what a user sees: these snapshots were taken before them, and any
//! difference other than timings and the reference's port is a change of behaviour.

use serde_json::Value;
use std::process::Command;

fn wireprobe(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(args)
        .output()
        .expect("wireprobe runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The report of `run ARGS --target builtin`, without what changes from run to run: when it
/// started, how long it and each case took, the port the reference listened on, and where in
/// the (unkept) transcript a violation was seen, each rule's violations after its first, and
/// how the operating system reported a dropped connection.
fn builtin_report(args: &[&str]) -> Value {
    let mut argv = vec!["run"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&[
        "--target",
        "builtin",
        "--transcripts",
        "none",
        "--report",
        "json=-",
    ]);
    let (code, stdout) = wireprobe(&argv);
    let mut report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{argv:?} (exit {code:?}) printed no JSON report: {e}"));
    let top = report.as_object_mut().expect("a report is an object");
    for key in ["started_at", "duration_ms", "target"] {
        top.remove(key);
    }
    if let Some(cases) = top.get_mut("cases").and_then(Value::as_array_mut) {
        for case in cases {
            if let Some(case) = case.as_object_mut() {
                case.remove("duration_ms");
                // How a dropped connection reached us (a reset or an end without a close
                // frame) is the operating system's timing, not the target's doing.
                if let Some(Value::String(message)) = case.get_mut("message") {
                    if let Some(at) = message.find("the connection ended (") {
                        message.truncate(at + "the connection ended".len());
                    }
                }
                // Which transcript entry a violation was seen at: an HTTP answer and the
                // stream's first event race (an order the spec leaves open), and the
                // transcripts themselves are not kept here.
                if let Some(violations) = case.get_mut("violations").and_then(Value::as_array_mut) {
                    for v in violations.iter_mut().filter_map(Value::as_object_mut) {
                        v.remove("frame");
                    }
                    // How far a stream got before its case ended is timing: it decides how
                    // often a rule is seen broken, and on which later events, not whether.
                    let mut seen = std::collections::BTreeSet::new();
                    violations.retain(|v| seen.insert(v["rule"].to_string()));
                }
            }
        }
    }
    report
}

#[test]
fn builtin_runs_report_what_they_reported_before() {
    let runs: &[(&str, &[&str])] = &[
        ("haip", &["haip"]),
        ("huma", &["huma"]),
        ("nuum", &["nuum"]),
        ("hpd", &["hpd"]),
        ("uae-agent", &["uae"]),
        ("uae-executor", &["uae", "--role", "executor"]),
    ];
    for (name, args) in runs {
        insta::assert_json_snapshot!(format!("run-{name}"), builtin_report(args));
    }
}

/// Apart from the clean runs, so the two go side by side.
#[test]
fn faulted_builtin_runs_report_what_they_reported_before() {
    let runs: &[(&str, &[&str])] = &[
        ("haip-hai-not-first", &["haip", "--fault", "hai-not-first"]),
        (
            "huma-accepts-bad-outcome",
            &["huma", "--fault", "accepts-bad-outcome"],
        ),
        (
            "nuum-init-not-first",
            &["nuum", "--fault", "init-not-first"],
        ),
        ("hpd-wrong-version", &["hpd", "--fault", "wrong-version"]),
        ("uae-epoch-ts", &["uae", "--fault", "epoch-ts"]),
    ];
    for (name, args) in runs {
        insta::assert_json_snapshot!(format!("run-{name}"), builtin_report(args));
    }
}

#[test]
fn listings_list_what_they_listed_before() {
    let (_, all) = wireprobe(&["list"]);
    insta::assert_snapshot!("list", all);
    for p in ["haip", "huma", "nuum", "hpd", "uae"] {
        for what in ["--rules", "--cases", "--faults", "--variants"] {
            let (code, out) = wireprobe(&["list", p, what]);
            assert_eq!(code, Some(0), "list {p} {what}");
            insta::assert_snapshot!(format!("list-{p}{what}"), out);
        }
    }
}
