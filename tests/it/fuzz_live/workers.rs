//! A campaign's runs go to worker threads, each with the target it started for its own runs.

use std::time::Duration;
use wireprobe::fuzz::engine::{self, FuzzConfig, FuzzError};
use wireprobe::reference::{self, ServeOptions};
use wireprobe::suite::runner::RunConfig;
use wireprobe::workers::{LocalTarget, TargetGuard};

/// Where nothing listens: a run sent there could not complete.
const NOWHERE: &str = "ws://127.0.0.1:1/";

fn campaign(local_target: LocalTarget) -> (FuzzConfig, RunConfig) {
    let mut run_cfg = RunConfig::new(NOWHERE);
    run_cfg.jobs = 4;
    run_cfg.step_timeout = Duration::from_millis(3000);
    let cfg = FuzzConfig {
        seed: 7,
        runs: 24,
        max_len: 6,
        threads: 2,
        local_target: Some(local_target),
        ..FuzzConfig::default()
    };
    (cfg, run_cfg)
}

#[tokio::test]
async fn a_campaigns_runs_reach_the_target_each_worker_started() {
    let p = wireprobe::protocol::get("haip").expect("haip is registered");
    let builtin = reference::get("haip").expect("haip has a reference");
    let (cfg, run_cfg) = campaign(builtin.on_each_worker(ServeOptions::default()));
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {})
        .await
        .expect("the campaign runs");
    // Not one run went to the configured URL, where nothing listens.
    assert_eq!(
        (outcome.runs, outcome.errors),
        (24, 0),
        "{:?}",
        outcome.last_error
    );
    assert!(
        outcome.findings.is_empty(),
        "{:?}",
        outcome.findings.first().map(|f| &f.failure)
    );
}

#[tokio::test]
async fn a_finding_is_shrunk_and_confirmed_on_the_target_its_run_failed_on() {
    let p = wireprobe::protocol::get("haip").expect("haip is registered");
    let builtin = reference::get("haip").expect("haip has a reference");
    let faulty = ServeOptions {
        faults: vec!["bad-uuid".into()],
        ..ServeOptions::default()
    };
    let (mut cfg, run_cfg) = campaign(builtin.on_each_worker(faulty));
    cfg.shrink_time = Duration::from_secs(10);
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {})
        .await
        .expect("the campaign runs");
    let finding = outcome
        .findings
        .into_iter()
        .next()
        .expect("every message id the target sends is no UUID");
    assert_eq!(
        finding.failure.rule, "HAIP-ENV-002",
        "{}",
        finding.failure.message
    );
    // At the configured URL nothing listens: a re-run sent there could not fail the same way.
    assert_eq!((finding.reproduced, finding.attempts), (3, 3));
    assert!(finding.steps_after <= finding.steps_before);
}

#[tokio::test]
async fn a_worker_target_that_does_not_start_is_an_error_that_says_so() {
    let p = wireprobe::protocol::get("haip").expect("haip is registered");
    let refused = LocalTarget::new(|| {
        Box::pin(async { Err::<(String, TargetGuard), _>("address in use".to_owned()) })
    });
    let (cfg, run_cfg) = campaign(refused);
    let err = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {}).await.err();
    let Some(err @ FuzzError::Workers(_)) = err else {
        panic!("expected the workers' error, got {err:?}");
    };
    assert_eq!(
        err.to_string(),
        "the copy of the target a worker thread starts for its runs did not start: address in use"
    );
}
