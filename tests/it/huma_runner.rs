//! The runner drives a HUMA target over Socket.IO: CONNECT before the first emit, client
//! events on 'message', errors judged on the 'error' channel. The target here is a minimal
//! socketioxide server; a variant that answers on the wrong channel shows the check can fail.

use serde_json::{json, Value};
use socketioxide::extract::{Data, SocketRef};
use socketioxide::SocketIo;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use wireprobe::protocol::huma::{validate, Huma};
use wireprobe::reference::{self, RunningTarget};
use wireprobe::suite::{loader, runner};
use wireprobe::verdict::Verdict;

/// A HUMA-ish server that rejects invalid client events on `error_channel`.
async fn server(error_channel: &'static str) -> (RunningTarget, String) {
    let addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let target = reference::start_socketio(addr, SocketIo::builder(), move |io| {
        io.ns("/", async move |s: SocketRef| {
            s.on(
                "message",
                async move |s: SocketRef, Data::<Value>(event)| {
                    if let Some(v) = validate::client_event_violations(&event).first() {
                        let error =
                            json!({"type": "error", "message": v.message, "code": "INVALID_EVENT"});
                        s.emit(error_channel, &error).ok();
                    }
                },
            );
        });
    })
    .await
    .expect("server starts");
    let url = target.url.clone();
    (target, url)
}

const SUITE: &str = r#"
[[case]]
id = "t.valid-accepted"
title = "A valid non-triggering context-update is accepted"
rules = ["HUMA-VAL-007"]
steps = [
  { send = { type = "context-update", triggering = false, name = "hydrate", context = {}, description = "d" } },
  { expect_silence = { ms = 300, matching = { channel = "error" } } },
]

[[case]]
id = "t.triggering-not-boolean"
title = "triggering must be a boolean"
rules = ["HUMA-VAL-002"]
steps = [
  { send = { type = "context-update", triggering = "yes", name = "n", context = {}, description = "d" } },
  { expect_error = { code = "INVALID_EVENT" } },
]

[[case]]
id = "t.errors-on-the-error-channel"
title = "Errors arrive on the 'error' channel"
rules = ["HUMA-TR-001"]
steps = [
  { send = { type = "tool-result" } },
  { expect_error = {} },
]

[[case]]
id = "t.forbidden-key-nested"
title = "A forbidden key nested in context is rejected"
rules = ["HUMA-VAL-006"]
steps = [
  { send = { type = "context-update", triggering = false, name = "n", context = { a = { b = { "__proto__" = 1 } } }, description = "d" } },
  { expect_error = { code = "INVALID_EVENT" } },
]
"#;

async fn run(url: String) -> Vec<(String, Verdict, String)> {
    let suite = loader::load_texts(&Huma, &[("t.toml".into(), SUITE.into())]).expect("suite loads");
    let mut cfg = runner::RunConfig::new(url);
    // Each wait ends when its error arrives; the budget only has to outlast a loaded machine
    // (800 ms was once too short while the fuzz tests ran beside it).
    cfg.step_timeout = Duration::from_millis(5000);
    runner::run_suite(&Huma, &suite, &cfg, &|_| {})
        .await
        .expect("reachable")
        .into_iter()
        .map(|r| (r.id, r.verdict, r.message))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cases_pass_against_a_conforming_server() {
    let (_server, url) = server("error").await;
    let results = run(url).await;
    for (id, verdict, message) in &results {
        assert_eq!(*verdict, Verdict::Pass, "{id}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_on_the_wrong_channel_fail() {
    let (_server, url) = server("event").await;
    let results = run(url).await;
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.1 == Verdict::Fail)
        .map(|r| r.0.as_str())
        .collect();
    // Only the channel rule fails: the validation cases still see their error, wherever it went.
    assert_eq!(failed, ["t.errors-on-the-error-channel"], "{results:?}");
}

#[tokio::test]
async fn a_server_that_is_not_socket_io_is_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let suite = loader::load_texts(&Huma, &[("t.toml".into(), SUITE.into())]).expect("suite loads");
    let cfg = runner::RunConfig::new(format!("http://{addr}"));
    assert!(runner::run_suite(&Huma, &suite, &cfg, &|_| {})
        .await
        .is_err());
}
