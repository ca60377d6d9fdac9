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
    run_protocol("haip", faults, filter).await
}

/// Runs a protocol's bundled suite against its in-process reference target with `faults`.
pub async fn run_protocol(protocol: &str, faults: &[&str], filter: Option<&str>) -> Verdicts {
    run_protocol_results(protocol, faults, filter)
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
    run_protocol_results("haip", faults, filter).await
}

pub async fn run_protocol_results(
    id: &str,
    faults: &[&str],
    filter: Option<&str>,
) -> Vec<CaseResult> {
    let protocol = protocol::get(id).expect("protocol is registered");
    let opts = ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        jwt_secret: Some(TEST_SECRET.into()),
        // HUMA's confirmation timeout, scaled from the spec's 30 s.
        confirm_timeout: Some(Duration::from_millis(1500)),
    };
    let target = reference::start(id, SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
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
    let bundled = suite::load_bundled(protocol).expect("bundled suite loads");
    run_suite(protocol, &bundled, &cfg, &|_| {})
        .await
        .expect("target reachable")
}
