//! Live fuzzing throughput against an in-process reference target, beside the raw rate of the
//! same transport on this machine measured in the same run (`scripts/bench-fuzz.sh`): for
//! HAIP a WebSocket echo, for HPD a POST-and-stream loop over HTTP + SSE. Both use the same
//! number of concurrent connections; the ratio is the figure we track. The peer runs before and
//! after the fuzzer and the ratio is taken against the mean of the two, since this machine's
//! speed drifts (the echo has moved by a fifth from one run to the next).
//!
//! Usage: fuzz_bench [SECONDS] [JOBS] [haip|hpd] [WAITING (`fuzz --waiting`, default 0)] [ROUNDS]
//!
//! With ROUNDS above 1 the fuzzer runs that many times between peer runs (peer, fuzzer,
//! peer, …): each round's ratio, then their median and how many reached 0.5.

#[path = "shared/cpu.rs"]
mod cpu;
#[path = "shared/echo.rs"]
mod echo;
#[path = "shared/sse_echo.rs"]
mod sse_echo;

/// The allocator the `wireprobe` binary uses, for the peer and the fuzzer alike.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use cpu::cpu_seconds;
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
    let id = args.next().unwrap_or_else(|| "haip".into());
    // `--waiting`: runs waiting on the target's timers lend their place (0: `fuzz`'s default).
    let waiting: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let span = Duration::from_secs(secs);
    let what = match id.as_str() {
        "haip" => "raw WebSocket echo",
        "hpd" => "raw POST-and-stream (HTTP + SSE)",
        other => return Err(format!("no bench for {other}: haip or hpd").into()),
    };
    // Peer and fuzzer alternate, the peer first and last: each fuzzing round is set against
    // the mean of the peer runs either side of it, since this machine's speed drifts (the echo
    // has moved by a fifth from one run to the next), and the rounds' median is the figure.
    let mut before = measured(raw_rate(&id, span, jobs)).await?;
    let mut rounds_done = Vec::new();
    for _ in 0..rounds {
        let fuzz = measured(fuzz_rate(&id, span, jobs, waiting)).await?;
        let after = measured(raw_rate(&id, span, jobs)).await?;
        rounds_done.push(Round::of(&before, &fuzz, &after, span));
        before = after;
    }
    // The echo as the issue first measured it has tokio-tungstenite's defaults; one with the
    // read buffer wireprobe's transport uses is faster, and the ratio to it is printed too.
    let tuned = match id.as_str() {
        "haip" => Some(measured(tuned_echo_rate(span, jobs)).await?),
        _ => None,
    };
    // An HPD input is answered by a turn of several events where the loop's POST is answered by
    // one. The loop answering each POST with as many events as fuzzing received per input
    // carries the same traffic: measured right after the last round's peer run and before
    // one more, so that what the extra events cost the wire is seen between two plain runs.
    // The fuzzer's median rates over the rounds: events sent, and messages carried either way.
    let fuzz = median_of(&rounds_done.iter().map(|r| r.fuzz).collect::<Vec<_>>());
    let fuzz_carried = median_of(&rounds_done.iter().map(|r| r.carried).collect::<Vec<_>>());
    let shaped = match id.as_str() {
        "hpd" => {
            let answers = answers_per_input(fuzz_carried, fuzz);
            let rate = sse_rate(span, jobs, answers).await?;
            let plain_after = sse_rate(span, jobs, 1).await?;
            let plain_before = rounds_done.last().map_or(plain_after, |r| r.after);
            Some((answers, rate, (plain_before + plain_after) / 2.0))
        }
        _ => None,
    };
    // The fuzzer runs each run on one of a thread per core, each with a runtime and a target of
    // its own; the peer as the issue first measured it runs on tokio's work-stealing runtime.
    // Arranged as the fuzzer is, the peer is faster too; the ratio to it is printed as well.
    let per_core = measured(per_core_rate(&id, span, jobs)).await?;
    let how = match waiting {
        0 => format!("{jobs} jobs"),
        n => format!("{jobs} jobs, --waiting {n}"),
    };
    for (i, r) in rounds_done.iter().enumerate() {
        println!(
            "{what}: {:.0} messages/s before, {:.0} after ({jobs} connections)",
            r.before, r.after
        );
        println!("live fuzzing (serve {id}, {how}): {:.0} events/s", r.fuzz);
        println!(
            "CPU per message: {:.1} µs raw, {:.1} µs per fuzzed event",
            r.cpu_raw * 1e6,
            r.cpu_per_event * 1e6
        );
        match rounds {
            1 => println!("ratio fuzz/raw: {:.3}", r.ratio()),
            _ => println!(
                "round {} of {rounds}: ratio fuzz/raw {:.3}",
                i + 1,
                r.ratio()
            ),
        }
    }
    let ratios: Vec<f64> = rounds_done.iter().map(Round::ratio).collect();
    let median = median_of(&ratios);
    if rounds > 1 {
        let (low, high) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
        let met = ratios.iter().filter(|r| **r >= 0.5).count();
        println!(
            "ratio fuzz/raw: {median:.3} (median of {rounds} rounds, {low:.3}–{high:.3}; {met} of {rounds} at 0.5 or more)"
        );
    }
    // Context for the ratio: a fuzzed event is answered by more than one message (HAIP ~1.4,
    // HPD a streamed turn of ~6), where the peer's message comes back once. Counting every
    // message either way crosses the transport (handshakes included), against the peer's two
    // per message (there and back; for HPD the POST and its one SSE event).
    let carried: Vec<f64> = rounds_done
        .iter()
        .map(|r| r.carried / (2.0 * r.raw()))
        .collect();
    let peer = median_of(&rounds_done.iter().map(Round::raw).collect::<Vec<_>>());
    println!(
        "messages carried either way: fuzzing {fuzz_carried:.0}/s, peer {:.0}/s; ratio {:.3}",
        2.0 * peer,
        median_of(&carried)
    );
    let ((rate, messages), cpu) = per_core;
    println!(
        "{what}, a runtime per core as the fuzzer runs: {rate:.0} messages/s, {:.1} µs CPU per message; ratio fuzz/that: {:.3}",
        cpu / messages * 1e6,
        fuzz / rate
    );
    if let Some((answers, rate, plain)) = shaped {
        println!(
            "{what} answering each POST with {answers} events in one chunk (as many as fuzzing received per input): {rate:.0} POSTs/s, {:.2}× the plain loop's {plain:.0} either side; ratio fuzz/that: {:.3}",
            rate / plain,
            fuzz / rate
        );
    }
    if let Some(((rate, messages), cpu)) = tuned {
        println!(
            "{what} with wireprobe's read buffer: {rate:.0} messages/s, {:.1} µs CPU per message; ratio fuzz/that: {:.3}",
            cpu / messages * 1e6,
            fuzz / rate
        );
    }
    Ok(())
}

