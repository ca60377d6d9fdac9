//! Every fault of the Nuum reference target (a real child process: `wireprobe serve nuum
//! --stdio`) fails exactly the cases it should, the correct target passes everything, and
//! every must rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes, Expectation};
use wireprobe::verdict::Verdict::*;

const EXPECTED: &[Expectation] = &[
    (
        "stdout-log-lines",
        None,
        &[("nuum.transport.json-lines", Fail)],
    ),
    (
        "exits-when-idle",
        None,
        &[("nuum.transport.stays-alive", Fail)],
    ),
    (
        "init-not-first",
        None,
        &[("nuum.init.first-and-once", Fail)],
    ),
    ("init-twice", None, &[("nuum.init.first-and-once", Fail)]),
    (
        "init-after-input",
        Some("nuum.init.*"),
        &[
            ("nuum.init.first-and-once", Fail),
            ("nuum.init.fields", Error),
        ],
    ),
    ("init-without-version", None, &[("nuum.init.fields", Warn)]),
    (
        "init-without-session-id",
        None,
        // Without a session_id there is nothing to compare across a restart.
        &[("nuum.init.fields", Fail), ("nuum.session.persists", Skip)],
    ),
    (
        "assistant-wrong-role",
        None,
        &[("nuum.assistant.shape", Warn), ("nuum.result.fields", Warn)],
    ),
    (
        "assistant-without-session-id",
        None,
        &[("nuum.assistant.shape", Fail)],
    ),
    (
        "tool-use-without-input",
        None,
        &[("nuum.assistant.blocks", Warn)],
    ),
    (
        "tool-result-wrong-id",
        None,
        &[
            ("nuum.tool.result-follows", Fail),
            ("nuum.tool.result-names-use", Fail),
        ],
    ),
    // The error turn's second result arrives after its last step: judged with the case.
    (
        "double-result",
        None,
        &[
            ("nuum.result.one-per-turn", Fail),
            ("nuum.result.error-turn", Fail),
        ],
    ),
    (
        "no-result-on-fail",
        None,
        &[
            ("nuum.result.error-turn", Fail),
            ("nuum.result.is-error", Skip),
        ],
    ),
    (
        "result-unknown-subtype",
        None,
        &[("nuum.result.error-turn", Fail)],
    ),
    ("error-subtypes", None, &[("nuum.result.error-turn", Fail)]),
    ("status-subtype", None, &[("nuum.control.status", Warn)]),
    (
        "result-without-duration",
        None,
        &[("nuum.assistant.shape", Warn), ("nuum.result.fields", Warn)],
    ),
    (
        "result-without-session-id",
        None,
        &[("nuum.result.fields", Fail)],
    ),
    (
        "is-error-on-success",
        None,
        &[("nuum.result.is-error", Warn)],
    ),
    ("no-turn-accepted", None, &[("nuum.turn.accepted", Fail)]),
    (
        "rejects-content-blocks",
        None,
        &[("nuum.turn.content-blocks", Fail)],
    ),
    ("bad-task-status", None, &[("nuum.tasks.alarm", Fail)]),
    (
        "task-without-timestamps",
        None,
        &[("nuum.tasks.alarm", Warn), ("nuum.tasks.research", Warn)],
    ),
    (
        "no-tasks-snapshot",
        None,
        &[("nuum.tasks.alarm", Fail), ("nuum.tasks.research", Fail)],
    ),
    ("error-without-message", None, &[("nuum.error.shape", Warn)]),
    ("session-id-drift", None, &[("nuum.session.same-id", Fail)]),
    ("new-session-id", None, &[("nuum.session.persists", Fail)]),
    (
        "ignores-interrupt",
        None,
        &[("nuum.control.interrupt", Fail)],
    ),
    (
        "no-status-answer",
        None,
        &[
            ("nuum.control.status", Fail),
            ("nuum.control.status-running", Skip),
        ],
    ),
    (
        "no-heartbeat-ack",
        None,
        &[
            ("nuum.bad.bare-string", Skip),
            ("nuum.bad.blank-lines", Skip),
            ("nuum.bad.content-not-text", Skip),
            ("nuum.bad.huge-line", Skip),
            ("nuum.bad.invalid-json", Skip),
            ("nuum.bad.invalid-utf8", Skip),
            ("nuum.bad.many", Skip),
            ("nuum.bad.missing-message", Skip),
            ("nuum.bad.no-type", Skip),
            ("nuum.bad.not-an-object", Skip),
            ("nuum.bad.then-turn", Skip),
            ("nuum.bad.unknown-action", Skip),
            ("nuum.bad.unknown-type", Skip),
            ("nuum.bad.wrong-role", Skip),
            ("nuum.control.heartbeat", Fail),
            ("nuum.control.interrupt-idle", Skip),
            ("nuum.error.shape", Skip),
            ("nuum.init.first-and-once", Skip),
            ("nuum.transport.json-lines", Skip),
        ],
    ),
    (
        "status-always-idle",
        None,
        &[("nuum.control.status-running", Warn)],
    ),
    (
        "no-queueing",
        None,
        &[("nuum.inject.injected", Fail), ("nuum.inject.queued", Fail)],
    ),
    ("no-injection", None, &[("nuum.inject.injected", Fail)]),
    (
        "exits-on-bad-input",
        None,
        &[
            ("nuum.bad.bare-string", Fail),
            ("nuum.bad.content-not-text", Fail),
            ("nuum.bad.huge-line", Fail),
            ("nuum.bad.invalid-json", Fail),
            ("nuum.bad.invalid-utf8", Fail),
            ("nuum.bad.many", Fail),
            ("nuum.bad.missing-message", Fail),
            ("nuum.bad.no-type", Fail),
            ("nuum.bad.not-an-object", Fail),
            ("nuum.bad.then-turn", Fail),
            ("nuum.bad.unknown-action", Fail),
            ("nuum.bad.unknown-type", Fail),
            ("nuum.bad.wrong-role", Fail),
            ("nuum.error.shape", Skip),
        ],
    ),
    ("stalls-on-huge-line", None, &[("nuum.bad.huge-line", Fail)]),
    (
        "silent-on-bad-input",
        None,
        &[
            ("nuum.bad.bare-string", Warn),
            ("nuum.bad.content-not-text", Warn),
            ("nuum.bad.huge-line", Warn),
            ("nuum.bad.invalid-json", Warn),
            ("nuum.bad.invalid-utf8", Warn),
            ("nuum.bad.many", Warn),
            ("nuum.bad.missing-message", Warn),
            ("nuum.bad.no-type", Warn),
            ("nuum.bad.not-an-object", Warn),
            ("nuum.bad.unknown-action", Warn),
            ("nuum.bad.unknown-type", Warn),
            ("nuum.bad.wrong-role", Warn),
            ("nuum.error.shape", Skip),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_correct_reference_target_passes() {
    assert_reference_passes("nuum").await;
}

#[test]
fn every_fault_and_must_rule_is_covered() {
    assert_fault_coverage("nuum", EXPECTED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("nuum", EXPECTED).await;
}
