//! The CLI against targets that misbehave: every case ends inside its budget with `error` (or
//! `skip`), the report is still written, and an absent target is one line and exit code 3.

use crate::common;

use common::hostile::{self, Hostility};
use std::process::Command;
use std::time::Instant;

fn wireprobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wireprobe"))
}

/// Runs the HAIP suite against `how` and checks the outcome.
async fn run_against(how: Hostility) {
    run_protocol_against("haip", "ws", 76, how).await;
}

/// Runs `protocol`'s suite (`cases` of them) against `how`: every case ends `error` or `skip`.
async fn run_protocol_against(
    protocol: &'static str,
    scheme: &'static str,
    expected_cases: usize,
    how: Hostility,
) {
    let addr = hostile::start(how).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report.json");
    let started = Instant::now();
    let out = tokio::task::spawn_blocking({
        let report = report.clone();
        move || {
            wireprobe()
                .args([
                    "run",
                    protocol,
                    "--target",
                    &format!("{scheme}://{addr}/"),
                    "--timeout-ms",
                    "400",
                    "--jobs",
                    "16",
                ])
                .arg("--report")
                .arg(format!("json={}", report.display()))
                .output()
                .expect("wireprobe runs")
        }
    })
    .await
    .expect("join");
    hostile::assert_run_errored(
        &format!("{how:?}"),
        &out,
        started.elapsed(),
        &report,
        expected_cases,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_target_gives_errors() {
    run_against(Hostility::Silent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_closing_at_once_gives_errors() {
    run_against(Hostility::ClosesAtOnce).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_dropping_tcp_gives_errors() {
    run_against(Hostility::DropsTcp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_target_gives_errors() {
    run_against(Hostility::Garbage).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_frame_gives_errors() {
    run_against(Hostility::Oversized).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flooding_target_gives_errors() {
    run_against(Hostility::Floods).await;
}

const HUMA_CASES: usize = 43;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socketio_garbage_packets_give_errors() {
    run_protocol_against("huma", "http", HUMA_CASES, Hostility::EioGarbage).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socketio_without_connect_reply_gives_errors() {
    run_protocol_against("huma", "http", HUMA_CASES, Hostility::EioNoConnectReply).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socketio_ping_flood_gives_errors() {
    run_protocol_against("huma", "http", HUMA_CASES, Hostility::EioPingFlood).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socketio_oversized_frame_gives_errors() {
    run_protocol_against("huma", "http", HUMA_CASES, Hostility::EioOversized).await;
}

#[test]
fn unreachable_target_is_one_line_and_exit_3() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let out = wireprobe()
        .args([
            "run",
            "haip",
            "--target",
            &format!("ws://127.0.0.1:{port}/"),
            "--timeout-ms",
            "500",
        ])
        .output()
        .expect("wireprobe runs");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim().lines().count(),
        1,
        "one clear line, got: {stderr}"
    );
    assert!(stderr.contains("unreachable"), "{stderr}");
}

#[test]
fn non_socket_io_server_is_one_line_and_exit_3() {
    // An HTTP server with no Engine.IO endpoint answers 404.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let out = wireprobe()
        .args([
            "run",
            "huma",
            "--target",
            &format!("http://{addr}"),
            "--timeout-ms",
            "500",
        ])
        .output()
        .expect("wireprobe runs");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim().lines().count(),
        1,
        "one clear line, got: {stderr}"
    );
    assert!(stderr.contains("not a Socket.IO server"), "{stderr}");
}

#[test]
fn a_reader_that_goes_away_does_not_crash_list() {
    let mut child = wireprobe()
        .args(["list", "haip", "--rules"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("wireprobe runs");
    // Close the pipe's read end before the child (still starting up) writes anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wireprobe ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A server of another protocol (the HUMA Socket.IO reference given to `run haip` and to
/// `run uae`) is one line naming the protocol expected, exit 3, and the report still written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_another_protocol_is_one_line_and_exit_3() {
    use std::net::SocketAddr;
    let huma = wireprobe::reference::start(
        "huma",
        SocketAddr::from(([127, 0, 0, 1], 0)),
        &wireprobe::reference::ServeOptions::default(),
    )
    .await
    .expect("the HUMA reference starts");
    let url = format!("ws://{}/socket.io/?EIO=4&transport=websocket", huma.addr);
    for (protocol, title) in [("haip", "HAIP"), ("uae", "UI–Agent–Executor")] {
        let dir = tempfile::tempdir().expect("temp dir");
        let report = dir.path().join("run.json");
        let out = wireprobe()
            .args(["run", protocol, "--target", &url, "--timeout-ms", "300"])
            .arg("--report")
            .arg(format!("json={}", report.display()))
            .output()
            .expect("wireprobe runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{protocol}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{protocol}: {stderr}");
        assert!(
            stderr.contains(&format!("is it a {title}")),
            "{protocol}: {stderr}"
        );
        assert!(
            report.exists(),
            "{protocol}: the report is written all the same"
        );
    }
}

/// An HTTP server answering every request with `status` (and closing), on a free port.
fn answering_every_request(status: &'static str) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let head =
                format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let _ = conn.write_all(head.as_bytes());
        }
    });
    addr
}

/// An AG-UI endpoint that fails with 500 on a valid input answered it, wrongly: the case that
/// sent the input is judged by AGUI-IN-004, not errored. A gateway's 503 says nothing answered there: the run is one line and
/// exit 3, as for an unreachable target.
#[test]
fn an_ag_ui_endpoint_failing_with_500_fails_and_a_gateway_s_503_is_no_answer() {
    let run = |status: &'static str| {
        let addr = answering_every_request(status);
        wireprobe()
            .args(["run", "agui", "--target", &format!("http://{addr}/agent")])
            .args(["--case", "agui.run.plain", "--timeout-ms", "1000"])
            .output()
            .expect("wireprobe runs")
    };
    // AGUI-IN-004 is a should (the spec states it without a keyword): the case warns.
    let failing = run("500 Internal Server Error");
    assert_eq!(failing.status.code(), Some(0), "{failing:?}");
    let said = String::from_utf8_lossy(&failing.stdout);
    assert!(said.contains("warn") && said.contains("500"), "{said}");
    assert!(said.contains("AGUI-IN-004"), "{said}");
    let gateway = run("503 Service Unavailable");
    assert_eq!(gateway.status.code(), Some(3), "{gateway:?}");
}
