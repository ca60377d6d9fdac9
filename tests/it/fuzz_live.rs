//! `wireprobe fuzz` against the reference targets: with a fixed seed it finds every fault it
//! can reach and names one of the fault's rules; it finds nothing against the correct targets;
//! a finding it writes replays to the same failure with `wireprobe run --suite`. The few faults
//! out of the fuzzer's reach are listed with the reason (the suite's cases judge them).

use std::path::Path;
use std::process::Command;
use wireprobe::reference;

use crate::common::bounded;
mod clients;
mod findings;
mod hostile;
mod replays;
mod workers;

const SEED: &str = "1";

/// Fuzz processes run at once by a fault-reach test.
const PARALLEL_FUZZERS: usize = 12;

/// `f` of each item, on `threads` threads, in the items' order (each fuzz command runs several
/// sequences at once, and mostly waits on its target).
fn on_threads<A: Sync, T: Send>(threads: usize, items: &[A], f: impl Fn(&A) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { return };
                let out = f(item);
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, out));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, out)| out).collect()
}

/// Runs `wireprobe fuzz`; the rule of the finding, if any.
fn fuzz(protocol: &str, fault: Option<&str>, runs: u32, out: &Path) -> Option<String> {
    fuzz_as(protocol, None, fault, runs, out)
}

/// [`fuzz`] against a target playing `role`.
fn fuzz_as(
    protocol: &str,
    role: Option<&str>,
    fault: Option<&str>,
    runs: u32,
    out: &Path,
) -> Option<String> {
    fuzz_with(protocol, role, fault, &[], runs, out).rule
}

/// What a campaign found, and what it said on the way (its summary: runs skipped, and why).
struct Fuzzed {
    rule: Option<String>,
    /// The finding's line (`finding: RULE (verdict) in run N: …`), empty without one.
    finding: String,
    /// The finding did not reproduce every time it was re-run.
    flaky: bool,
    /// The first finding's `replay:` command, as printed.
    replay: Option<String>,
    stderr: String,
}

