//! A long run of `wireprobe proxy haip` (`scripts/soak-proxy.sh`): the proxy as a process of
//! its own in front of the HAIP reference server, reference client sessions through it one
//! after another on several jobs for the given time, the proxy's resident memory sampled as
//! it goes. Sessions are paced so the run carries about FRAMES frames in SECONDS (0: as fast
//! as they go). At the end the proxy is stopped (SIGINT), and its report says how many
//! sessions and frames it judged and whether any broke a rule.
//!
//! Usage: proxy_soak WIREPROBE [SECONDS] [FRAMES] [JOBS]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use wireprobe::reference::{self, ClientOptions, ServeOptions};

/// Frames one reference client session carries through the proxy (HAI both ways, the user's
/// text, the run and its acknowledgements), for pacing.
const FRAMES_PER_SESSION: f64 = 21.0;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bin = args
        .next()
        .ok_or("usage: proxy_soak WIREPROBE [SECONDS] [FRAMES] [JOBS]")?;
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3600);
    let frames: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let jobs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4);
    // Each job starts a session this often: a reference session is about 21 frames.
    let pace = match frames {
        0 => Duration::ZERO,
        n => Duration::from_secs_f64(jobs as f64 * secs as f64 * FRAMES_PER_SESSION / n as f64),
    };
    let server =
        reference::registry::start("haip", "127.0.0.1:0".parse()?, &ServeOptions::default())
            .await?;
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("soak.json");
    let mut proxy = tokio::process::Command::new(&bin)
        .args([
            "proxy",
            "haip",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &server.url,
        ])
        .arg("--report")
        .arg(format!("json={}", report.display()))
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let pid = proxy.id().ok_or("the proxy has no pid")?;
    let mut lines = BufReader::new(proxy.stderr.take().ok_or("no stderr")?).lines();
    let addr = loop {
        let line = lines
            .next_line()
            .await?
            .ok_or("the proxy ended before listening")?;
        if let Some(rest) = line.split(" listening on ").nth(1) {
            break rest.split(',').next().unwrap_or_default().to_owned();
        }
    };
    // Whatever the proxy says later (a violation) is counted, not left to fill a pipe.
    let said = Arc::new(AtomicU64::new(0));
    let counted = said.clone();
    tokio::spawn(async move {
        while let Ok(Some(_)) = lines.next_line().await {
            counted.fetch_add(1, Ordering::Relaxed);
        }
    });
    let client = reference::get("haip")
        .and_then(|r| r.client.as_ref())
        .ok_or("no HAIP reference client")?;
    let opts = ClientOptions {
        leave_when_answered: true,
        ..ClientOptions::default()
    };
    let deadline = Instant::now() + Duration::from_secs(secs);
    let sessions = Arc::new(AtomicU64::new(0));
    let mut players = Vec::new();
    for _ in 0..jobs {
        let (url, opts, sessions) = (format!("ws://{addr}/"), opts.clone(), sessions.clone());
        players.push(tokio::spawn(async move {
            let mut next = Instant::now();
            // Unpaced (`pace` zero), `next` stays put: the clock ends the loop, not `next`.
            while next < deadline && Instant::now() < deadline {
                tokio::time::sleep_until(next.into()).await;
                next += pace;
                if (client.dial)(&url, &opts).await.is_ok() {
                    sessions.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let started = Instant::now();
    let every = Duration::from_secs((secs / 12).max(1));
    println!("{:>8}  {:>10}  {:>10}", "seconds", "sessions", "RSS KiB");
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        tokio::time::sleep(every.min(deadline.saturating_duration_since(Instant::now()))).await;
        let rss = rss_kib(pid).unwrap_or(0);
        samples.push(rss);
        println!(
            "{:>8}  {:>10}  {:>10}",
            started.elapsed().as_secs(),
            sessions.load(Ordering::Relaxed),
            rss
        );
    }
    for p in players {
        let _ = p.await;
    }
    // SIGINT: the proxy writes its report and ends.
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let status = proxy.wait().await?;
    let text = std::fs::read_to_string(&report)?;
    let report: wireprobe::report::Report = serde_json::from_str(&text)?;
    let frames: u64 = report.cases.iter().map(|c| items_of(&c.title)).sum();
    let failing = report
        .cases
        .iter()
        .filter(|c| c.verdict.is_failing(false))
        .count();
    let (first, last) = (samples.first().copied(), samples.last().copied());
    let peak = samples.iter().copied().max().unwrap_or(0);
    println!(
        "{} sessions, {frames} frames judged in {} s; {failing} failing; {} lines on stderr; exit {status}",
        report.cases.len(),
        started.elapsed().as_secs(),
        said.load(Ordering::Relaxed)
    );
    println!(
        "proxy RSS: first sample {} KiB, last {} KiB, peak {peak} KiB",
        first.unwrap_or(0),
        last.unwrap_or(0)
    );
    Ok(())
}

/// The items a case's title counts (`connection 3 from … (42 items)`).
fn items_of(title: &str) -> u64 {
    title
        .rsplit('(')
        .next()
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The resident set of process `pid`, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
