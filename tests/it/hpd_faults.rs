//! Every fault of the HPD reference target fails exactly the cases it should, over SSE + HTTP
//! and over the WebSocket; the correct target passes everything; every must rule has a case
//! and a fault.

use crate::common;

use common::{
    assert_fault_coverage_with, assert_fault_matrix, assert_reference_passes, Expectation,
};
use wireprobe::verdict::Verdict::*;

const EXPECTED: &[Expectation] = &[
    (
        "missing-version",
        None,
        &[
            ("hpd.envelope.version-and-type@sse", Fail),
            ("hpd.envelope.version-and-type@ws", Fail),
        ],
    ),
    (
        "wrong-version",
        None,
        &[
            ("hpd.envelope.version-1-0@sse", Warn),
            ("hpd.envelope.version-1-0@ws", Warn),
        ],
    ),
    (
        "lower-case-types",
        None,
        &[
            ("hpd.envelope.type-case@sse", Warn),
            ("hpd.envelope.type-case@ws", Warn),
        ],
    ),
    (
        "snake-case-fields",
        None,
        &[
            ("hpd.envelope.camel-case@sse", Fail),
            ("hpd.envelope.camel-case@ws", Fail),
        ],
    ),
    (
        "null-fields",
        None,
        &[
            ("hpd.envelope.no-nulls@sse", Fail),
            ("hpd.envelope.no-nulls@ws", Fail),
        ],
    ),
    (
        "accepts-invalid-input",
        None,
        &[
            ("hpd.input.no-type@sse", Fail),
            ("hpd.input.not-json@sse", Fail),
            ("hpd.input.unknown-type@sse", Fail),
        ],
    ),
    (
        "no-1007",
        None,
        &[
            ("hpd.ws.invalid-frame@ws", Fail),
            ("hpd.ws.unknown-type@ws", Fail),
        ],
    ),
    (
        "unknown-response-200",
        None,
        &[("hpd.responses.unknown-id@sse", Warn)],
    ),
    ("accepts-binary", None, &[("hpd.ws.binary@ws", Warn)]),
    (
        "stalls-after-bad-input",
        None,
        &[
            ("hpd.input.not-json@sse", Fail),
            ("hpd.ws.invalid-frame@ws", Fail),
        ],
    ),
    // A turn that never ends: the turn-end cases fail, the others cannot see a whole turn.
    (
        "turn-never-finished",
        Some("hpd.turn.*"),
        &[
            ("hpd.turn.agent-turns@sse", Skip),
            ("hpd.turn.agent-turns@ws", Skip),
            ("hpd.turn.ends@sse", Fail),
            ("hpd.turn.ends@ws", Fail),
            ("hpd.turn.error-ends@sse", Fail),
            ("hpd.turn.error-ends@ws", Fail),
            ("hpd.turn.nothing-after-end@sse", Skip),
            ("hpd.turn.nothing-after-end@ws", Skip),
            ("hpd.turn.one-id@sse", Skip),
            ("hpd.turn.one-id@ws", Skip),
        ],
    ),
    (
        // HPD-ENV-007 only records: the spec gives the framework's fields no type.
        "string-iterations",
        None,
        &[],
    ),
    (
        "number-message-ids",
        None,
        &[
            ("hpd.envelope.example-types@sse", Warn),
            ("hpd.envelope.example-types@ws", Warn),
        ],
    ),
    (
        "rejects-messages-input",
        None,
        &[
            ("hpd.input.messages@sse", Warn),
            ("hpd.input.messages@ws", Warn),
        ],
    ),
    (
        "output-after-finish",
        None,
        &[
            ("hpd.turn.nothing-after-end@sse", Warn),
            ("hpd.turn.nothing-after-end@ws", Warn),
        ],
    ),
    (
        "turn-id-drift",
        None,
        &[("hpd.turn.one-id@sse", Warn), ("hpd.turn.one-id@ws", Warn)],
    ),
    (
        "agent-turn-unfinished",
        None,
        &[
            ("hpd.turn.agent-turns@sse", Warn),
            ("hpd.turn.agent-turns@ws", Warn),
        ],
    ),
    (
        "delta-before-start",
        None,
        &[
            ("hpd.reasoning.block@sse", Fail),
            ("hpd.reasoning.block@ws", Fail),
            ("hpd.text.order@sse", Fail),
            ("hpd.text.order@ws", Fail),
        ],
    ),
    // One case alone has no conversation beside it: nothing to show (a campaign's
    // overlapping runs do, tests/it/fuzz_live/replays.rs).
    ("shared-block-id", Some("hpd.envelope.no-nulls"), &[]),
    (
        "missing-end",
        None,
        &[
            ("hpd.reasoning.block@sse", Warn),
            ("hpd.reasoning.block@ws", Warn),
            ("hpd.text.ends@sse", Warn),
            ("hpd.text.ends@ws", Warn),
        ],
    ),
    (
        "wrong-call-id",
        None,
        &[
            ("hpd.tool.call-id@sse", Fail),
            ("hpd.tool.call-id@ws", Fail),
        ],
    ),
    (
        // HPD-TOOL-002 only records: the spec never says argsJson holds JSON.
        "bad-args-json",
        None,
        &[],
    ),
    (
        "tool-without-result",
        None,
        &[
            ("hpd.tool.completes@sse", Warn),
            ("hpd.tool.completes@ws", Warn),
        ],
    ),
    (
        "no-permission-outcome",
        None,
        &[
            ("hpd.permission.approved@sse", Warn),
            ("hpd.permission.approved@ws", Warn),
            ("hpd.permission.denied@sse", Warn),
            ("hpd.permission.denied@ws", Warn),
        ],
    ),
    (
        "denied-runs-text-tool",
        None,
        &[
            ("hpd.permission.denied-does-not-run@sse", Warn),
            ("hpd.permission.denied-does-not-run@ws", Warn),
        ],
    ),
    (
        "denied-permission-runs",
        None,
        &[
            ("hpd.permission.denied-does-not-run@sse", Warn),
            ("hpd.permission.denied-does-not-run@ws", Warn),
        ],
    ),
    (
        "ignores-clarification",
        None,
        &[
            ("hpd.clarification.answered@sse", Warn),
            ("hpd.clarification.answered@ws", Warn),
            ("hpd.continuation.approved@sse", Warn),
            ("hpd.continuation.approved@ws", Warn),
        ],
    ),
    (
        "interrupt-ignored",
        None,
        &[
            ("hpd.interrupt.ends-turn@sse", Warn),
            ("hpd.interrupt.ends-turn@ws", Warn),
        ],
    ),
    (
        "non-monotonic-ids",
        None,
        &[("hpd.sse.ids-increase@sse", Warn)],
    ),
    (
        "resume-from-start",
        None,
        &[
            ("hpd.sse.resume-after@sse", Warn),
            ("hpd.sse.resume-last-event-id@sse", Warn),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reference_passes_every_case() {
    assert_reference_passes("hpd").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fault_fails_exactly_its_cases() {
    assert_fault_matrix("hpd", EXPECTED).await;
}

#[test]
fn every_fault_and_must_rule_is_covered() {
    assert_fault_coverage_with("hpd", EXPECTED, &[], &["shared-block-id"]);
}

/// A deployment is one conversation: without `{case}` in the URL the cases run one at a time
/// against it, each keeping to its own turn, and the suite still passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_against_one_shared_conversation() {
    use std::net::SocketAddr;
    use wireprobe::{protocol, reference, suite};
    let opts = reference::ServeOptions {
        prefix: Some("/agent".into()),
        ..Default::default()
    };
    let target = reference::start("hpd", SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
        .await
        .expect("reference target starts");
    assert!(target.url.ends_with("/agent"), "{}", target.url);
    let p = protocol::get("hpd").expect("hpd is registered");
    let cfg = common::test_config(suite::runner::RunConfig::new(target.url.clone()), None);
    let bundled = suite::load_bundled(p).expect("bundled suite loads");
    let results = suite::runner::run_suite(p, &bundled, &cfg, &|_| {})
        .await
        .expect("target reachable");
    let bad: Vec<_> = results
        .iter()
        .filter(|r| !matches!(r.verdict, Pass | Info))
        .map(|r| format!("{} {}: {}", r.verdict, r.id, r.message))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}
