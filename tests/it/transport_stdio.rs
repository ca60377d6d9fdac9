//! The stdio transport against real child processes: round trips, framing anomalies reported
//! without stopping the reader, stderr kept, exit codes and signals observed, and no child
//! left running.

use std::time::Duration;
use tokio::time::Instant;
use wireprobe::transport::stdio::{self, StdioOptions};
use wireprobe::transport::{Connection, Frame, Received, TransportError};

fn opts(cmd: &str, max_line: usize) -> StdioOptions {
    StdioOptions {
        argv: stdio::split_command(cmd).expect("splits"),
        cwd: None,
        max_line,
    }
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

/// Everything the process sends until it ends.
async fn drain(conn: &mut Connection) -> Vec<Received> {
    let mut all = Vec::new();
    while let Some((r, _)) = conn.recv(soon()).await {
        let end = r.is_terminal();
        all.push(r);
        if end {
            break;
        }
    }
    all
}

#[tokio::test]
async fn lines_round_trip_through_a_process() {
    let mut conn = stdio::spawn(&opts("cat", 1024)).await.expect("spawns");
    conn.send(
        Frame::Text("{\"type\":\"control\",\"action\":\"heartbeat\"}".into()),
        soon(),
    )
    .await
    .expect("send");
    match conn.recv(soon()).await {
        Some((Received::Frame(Frame::Text(t)), _)) => {
            assert_eq!(t, "{\"type\":\"control\",\"action\":\"heartbeat\"}")
        }
        other => panic!("unexpected {other:?}"),
    }
    // A raw frame goes out exactly as given: here two lines in one write, the second unfinished.
    conn.send(Frame::RawText(b"one\ntw".to_vec()), soon())
        .await
        .expect("send raw");
    conn.send(Frame::Text("o".into()), soon())
        .await
        .expect("send");
    let first = conn.recv(soon()).await;
    let second = conn.recv(soon()).await;
    assert!(
        matches!(first, Some((Received::Frame(Frame::Text(ref t)), _)) if t == "one"),
        "{first:?}"
    );
    assert!(
        matches!(second, Some((Received::Frame(Frame::Text(ref t)), _)) if t == "two"),
        "{second:?}"
    );
}

#[tokio::test]
async fn framing_anomalies_are_reported_and_reading_goes_on() {
    let script = r#"sh -c 'printf "a\r\n\nb\377\n%050d\nafter\nlast" 0; echo oops >&2; exit 3'"#;
    let mut conn = stdio::spawn(&opts(script, 20)).await.expect("spawns");
    let all = drain(&mut conn).await;
    let shown: Vec<String> = all
        .iter()
        .map(|r| match r {
            Received::Frame(Frame::Text(t)) => format!("text {t}"),
            Received::Frame(Frame::RawText(b)) => format!("bytes {b:?}"),
            Received::Notice(n) => format!("notice {n}"),
            Received::Stderr(s) => format!("stderr {s}"),
            Received::Closed { code, .. } => format!("closed {code:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    let stdout: Vec<&String> = shown.iter().filter(|l| !l.starts_with("stderr")).collect();
    assert_eq!(stdout[0], "text a");
    assert_eq!(stdout[1], "notice a blank line");
    assert_eq!(stdout[2], "bytes [98, 255]");
    assert!(
        stdout[3].starts_with("notice a line of 50 bytes"),
        "{shown:?}"
    );
    assert_eq!(stdout[4], "text after");
    assert_eq!(stdout[5], "text last");
    assert_eq!(stdout.last().map(|s| s.as_str()), Some("closed Some(3)"));
    assert!(shown.iter().any(|l| l == "stderr oops"), "{shown:?}");
}

#[tokio::test]
async fn a_killed_process_reports_its_signal() {
    let mut conn = stdio::spawn(&opts("sh -c 'kill -9 $$'", 1024))
        .await
        .expect("spawns");
    match drain(&mut conn).await.pop() {
        Some(Received::Closed { code: None, reason }) => {
            assert!(reason.contains("signal 9"), "{reason}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn no_child_outlives_its_connection() {
    // A sleep whose argument no other process has.
    let marker = format!("sleep 37.{}", std::process::id());
    let conn = stdio::spawn(&opts(&marker, 1024)).await.expect("spawns");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let running = || {
        std::process::Command::new("pgrep")
            .arg("-f")
            .arg(&marker)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    assert!(running(), "the child should be running");
    conn.close().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!running(), "the child outlived its connection");
}

#[tokio::test]
async fn a_missing_program_is_unreachable() {
    let err = stdio::spawn(&opts("wireprobe-no-such-program --stdio", 1024))
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, TransportError::Unreachable { .. }), "{err}");
}
