//! Bounded child runs for the tests that start many wireprobe processes: a cap on how many
//! run at once, and a limit past which a run is killed and named instead of hanging CI.

// Each test binary that includes this file uses a part of it.
#![allow(dead_code)]

use std::process::Command;

/// Runs at once across this binary's tests: on two cores, some forty debug-built runs with a
/// client process per case starve each other past a case's timeout (a probe going
/// unanswered then makes a fault look harmless). The runs' 3 s timeout leaves room besides.
/// With four test threads (.cargo/config.toml) other tests' work runs beside these: at 24,
/// one of four `cargo test`s had a reference client run out of its 3 s before it sent a
/// thing; at 12, none of six (one of them with a core kept busy by another program).
pub const MAX_RUNS: usize = 12;

static RUNNING: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// A place among the runs allowed at once, given back when dropped.
pub struct Slot;

impl Slot {
    pub fn take() -> Slot {
        let (count, freed) = &RUNNING;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= MAX_RUNS {
            n = freed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, freed) = &RUNNING;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        freed.notify_one();
    }
}

/// Longest one client run may take: every case is bounded, so a run past this is a hang, and
/// the test says so instead of hanging CI (one was seen once in fresh-clone CI and not
/// reproduced: notes/issue-21/progress.md).
pub const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `cmd` to its end, or kills it at `limit` and fails naming `what`.
pub fn within(limit: std::time::Duration, mut cmd: Command, what: &str) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("wireprobe runs");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("wireprobe runs"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-QUIT", &pid.to_string()])
                .status();
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{what} hung: no end within {} s", limit.as_secs());
        }
    }
}