/// A rate, and how many messages the measurement moved in all.
type Rate = (f64, f64);

/// One fuzzing run and the peer runs either side of it.
struct Round {
    /// The peer's messages per second before and after.
    before: f64,
    after: f64,
    /// Events per second fuzzing sent, and messages per second its transport carried.
    fuzz: f64,
    carried: f64,
    /// CPU seconds per message of the peer (the two runs' mean), per event of the fuzzer.
    cpu_raw: f64,
    cpu_per_event: f64,
}

impl Round {
    fn of(
        before: &(Rate, f64),
        fuzz: &((Rate, f64), f64),
        after: &(Rate, f64),
        span: Duration,
    ) -> Round {
        let per_message = |((rate, _), cpu): &(Rate, f64)| cpu / (rate * span.as_secs_f64());
        let (((rate, events), carried), cpu) = fuzz;
        Round {
            before: before.0 .0,
            after: after.0 .0,
            fuzz: *rate,
            carried: *carried,
            cpu_raw: (per_message(before) + per_message(after)) / 2.0,
            cpu_per_event: cpu / events,
        }
    }

    /// The peer's rate this round is set against.
    fn raw(&self) -> f64 {
        (self.before + self.after) / 2.0
    }

    fn ratio(&self) -> f64 {
        self.fuzz / self.raw()
    }
}

/// Events the target sent per event fuzzing sent, from the messages carried either way and the
/// events sent per second (handshakes make it a little high), rounded, at least one.
fn answers_per_input(carried: f64, sent: f64) -> usize {
    match sent {
        sent if sent > 0.0 => ((carried - sent) / sent).round().max(1.0) as usize,
        _ => 1,
    }
}

