//! What `wireprobe proxy` costs on loopback, measured beside a direct connection in the same
//! run (`scripts/bench-proxy.sh`): the added round-trip latency (p50, p99) of one connection;
//! the echo rate of many connections each waiting for its message to come back, and the
//! stream rate with 16 messages in flight on each (as an agent streams its answer), each
//! through the proxy against direct, the median of three rounds. The proxy judges every
//! message as HAIP, as the command does, on a conversation that follows the spec.
//!
//! Usage: proxy_bench [SECONDS] [JOBS] [ROUND_TRIPS]   (SECONDS: per measure and round)

#[path = "shared/echo.rs"]
mod echo;

use std::time::Duration;
use wireprobe::proxy::{carry, Plan};
use wireprobe::report::Transcripts;
use wireprobe::transport::passthrough::{PassOptions, Upstream};

/// The `n`th message of a connection's HAIP conversation, as a client streaming a message
/// sends it: HAI, a message's start, then its parts, each envelope numbered in turn, so the
/// judge sees traffic that follows the spec (the echo plays the server by sending it back).
fn conversation(n: u64) -> String {
    let seq = n + 1;
    let (channel, kind, payload) = match n {
        0 => ("SYSTEM", "HAI", HAI.to_owned()),
        1 => (
            "USER",
            "TEXT_MESSAGE_START",
            format!(r#"{{"message_id":"{MESSAGE}","author":"user","text":"hello"}}"#),
        ),
        _ => (
            "USER",
            "TEXT_MESSAGE_PART",
            format!(r#"{{"message_id":"{MESSAGE}","text":"hello"}}"#),
        ),
    };
    format!(
        r#"{{"id":"6f1c2a34-5b6d-4e7f-8a9b-{seq:012x}","session":"0b9e8d7c-6a5b-4c3d-9e1f-2a3b4c5d6e7f","seq":"{seq}","ts":"1795574070757","channel":"{channel}","type":"{kind}","payload":{payload}}}"#
    )
}

const MESSAGE: &str = "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d";
const HAI: &str = r#"{"haip_version":"1.1.2","accept_major":[1],"accept_events":["HAI","PING","PONG","ERROR","TEXT_MESSAGE_START","TEXT_MESSAGE_PART","TEXT_MESSAGE_END"]}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let jobs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(32);
    let trips: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let echo = echo::server().await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let proxy = listener.local_addr()?;
    let haip = wireprobe::protocol::get("haip").ok_or("no haip")?;
    let plan = Plan {
        upstream: Upstream::parse(&format!("ws://{echo}/"))?,
        pass: PassOptions {
            max_frame: wireprobe::transport::DEFAULT_MAX_FRAME,
            insecure: false,
            connect_timeout: Duration::from_secs(5),
            linger: Duration::from_secs(5),
        },
        transcripts: Transcripts::Failing,
        once: false,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let judged = tokio::spawn(async move {
        carry(
            haip,
            listener,
            plan,
            async {
                let _ = stopped.await;
            },
            |live| {
                eprintln!(
                    "bench traffic broke {} ({} side, connection {}): {}",
                    live.rule, live.side, live.connection, live.message
                )
            },
        )
        .await
    });

    let direct = echo::round_trips(echo, trips, conversation).await;
    let proxied = echo::round_trips(proxy, trips, conversation).await;
    let (d50, d99) = (percentile(&direct, 50.0), percentile(&direct, 99.0));
    let (p50, p99) = (percentile(&proxied, 50.0), percentile(&proxied, 99.0));
    println!("round trip, one connection ({trips} messages):");
    println!(
        "  direct        p50 {:>8.1} µs   p99 {:>8.1} µs",
        micros(d50),
        micros(d99)
    );
    println!(
        "  through proxy p50 {:>8.1} µs   p99 {:>8.1} µs",
        micros(p50),
        micros(p99)
    );
    println!(
        "  added latency p50 {:>8.1} µs   p99 {:>8.1} µs   (targets: < 1000, < 5000)",
        micros(p50) - micros(d50),
        micros(p99) - micros(d99)
    );
    let span = Duration::from_secs(secs);
    // Each rate is measured direct and through the proxy in turn, `ROUNDS` times, and the
    // median ratio printed: one round on a shared two-core machine moves by ±0.05.
    let mut one = Vec::new();
    let mut streamed = Vec::new();
    for round in 1..=ROUNDS {
        let direct = echo::rate(echo, span, jobs, conversation).await;
        let proxied = echo::rate(proxy, span, jobs, conversation).await;
        println!(
            "round {round}: one in flight   direct {direct:>8.0}  through proxy {proxied:>8.0} messages/s  ratio {:.3}",
            proxied / direct
        );
        one.push(proxied / direct);
        let direct = echo::windowed_rate(echo, span, jobs, WINDOW, conversation).await;
        let proxied = echo::windowed_rate(proxy, span, jobs, WINDOW, conversation).await;
        println!(
            "round {round}: {WINDOW} in flight    direct {direct:>8.0}  through proxy {proxied:>8.0} messages/s  ratio {:.3}",
            proxied / direct
        );
        streamed.push(proxied / direct);
    }
    println!("{jobs} connections, {secs} s per measure, median of {ROUNDS} rounds:");
    println!(
        "  echo rate, one message in flight per connection: ratio proxy/direct {:.3}",
        median(&mut one)
    );
    println!(
        "  stream rate, {WINDOW} messages in flight per connection: ratio proxy/direct {:.3}   (target: >= 0.5)",
        median(&mut streamed)
    );
    let _ = stop.send(());
    let carried = judged.await?;
    println!("connections judged: {}", carried.cases.len());
    Ok(())
}

/// Rounds of each rate measure.
const ROUNDS: usize = 3;
/// Messages each connection keeps in flight for the stream rate.
const WINDOW: usize = 16;

fn median(ratios: &mut [f64]) -> f64 {
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(0.0)
}

/// The `p`th percentile of `times` (0 when there are none).
fn percentile(times: &[Duration], p: f64) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = ((p / 100.0) * (sorted.len().saturating_sub(1)) as f64).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
