//! The UAE reference target in both roles and over both transports passes every case; every
//! fault fails exactly the cases it should in the role that sends what it breaks; the rules
//! about the UI's own events fail on recorded transcripts.

use crate::common;

use common::{
    assert_fault_coverage_except, assert_fault_matrix_as, run_reference_as, Expectation, Target,
};
use wireprobe::protocol::TransportKind;
use wireprobe::verdict::Verdict::{self, *};

const AGENT: Target<'static> = Target {
    id: "uae",
    role: Some("agent"),
    transport: None,
};

const EXECUTOR: Target<'static> = Target {
    id: "uae",
    role: Some("executor"),
    transport: None,
};

/// The rules about events only the Web UI sends: live, wireprobe is the UI.
const UI_RULES: &[&str] = &["UAE-UI-001", "UAE-UI-002", "UAE-UI-003"];

const AGENT_FAULTS: &[Expectation] = &[
    ("epoch-ts", None, &[("uae.agent.envelope", Fail)]),
    (
        "no-session-id",
        None,
        &[
            ("uae.agent.envelope", Fail),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    // A payload that is a string hides the view_id and the tool a case needs to answer.
    (
        "payload-string",
        None,
        &[
            ("uae.agent.envelope", Fail),
            ("uae.agent.action-answered", Skip),
            ("uae.agent.tool-failure", Skip),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    (
        "id-without-prefix",
        None,
        &[("uae.agent.id-prefixes", Warn)],
    ),
    // Only recorded (UAE-ENV-008, info): nothing fails.
    ("ts-without-millis", None, &[]),
    ("ts-not-rfc3339", None, &[("uae.agent.timestamps", Warn)]),
    ("duplicate-ids", None, &[("uae.agent.unique-ids", Warn)]),
    (
        "stalls-after-bad-input",
        None,
        &[("uae.agent.keeps-serving", Warn)],
    ),
    ("session-drift", None, &[("uae.agent.session", Fail)]),
    ("echoes-ui", None, &[("uae.agent.no-ui-events", Fail)]),
    // Without a trace_id the call cannot be answered in a way the agent can pair: the cases
    // that need the agent's output after a result cannot see it.
    (
        "call-without-trace",
        None,
        &[
            ("uae.agent.call-trace", Fail),
            ("uae.agent.envelope", Skip),
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.tool-failure", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    ("message-without-text", None, &[("uae.agent.message", Fail)]),
    (
        "view-without-view-id",
        None,
        &[
            ("uae.agent.view", Fail),
            ("uae.agent.action-answered", Skip),
        ],
    ),
    ("view-kind-other", None, &[("uae.agent.view-kind", Warn)]),
    (
        "call-without-tool",
        None,
        &[
            ("uae.agent.call", Fail),
            ("uae.agent.tool-failure", Skip),
            ("uae.agent.envelope", Skip),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    ("args-not-object", None, &[("uae.agent.call-args", Warn)]),
];

const EXECUTOR_FAULTS: &[Expectation] = &[
    ("epoch-ts", None, &[("uae.exec.envelope", Fail)]),
    ("no-session-id", None, &[("uae.exec.envelope", Fail)]),
    (
        "payload-string",
        None,
        &[
            ("uae.exec.envelope", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    ("id-without-prefix", None, &[("uae.exec.id-prefixes", Warn)]),
    ("ts-without-millis", None, &[]),
    ("ts-not-rfc3339", None, &[("uae.exec.timestamps", Warn)]),
    ("duplicate-ids", None, &[("uae.exec.unique-ids", Warn)]),
    (
        "stalls-after-bad-input",
        None,
        &[("uae.exec.keeps-serving", Warn)],
    ),
    // A result that names no trace, or another one, answers no call a case is waiting on.
    (
        "result-without-trace",
        None,
        &[
            ("uae.exec.result-trace", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    (
        "result-other-trace",
        None,
        &[
            ("uae.exec.correlation", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    ("result-other-tool", None, &[("uae.exec.correlation", Fail)]),
    ("two-results", None, &[("uae.exec.one-result", Fail)]),
    // A case whose only call fails hears nothing at all: it cannot be judged (error), and
    // the one that only records, records that.
    (
        "no-result-for-failures",
        None,
        &[
            ("uae.exec.one-result", Fail),
            ("uae.exec.correlation", Skip),
            ("uae.exec.envelope", Skip),
            ("uae.exec.failure", Error),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.unknown-tool", Error),
        ],
    ),
    (
        "ok-not-boolean",
        None,
        &[
            ("uae.exec.success", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    ("ok-true-with-error", None, &[("uae.exec.success", Fail)]),
    ("ok-false-with-result", None, &[("uae.exec.failure", Fail)]),
    ("error-without-code", None, &[("uae.exec.failure", Fail)]),
    ("unknown-tool-ok", None, &[("uae.exec.unknown-tool", Warn)]),
    (
        "no-validation",
        None,
        &[("uae.exec.rejects-invalid-args", Warn)],
    ),
];

fn not_passing(results: &[wireprobe::results::CaseResult]) -> Vec<(String, Verdict)> {
    results
        .iter()
        .filter(|r| !matches!(r.verdict, Pass | Info))
        .map(|r| (format!("{}: {}", r.id, r.message), r.verdict))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reference_passes_in_both_roles_over_both_transports() {
    for role in ["agent", "executor"] {
        for transport in [TransportKind::WebSocket, TransportKind::Stdio] {
            let target = Target {
                id: "uae",
                role: Some(role),
                transport: Some(transport),
            };
            let results = run_reference_as(target, &[], &[], None).await;
            assert!(
                results.len() > 10,
                "{role} over {transport:?}: {} cases",
                results.len()
            );
            let bad = not_passing(&results);
            assert!(bad.is_empty(), "{role} over {transport:?}: {bad:#?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_agent_fault_fails_exactly_its_cases() {
    assert_fault_matrix_as(AGENT, AGENT_FAULTS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_executor_fault_fails_exactly_its_cases() {
    assert_fault_matrix_as(EXECUTOR, EXECUTOR_FAULTS).await;
}

/// A fault shows over stdio as over the WebSocket: the profile does not depend on the framing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn faults_show_over_stdio_too() {
    for (role, fault, case) in [
        ("agent", "session-drift", "uae.agent.session"),
        ("executor", "two-results", "uae.exec.one-result"),
    ] {
        let target = Target {
            id: "uae",
            role: Some(role),
            transport: Some(TransportKind::Stdio),
        };
        let results = run_reference_as(target, &[fault], &[], None).await;
        let bad = not_passing(&results);
        assert_eq!(bad.len(), 1, "{fault}: {bad:#?}");
        assert!(
            bad[0].0.starts_with(case) && bad[0].1 == Fail,
            "{fault}: {bad:#?}"
        );
    }
}

#[test]
fn every_fault_and_must_rule_is_covered() {
    let all = [AGENT_FAULTS, EXECUTOR_FAULTS].concat();
    assert_fault_coverage_except("uae", &all, UI_RULES);
}
