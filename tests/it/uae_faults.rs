//! The UAE reference target in both roles and over both transports passes every case; every
//! fault fails exactly the cases it should in the role that sends what it breaks; the rules
//! about the UI's own events fail on recorded transcripts.

use crate::common;

use common::{assert_fault_coverage_except, assert_fault_matrix_as, run_reference_as, Target};
use wireprobe::transport::TransportKind;
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
    assert_fault_matrix_as(AGENT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_executor_fault_fails_exactly_its_cases() {
    assert_fault_matrix_as(EXECUTOR).await;
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
    assert_fault_coverage_except("uae", UI_RULES);
}
