//! Every fault of the HAIP reference target fails exactly the cases it should, and the correct
//! target passes everything: the proof that each check can fail and does not fire falsely.

mod common;

use common::{run_builtin, Verdicts};
use std::collections::BTreeSet;
use wireprobe::protocol::{self, haip::rules::RULES};
use wireprobe::reference;
use wireprobe::rules::Level;
use wireprobe::suite;
use wireprobe::verdict::Verdict::{self, *};

/// Fault, optional case filter, and the verdict of every case that does not pass.
/// (`no-pong` removes the liveness probe many cases lean on, so those skip as "cannot judge".)
type Expectation = (
    &'static str,
    Option<&'static str>,
    &'static [(&'static str, Verdict)],
);

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
        &[
            ("haip.auth.valid-token-query", Fail),
            ("haip.auth.transport-recorded", Error),
        ],
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
            ("haip.envelope.decimal-strings", Skip),
            ("haip.envelope.no-extra-fields", Skip),
            ("haip.envelope.extension-fields", Skip),
            ("haip.envelope.ping-payload", Skip),
            ("haip.seq.server-numbering", Skip),
            ("haip.seq.ack-cumulative", Skip),
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
            ("haip.seq.replay-window", Fail),
            ("haip.seq.replay-too-old", Fail),
            ("haip.seq.resume", Error),
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
    let verdicts = run_builtin(&[], None).await;
    let not_passing: Vec<_> = verdicts
        .iter()
        .filter(|(_, v)| !matches!(v, Pass | Info))
        .collect();
    assert!(
        not_passing.is_empty(),
        "the correct reference target must pass: {not_passing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    use futures_util::StreamExt;
    type Observed = (&'static str, Verdicts, &'static [(&'static str, Verdict)]);
    let results: Vec<Observed> = futures_util::stream::iter(EXPECTED)
        .map(|(fault, filter, expected)| async move {
            (*fault, run_builtin(&[fault], *filter).await, *expected)
        })
        .buffer_unordered(6)
        .collect()
        .await;
    let mut problems = Vec::new();
    for (fault, verdicts, expected) in results {
        let got: BTreeSet<(String, Verdict)> = verdicts
            .into_iter()
            .filter(|(_, v)| !matches!(v, Pass | Info))
            .filter(|(id, v)| !(*v == Skip && id.starts_with("filtered:")))
            .collect();
        let want: BTreeSet<(String, Verdict)> = expected
            .iter()
            .map(|(id, v)| (id.to_string(), *v))
            .collect();
        if got != want {
            problems.push(format!(
                "fault {fault}:\n  expected {want:?}\n  got      {got:?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_fault_has_an_expectation_and_fails_a_case_of_its_rules() {
    let haip = protocol::get("haip").expect("haip is registered");
    let bundled = suite::load_bundled(haip).expect("bundled suite loads");
    let faults = reference::faults("haip").expect("haip has faults");
    for fault in faults {
        let Some((_, _, expected)) = EXPECTED.iter().find(|(name, _, _)| *name == fault.name)
        else {
            panic!("fault {} has no expectation in this test", fault.name);
        };
        // At least one case fails or warns, and every such case exercises a rule the fault breaks.
        let judged: Vec<_> = expected
            .iter()
            .filter(|(_, v)| matches!(v, Fail | Warn))
            .collect();
        assert!(!judged.is_empty(), "fault {} fails no case", fault.name);
        for (case_id, _) in judged {
            let case = bundled
                .cases
                .iter()
                .find(|c| c.id == *case_id)
                .expect("case exists");
            assert!(
                case.rules
                    .iter()
                    .any(|r| fault.breaks.contains(&r.as_str())),
                "fault {} fails {case_id}, which lists none of the rules it breaks ({:?})",
                fault.name,
                fault.breaks
            );
        }
    }
    assert_eq!(
        EXPECTED.len(),
        faults.len(),
        "expectations for faults that do not exist"
    );
}

#[test]
fn every_must_rule_has_a_case_and_a_fault() {
    let haip = protocol::get("haip").expect("haip is registered");
    let bundled = suite::load_bundled(haip).expect("bundled suite loads");
    let faults = reference::faults("haip").expect("haip has faults");
    for rule in RULES {
        assert!(
            bundled
                .cases
                .iter()
                .any(|c| c.rules.iter().any(|r| r == rule.id)),
            "rule {} has no case",
            rule.id
        );
        if rule.level == Level::Must {
            assert!(
                faults.iter().any(|f| f.breaks.contains(&rule.id)),
                "must rule {} has no fault that breaks it",
                rule.id
            );
        }
    }
}
