//! Every fault of each reference target a campaign can reach is found, named by one of its
//! rules, and replayed by the command its campaign printed (part of `fuzz_live`, whose checks
//! run side by side).

use super::{fuzz_with, suite_named, Fuzzed, PARALLEL_FUZZERS};
use std::process::Command;
use wireprobe::reference;

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
    let case = suite_named(args)
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

/// Every fault of `protocol`'s reference target but those in `out_of_reach` (each with the
/// reason) is found within `runs`, named by one of its rules.
fn assert_faults_found(protocol: &str, out_of_reach: &[(&str, &str)], runs: u32) {
    assert_faults_found_as(protocol, None, out_of_reach, &[], runs, PARALLEL_FUZZERS)
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
    fuzzers: usize,
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
    // A few fuzzers at once, each taking the next fault as it is free (much of a run is
    // waiting on the target: oracles, timeouts), each fault's findings written apart.
    let missed: Vec<String> = super::on_threads(fuzzers, &reachable, |fault| {
        let dir = tempfile::tempdir().expect("temp dir");
        let fuzz = || fuzz_with(protocol, role, Some(fault.name), &[], runs, dir.path());
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
        // said its own replays did not always (`reproduced 2/3 (flaky)`):
        // such a miss is printed, and stands.
        let rule = fuzzed.rule.as_deref().unwrap_or_default();
        let missed = replay_misses(&fuzzed, rule)?;
        let said = format!("{} (found {rule}): the replay {missed}", fault.name);
        match fuzzed.flaky {
            true => {
                eprintln!("a finding whose replay may miss: {said}");
                None
            }
            false => Some(said),
        }
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(missed.is_empty(), "{protocol} {role:?}: {missed:#?}");
}

const REPLAY_WINDOW: &str =
    "the replay window is 1000 messages: a run would need over a thousand (sequencing cases)";

pub(super) fn fuzzing_finds_haip_faults() {
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

pub(super) fn fuzzing_finds_nuum_faults() {
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

pub(super) fn fuzzing_finds_huma_faults() {
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

pub(super) fn fuzzing_finds_hpd_faults() {
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

pub(super) fn fuzzing_finds_agui_faults() {
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
        PARALLEL_FUZZERS,
    );
}

/// A deviation the target is known for (`--known-failing`) does not end the campaign: a target
/// breaking it in every run gives no finding, and says how many runs broke only it; a rule id
/// the protocol does not have is refused, naming it.
pub(super) fn known_deviations_are_looked_past() {
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

/// Fuzzers at once for each UAE role: with twelve, UAE's were the longest check by 40 s (121 s,
/// the next 83), its runs mostly waiting on the target.
const UAE_FUZZERS: usize = 16;

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

pub(super) fn fuzzing_finds_uae_faults() {
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
        let agent = scope.spawn(|| {
            assert_faults_found_as("uae", Some("agent"), &not_agent, &[], 100, UAE_FUZZERS)
        });
        assert_faults_found_as(
            "uae",
            Some("executor"),
            &not_executor,
            &[],
            100,
            UAE_FUZZERS,
        );
        if let Err(panic) = agent.join() {
            std::panic::resume_unwind(panic);
        }
    });
}
