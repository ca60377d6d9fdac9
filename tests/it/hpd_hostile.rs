//! Hostile HTTP targets for the HPD profile over SSE + HTTP: each misbehaves in one way, and a
//! run against it ends every case as `error` (or `skip`) inside its timeout, with a report; a
//! fuzz campaign against it ends at once with one line.

use crate::common;

use common::hostile;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How a hostile HTTP target misbehaves on its event stream (POSTs get 202).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misbehaviour {
    /// 200, but `text/html`.
    NotAnEventStream,
    /// 200 `text/event-stream`, then one `data:` line that never ends.
    EndlessLine,
    /// 200 `text/event-stream`, then nothing at all.
    NeverSends,
    /// 200 `text/event-stream`, half an event, then the connection closes.
    ClosesMidEvent,
}

/// Reads one request head (and a small body) off `tcp`; returns its request line.
async fn read_request(tcp: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tcp.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            let mut have = buf.len() - end - 4;
            while have < length {
                let n = tcp.read(&mut chunk).await.ok()?;
                if n == 0 {
                    break;
                }
                have += n;
            }
            return head.lines().next().map(str::to_owned);
        }
        if buf.len() > 1 << 20 {
            return None;
        }
    }
}

async fn serve(tcp: &mut TcpStream, how: Misbehaviour) -> Option<()> {
    loop {
        let line = read_request(tcp).await?;
        if line.starts_with("POST") {
            let answer = "HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
            tcp.write_all(answer.as_bytes()).await.ok()?;
            continue;
        }
        if how == Misbehaviour::NotAnEventStream {
            let answer =
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5\r\n\r\nhello";
            tcp.write_all(answer.as_bytes()).await.ok()?;
            continue;
        }
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";
        tcp.write_all(head.as_bytes()).await.ok()?;
        match how {
            Misbehaviour::EndlessLine => {
                tcp.write_all(b"data: ").await.ok()?;
                // Bounded, so the test machine is never the one that suffers.
                let started = Instant::now();
                while started.elapsed() < Duration::from_secs(20) {
                    tcp.write_all(&[b'x'; 16 * 1024]).await.ok()?;
                }
            }
            Misbehaviour::NeverSends => tokio::time::sleep(Duration::from_secs(60)).await,
            Misbehaviour::ClosesMidEvent => {
                tcp.write_all(b"id: 1\ndata: {\"version\":\"1.0\",\"ty")
                    .await
                    .ok()?;
            }
            Misbehaviour::NotAnEventStream => {}
        }
        return Some(());
    }
}

async fn start(how: Misbehaviour) -> SocketAddr {
    hostile::listen(move |mut tcp| async move {
        let _ = serve(&mut tcp, how).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_http_targets_end_as_errors_with_a_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = ["hpd.turn.*", "hpd.input.not-json"];
    let selected = 6;
    let mut runs = Vec::new();
    for how in [
        Misbehaviour::NotAnEventStream,
        Misbehaviour::EndlessLine,
        Misbehaviour::NeverSends,
        Misbehaviour::ClosesMidEvent,
    ] {
        let addr = start(how).await;
        let report = dir.path().join(format!("{how:?}.json"));
        let mut args = vec![
            "run".to_owned(),
            "hpd".into(),
            "--target".into(),
            // Each case on its own path, so the cases run side by side.
            format!("http://{addr}/{{case}}"),
            "--transport".into(),
            "sse".into(),
            "--timeout-ms".into(),
            "800".into(),
            "--max-frame-bytes".into(),
            "65536".into(),
            "--report".into(),
            format!("json={}", report.display()),
        ];
        for case in cases {
            args.extend(["--case".into(), case.to_owned()]);
        }
        runs.push(tokio::spawn(async move {
            let started = Instant::now();
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
                .args(&args)
                .output()
                .await
                .expect("wireprobe runs");
            (how, out, started.elapsed(), report)
        }));
    }
    for run in runs {
        let (how, out, elapsed, report) = run.await.expect("run finished");
        hostile::assert_run_errored(&format!("{how:?}"), &out, elapsed, &report, selected);
    }
}

/// `fuzz` meets the same targets on its worker threads: a target that never once sends an HPD
/// event ends the campaign with exit 3 and one line naming the run and what it did, well
/// inside the budget (an endless line is cut at the frame limit), and no panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzing_a_hostile_http_target_ends_with_one_line() {
    for (how, says) in [
        (Misbehaviour::NotAnEventStream, "not text/event-stream"),
        (Misbehaviour::EndlessLine, "over the 16777216-byte limit"),
        (Misbehaviour::NeverSends, "within 400 ms"),
        (Misbehaviour::ClosesMidEvent, "the event stream ended"),
    ] {
        let addr = start(how).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let started = Instant::now();
        let target = format!("http://{addr}/");
        let campaign = hostile::fuzz_command("hpd", ["--target", &target], 4, 400, dir.path());
        let out = tokio::process::Command::from(campaign)
            .args(["--transport", "sse", "--shrink-secs", "1"])
            .output()
            .await
            .expect("wireprobe runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{how:?}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(60), "{how:?}");
        let last = stderr.trim().lines().last().unwrap_or_default();
        assert!(
            last.starts_with("wireprobe: target unreachable: fuzz.hpd.")
                && [says, "within 400 ms"].iter().any(|s| last.contains(s)),
            "{how:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{how:?}: {stderr}");
    }
}
