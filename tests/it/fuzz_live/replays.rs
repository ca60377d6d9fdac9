//! A finding replays: an HPD agent paced as a model streams (the reference's `paced` variant)
//! breaks a rule judged at each turn's end on every turn, and the campaign that finds it must
//! reproduce it every time it replays it, at the default `--jobs`, against the builtin target
//! (a conversation per run) and against one agent all runs share (started apart, as a user's
//! own is). Before each run waited out the turns it started, these reproduced 0 to 2 of 3.

use super::{first_finding_replay, on_threads, suite_named};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use wireprobe::transport::stdio::split_command;

/// `wireprobe serve hpd` with `args`, listening on a free port: the process and its URL.
fn served_hpd(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["serve", "hpd", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("wireprobe serve starts");
    // It says where it listens on stdout.
    let stdout = child.stdout.take().expect("its stdout");
    // Read to its end on a thread of its own: a pipe left unread would fill and stop the
    // server mid-log, and one closed would fail its writes.
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(first)) = lines.next() {
            let _ = first_tx.send(first);
        }
        for _ in lines {}
    });
    let first = first_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the server's first line");
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_owned();
    (child, url)
}

/// A campaign of `protocol` against `target` (with `more`), stopping at its first finding:
/// its output.
fn campaign_of(protocol: &str, target: &str, more: &[&str], out: &std::path::Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["fuzz", protocol, "--target", target, "--seed", "1"])
        .args(more)
        .args(["--runs", "100", "--max-findings", "1", "--shrink-secs", "3"])
        .arg("--out")
        .arg(out)
        .output()
        .expect("wireprobe fuzz runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// [`campaign_of`] HPD.
fn campaign(target: &str, more: &[&str], out: &std::path::Path) -> String {
    campaign_of("hpd", target, more, out)
}

/// The first finding in a campaign's words names `rule` and reproduced every time.
fn reproduced_every_time(words: &str, rule: &str) -> bool {
    let mut lines = words.lines().skip_while(|l| !l.starts_with("finding: "));
    lines
        .next()
        .is_some_and(|l| l.starts_with(&format!("finding: {rule} ")))
        && lines
            .find(|l| l.contains("reproduced "))
            .is_some_and(|l| l.contains("reproduced 3/3") && !l.contains("(flaky)"))
}

/// The `run --suite` replay of the case written for the campaign's first counted finding (its
/// `replay:` line names it; a flaky finding before it is written too), with `target` flags:
/// its exit code and output.
fn replayed(words: &str, target: &[&str]) -> (Option<i32>, String) {
    let replay = first_finding_replay(words).expect("a counted finding's replay line");
    let replay = split_command(replay).expect("a command line");
    let case = suite_named(&replay).expect("the replay names its suite");
    let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["run", "hpd", "--strict", "--suite"])
        .arg(case)
        .args(target)
        .output()
        .expect("wireprobe run runs");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), shown)
}

