//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod hostile;

use std::net::SocketAddr;
use std::time::Duration;
use wireprobe::protocol;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::suite::filter::CaseFilter;
use wireprobe::suite::runner::{run_suite, CaseResult, Credentials, RunConfig};
use wireprobe::suite::{self};
use wireprobe::verdict::Verdict;

/// `(case id, verdict)`; cases filtered out are reported as `filtered:ID`.
pub type Verdicts = Vec<(String, Verdict)>;

pub const TEST_SECRET: &str = "wireprobe-test-secret";

/// Runs the bundled HAIP suite against an in-process reference target with `faults`.
pub async fn run_builtin(faults: &[&str], filter: Option<&str>) -> Verdicts {
    run_builtin_results(faults, filter)
        .await
        .into_iter()
        .map(|r| {
            let id = if r.message.starts_with("filtered out") {
                format!("filtered:{}", r.id)
            } else {
                r.id
            };
            (id, r.verdict)
        })
        .collect()
}

pub async fn run_builtin_results(faults: &[&str], filter: Option<&str>) -> Vec<CaseResult> {
    let haip = protocol::get("haip").expect("haip is registered");
    let opts = ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        jwt_secret: Some(TEST_SECRET.into()),
        ..ServeOptions::default()
    };
    let target = reference::start("haip", SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
        .await
        .expect("reference target starts");
    let mut cfg = RunConfig::new(target.url.clone());
    cfg.step_timeout = Duration::from_millis(1000);
    cfg.jobs = 8;
    cfg.credentials = Credentials {
        token: None,
        jwt_secret: Some(TEST_SECRET.into()),
    };
    if let Some(glob) = filter {
        cfg.filter = CaseFilter::new(&[glob.to_string()], &[]).expect("glob parses");
    }
    let bundled = suite::load_bundled(haip).expect("bundled suite loads");
    run_suite(haip, &bundled, &cfg, &|_| {})
        .await
        .expect("target reachable")
}
