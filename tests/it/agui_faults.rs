//! Every fault of the AG-UI reference agent fails (or warns) exactly the cases listing its
//! rules; the correct agent and every variant pass; every rule has a case and a fault.

use crate::common;

use common::{assert_fault_coverage, assert_fault_matrix, assert_reference_passes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_agent_passes() {
    assert_reference_passes("agui").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_fails_exactly_its_cases() {
    assert_fault_matrix("agui").await;
}

#[test]
fn every_rule_has_a_case_and_a_fault() {
    assert_fault_coverage("agui");
}
