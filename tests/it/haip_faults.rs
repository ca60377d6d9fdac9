//! Every fault of the HAIP reference target fails exactly the cases it should, and the correct
//! target passes everything: the proof that each check can fail and does not fire falsely.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes, Expectation};
use wireprobe::verdict::Verdict::*;

/// Each fault and the verdict of every case that does not pass under it. (`no-pong` removes
/// the liveness probe many cases lean on, so those skip as "cannot judge".)
const EXPECTED: &[Expectation] = &[
    ("ack-beyond", None, &[("haip.seq.ack-cumulative", Fail)]),
    (
        "audio-without-mime",
        None,
        &[("haip.media.audio-payload", Fail)],
    ),
    (
        "auth-accepts-garbage",
        None,
        &[("haip.auth.malformed-token", Fail)],
    ),
    (
        "auth-ignores-iat",
        None,
        &[("haip.auth.not-yet-valid", Fail)],
    ),
    (
        "auth-ignores-signature",
        None,
        &[
            ("haip.auth.tampered-signature", Fail),
            ("haip.auth.alg-none", Fail),
            ("haip.auth.wrong-key", Fail),
        ],
    ),
    ("auth-optional", None, &[("haip.auth.missing-token", Fail)]),
    (
        "auth-query-ignored",
        Some("haip.auth.*"),
        // haip.auth.transport-recorded only records (info): the refusal is its record.
        &[("haip.auth.valid-token-query", Fail)],
    ),
    (
        "bad-channel",
        None,
        &[("haip.envelope.channel-pattern", Fail)],
    ),
    ("bad-message-id", None, &[("haip.text.payloads", Fail)]),
    (
        "bad-ping-payload",
        None,
        &[
            ("haip.envelope.ping-payload", Fail),
            ("haip.ping.nonce-echo", Warn),
        ],
    ),
    ("bad-pv", None, &[("haip.envelope.extension-fields", Fail)]),
    ("bad-run-status", None, &[("haip.run.payloads", Fail)]),
    ("bad-tool-progress", None, &[("haip.tool.payloads", Fail)]),
    ("bad-uuid", None, &[("haip.envelope.uuids", Fail)]),
    (
        "bad-version-string",
        None,
        &[("haip.version.triplet", Fail)],
    ),
    (
        "base64-with-bin-mime",
        None,
        &[("haip.media.base64-mode", Fail)],
    ),
    (
        "binary-len-mismatch",
        None,
        &[("haip.media.binary-two-frame", Fail)],
    ),
    (
        "binary-to-non-binary-peer",
        None,
        &[("haip.media.binary-only-if-advertised", Warn)],
    ),
    (
        "crit-ignored",
        None,
        &[("haip.envelope.crit-unknown-field", Fail)],
    ),
    ("stale-ack", None, &[("haip.seq.ack-keeps-up", Warn)]),
    (
        "eager-replay-request",
        None,
        &[("haip.seq.gap-filled-in-time", Warn)],
    ),
    (
        "error-without-message",
        None,
        &[("haip.error.payload-shape", Fail)],
    ),
    (
        "extra-envelope-field",
        None,
        &[("haip.envelope.no-extra-fields", Warn)],
    ),
    (
        "hai-missing-accept-events",
        None,
        &[("haip.handshake.server-hai-fields", Fail)],
    ),
    (
        "hai-not-first",
        None,
        &[("haip.handshake.server-hai-first", Fail)],
    ),
    (
        "ignores-accept-events",
        None,
        &[("haip.handshake.accept-events-honoured", Fail)],
    ),
    (
        "ignores-client-credit",
        None,
        &[("haip.flow.server-respects-credit", Fail)],
    ),
    ("ignores-pause", None, &[("haip.flow.pause", Fail)]),
    ("ignores-run-cancel", None, &[("haip.run.cancel", Fail)]),
    ("ignores-tool-cancel", None, &[("haip.tool.cancel", Fail)]),
    (
        "lenient-envelope",
        None,
        &[
            ("haip.error.missing-field", Fail),
            ("haip.error.bad-seq", Fail),
            ("haip.error.bad-uuid", Fail),
            ("haip.error.unknown-type", Fail),
            ("haip.error.bad-channel", Fail),
            ("haip.error.bad-payload", Fail),
        ],
    ),
    (
        "no-close-on-version",
        None,
        &[("haip.handshake.major-mismatch", Fail)],
    ),
    (
        "no-duplicate-drop",
        None,
        &[("haip.seq.duplicate-dropped", Fail)],
    ),
    (
        "no-flow-enforcement",
        None,
        &[("haip.flow.client-credit-enforced", Fail)],
    ),
    (
        "no-pong",
        None,
        &[
            ("haip.handshake.accept-events-honoured", Skip),
            ("haip.envelope.required-fields", Skip),
            ("haip.envelope.uuids", Skip),
            ("haip.error.valid-not-refused", Skip),
            ("haip.envelope.decimal-strings", Skip),
            ("haip.envelope.no-extra-fields", Skip),
            ("haip.envelope.extension-fields", Skip),
            ("haip.envelope.ping-payload", Skip),
            ("haip.seq.server-numbering", Skip),
            ("haip.seq.ack-cumulative", Skip),
            ("haip.seq.ack-keeps-up", Skip),
            ("haip.seq.gap-triggers-replay", Skip),
            ("haip.seq.gap-filled-in-time", Skip),
            ("haip.seq.duplicate-dropped", Skip),
            ("haip.seq.replay-window", Skip),
            ("haip.seq.replay-too-old", Skip),
            ("haip.seq.resume", Skip),
            ("haip.seq.resume-beyond-sent", Skip),
            ("haip.run.boundaries", Skip),
            ("haip.ping.pong", Fail),
            ("haip.ping.nonce-echo", Skip),
            ("haip.tool.lifecycle", Skip),
            ("haip.media.client-binary-accepted", Skip),
        ],
    ),
    (
        "no-replay-request",
        None,
        &[("haip.seq.gap-triggers-replay", Fail)],
    ),
    ("no-resume", None, &[("haip.seq.resume", Fail)]),
    ("no-run-limit", None, &[("haip.run.limit", Fail)]),
    (
        "no-timestamp",
        None,
        &[("haip.envelope.required-fields", Fail)],
    ),
    (
        "no-tool-done",
        None,
        &[
            ("haip.tool.echo-completes", Fail),
            ("haip.tool.lifecycle", Skip),
        ],
    ),
    (
        "no-version-check",
        None,
        &[("haip.handshake.major-mismatch", Fail)],
    ),
    (
        "numeric-seq",
        None,
        &[
            ("haip.envelope.decimal-strings", Fail),
            ("haip.seq.server-numbering", Fail),
            // A REPLAY_REQUEST or resuming HAI naming a numeric seq would break the schema:
            // the cases that copy it cannot probe, and skip.
            ("haip.seq.replay-window", Skip),
            ("haip.seq.replay-too-old", Skip),
            ("haip.seq.resume", Skip),
        ],
    ),
    ("pong-nonce", None, &[("haip.ping.nonce-echo", Warn)]),
    (
        "resume-unknown-accepted",
        None,
        &[
            ("haip.seq.resume-unknown-session", Fail),
            ("haip.seq.resume-beyond-sent", Fail),
        ],
    ),
    (
        "run-error-without-run-id",
        None,
        &[("haip.run.error-carries-run-id", Fail)],
    ),
    ("run-finished-twice", None, &[("haip.run.boundaries", Fail)]),
    ("run-id-reuse", None, &[("haip.run.unique-ids", Fail)]),
    ("seq-skips", None, &[("haip.seq.server-numbering", Fail)]),
    (
        "seq-starts-at-0",
        None,
        &[("haip.seq.server-numbering", Fail)],
    ),
    (
        "silent-replay-too-old",
        None,
        &[("haip.seq.replay-too-old", Fail)],
    ),
    (
        "small-replay-window",
        None,
        &[("haip.seq.replay-window", Fail)],
    ),
    (
        "text-part-before-start",
        None,
        &[("haip.text.stream-lifecycle", Fail)],
    ),
    ("token-expiry", None, &[("haip.auth.expired", Fail)]),
    (
        "tool-update-after-done",
        None,
        &[("haip.tool.lifecycle", Fail)],
    ),
    (
        "unknown-event-type",
        None,
        &[
            ("haip.handshake.accept-events-honoured", Fail),
            ("haip.envelope.known-types", Fail),
        ],
    ),
    (
        "errors-on-pong",
        None,
        &[("haip.error.valid-not-refused", Fail)],
    ),
    (
        "wrong-error-code",
        None,
        &[("haip.handshake.major-mismatch", Fail)],
    ),
    (
        "zero-credit-grant",
        None,
        &[("haip.flow.grant-payload", Fail)],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_reference_passes_every_case() {
    assert_reference_passes("haip").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("haip", EXPECTED).await;
}

#[test]
fn every_fault_and_every_must_rule_is_covered() {
    assert_fault_coverage("haip", EXPECTED);
}
