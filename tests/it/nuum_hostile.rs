//! `wireprobe run nuum --exec CMD` against programs that misbehave: one that exits at once,
//! prints garbage, never prints, or floods stdout is wrong as a whole — one line and exit 3
//! before any case; one that greets with init and then misbehaves is judged case by case
//! inside the cases' budgets, with the report written. No child process outlives a run.

use std::process::Command;
use std::time::Instant;

/// What a run against a hostile program ends with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// One line on stderr and exit 3: the program never spoke the protocol.
    Mute,
    /// The program spoke, then misbehaved: judged case by case, exit 1.
    Judged,
}

/// Runs the Nuum suite against `program` (a shell snippet) and checks the outcome.
fn run_against(name: &str, program: &str, outcome: Outcome) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let report = dir.path().join("report.json");
    // `exec` keeps the recorded pid the target's own.
    let exec = format!(
        "sh -c 'echo $$ >> \"{}\"; exec sh -c \"$0\"' '{program}'",
        pids.display()
    );
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args([
            "run",
            "nuum",
            "--exec",
            &exec,
            "--timeout-ms",
            "400",
            "--jobs",
            "8",
        ])
        .arg("--report")
        .arg(format!("json={}", report.display()))
        // A program that speaks is judged on a few families of cases: enough to see each
        // end inside its budget, without waiting out the whole suite.
        .args(match outcome {
            Outcome::Judged => &["--case", "nuum.init.*", "--case", "nuum.control.*"][..],
            Outcome::Mute => &[][..],
        })
        .output()
        .expect("wireprobe runs");
    let cases = wireprobe::suite::load_bundled(wireprobe::protocol::get("nuum").expect("nuum"))
        .expect("suite loads")
        .cases
        .len();
    match outcome {
        // It spoke, so it is judged: the init cases pass, the rest fail, skip or error (a
        // heartbeat never answered breaks its rule), all within their budgets.
        Outcome::Judged => {
            assert_eq!(out.status.code(), Some(1), "{name}");
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&report).expect("report written"))
                    .expect("report is JSON");
            let summary = &json["summary"];
            let total = summary["total"].as_u64().unwrap_or(0) as usize;
            assert!(total > 5 && total < cases, "{name}: {summary}");
            assert!(
                summary["pass"].as_u64().unwrap_or(0) <= 2,
                "{name}: {summary}"
            );
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "{name}"
            );
        }
        Outcome::Mute => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{name}: {stderr}");
            assert_eq!(stderr.trim().lines().count(), 1, "{name}: {stderr}");
            assert!(stderr.contains("nuum message"), "{name}: {stderr}");
        }
    }
    // Every process the run started is gone.
    let started_pids = std::fs::read_to_string(&pids).expect("the target was started");
    let alive: Vec<&str> = started_pids
        .lines()
        .filter(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
        .filter(|pid| {
            // A zombie has exited; only a running process outlives the run.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|stat| !stat.contains(") Z "))
                .unwrap_or(false)
        })
        .collect();
    assert!(
        alive.is_empty(),
        "{name}: processes still running: {alive:?}"
    );
}

#[test]
fn a_program_that_exits_at_once_is_one_line() {
    run_against("exits at once", "exit 0", Outcome::Mute);
}

#[test]
fn a_program_that_prints_garbage_is_one_line() {
    run_against(
        "garbage",
        "echo hello there; while read line; do echo nope; done",
        Outcome::Mute,
    );
}

#[test]
fn a_program_that_never_prints_is_one_line() {
    run_against("silent", "exec sleep 600", Outcome::Mute);
}

#[test]
fn a_program_that_floods_stdout_is_one_line() {
    run_against("flood", "exec yes garbage", Outcome::Mute);
}

/// Greeting first and misbehaving after, the program is judged case by case.
#[test]
fn a_program_that_greets_then_floods_is_judged() {
    run_against(
        "init then flood",
        r#"echo "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"version\":\"1\",\"tools\":[]}"; exec yes garbage"#,
        Outcome::Judged,
    );
}

#[test]
fn a_program_that_greets_then_goes_silent_is_judged() {
    run_against(
        "init then silence",
        r#"echo "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"version\":\"1\",\"tools\":[]}"; exec sleep 600"#,
        Outcome::Judged,
    );
}

/// A program that greets only once it has read a line is alive and speaks the protocol: it is
/// judged (its late init breaks NUUM-INIT-001), not called mute.
#[test]
fn a_program_that_greets_only_after_input_is_judged() {
    run_against(
        "init after input",
        r#"read line; echo "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"version\":\"1\",\"tools\":[]}"; exec sleep 600"#,
        Outcome::Judged,
    );
}

#[test]
fn a_missing_program_is_one_line_and_exit_3() {
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["run", "nuum", "--exec", "wireprobe-no-such-program --stdio"])
        .output()
        .expect("wireprobe runs");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
