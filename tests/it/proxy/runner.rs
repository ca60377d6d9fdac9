//! The suite runner as the client where no reference client starts a session by itself
//! (HUMA's client only answers what its server asks): a case of the bundled suite run through
//! the proxy, against the reference server with a fault, shows that fault's rule on the
//! server's side in the proxy's report, and a correct server none.

use super::proxy_until;
use crate::common::test_config;
use std::collections::BTreeSet;
use std::time::Duration;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::suite::runner::{run_suite, RunConfig};
use wireprobe::transcript::Direction;

/// Runs the cases `glob` picks against `protocol`'s reference server with `faults`, through
/// the proxy: the rules the proxy saw the server break.
async fn server_rules_through_proxy(
    protocol: &str,
    faults: &[&str],
    glob: &str,
) -> BTreeSet<String> {
    let opts = ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        confirm_timeout: Some(Duration::from_millis(1500)),
        ..ServeOptions::default()
    };
    let server = reference::start(protocol, "127.0.0.1:0".parse().expect("addr"), &opts)
        .await
        .expect("the reference server starts");
    let p = wireprobe::protocol::get(protocol).expect("a protocol");
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let (addr, proxy) = proxy_until(protocol, &server.url, false, async {
        let _ = done_rx.await;
    })
    .await;
    let run = async {
        let cfg = test_config(RunConfig::new(format!("http://{addr}/")), Some(glob));
        let bundled = wireprobe::suite::load_bundled(p).expect("the bundled suite");
        let results = run_suite(p, &bundled, &cfg, &|_| {})
            .await
            .expect("reachable");
        assert!(!results.is_empty(), "{glob} picks a case");
        let _ = done_tx.send(());
    };
    let (carried, ()) = tokio::join!(proxy, run);
    carried
        .cases
        .iter()
        .flat_map(|c| &c.violations)
        .filter(|v| v.side == Some(Direction::Server))
        .map(|v| v.rule.to_string())
        .collect()
}

#[tokio::test]
async fn huma_server_faults_show_through_the_proxy_with_the_runner_as_client() {
    let clean = server_rules_through_proxy("huma", &[], "huma.tool-call.*").await;
    assert!(clean.is_empty(), "{clean:?}");
    for (fault, glob, rule) in [
        ("bad-tool-call-id", "huma.tool-call.*", "HUMA-SRV-002"),
        (
            "unknown-server-event",
            "huma.server.known-types",
            "HUMA-SRV-001",
        ),
        (
            "message-before-typing",
            "huma.messaging.order",
            "HUMA-LC-001",
        ),
    ] {
        let rules = server_rules_through_proxy("huma", &[fault], glob).await;
        assert_eq!(rules, BTreeSet::from([rule.to_owned()]), "--fault {fault}");
    }
}
