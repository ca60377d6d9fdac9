//! Hostile WebSocket targets for robustness tests: each misbehaves in one way, forever.

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

/// How a hostile target misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hostility {
    /// Accepts the WebSocket and never sends anything.
    Silent,
    /// Accepts the WebSocket and closes it at once.
    ClosesAtOnce,
    /// Accepts TCP and drops it before the WebSocket upgrade.
    DropsTcp,
    /// Answers every frame with non-JSON text.
    Garbage,
    /// Sends one 20 MiB frame (over wireprobe's 16 MiB default limit).
    Oversized,
    /// Sends text frames as fast as it can.
    Floods,
    /// Engine.IO handshake, then garbage in answer to everything.
    EioGarbage,
    /// Engine.IO handshake, then never answers CONNECT.
    EioNoConnectReply,
    /// Engine.IO handshake, then pings as fast as it can.
    EioPingFlood,
    /// Engine.IO handshake, then one 20 MiB text frame.
    EioOversized,
}

const EIO_OPEN: &str = r#"0{"sid":"hostile","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#;

/// Listens on a free loopback port and hands every connection to `serve`, until the test ends.
pub async fn listen<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + Copy + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(serve(tcp));
        }
    });
    addr
}

/// Starts a hostile target on a free loopback port; it runs until the test ends.
pub async fn start(how: Hostility) -> SocketAddr {
    listen(move |tcp| misbehave(tcp, how)).await
}

/// One connection to a hostile target.
async fn misbehave(mut tcp: TcpStream, how: Hostility) {
    if how == Hostility::DropsTcp {
        let _ = tcp.shutdown().await;
        return;
    }
    let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else {
        return;
    };
    let (mut tx, mut rx) = ws.split();
    match how {
        Hostility::Silent => while rx.next().await.is_some() {},
        Hostility::ClosesAtOnce => {
            let _ = tx.send(Message::Close(None)).await;
        }
        Hostility::Garbage => {
            while let Some(Ok(_)) = rx.next().await {
                if tx.send(Message::text("garbage \u{2620} {")).await.is_err() {
                    return;
                }
            }
        }
        Hostility::Oversized => {
            let _ = tx.send(Message::binary(vec![0u8; 20 * 1024 * 1024])).await;
            while rx.next().await.is_some() {}
        }
        Hostility::Floods => {
            // Bounded, so the test machine is never the one that suffers.
            let started = tokio::time::Instant::now();
            while started.elapsed() < Duration::from_secs(20) {
                if tx.send(Message::text("{\"flood\":true}")).await.is_err() {
                    return;
                }
            }
        }
        Hostility::DropsTcp => {}
        Hostility::EioGarbage
        | Hostility::EioNoConnectReply
        | Hostility::EioPingFlood
        | Hostility::EioOversized => {
            if tx.send(Message::text(EIO_OPEN)).await.is_err() {
                return;
            }
            match how {
                Hostility::EioGarbage => {
                    while let Some(Ok(_)) = rx.next().await {
                        for junk in ["9zz", "4~~~", "42[\"event\",", "0{\"sid\":"] {
                            if tx.send(Message::text(junk)).await.is_err() {
                                return;
                            }
                        }
                    }
                }
                Hostility::EioPingFlood => {
                    let started = tokio::time::Instant::now();
                    while started.elapsed() < Duration::from_secs(20) {
                        if tx.send(Message::text("2")).await.is_err() {
                            return;
                        }
                    }
                }
                Hostility::EioOversized => {
                    let _ = tx.send(Message::text("4".repeat(20 * 1024 * 1024))).await;
                    while rx.next().await.is_some() {}
                }
                _ => while rx.next().await.is_some() {},
            }
        }
    }
}

/// `wireprobe fuzz PROTOCOL` at `target` (`--target URL` or `--exec CMD`): `runs` short runs of
/// seed 1, four at a time, each wait `timeout_ms` long, a finding written under `out`: how a
/// test starts a fuzz campaign against a hostile target.
pub fn fuzz_command(
    protocol: &str,
    target: [&str; 2],
    runs: u32,
    timeout_ms: u64,
    out: &std::path::Path,
) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"));
    command
        .args(["fuzz", protocol])
        .args(target)
        .args(["--runs", &runs.to_string(), "--jobs", "4", "--seed", "1"])
        .args(["--max-len", "6", "--timeout-ms", &timeout_ms.to_string()])
        .arg("--out")
        .arg(out);
    command
}

/// Checks a run against a hostile target: exit 1 within a minute, a JSON report at `report`
/// with `expected_cases` cases, each `error` or `skip` (an info case records what happened),
/// most of them `error`.
pub fn assert_run_errored(
    what: &str,
    out: &std::process::Output,
    elapsed: Duration,
    report: &std::path::Path,
    expected_cases: usize,
) {
    // A target that never once spoke the protocol is one line and exit 3 (the report is
    // still written); one that spoke and then misbehaved fails case by case, exit 1.
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(3) => assert!(
            stderr.trim().lines().count() == 1 && stderr.contains("never sent"),
            "{what}: {stderr}"
        ),
        code => assert_eq!(code, Some(1), "{what}: {stderr}"),
    }
    assert!(elapsed < Duration::from_secs(60), "{what} took {elapsed:?}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report).expect("report written"))
            .expect("report is JSON");
    let cases = json["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), expected_cases, "{what}");
    for case in cases {
        let verdict = case["verdict"].as_str().unwrap_or_default();
        // A case that only records behaviour records what happened instead of erroring.
        let recorded = case["level"] == "info"
            && verdict == "info"
            && case["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("recorded: "));
        assert!(
            verdict == "error" || verdict == "skip" || recorded,
            "{what}: case {} ended {verdict}: {}",
            case["id"],
            case["message"]
        );
    }
    assert!(
        json["summary"]["error"].as_u64().unwrap_or(0) as usize > expected_cases / 2,
        "{what}: {}",
        json["summary"]
    );
}