/// Each turn-end fault of a paced agent is found and reproduced 3/3, and its written case
/// replays with `run --suite` (`--strict`: the rule is a should) failing on the rule, once,
/// over the transport the campaign used.
pub(super) fn a_paced_agents_turn_end_findings_replay_every_time() {
    let faults = [
        ("missing-end", "HPD-STREAM-002"),
        ("turn-id-drift", "HPD-TURN-002"),
    ];
    let checks: Vec<(&str, &str, bool)> = faults
        .iter()
        .flat_map(|&(fault, rule)| [(fault, rule, false), (fault, rule, true)])
        .collect();
    let failed: Vec<String> = on_threads(checks.len(), &checks, |&(fault, rule, shared)| {
        let dir = tempfile::tempdir().expect("temp dir");
        let (words, target_flags, server) = if shared {
            // One agent every run shares, refusing an input while a turn runs as the
            // framework does.
            let (child, url) = served_hpd(&[
                "--fault",
                fault,
                "--variant",
                "paced",
                "--variant",
                "busy-409",
            ]);
            let words = campaign(&url, &[], dir.path());
            (words, vec!["--target".to_owned(), url], Some(child))
        } else {
            let flags = ["--fault", fault, "--variant", "paced"];
            let words = campaign("builtin", &flags, dir.path());
            let target = ["--target", "builtin"].iter().chain(&flags);
            (words, target.map(|s| s.to_string()).collect(), None)
        };
        let where_ = if shared { "a shared agent" } else { "builtin" };
        let mut problems = Vec::new();
        if !reproduced_every_time(&words, rule) {
            problems.push(format!("{fault} on {where_}: no {rule} finding 3/3"));
        } else {
            let flags: Vec<&str> = target_flags.iter().map(String::as_str).collect();
            let (code, shown) = replayed(&words, &flags);
            if code != Some(1) || !shown.contains(rule) || !shown.contains("1 cases") {
                problems.push(format!("{fault} on {where_}: replay {code:?}:\n{shown}"));
            }
        }
        if let Some(mut child) = server {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !problems.is_empty() {
            problems.push(words);
        }
        problems
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A stateful fault of each other protocol, judged at a turn's or run's end or across a
/// session, is found and reproduced every time at the default `--jobs`. (HAIP's reproduced 1
/// or 2 of 3 while the reference announced a run from its task, racing the PONG of the PING
/// behind the message: a replay ending at that PONG missed the run half the time.)
pub(super) fn a_stateful_fault_of_each_protocol_replays_every_time() {
    let faults = [
        ("haip", "run-id-reuse", "HAIP-RUN-002"),
        ("haip", "ignores-run-cancel", "HAIP-RUN-004"),
        ("nuum", "session-id-drift", "NUUM-SID-001"),
        ("huma", "no-typing-end-on-abort", "HUMA-LC-005"),
        ("agui", "leaves-message-open", "AGUI-RUN-004"),
        ("uae", "session-drift", "UAE-SES-001"),
    ];
    let failed: Vec<String> = on_threads(faults.len(), &faults, |&(protocol, fault, rule)| {
        let dir = tempfile::tempdir().expect("temp dir");
        let more = ["--fault", fault, "--timeout-ms", "4000"];
        let mut words = campaign_of(protocol, "builtin", &more, dir.path());
        // Beside a dozen campaigns on two cores, one replay of AG-UI's in three was seen not
        // to fail (CI, once in four runs); its words are kept here, with how that replay
        // ended, for the next look, and the campaign gets one more go. Two in a row is a
        // finding that does not replay.
        if !reproduced_every_time(&words, rule) {
            eprintln!("{protocol} {fault}: not 3/3 at the first go:\n{words}");
            let again = tempfile::tempdir().expect("temp dir");
            words = campaign_of(protocol, "builtin", &more, again.path());
        }
        (!reproduced_every_time(&words, rule))
            .then(|| format!("{protocol} {fault}: no {rule} finding 3/3:\n{words}"))
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// An agent keeping one text block id for the whole server (`shared-block-id`) names one
/// conversation's deltas by another's block, which only conversations streaming at once show.
/// The campaign's runs overlap; its replays alone never do. The finding is replayed as it ran,
/// beside the runs it overlapped, fails the same there, and is counted as needing them; its
/// written suite holds them too and fails on the rule with `run --suite`.
pub(super) fn a_bug_only_overlapping_runs_show_is_replayed_among_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = ["--fault", "shared-block-id", "--variant", "paced"];
    let words = campaign("builtin", &flags, dir.path());
    let mut lines = words.lines().skip_while(|l| !l.starts_with("finding: "));
    let found = lines
        .next()
        .is_some_and(|l| l.starts_with("finding: HPD-STREAM-001 "));
    let among = lines
        .next()
        .is_some_and(|l| l.contains("failed again as it ran (beside run"));
    assert!(found && among, "{words}");
    assert!(
        words.contains("replays: as it ran (") && words.contains("alone: 0 of 3"),
        "{words}"
    );
    let target: Vec<&str> = ["--target", "builtin"]
        .iter()
        .chain(&flags)
        .copied()
        .collect();
    // Its company's turns must overlap its own again, which the load decides as it did for
    // the campaign's runs (a run whose company did not overlap it was called flaky, in CI):
    // three goes, each miss printed.
    let mut missed = Vec::new();
    for _ in 0..3 {
        let (code, shown) = replayed(&words, &target);
        if code == Some(1) && shown.contains("HPD-STREAM-001") {
            return;
        }
        eprintln!("the company's replay missed: {code:?}\n{shown}");
        missed.push(format!("replay {code:?}:\n{shown}"));
    }
    panic!("{}\n{words}", missed.join("\n"));
}
