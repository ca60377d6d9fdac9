//! Every fault of the HPD reference target fails exactly the cases it should, over SSE + HTTP
//! and over the WebSocket; the correct target passes everything; every must rule has a case
//! and a fault.

use crate::common;

use common::{assert_fault_coverage_with, assert_fault_matrix, assert_reference_passes};
use wireprobe::verdict::Verdict::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reference_passes_every_case() {
    assert_reference_passes("hpd").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fault_fails_exactly_its_cases() {
    assert_fault_matrix("hpd").await;
}

#[test]
fn every_fault_and_must_rule_is_covered() {
    assert_fault_coverage_with("hpd", &[], &["shared-block-id"]);
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
