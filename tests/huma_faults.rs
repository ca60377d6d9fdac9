//! Every fault of the HUMA reference target fails exactly the cases it should, the correct
//! target passes everything, and every must rule has a case and a fault.

mod common;

use common::{run_protocol, Verdicts};
use std::collections::BTreeSet;
use wireprobe::protocol::{self, huma::rules::RULES};
use wireprobe::reference;
use wireprobe::rules::Level;
use wireprobe::suite;
use wireprobe::verdict::Verdict::{self, *};

type Expectation = (&'static str, &'static [(&'static str, Verdict)]);

const EXPECTED: &[Expectation] = &[
    (
        "accepts-addon-without-data",
        &[("huma.invalid.addon-without-data", Fail)],
    ),
    ("accepts-bad-outcome", &[("huma.invalid.outcome", Fail)]),
    (
        "accepts-forbidden-keys",
        &[
            ("huma.invalid.proto-top", Fail),
            ("huma.invalid.constructor-top", Fail),
            ("huma.invalid.prototype-top", Fail),
            ("huma.invalid.forbidden-five-deep", Fail),
            ("huma.invalid.forbidden-in-array", Fail),
            ("huma.invalid.forbidden-in-data", Fail),
        ],
    ),
    (
        "accepts-unknown-type",
        &[
            ("huma.invalid.not-an-object", Fail),
            ("huma.invalid.unknown-type", Fail),
            ("huma.invalid.type-case", Fail),
        ],
    ),
    (
        "bad-message-index",
        &[
            ("huma.messaging.order", Fail),
            ("huma.messaging.fields", Fail),
            ("huma.messaging.waits-for-confirmation", Skip),
            ("huma.messaging.timeout-proceeds", Skip),
            ("huma.messaging.abort", Skip),
        ],
    ),
    ("bad-tool-call-id", &[("huma.tool-call.shape", Fail)]),
    (
        "cancels-unknown-tool-call",
        &[("huma.cancel.names-outstanding", Fail)],
    ),
    (
        "disconnects-after-error",
        &[("huma.error.connection-usable", Warn)],
    ),
    (
        "error-on-event-channel",
        &[("huma.transport.error-channel", Fail)],
    ),
    ("error-without-message", &[("huma.error.shape", Fail)]),
    ("message-before-typing", &[("huma.messaging.order", Fail)]),
    (
        "never-proceeds",
        &[("huma.messaging.timeout-proceeds", Warn)],
    ),
    (
        "no-confirmation-wait",
        &[
            ("huma.messaging.waits-for-confirmation", Fail),
            ("huma.messaging.abort", Warn),
        ],
    ),
    (
        "no-interrupt",
        &[
            ("huma.cancel.on-triggering", Warn),
            ("huma.cancel.names-outstanding", Skip),
        ],
    ),
    ("no-name-limit", &[("huma.invalid.name-129", Fail)]),
    ("no-result-limit", &[("huma.invalid.result-65537", Fail)]),
    ("no-typing-end-on-abort", &[("huma.messaging.abort", Warn)]),
    (
        "rejects-canceled-results",
        &[
            ("huma.valid.canceled-result", Fail),
            ("huma.cancel.on-triggering", Fail),
        ],
    ),
    ("unknown-server-event", &[("huma.server.known-types", Fail)]),
    ("wrong-error-code", &[("huma.error.code", Warn)]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_reference_passes_every_case() {
    let verdicts = run_protocol("huma", &[], None).await;
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
        .map(|(fault, expected)| async move {
            (
                *fault,
                run_protocol("huma", &[fault], None).await,
                *expected,
            )
        })
        .buffer_unordered(6)
        .collect()
        .await;
    let mut problems = Vec::new();
    for (fault, verdicts, expected) in results {
        let got: BTreeSet<(String, Verdict)> = verdicts
            .into_iter()
            .filter(|(_, v)| !matches!(v, Pass | Info))
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
fn every_fault_is_expected_and_every_must_rule_is_covered() {
    let huma = protocol::get("huma").expect("huma is registered");
    let bundled = suite::load_bundled(huma).expect("bundled suite loads");
    let faults = reference::faults("huma").expect("huma has faults");
    assert_eq!(EXPECTED.len(), faults.len());
    for fault in faults {
        let (_, expected) = EXPECTED
            .iter()
            .find(|(n, _)| *n == fault.name)
            .expect("fault has an expectation");
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
                "fault {} fails {case_id}, which lists none of {:?}",
                fault.name,
                fault.breaks
            );
        }
    }
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
                "must rule {} has no fault",
                rule.id
            );
        }
    }
}