/// The middle value (the mean of the middle two for an even count).
fn median_of(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// What `work` measures and the CPU seconds this process spent on it (every thread: the peer's
/// server and client, or the fuzzer and the reference target).
async fn measured<T>(
    work: impl std::future::Future<Output = Result<T, Box<dyn std::error::Error>>>,
) -> Result<(T, f64), Box<dyn std::error::Error>> {
    let start = cpu_seconds();
    let rate = work.await?;
    Ok((rate, cpu_seconds() - start))
}

/// The peer's rate for `id`'s transport.
async fn raw_rate(
    id: &str,
    span: Duration,
    jobs: usize,
) -> Result<Rate, Box<dyn std::error::Error>> {
    let rate = match id {
        "haip" => echo_rate(span, jobs).await?,
        _ => sse_rate(span, jobs, 1).await?,
    };
    Ok((rate, rate * span.as_secs_f64()))
}

/// [`raw_rate`] with the peer arranged as the fuzzer runs: one thread per core, each with a
/// single-threaded runtime holding its own server and its share of the `jobs` connections.
async fn per_core_rate(
    id: &str,
    span: Duration,
    jobs: usize,
) -> Result<Rate, Box<dyn std::error::Error>> {
    let threads = wireprobe::workers::per_core();
    let mut handles = Vec::new();
    for i in 0..threads {
        let id = id.to_owned();
        let share = jobs / threads + usize::from(i < jobs % threads);
        handles.push(std::thread::spawn(move || -> Result<f64, String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime
                .block_on(raw_rate(&id, span, share))
                .map(|(rate, _)| rate)
                .map_err(|e| e.to_string())
        }));
    }
    let mut rate = 0.0;
    for handle in handles {
        rate += handle.join().map_err(|_| "a peer thread panicked")??;
    }
    Ok((rate, rate * span.as_secs_f64()))
}

/// Events per second the fuzz engine sends to the reference target of `id` and every event
/// it sent (the runs that finished after the span too), and the messages per second its
/// transport carried either way.
async fn fuzz_rate(
    id: &str,
    span: Duration,
    jobs: usize,
    waiting: usize,
) -> Result<(Rate, f64), Box<dyn std::error::Error>> {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let target = reference::start(id, any, &ServeOptions::default()).await?;
    let p = protocol::get(id).ok_or("not registered")?;
    // A hosted HPD agent is one conversation: each run gets its own route prefix, so the runs
    // go side by side as the echo's connections do.
    let url = RunConfig::scoped_per_case(p, &target.url);
    let mut run_cfg = RunConfig::new(url);
    run_cfg.jobs = jobs;
    run_cfg.step_timeout = Duration::from_millis(2000);
    // As `fuzz --target builtin` runs: each worker thread starts its own reference target.
    let on_each_worker = reference::get(id)
        .ok_or("no reference target")?
        .on_each_worker(ServeOptions::default());
    let cfg = FuzzConfig {
        seed: 1,
        runs: u64::MAX,
        duration: Some(span),
        max_len: 50,
        waiting,
        local_target: Some(on_each_worker),
        ..FuzzConfig::default()
    };
    // Counted as the peer counts: what completed within the span, over the span. The runs
    // still going at its end finish afterwards (a 500 ms wait for REPLAY_REQUEST, a 2 s step
    // timeout), and that tail, idle but for a few runs, is not the fuzzer's rate.
    let started = Instant::now();
    let (mut within, mut carried_within) = (0u64, 0u64);
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut |progress| {
        if let engine::Progress::Run {
            events, carried, ..
        } = progress
        {
            if started.elapsed() <= span {
                within += events as u64;
                carried_within += carried as u64;
            }
        }
    })
    .await?;
    if let Some(f) = outcome.findings.first() {
        return Err(format!("the correct reference failed: {}", f.failure.message).into());
    }
    let secs = span.as_secs_f64();
    Ok((
        (within as f64 / secs, outcome.events as f64),
        carried_within as f64 / secs,
    ))
}

/// Messages per second echoed by a bare tokio-tungstenite server, `jobs` connections each
/// sending one message the size of a typical HAIP envelope and waiting for it to come back.
async fn echo_rate(span: Duration, jobs: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let addr = echo::server().await?;
    Ok(echo::rate(addr, span, jobs, |_| "x".repeat(220)).await)
}

/// [`echo_rate`] with the read buffer wireprobe's WebSocket transport uses, on both sides.
async fn tuned_echo_rate(span: Duration, jobs: usize) -> Result<Rate, Box<dyn std::error::Error>> {
    let settings = echo::Settings::WireprobeReadBuffer;
    let addr = echo::server_with(settings).await?;
    let rate = echo::rate_with(addr, span, jobs, settings, |_| "x".repeat(220)).await;
    Ok((rate, rate * span.as_secs_f64()))
}

/// POSTs per second through a bare hyper server, `jobs` clients each posting one message the
/// size of a typical HPD input and reading it back from its SSE stream `answers` times (the
/// server writes them at once).
async fn sse_rate(
    span: Duration,
    jobs: usize,
    answers: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let addr = sse_echo::server(answers).await?;
    let message =
        r#"{"version":"1.0","type":"USER_TEXT_INPUT","text":"wireprobe: say hello there"}"#;
    Ok(sse_echo::rate(addr, span, jobs, message, answers).await)
}
