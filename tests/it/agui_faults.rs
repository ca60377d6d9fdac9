//! Every fault of the AG-UI reference agent fails (or warns) exactly the cases listing its
//! rules; the correct agent and every variant pass; every rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes, Expectation};
use wireprobe::verdict::Verdict::*;

const EXPECTED: &[Expectation] = &[
    (
        "malformed-field",
        None,
        &[
            ("agui.flow.reasoning@proto", Fail),
            ("agui.flow.reasoning@sse", Fail),
            ("agui.run.shapes@proto", Fail),
            ("agui.run.shapes@sse", Fail),
        ],
    ),
    ("null-optional", None, &[("agui.run.shapes@sse", Fail)]),
    ("extra-field", None, &[("agui.run.shapes@sse", Warn)]),
    ("private-event", None, &[("agui.run.shapes@sse", Warn)]),
    (
        "starts-with-text",
        None,
        &[("agui.run.plain@proto", Fail), ("agui.run.plain@sse", Fail)],
    ),
    (
        "event-after-finish",
        None,
        &[
            ("agui.flow.fail@proto", Fail),
            ("agui.flow.fail@sse", Fail),
            ("agui.run.plain@proto", Fail),
            ("agui.run.plain@sse", Fail),
        ],
    ),
    (
        "nested-run",
        None,
        &[("agui.run.plain@proto", Fail), ("agui.run.plain@sse", Fail)],
    ),
    (
        "leaves-message-open",
        None,
        &[
            ("agui.flow.reasoning@proto", Fail),
            ("agui.flow.reasoning@sse", Fail),
            ("agui.flow.step@proto", Fail),
            ("agui.flow.step@sse", Fail),
            ("agui.flow.text@proto", Fail),
            ("agui.flow.text@sse", Fail),
            ("agui.run.plain@proto", Fail),
            ("agui.run.plain@sse", Fail),
        ],
    ),
    (
        "truncates",
        None,
        &[
            ("agui.flow.backend-tool@proto", Skip),
            ("agui.flow.backend-tool@sse", Skip),
            ("agui.flow.chunks@proto", Skip),
            ("agui.flow.chunks@sse", Skip),
            ("agui.flow.frontend-tool@proto", Skip),
            ("agui.flow.frontend-tool@sse", Skip),
            ("agui.flow.interrupt@proto", Skip),
            ("agui.flow.interrupt@sse", Skip),
            ("agui.flow.reasoning@proto", Skip),
            ("agui.flow.reasoning@sse", Skip),
            ("agui.flow.state@proto", Skip),
            ("agui.flow.state@sse", Skip),
            ("agui.flow.step@proto", Skip),
            ("agui.flow.step@sse", Skip),
            ("agui.flow.text@proto", Skip),
            ("agui.flow.text@sse", Skip),
            ("agui.input.huge-message@proto", Fail),
            ("agui.input.huge-message@sse", Fail),
            ("agui.input.messages-not-array@proto", Skip),
            ("agui.input.messages-not-array@sse", Skip),
            ("agui.input.no-thread@proto", Skip),
            ("agui.input.no-thread@sse", Skip),
            ("agui.input.not-json@proto", Skip),
            ("agui.input.not-json@sse", Skip),
            ("agui.input.null-forwarded-props@proto", Fail),
            ("agui.input.null-forwarded-props@sse", Fail),
            ("agui.input.polluting-keys@proto", Fail),
            ("agui.input.polluting-keys@sse", Fail),
            ("agui.input.unknown-member@proto", Skip),
            ("agui.input.unknown-member@sse", Skip),
            ("agui.input.unknown-role@proto", Skip),
            ("agui.input.unknown-role@sse", Skip),
            ("agui.input.wrong-type@proto", Skip),
            ("agui.input.wrong-type@sse", Skip),
            ("agui.run.activity@proto", Skip),
            ("agui.run.activity@sse", Skip),
            ("agui.run.attribution@proto", Skip),
            ("agui.run.attribution@sse", Skip),
            ("agui.run.frontend-offered@proto", Skip),
            ("agui.run.frontend-offered@sse", Skip),
            ("agui.run.history@proto", Fail),
            ("agui.run.history@sse", Fail),
            ("agui.run.identity@proto", Skip),
            ("agui.run.identity@sse", Skip),
            ("agui.run.input-state@proto", Fail),
            ("agui.run.input-state@sse", Fail),
            ("agui.run.newer-minor@proto", Skip),
            ("agui.run.newer-minor@sse", Skip),
            ("agui.run.plain@proto", Fail),
            ("agui.run.plain@sse", Fail),
            ("agui.run.protobuf@proto", Skip),
            ("agui.run.shapes@proto", Skip),
            ("agui.run.shapes@sse", Skip),
            ("agui.run.two-runs@proto", Skip),
            ("agui.run.two-runs@sse", Skip),
        ],
    ),
    (
        "unknown-outcome",
        None,
        &[
            ("agui.flow.interrupt@proto", Fail),
            ("agui.flow.interrupt@sse", Fail),
            ("agui.run.plain@proto", Fail),
            ("agui.run.plain@sse", Fail),
        ],
    ),
    (
        "cancelled-with-result",
        None,
        &[
            ("agui.flow.interrupt@proto", Skip),
            ("agui.flow.interrupt@sse", Skip),
            ("agui.run.plain@proto", Warn),
            ("agui.run.plain@sse", Warn),
        ],
    ),
    (
        "own-thread-id",
        None,
        &[
            ("agui.run.identity@proto", Warn),
            ("agui.run.identity@sse", Warn),
            ("agui.run.two-runs@proto", Warn),
            ("agui.run.two-runs@sse", Warn),
        ],
    ),
    (
        "finishes-other-thread",
        None,
        &[
            ("agui.run.identity@proto", Warn),
            ("agui.run.identity@sse", Warn),
            ("agui.run.two-runs@proto", Warn),
            ("agui.run.two-runs@sse", Warn),
        ],
    ),
    (
        "reasoning-as-assistant",
        None,
        &[
            ("agui.flow.reasoning@proto", Fail),
            ("agui.flow.reasoning@sse", Fail),
        ],
    ),
    (
        "finishes-other-run",
        None,
        &[
            ("agui.run.identity@proto", Fail),
            ("agui.run.identity@sse", Fail),
        ],
    ),
    (
        "repeats-run",
        None,
        &[
            ("agui.run.two-runs@proto", Fail),
            ("agui.run.two-runs@sse", Fail),
        ],
    ),
    (
        "reuses-message-id",
        None,
        &[
            ("agui.flow.backend-tool@proto", Fail),
            ("agui.flow.backend-tool@sse", Fail),
            ("agui.run.history@proto", Fail),
            ("agui.run.history@sse", Fail),
        ],
    ),
    (
        "no-version",
        None,
        &[
            ("agui.run.identity@proto", Fail),
            ("agui.run.identity@sse", Fail),
        ],
    ),
    (
        "echoes-version",
        None,
        &[
            ("agui.run.newer-minor@proto", Fail),
            ("agui.run.newer-minor@sse", Fail),
        ],
    ),
    (
        "long-version",
        None,
        &[
            ("agui.run.identity@proto", Warn),
            ("agui.run.identity@sse", Warn),
        ],
    ),
    (
        "double-start",
        None,
        &[
            ("agui.flow.backend-tool@proto", Fail),
            ("agui.flow.backend-tool@sse", Fail),
            ("agui.flow.reasoning@proto", Fail),
            ("agui.flow.reasoning@sse", Fail),
            ("agui.flow.text@proto", Fail),
            ("agui.flow.text@sse", Fail),
        ],
    ),
    (
        "content-unopened",
        None,
        &[
            ("agui.flow.backend-tool@proto", Fail),
            ("agui.flow.backend-tool@sse", Fail),
            ("agui.flow.reasoning@proto", Fail),
            ("agui.flow.reasoning@sse", Fail),
            ("agui.flow.text@proto", Fail),
            ("agui.flow.text@sse", Fail),
        ],
    ),
    (
        "reopens-as-user",
        None,
        &[("agui.flow.text@proto", Fail), ("agui.flow.text@sse", Fail)],
    ),
    (
        "chunk-without-id",
        None,
        &[
            ("agui.flow.chunks@proto", Fail),
            ("agui.flow.chunks@sse", Fail),
        ],
    ),
    (
        "chunk-changes-role",
        None,
        &[
            ("agui.flow.chunks@proto", Fail),
            ("agui.flow.chunks@sse", Fail),
        ],
    ),
    (
        "mixes-forms",
        None,
        &[
            ("agui.flow.chunks@proto", Fail),
            ("agui.flow.chunks@sse", Fail),
        ],
    ),
    (
        "ambiguous-chunk",
        None,
        &[
            ("agui.flow.chunks@proto", Fail),
            ("agui.flow.chunks@sse", Fail),
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        "double-step",
        None,
        &[("agui.flow.step@proto", Fail), ("agui.flow.step@sse", Fail)],
    ),
    (
        "patch-misses",
        None,
        &[
            ("agui.flow.state@proto", Warn),
            ("agui.flow.state@sse", Warn),
        ],
    ),
    (
        "activity-without-snapshot",
        None,
        &[
            ("agui.run.activity@proto", Fail),
            ("agui.run.activity@sse", Fail),
        ],
    ),
    (
        "activity-not-object",
        None,
        &[
            ("agui.run.activity@proto", Fail),
            ("agui.run.activity@sse", Fail),
        ],
    ),
    (
        "answers-frontend",
        None,
        &[
            ("agui.flow.frontend-tool@proto", Fail),
            ("agui.flow.frontend-tool@sse", Fail),
        ],
    ),
    (
        "frontend-interrupts",
        None,
        &[
            ("agui.flow.frontend-tool@proto", Fail),
            ("agui.flow.frontend-tool@sse", Fail),
        ],
    ),
    (
        "no-pending-list",
        None,
        &[
            ("agui.flow.frontend-tool@proto", Warn),
            ("agui.flow.frontend-tool@sse", Warn),
        ],
    ),
    (
        "wrong-pending-list",
        None,
        &[
            ("agui.flow.frontend-tool@proto", Fail),
            ("agui.flow.frontend-tool@sse", Fail),
        ],
    ),
    (
        "same-interrupt-ids",
        None,
        &[
            ("agui.flow.interrupt@proto", Fail),
            ("agui.flow.interrupt@sse", Fail),
        ],
    ),
    (
        "announces-late",
        None,
        &[
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        "announces-twice",
        None,
        &[
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        "unknown-parent",
        None,
        &[
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        // It records (`info`): the case passes, and the report's rules table shows it seen.
        "finishes-unannounced",
        None,
        &[],
    ),
    (
        "subagent-paused",
        None,
        &[
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        "other-owner",
        None,
        &[
            ("agui.run.attribution@proto", Fail),
            ("agui.run.attribution@sse", Fail),
        ],
    ),
    (
        "serves-malformed",
        None,
        &[
            ("agui.input.messages-not-array@proto", Fail),
            ("agui.input.messages-not-array@sse", Fail),
            ("agui.input.no-thread@proto", Fail),
            ("agui.input.no-thread@sse", Fail),
            ("agui.input.wrong-type@proto", Fail),
            ("agui.input.wrong-type@sse", Fail),
        ],
    ),
    (
        "rejects-novel",
        None,
        &[
            ("agui.input.unknown-member@proto", Fail),
            ("agui.input.unknown-member@sse", Fail),
            ("agui.input.unknown-role@proto", Fail),
            ("agui.input.unknown-role@sse", Fail),
            ("agui.run.newer-minor@proto", Fail),
            ("agui.run.newer-minor@sse", Fail),
        ],
    ),
    (
        "rejects-in-stream",
        None,
        &[
            ("agui.input.messages-not-array@proto", Warn),
            ("agui.input.messages-not-array@sse", Warn),
            ("agui.input.no-thread@proto", Warn),
            ("agui.input.no-thread@sse", Warn),
            ("agui.input.not-json@proto", Warn),
            ("agui.input.not-json@sse", Warn),
            ("agui.input.wrong-type@proto", Warn),
            ("agui.input.wrong-type@sse", Warn),
        ],
    ),
    (
        "json-content-type",
        None,
        &[
            ("agui.flow.backend-tool@sse", Skip),
            ("agui.flow.chunks@sse", Skip),
            ("agui.flow.fail@sse", Skip),
            ("agui.flow.frontend-tool@sse", Skip),
            ("agui.flow.interrupt@sse", Skip),
            ("agui.flow.reasoning@sse", Skip),
            ("agui.flow.state@sse", Skip),
            ("agui.flow.step@sse", Skip),
            ("agui.flow.text@sse", Skip),
            ("agui.input.huge-message@sse", Skip),
            ("agui.input.messages-not-array@sse", Skip),
            ("agui.input.no-thread@sse", Skip),
            ("agui.input.not-json@sse", Skip),
            ("agui.input.null-forwarded-props@sse", Skip),
            ("agui.input.polluting-keys@sse", Skip),
            ("agui.input.unknown-member@sse", Skip),
            ("agui.input.unknown-role@sse", Skip),
            ("agui.input.wrong-type@sse", Skip),
            ("agui.run.activity@sse", Skip),
            ("agui.run.attribution@sse", Skip),
            ("agui.run.frontend-offered@sse", Skip),
            ("agui.run.history@sse", Skip),
            ("agui.run.identity@sse", Skip),
            ("agui.run.input-state@sse", Skip),
            ("agui.run.newer-minor@sse", Skip),
            ("agui.run.plain@sse", Fail),
            ("agui.run.shapes@sse", Skip),
            ("agui.run.two-runs@sse", Skip),
        ],
    ),
    (
        "proto-type-parameter",
        None,
        &[("agui.run.protobuf@proto", Warn)],
    ),
    (
        "undecodable-frame",
        None,
        &[("agui.run.protobuf@proto", Fail)],
    ),
    ("crlf-lines", None, &[("agui.run.plain@sse", Fail)]),
    (
        "status-201",
        None,
        &[("agui.run.plain@proto", Warn), ("agui.run.plain@sse", Warn)],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_agent_passes() {
    assert_reference_passes("agui").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_fails_exactly_its_cases() {
    assert_fault_matrix("agui", EXPECTED).await;
}

#[test]
fn every_rule_has_a_case_and_a_fault() {
    assert_fault_coverage("agui", EXPECTED);
}
