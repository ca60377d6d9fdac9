//! Live fuzzing throughput against the in-process HAIP reference target, beside the raw
//! WebSocket echo rate of this machine measured in the same run (`scripts/bench-fuzz.sh`).
//! Both use the same number of concurrent connections; the ratio is the figure we track.
//!
//! Usage: fuzz_bench [SECONDS] [JOBS]

#[path = "shared/echo.rs"]
mod echo;

/// The allocator the `wireprobe` binary uses, for the echo and the fuzzer alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wireprobe::fuzz::engine::{self, FuzzConfig};
use wireprobe::protocol;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::suite::runner::RunConfig;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let jobs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(32);
    let echo = echo_rate(Duration::from_secs(secs), jobs).await?;
    let fuzz = fuzz_rate(Duration::from_secs(secs), jobs).await?;
    println!("raw WebSocket echo: {echo:.0} messages/s ({jobs} connections)");
    println!("live fuzzing (serve haip): {fuzz:.0} events/s ({jobs} jobs)");
    println!("ratio fuzz/echo: {:.3}", fuzz / echo);
    Ok(())
}

/// Events per second the fuzz engine sends to the reference HAIP target.
async fn fuzz_rate(span: Duration, jobs: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let target = reference::start(
        "haip",
        SocketAddr::from(([127, 0, 0, 1], 0)),
        &ServeOptions::default(),
    )
    .await?;
    let p = protocol::get("haip").ok_or("haip is not registered")?;
    let mut run_cfg = RunConfig::new(target.url.clone());
    run_cfg.jobs = jobs;
    run_cfg.step_timeout = Duration::from_millis(2000);
    let cfg = FuzzConfig {
        seed: 1,
        runs: u64::MAX,
        duration: Some(span),
        max_len: 50,
        ..FuzzConfig::default()
    };
    let started = Instant::now();
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |_| {}).await?;
    if let Some(f) = outcome.finding {
        return Err(format!("the correct reference failed: {}", f.failure.message).into());
    }
    Ok(outcome.events as f64 / started.elapsed().as_secs_f64())
}

/// Messages per second echoed by a bare tokio-tungstenite server, `jobs` connections each
/// sending one message the size of a typical HAIP envelope and waiting for it to come back.
async fn echo_rate(span: Duration, jobs: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let addr = echo::server().await?;
    Ok(echo::rate(addr, span, jobs, |_| "x".repeat(220)).await)
}
