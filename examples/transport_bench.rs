//! What wireprobe's WebSocket transport costs beside the bare echo it is measured against:
//! the same echo server, `jobs` clients each sending one message and waiting for it to come
//! back, once through tokio-tungstenite directly and once through `transport::websocket`'s
//! [`Connection`] (its pump task, channels and byte budget), alternated. Both with the read
//! buffer the transport uses, so the difference is the transport's own work.
//!
//! Usage: transport_bench [SECONDS] [JOBS] [ROUNDS]   (default 5 s, 32, 2)

#[path = "shared/cpu.rs"]
mod cpu;
#[path = "shared/echo.rs"]
mod echo;

#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use cpu::cpu_seconds;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wireprobe::transport::{websocket, Frame, Received};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let jobs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(32);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2);
    let span = Duration::from_secs(secs);
    let settings = echo::Settings::WireprobeReadBuffer;
    let addr = echo::server_with(settings).await?;
    for round in 1..=rounds {
        let before = cpu_seconds();
        let raw = echo::rate_with(addr, span, jobs, settings, |_| "x".repeat(220)).await;
        let raw_cpu = (cpu_seconds() - before) / (raw * span.as_secs_f64());
        let before = cpu_seconds();
        let (ours, moved) = transport_rate(addr, span, jobs).await;
        let ours_cpu = (cpu_seconds() - before) / moved;
        println!(
            "round {round}: bare tokio-tungstenite {raw:.0} messages/s, {:.2} µs CPU each; \
             through wireprobe's transport {ours:.0}/s, {:.2} µs ({:+.2} µs per message)",
            raw_cpu * 1e6,
            ours_cpu * 1e6,
            (ours_cpu - raw_cpu) * 1e6
        );
    }
    Ok(())
}

/// Messages per second echoed through `addr` by clients on wireprobe's WebSocket transport,
/// and how many in all.
async fn transport_rate(addr: SocketAddr, span: Duration, jobs: usize) -> (f64, f64) {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + span;
    let started = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..jobs {
        let count = count.clone();
        clients.push(tokio::spawn(async move {
            let opts = websocket::WsOptions::new(format!("ws://{addr}/"));
            let Ok(mut conn) = websocket::connect(&opts).await else {
                return;
            };
            while Instant::now() < deadline {
                let soon = tokio::time::Instant::now() + Duration::from_secs(5);
                if conn.send(Frame::Text("x".repeat(220)), soon).await.is_err() {
                    return;
                }
                match conn.recv(soon).await {
                    Some((Received::Frame(_), _)) => count.fetch_add(1, Ordering::Relaxed),
                    _ => return,
                };
            }
        }));
    }
    for client in clients {
        let _ = client.await;
    }
    let moved = count.load(Ordering::Relaxed) as f64;
    (moved / started.elapsed().as_secs_f64(), moved)
}
