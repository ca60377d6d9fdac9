//! `wireprobe run nuum --exec CMD` against programs that misbehave: one that exits at once,
//! prints garbage, never prints, or floods stdout. Every case ends `error` (or `skip`) inside
//! its budget, the report is written, and no child process outlives the run.

mod common;

use common::hostile;
use std::process::Command;
use std::time::Instant;

/// Runs the Nuum suite against `program` (a shell snippet) and checks the outcome.
fn run_against(name: &str, program: &str) {
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
        .output()
        .expect("wireprobe runs");
    let cases = wireprobe::suite::load_bundled(wireprobe::protocol::get("nuum").expect("nuum"))
        .expect("suite loads")
        .cases
        .len();
    hostile::assert_run_errored(name, &out, started.elapsed(), &report, cases);
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
fn a_program_that_exits_at_once_gives_errors() {
    run_against("exits at once", "exit 0");
}

#[test]
fn a_program_that_prints_garbage_gives_errors() {
    run_against(
        "garbage",
        "echo hello there; while read line; do echo nope; done",
    );
}

#[test]
fn a_program_that_never_prints_gives_errors() {
    run_against("silent", "exec sleep 600");
}

#[test]
fn a_program_that_floods_stdout_gives_errors() {
    run_against("flood", "exec yes garbage");
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
