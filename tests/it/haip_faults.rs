//! Every fault of the HAIP reference target fails exactly the cases it should, and the correct
//! target passes everything: the proof that each check can fail and does not fire falsely.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_reference_passes_every_case() {
    assert_reference_passes("haip").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("haip").await;
}

#[test]
fn every_fault_and_every_must_rule_is_covered() {
    assert_fault_coverage("haip");
}
