//! Every protocol's suite against every legal variant of its reference target: no `fail`, no
//! `error`, and no `skip` the default reference does not also have. This is what keeps the
//! suites from fitting one implementation's words, ids, order or timing.

mod common;

use common::{run_reference, Verdicts};
use std::collections::BTreeSet;
use wireprobe::reference;
use wireprobe::verdict::Verdict;

async fn verdicts(protocol: &str, variants: &[&str]) -> Verdicts {
    run_reference(protocol, &[], variants, None)
        .await
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

async fn assert_variants_pass(protocol: &str) {
    let default = verdicts(protocol, &[]).await;
    let skipped_by_default: BTreeSet<&String> = default
        .iter()
        .filter(|(_, v)| *v == Verdict::Skip)
        .map(|(id, _)| id)
        .collect();
    let mut problems = Vec::new();
    for variant in reference::variants(protocol).expect("protocol has variants") {
        let results = run_reference(protocol, &[], &[variant.name], None).await;
        for r in results {
            let bad = match r.verdict {
                Verdict::Fail | Verdict::Error | Verdict::Warn => true,
                Verdict::Skip => !skipped_by_default.contains(&r.id),
                Verdict::Pass | Verdict::Info => false,
            };
            if bad {
                problems.push(format!(
                    "{} {}: {} {}",
                    variant.name, r.id, r.verdict, r.message
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{protocol}:\n{}", problems.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn haip_variants_pass() {
    assert_variants_pass("haip").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn huma_variants_pass() {
    assert_variants_pass("huma").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nuum_variants_pass() {
    assert_variants_pass("nuum").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hpd_variants_pass() {
    assert_variants_pass("hpd").await;
}