/// [`fuzz_as`] with more arguments (`--variant`, `--max-len`).
fn fuzz_with(
    protocol: &str,
    role: Option<&str>,
    fault: Option<&str>,
    more: &[&str],
    runs: u32,
    out: &Path,
) -> Fuzzed {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wireprobe"));
    cmd.args(["fuzz", protocol, "--target", "builtin", "--seed", SEED]);
    cmd.args(more);
    if let Some(role) = role {
        cmd.args(["--role", role]);
    }
    // A target over stdio is a process per run, and twelve fuzzers starting four each at once
    // on two busy cores have been seen to take over two seconds to write their first line (a
    // Nuum agent's init): judged, rightly at that budget, as no greeting on startup.
    let spawns = wireprobe::protocol::get(protocol)
        .is_some_and(|p| p.transport() == wireprobe::protocol::TransportKind::Stdio);
    let timeout_ms = if spawns { "4000" } else { "2000" };
    cmd.args([
        "--runs",
        &runs.to_string(),
        "--jobs",
        "4",
        "--timeout-ms",
        timeout_ms,
        // The finding's rule is what these tests judge; a short shrink keeps them quick, and
        // the campaign stops at the first finding that reproduces.
        "--shrink-secs",
        "2",
        "--max-findings",
        "1",
    ])
    .arg("--out")
    .arg(out);
    if let Some(f) = fault {
        cmd.args(["--fault", f]);
    }
    let output = cmd.output().expect("wireprobe runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rule = crate::common::fuzz_finding(&stdout).map(|(rule, _)| rule);
    let expected = if rule.is_some() { 1 } else { 0 };
    assert_eq!(
        output.status.code(),
        Some(expected),
        "{protocol} {fault:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    if rule.is_some() && fault.is_none() {
        // A finding against a correct reference is a false alarm to chase: keep its words and
        // its replay file, which the test's temporary directory would take with it.
        eprintln!("{protocol} {role:?} without a fault: {stdout}");
        let kept = std::env::temp_dir().join(format!("wireprobe-false-alarm-{protocol}"));
        let _ = std::fs::create_dir_all(&kept);
        for file in std::fs::read_dir(out).into_iter().flatten().flatten() {
            let _ = std::fs::copy(file.path(), kept.join(file.file_name()));
        }
        eprintln!("replay files kept in {}", kept.display());
    }
    assert_not_lengthened(&stdout, &format!("{protocol} {fault:?}"));
    let finding = stdout
        .lines()
        .find(|l| l.starts_with("finding: "))
        .unwrap_or_default()
        .to_owned();
    Fuzzed {
        rule,
        finding,
        flaky: first_finding_flaky(&stdout),
        replay: stdout
            .lines()
            .skip_while(|l| !l.starts_with("finding: "))
            .find_map(|l| l.strip_prefix("  replay: "))
            .map(str::to_owned),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Faults whose findings judge a turn the generated input itself races: Nuum's failed turn
/// (its result's subtype is the fault) with an `interrupt` sent behind the message that began
/// it. Whether the turn fails or is cancelled is the agent's race with its stdin, and a
/// printed replay in a process of its own beside a dozen campaigns lost it three goes in a
/// row where the campaign's replays had won it 3/3. Their misses are printed, and stand.
const RACES_ITS_INPUT: &[(&str, &str)] = &[
    ("nuum", "error-subtypes"),
    ("nuum", "result-unknown-subtype"),
];

/// Runs a finding's printed `replay:` command as a user would (`--strict`, so a `should`
/// finding fails it too; up to three goes, see below): `None` once it failed on `rule`, or,
/// for a finding that the target ended after an adversarial input (the keeps-working rule,
/// which a campaign names for a target that ended), by the target ending; else what the last
/// go printed.
fn replay_misses(fuzzed: &Fuzzed, rule: &str) -> Option<String> {
    let Some(command) = &fuzzed.replay else {
        return Some("no replay: line".into());
    };
    let words = wireprobe::transport::stdio::split_command(command).expect("a command line");
    let Some(("wireprobe", args)) = words.split_first().map(|(w, a)| (w.as_str(), a)) else {
        return Some(format!("not a wireprobe command: {command}"));
    };
    // Up to three goes. A replay that could not complete (exit 3, an `error`) says nothing of
    // the finding. One that passed is a miss: a finding counts when it failed again in one of
    // its replays, and so does its printed replay here; every miss is printed, with its case,
    // for the next look (beside a dozen campaigns on two cores, Nuum's `fail` turn replays
    // were seen to pass at the first go).
    let case = args
        .iter()
        .position(|a| a == "--suite")
        .and_then(|at| args.get(at + 1))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..3 {
        let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .args(args)
            .arg("--strict")
            .output()
            .expect("the replay runs");
        let code = output.status.code();
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let ended = fuzzed
            .finding
            .contains("the target ended after an adversarial input")
            && (shown.contains("ended") || shown.contains("exited"));
        if code == Some(1) && (shown.contains(rule) || ended) {
            return None;
        }
        let missed = format!("{command} (--strict) exited {code:?}:\n{shown}");
        eprintln!("a replay missed: {missed}\nits case:\n{case}");
        last = Some(missed);
    }
    last
}

/// The first finding's `reproduced A/B` line says it did not reproduce every time (a
/// campaign prints each finding's line, then how it was shrunk and replayed).
fn first_finding_flaky(stdout: &str) -> bool {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("finding: "))
        .find(|l| l.contains("reproduced "))
        .is_some_and(|l| l.contains("(flaky)"))
}

/// Shrinking never lengthens a finding: its `shrunk from A to B steps` line has B <= A.
fn assert_not_lengthened(stdout: &str, what: &str) {
    if let Some(shrunk) = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("shrunk from "))
    {
        let counts: Vec<usize> = shrunk
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        assert!(
            counts.len() >= 2 && counts[1] <= counts[0],
            "{what}: shrinking lengthened the finding: {stdout}"
        );
    }
}

/// Every fault of `protocol`'s reference target but those in `out_of_reach` (each with the
/// reason) is found within `runs`, named by one of its rules.
fn assert_faults_found(protocol: &str, out_of_reach: &[(&str, &str)], runs: u32) {
    assert_faults_found_as(protocol, None, out_of_reach, &[], runs)
}

/// A finding for `fault` whose first rule is one `fault` breaks, or, for a fault in
/// `beside` (each with the reason), whose words name one.
fn names_fault(fault: &reference::Fault, fuzzed: &Fuzzed, beside: &[(&str, &str)]) -> bool {
    let Some(rule) = &fuzzed.rule else {
        return false;
    };
    fault.breaks.contains(&rule.as_str())
        || (beside.iter().any(|(n, _)| *n == fault.name)
            && fault
                .breaks
                .iter()
                .any(|b| fuzzed.finding.contains(&format!("{b}:"))))
}

/// [`assert_faults_found`] against a target playing `role`; a fault in `beside` is found when
/// its rule is named anywhere in the finding (see [`names_fault`]).
fn assert_faults_found_as(
    protocol: &str,
    role: Option<&str>,
    out_of_reach: &[(&str, &str)],
    beside: &[(&str, &str)],
    runs: u32,
) {
    let catalogue = reference::get(protocol)
        .expect("protocol has a reference")
        .faults;
    for (name, _) in out_of_reach.iter().chain(beside) {
        assert!(
            catalogue.iter().any(|f| f.name == *name),
            "{protocol} has no fault {name}"
        );
    }
    let reachable: Vec<_> = catalogue
        .iter()
        .filter(|f| !out_of_reach.iter().any(|(n, _)| *n == f.name))
        .collect();
    // A few fuzzers at once: much of a run is waiting on the target (oracles, timeouts).
    let missed: Vec<String> = std::thread::scope(|scope| {
        reachable
            .chunks(reachable.len().div_ceil(PARALLEL_FUZZERS))
            .map(|share| {
                scope.spawn(move || {
                    // Each fuzzer writes its findings apart from the others'.
                    let dir = tempfile::tempdir().expect("temp dir");
                    share
                        .iter()
                        .filter_map(|fault| {
                            let fuzz = || {
                                fuzz_with(protocol, role, Some(fault.name), &[], runs, dir.path())
                            };
                            let mut fuzzed = fuzz();
                            // A first finding that did not reproduce is a matter of time on
                            // two cores running a dozen fuzzers (a refusal the fault's server
                            // may legally send, late enough to break the liveness probe's
                            // silence: HUMA-ERR-003 before HUMA-VAL-007, seen in CI): the
                            // campaign stops there, so it gets one more go.
                            if fuzzed.flaky && !names_fault(fault, &fuzzed, beside) {
                                fuzzed = fuzz();
                            }
                            // A `finding:` names the fault's rule only when it failed again
                            // in a replay (one that never did is a `flaky:` line).
                            if !names_fault(fault, &fuzzed, beside) {
                                return Some(format!(
                                    "{} (breaks {:?}): found {:?}",
                                    fault.name, fault.breaks, fuzzed.rule
                                ));
                            }
                            // And the command it printed replays it, unless the campaign
                            // said its own replays did not always (`reproduced 2/3 (flaky)`),
                            // or its case races its own input ([`RACES_ITS_INPUT`]): such a
                            // miss is printed, and stands.
                            let rule = fuzzed.rule.as_deref().unwrap_or_default();
                            let missed = replay_misses(&fuzzed, rule)?;
                            let said =
                                format!("{} (found {rule}): the replay {missed}", fault.name);
                            let races = RACES_ITS_INPUT.contains(&(protocol, fault.name));
                            match fuzzed.flaky || races {
                                true => {
                                    eprintln!("a finding whose replay may miss: {said}");
                                    None
                                }
                                false => Some(said),
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flat_map(|h| h.join().expect("a fuzzing thread"))
            .collect()
    });
    assert!(missed.is_empty(), "{protocol} {role:?}: {missed:#?}");
}

fn correct_references_give_no_finding() {
    std::thread::scope(|scope| {
        let runs = [
            ("haip", 400),
            ("nuum", 150),
            ("huma", 40),
            ("hpd", 150),
            ("agui", 300),
        ]
        .map(|(protocol, runs)| {
            scope.spawn(move || {
                let dir = tempfile::tempdir().expect("temp dir");
                (protocol, fuzz(protocol, None, runs, dir.path()))
            })
        });
        // HAIP targets a scenario cannot reach: a scenario that does not start ends at what
        // shows it cannot, not at the step timeout (2 s a run, before). One granting little
        // credit: long runs spend it, and what it then refuses is not judged as ignored (a
        // false TOOL-003 with seed 1 at run 120, before); one without our slow tool, which
        // ends the call at once.
        let unreached = [
            ("little-credit", "the target answered with ERROR"),
            ("other-tools", "the target answered with TOOL_DONE"),
        ]
        .map(|(variant, ends)| {
            scope.spawn(move || {
                let dir = tempfile::tempdir().expect("temp dir");
                let more = ["--variant", variant, "--max-len", "50"];
                (
                    variant,
                    ends,
                    fuzz_with("haip", None, None, &more, 150, dir.path()),
                )
            })
        });
        // An HPD agent that sends each text block whole at its end: a turn under way is
        // interrupted once its block opens (44 of 120 runs waited for a delta, and skipped).
        let whole_text = scope.spawn(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let more = ["--variant", "whole-text"];
            fuzz_with("hpd", None, None, &more, 150, dir.path())
        });
        // An HPD agent streaming as a model does (a delta every 20 ms): its turns outlast a
        // step, and the fuzzer's probe, an input queued behind them, waits for them to end
        // first (a false HPD-IN-006, a must, in run 405 with seed 1, before).
        let paced = scope.spawn(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let more = ["--variant", "paced"];
            fuzz_with("hpd", None, None, &more, 150, dir.path())
        });
        // A HUMA server refusing results for calls it never issued, as the spec allows: the
        // generated results name such calls, and the error answering one, coming after the
        // next event was sent, was judged as answering that event (a false HUMA-VAL-007 in
        // run 13 with seed 1, before).
        let refuses_unknown = scope.spawn(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let more = ["--variant", "refuses-unknown-calls"];
            fuzz_with("huma", None, None, &more, 40, dir.path())
        });
        // An executor answering calls one at a time, slowly: the fuzzer's calls queue up, and
        // a call whose result is judged waits for the backlog to drain first (run 1 found a
        // false UAE-RES-001, before).
        let slow_executor = scope.spawn(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let more = ["--variant", "slow", "--max-len", "80"];
            fuzz_with("uae", Some("executor"), None, &more, 2, dir.path())
        });
        let uae = ["agent", "executor"].map(|role| {
            scope.spawn(move || {
                let dir = tempfile::tempdir().expect("temp dir");
                (role, fuzz_as("uae", Some(role), None, 150, dir.path()))
            })
        });
        for run in runs {
            let (protocol, finding) = run.join().expect("a fuzzing thread");
            assert_eq!(finding, None, "{protocol}");
        }
        for run in unreached {
            let (variant, ends, fuzzed) = run.join().expect("a fuzzing thread");
            assert_eq!(fuzzed.rule, None, "haip --variant {variant}");
            let skipped = fuzzed.stderr.lines().find(|l| l.contains("runs skipped"));
            assert!(
                skipped.is_some_and(|l| l.contains(ends)),
                "haip --variant {variant}: {}",
                fuzzed.stderr
            );
        }
        let fuzzed = paced.join().expect("a fuzzing thread");
        assert_eq!(fuzzed.rule, None, "hpd --variant paced: {}", fuzzed.finding);
        let fuzzed = whole_text.join().expect("a fuzzing thread");
        assert_eq!(fuzzed.rule, None, "hpd --variant whole-text");
        assert!(
            !fuzzed.stderr.contains("runs skipped"),
            "hpd --variant whole-text: {}",
            fuzzed.stderr
        );
        // What is left is a matter of time: the fuzzer forgets what arrives within 200 ms of a
        // pong asked for as it waits after an input whose answer is open. The pong comes behind
        // what the target sent before reading the ping, but socketioxide runs each event's
        // handler as a task of its own, and on two cores running a dozen fuzzers a refusal can
        // come later still, to be heard by the liveness probe's silence (HUMA-ERR-003, a
        // should). Such a finding does not reproduce; one that does is a false alarm.
        let fuzzed = refuses_unknown.join().expect("a fuzzing thread");
        assert!(
            fuzzed.rule.is_none()
                || (fuzzed.flaky && fuzzed.rule.as_deref() == Some("HUMA-ERR-003")),
            "huma --variant refuses-unknown-calls: {}",
            fuzzed.finding
        );
        let finding = slow_executor.join().expect("a fuzzing thread").rule;
        assert_eq!(finding, None, "uae executor --variant slow");
        for run in uae {
            let (role, finding) = run.join().expect("a fuzzing thread");
            assert_eq!(finding, None, "uae as {role}");
        }
    });
}

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

const REPLAY_WINDOW: &str =
    "the replay window is 1000 messages: a run would need over a thousand (sequencing cases)";

fn fuzzing_finds_haip_faults() {
    assert_faults_found(
        "haip",
        &[
            ("small-replay-window", REPLAY_WINDOW),
            ("silent-replay-too-old", REPLAY_WINDOW),
            (
                "no-run-limit",
                "needs more runs held open at once than the target allows (run cases)",
            ),
            (
                "no-tool-done",
                "TOOL-002 binds only advertised tools, and the fuzzer does not keep the TOOL_LIST (tool cases)",
            ),
            (
                "no-flow-enforcement",
                "needs more messages than the target's credit in one burst (flow cases)",
            ),
            (
                "zero-credit-grant",
                "the target grants credit after half of its 64 is used; runs send 12 messages (flow cases)",
            ),
            (
                "auth-query-ignored",
                "every connection of the fuzzer is refused, so no run completes (auth cases)",
            ),
        ],
        // A resume is one mutator of weight 2 among many of weight 8: seed 1 first draws one
        // that reaches `no-resume` at run 584 (seeds 2 and 3: runs 22 and 30).
        800,
    );
}

fn fuzzing_finds_nuum_faults() {
    assert_faults_found(
        "nuum",
        &[
            (
                "exits-when-idle",
                "needs 800 ms of idleness after a turn (transport cases)",
            ),
            (
                "status-always-idle",
                "needs a status asked while a turn is known to run, a should the suite judges (control cases)",
            ),
        ],
        100,
    );
}

fn fuzzing_finds_huma_faults() {
    assert_faults_found(
        "huma",
        &[(
            "never-proceeds",
            "needs the spec's 30-second confirmation timeout to pass (messaging cases)",
        )],
        100,
    );
}

/// Why a fault whose rules are all `info` is not found: they only record.
const RECORDED: &str = "its rule only records (info): nothing fails, so nothing is found";

fn fuzzing_finds_hpd_faults() {
    const WEBSOCKET: &str =
        "the fuzzer speaks SSE + HTTP, and this is a WebSocket frame's answer (ws cases)";
    assert_faults_found(
        "hpd",
        &[
            ("no-1007", WEBSOCKET),
            ("accepts-binary", WEBSOCKET),
            ("string-iterations", RECORDED),
            ("bad-args-json", RECORDED),
            (
                "shared-block-id",
                "only conversations streaming at once show it; this agent's blocks are sent \
                 whole, the paced one's are not (replays.rs finds it there)",
            ),
        ],
        100,
    );
}

fn fuzzing_finds_agui_faults() {
    const PROTOBUF: &str =
        "the fuzzer asks for SSE: the fault is in the protobuf binding's answers";
    assert_faults_found_as(
        "agui",
        None,
        &[
            ("proto-type-parameter", PROTOBUF),
            ("undecodable-frame", PROTOBUF),
            ("finishes-unannounced", RECORDED),
            (
                "echoes-version",
                "it echoes an input's newer protocolVersion: the fuzzer's inputs declare the \
                 version wireprobe speaks (the suite's case declares a newer one)",
            ),
            (
                "chunk-changes-role",
                "it shows in chunked text only, which the reference streams with `--variant \
                 chunks` (the suite's case runs it)",
            ),
        ],
        &[(
            "json-content-type",
            "the run the JSON answer keeps from streaming heads the finding (AGUI-RUN-001, the \
             probe's), with AGUI-HTTP-001 beside it",
        )],
        100,
    );
}

/// A deviation the target is known for (`--known-failing`) does not end the campaign: a target
/// breaking it in every run gives no finding, and says how many runs broke only it; a rule id
/// the protocol does not have is refused, naming it.
fn known_deviations_are_looked_past() {
    let dir = tempfile::tempdir().expect("temp dir");
    let known = dir.path().join("known.txt");
    std::fs::write(&known, "AGUI-VER-001  # declares no protocolVersion\n").expect("writes");
    let path = known.to_string_lossy().into_owned();
    let out = dir.path().join("out");
    let more = ["--known-failing", path.as_str()];
    let fuzzed = fuzz_with("agui", None, Some("no-version"), &more, 60, &out);
    assert_eq!(fuzzed.rule, None, "{}", fuzzed.stderr);
    assert!(
        fuzzed
            .stderr
            .contains(" runs broke only rules in --known-failing"),
        "{}",
        fuzzed.stderr
    );
    // Without the list, the same campaign finds it at once.
    let found = fuzz_with("agui", None, Some("no-version"), &[], 60, &out);
    assert_eq!(found.rule.as_deref(), Some("AGUI-VER-001"));

    // A `should` found past a known `must` is a warning, not a failure: the finding's verdict
    // is its rule's, not the run's (which the known rule failed).
    std::fs::write(&known, "HAIP-ENV-003\nHAIP-SEQ-001\n").expect("writes");
    let more = ["--known-failing", path.as_str(), "--fault", "numeric-seq"];
    let fuzzed = fuzz_with("haip", None, Some("pong-nonce"), &more, 60, &out);
    assert_eq!(
        fuzzed.rule.as_deref(),
        Some("HAIP-PING-002"),
        "{}",
        fuzzed.stderr
    );
    assert!(
        fuzzed.finding.contains("HAIP-PING-002 (warn)"),
        "{}",
        fuzzed.finding
    );

    std::fs::write(&known, "AGUI-VER-999\n").expect("writes");
    let output = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["fuzz", "agui", "--target", "builtin", "--runs", "1"])
        .args(["--known-failing", path.as_str()])
        .output()
        .expect("wireprobe runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("AGUI-VER-999, which is no rule of agui"),
        "{stderr}"
    );
}

/// The faults of the party a role does not play are out of that role's reach.
const UAE_AGENT_ONLY: &[&str] = &[
    "session-drift",
    "echoes-ui",
    "call-without-trace",
    "message-without-text",
    "view-without-view-id",
    "view-kind-other",
    "call-without-tool",
    "args-not-object",
];

fn fuzzing_finds_uae_faults() {
    let executor_only: Vec<&str> = reference::get("uae")
        .expect("uae has a reference")
        .faults
        .iter()
        .map(|f| f.name)
        .filter(|n| {
            n.starts_with("result-")
                || n.starts_with("ok-")
                || [
                    "two-results",
                    "no-result-for-failures",
                    "error-without-code",
                    "unknown-tool-ok",
                    "no-validation",
                ]
                .contains(n)
        })
        .collect();
    let recorded = [("ts-without-millis", RECORDED)];
    let not_agent: Vec<(&str, &str)> = executor_only
        .iter()
        .map(|n| {
            (
                *n,
                "an executor's fault: an agent target never sends a result",
            )
        })
        .chain(recorded)
        .collect();
    let not_executor: Vec<(&str, &str)> = UAE_AGENT_ONLY
        .iter()
        .map(|n| {
            (
                *n,
                "an agent's fault: an executor target never sends what it breaks",
            )
        })
        .chain(recorded)
        .collect();
    // The two roles side by side: one after the other made this the longest check (140 s
    // of the test's 145).
    std::thread::scope(|scope| {
        let agent =
            scope.spawn(|| assert_faults_found_as("uae", Some("agent"), &not_agent, &[], 100));
        assert_faults_found_as("uae", Some("executor"), &not_executor, &[], 100);
        if let Err(panic) = agent.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

/// The checks run side by side (most of a fuzz run waits on its target, and a test binary
/// runs only as many tests at once as there are cores): the file takes about the longest
/// check's time. Each check's own panic message says what it found.
#[test]
fn fuzzing_against_the_reference_targets() {
    let checks: [(&str, fn()); 15] = [
        (
            "correct_references_give_no_finding",
            correct_references_give_no_finding,
        ),
        (
            "a_written_finding_replays_with_run",
            a_written_finding_replays_with_run,
        ),
        ("fuzzing_finds_haip_faults", fuzzing_finds_haip_faults),
        ("fuzzing_finds_nuum_faults", fuzzing_finds_nuum_faults),
        ("fuzzing_finds_huma_faults", fuzzing_finds_huma_faults),
        ("fuzzing_finds_hpd_faults", fuzzing_finds_hpd_faults),
        ("fuzzing_finds_agui_faults", fuzzing_finds_agui_faults),
        (
            "known_deviations_are_looked_past",
            known_deviations_are_looked_past,
        ),
        ("fuzzing_finds_uae_faults", fuzzing_finds_uae_faults),
        (
            "a_paced_agents_turn_end_findings_replay_every_time",
            replays::a_paced_agents_turn_end_findings_replay_every_time,
        ),
        (
            "a_stateful_fault_of_each_protocol_replays_every_time",
            replays::a_stateful_fault_of_each_protocol_replays_every_time,
        ),
        (
            "a_bug_only_overlapping_runs_show_is_replayed_among_them",
            replays::a_bug_only_overlapping_runs_show_is_replayed_among_them,
        ),
        (
            "the_reference_clients_keep_working_through_every_fuzzed_run",
            clients::the_reference_clients_keep_working_through_every_fuzzed_run,
        ),
        (
            "each_fault_that_stops_a_client_is_found_under_its_rule",
            clients::each_fault_that_stops_a_client_is_found_under_its_rule,
        ),
        (
            "a_client_never_judged_is_not_reported_clean",
            clients::a_client_never_judged_is_not_reported_clean,
        ),
    ];
    let failed: Vec<&str> = std::thread::scope(|scope| {
        let running: Vec<_> = checks
            .iter()
            .map(|(name, check)| {
                let timed = move || {
                    let started = std::time::Instant::now();
                    check();
                    // What each check took, beside the others: the test's length is the
                    // longest of them, shown for the next trim (`--nocapture`).
                    eprintln!("{name}: {:.0} s", started.elapsed().as_secs_f64());
                };
                (*name, scope.spawn(timed))
            })
            .collect();
        running
            .into_iter()
            .filter_map(|(name, handle)| handle.join().is_err().then_some(name))
            .collect()
    });
    assert!(
        failed.is_empty(),
        "failed: {failed:?} (their messages are above)"
    );
    // After the others, not beside them: beside a dozen fuzzers on two cores, a client
    // fuzzer's process was starved past its 3 s to connect (seen in CI).
    findings::a_failure_that_never_fails_again_is_flaky_and_the_campaign_goes_on();
    findings::a_campaign_stops_at_max_findings();
}

/// The campaign's runs go without step lines (describing every step of every run cost
/// fuzzing 4% of its CPU); the run a finding reports has them, as a suite's case result does.
#[tokio::test]
async fn a_finding_reports_its_steps() {
    use wireprobe::fuzz::engine::{self, FuzzConfig};
    use wireprobe::suite::runner::{self, RunConfig};
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let options = reference::ServeOptions {
        faults: vec!["no-pong".into()],
        ..Default::default()
    };
    let target = reference::start("haip", any, &options)
        .await
        .expect("reference starts");
    let p = wireprobe::protocol::get("haip").expect("registered");
    let mut run_cfg = RunConfig::new(target.url.clone());
    run_cfg.step_timeout = std::time::Duration::from_millis(1000);
    let cfg = FuzzConfig {
        seed: 1,
        runs: 20,
        shrink_time: std::time::Duration::ZERO,
        confirm: 0,
        ..FuzzConfig::default()
    };
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {})
        .await
        .expect("fuzzing runs");
    let finding = outcome
        .findings
        .into_iter()
        .next()
        .expect("no-pong is found");
    assert!(!finding.result.steps.is_empty());
    assert_eq!(finding.result.steps, runner::step_lines(&finding.case));
}

/// With `--waiting`, runs that wait on the target's own timers (HAIP's 500 ms before
/// REPLAY_REQUEST) lend their place to runs that can work: the sequencing faults those waits
/// judge are still found, under their rules, and the correct reference still passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_runs_judge_as_working_ones_do() {
    use wireprobe::fuzz::engine::{self, FuzzConfig};
    use wireprobe::suite::runner::RunConfig;
    let p = wireprobe::protocol::get("haip").expect("registered");
    let campaign = |fault: Option<&'static str>, runs: u64| async move {
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let options = reference::ServeOptions {
            faults: fault.into_iter().map(String::from).collect(),
            ..Default::default()
        };
        let target = reference::start("haip", any, &options)
            .await
            .expect("reference starts");
        let mut run_cfg = RunConfig::new(target.url.clone());
        run_cfg.step_timeout = std::time::Duration::from_millis(2000);
        run_cfg.jobs = 2;
        let cfg = FuzzConfig {
            seed: 1,
            runs,
            max_len: 30,
            shrink_time: std::time::Duration::ZERO,
            // One replay alone: what the campaign's load alone broke is flaky, not found.
            confirm: 1,
            waiting: 6,
            ..FuzzConfig::default()
        };
        let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {})
            .await
            .expect("fuzzing runs");
        assert_eq!(outcome.errors, 0, "{fault:?}: {:?}", outcome.last_error);
        (
            outcome
                .findings
                .into_iter()
                .find(|f| f.reproduces())
                .map(|f| f.failure.rule),
            outcome.lent,
        )
    };
    let (correct, late, early) = tokio::join!(
        campaign(None, 120),
        campaign(Some("no-replay-request"), 120),
        campaign(Some("eager-replay-request"), 120),
    );
    assert_eq!(correct.0, None);
    assert!(
        correct.1 > 0,
        "no run lent its place: the waits were not exercised"
    );
    assert_eq!(late.0.as_deref(), Some("HAIP-SEQ-003"));
    assert_eq!(early.0.as_deref(), Some("HAIP-SEQ-004"));
}

/// The replay checks alone (`--ignored`), without the other campaigns beside them.
#[test]
#[ignore]
fn findings_replay_alone() {
    replays::a_paced_agents_turn_end_findings_replay_every_time();
    replays::a_stateful_fault_of_each_protocol_replays_every_time();
    replays::a_bug_only_overlapping_runs_show_is_replayed_among_them();
}
