//! Every protocol's suite against every legal variant of its reference target: no `fail`, no
//! `error`, no rule broken in passing, and no `skip` the default reference does not also have. This is what keeps the
//! suites from fitting one implementation's words, ids, order or timing.

use crate::common;

use common::{run_reference_as, Target, Verdicts};
use futures_util::StreamExt;
use std::collections::BTreeSet;
use wireprobe::reference;
use wireprobe::rules::Level;
use wireprobe::verdict::Verdict;

async fn verdicts(target: Target<'_>, variants: &[&str]) -> Verdicts {
    run_reference_as(target, &[], variants, None)
        .await
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

async fn assert_variants_pass(protocol: &str) {
    assert_variants_pass_as(Target::default_of(protocol)).await
}

async fn assert_variants_pass_as(target: Target<'_>) {
    let protocol = target.id;
    let default = verdicts(target, &[]).await;
    let skipped_by_default: BTreeSet<&String> = default
        .iter()
        .filter(|(_, v)| *v == Verdict::Skip)
        .map(|(id, _)| id)
        .collect();
    // The variants run side by side: most of a run is waiting on the target.
    let runs: Vec<_> = futures_util::stream::iter(
        reference::get(protocol)
            .expect("protocol has a reference")
            .variants,
    )
    .map(|variant| async move {
        (
            variant.name,
            run_reference_as(target, &[], &[variant.name], None).await,
        )
    })
    .buffer_unordered(3)
    .collect()
    .await;
    let mut problems = Vec::new();
    for (variant, results) in runs {
        for r in results {
            let bad = match r.verdict {
                Verdict::Fail | Verdict::Error | Verdict::Warn => true,
                Verdict::Skip => !skipped_by_default.contains(&r.id),
                Verdict::Pass | Verdict::Info => false,
            };
            if bad {
                problems.push(format!("{variant} {}: {} {}", r.id, r.verdict, r.message));
            }
            // A rule broken in passing fails that rule in the report, whichever case saw it.
            for v in r.violations.iter().filter(|v| v.level >= Level::Should) {
                problems.push(format!(
                    "{variant} {} also saw {}: {}",
                    r.id, v.rule, v.message
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{protocol} ({:?}):\n{}",
        target.role,
        problems.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agui_variants_pass() {
    assert_variants_pass("agui").await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uae_variants_pass_in_both_roles() {
    for role in ["agent", "executor"] {
        assert_variants_pass_as(Target {
            id: "uae",
            role: Some(role),
            transport: None,
        })
        .await;
    }
}
