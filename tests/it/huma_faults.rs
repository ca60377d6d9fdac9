//! Every fault of the HUMA reference target fails exactly the cases it should, the correct
//! target passes everything, and every must rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes, Expectation};
use wireprobe::verdict::Verdict::*;

const EXPECTED: &[Expectation] = &[
    (
        "accepts-addon-without-data",
        None,
        &[("huma.invalid.addon-without-data", Fail)],
    ),
    (
        "accepts-bad-outcome",
        None,
        &[("huma.invalid.outcome", Fail)],
    ),
    (
        "accepts-forbidden-keys",
        None,
        &[
            ("huma.invalid.proto-top", Fail),
            ("huma.invalid.constructor-top", Fail),
            ("huma.invalid.prototype-top", Fail),
            ("huma.invalid.forbidden-five-deep", Fail),
            ("huma.invalid.forbidden-in-array", Fail),
            ("huma.invalid.forbidden-in-data", Fail),
            ("huma.invalid.proto-in-result", Warn),
        ],
    ),
    (
        "accepts-unknown-type",
        None,
        &[
            ("huma.invalid.not-an-object", Fail),
            ("huma.invalid.unknown-type", Fail),
            ("huma.invalid.type-case", Fail),
        ],
    ),
    (
        "bad-message-index",
        None,
        &[
            ("huma.messaging.order", Fail),
            ("huma.messaging.fields", Fail),
            ("huma.messaging.waits-for-confirmation", Skip),
            ("huma.messaging.timeout-proceeds", Skip),
            ("huma.messaging.abort", Skip),
        ],
    ),
    ("bad-tool-call-id", None, &[("huma.tool-call.shape", Fail)]),
    (
        "cancels-unknown-tool-call",
        None,
        &[("huma.cancel.names-outstanding", Fail)],
    ),
    (
        "disconnects-after-error",
        None,
        &[("huma.error.connection-usable", Warn)],
    ),
    (
        "error-on-event-channel",
        None,
        &[("huma.transport.error-channel", Fail)],
    ),
    ("error-without-message", None, &[("huma.error.shape", Fail)]),
    (
        "message-before-typing",
        None,
        &[("huma.messaging.order", Fail)],
    ),
    (
        "never-proceeds",
        None,
        &[("huma.messaging.timeout-proceeds", Warn)],
    ),
    (
        "no-confirmation-wait",
        None,
        &[
            ("huma.messaging.waits-for-confirmation", Fail),
            ("huma.messaging.abort", Warn),
        ],
    ),
    (
        "no-interrupt",
        None,
        &[
            ("huma.cancel.on-triggering", Warn),
            ("huma.cancel.names-outstanding", Skip),
        ],
    ),
    ("no-name-limit", None, &[("huma.invalid.name-129", Fail)]),
    (
        "no-result-limit",
        None,
        &[("huma.invalid.result-65537", Fail)],
    ),
    (
        "no-typing-end-on-abort",
        None,
        &[("huma.messaging.abort", Warn)],
    ),
    (
        "rejects-canceled-results",
        None,
        &[
            ("huma.valid.canceled-result", Fail),
            ("huma.cancel.on-triggering", Fail),
        ],
    ),
    (
        "unknown-server-event",
        None,
        &[("huma.server.known-types", Fail)],
    ),
    ("wrong-error-code", None, &[("huma.error.code", Warn)]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_reference_passes_every_case() {
    assert_reference_passes("huma").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("huma", EXPECTED).await;
}

#[test]
fn every_fault_and_every_must_rule_is_covered() {
    assert_fault_coverage("huma", EXPECTED);
}
