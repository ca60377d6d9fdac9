//! Every fault of the Nuum reference target (a real child process: `wireprobe serve nuum
//! --stdio`) fails exactly the cases it should, the correct target passes everything, and
//! every must rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_correct_reference_target_passes() {
    assert_reference_passes("nuum").await;
}

#[test]
fn every_fault_and_must_rule_is_covered() {
    assert_fault_coverage("nuum");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_cases() {
    assert_fault_matrix("nuum").await;
}
