//! Every fault of the HUMA reference target fails exactly the cases it should, the correct
//! target passes everything, and every must rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn correct_reference_passes_every_case() {
    assert_reference_passes("huma").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("huma").await;
}

#[test]
fn every_fault_and_every_must_rule_is_covered() {
    assert_fault_coverage("huma");
}
