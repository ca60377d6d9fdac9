//! Where a live fuzz run's time goes: runs generated runs one after another (one job, so no
//! wait hides behind another run's work) against an in-process reference target, and prints
//! each run's duration, its verdict, and every gap of 20 ms or more in its transcript with the
//! entries on either side: a wait keyed on time rather than on what the target sent shows up
//! here as a gap after the target had already answered.
//!
//! A run that skips or cannot complete also prints its steps and its whole transcript, and
//! FIRST starts with that run of the seed (the runs before it are drawn, not run), so one run
//! a campaign reported can be looked at alone.
//!
//! Usage: fuzz_timeline [PROTOCOL] [RUNS] [SEED] [FIRST]   (default haip 20 1 0)

#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use proptest::strategy::{Strategy, ValueTree};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wireprobe::fuzz::case::{case_for, sequences};
use wireprobe::fuzz::{engine, gen};
use wireprobe::protocol;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::suite::runner::{self, RunConfig};
use wireprobe::transcript::Entry;
use wireprobe::verdict::Verdict;

/// Shortest gap between two transcript entries that is printed.
const GAP_MS: u64 = 20;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let id = args.next().unwrap_or_else(|| "haip".into());
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let first: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let p = protocol::get(&id).ok_or("not registered")?;
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let target = reference::start(&id, any, &ServeOptions::default()).await?;
    let mut cfg = RunConfig::new(RunConfig::scoped_per_case(p, &target.url));
    cfg.step_timeout = Duration::from_millis(2000);
    let profile = p.fuzzing_as(cfg.role_of(p)).ok_or("not fuzzable")?;
    let strategy = sequences(profile, 50);
    let mut rng = gen::runner(seed);
    let (mut total, mut sends, mut received) = (Duration::ZERO, 0, 0);
    // Drawn as the campaign draws them, so run N is the campaign's run N.
    for _ in 0..first {
        strategy.new_tree(&mut rng).map_err(|e| e.to_string())?;
    }
    for i in first..first + runs {
        let tree = strategy.new_tree(&mut rng).map_err(|e| e.to_string())?;
        let case = case_for(p, profile, &format!("t{i}"), tree.current(), &cfg);
        let started = Instant::now();
        let result = runner::run_case(p, &case, &cfg).await;
        let took = started.elapsed();
        total += took;
        sends += engine::sends(&case);
        received += result
            .transcript
            .iter()
            .filter(|e| e.from == cfg.judged && e.event().is_some())
            .count();
        let message: String = result.message.chars().take(100).collect();
        println!(
            "run {i}: {} ms, {} sends, {:?} {message}",
            took.as_millis(),
            engine::sends(&case),
            result.verdict
        );
        let mut before: Option<&Entry> = None;
        for entry in &result.transcript {
            if let Some(b) = before.filter(|b| entry.at_ms >= b.at_ms + GAP_MS) {
                println!(
                    "   {} ms between {:?} {} and {:?} {}",
                    entry.at_ms - b.at_ms,
                    b.from,
                    what(b),
                    entry.from,
                    what(entry)
                );
            }
            before = Some(entry);
        }
        if matches!(result.verdict, Verdict::Skip | Verdict::Error) {
            for line in runner::step_lines(&case) {
                println!("   step {line}");
            }
            for entry in &result.transcript {
                let whole = match entry.event() {
                    Some(event) => event.to_string(),
                    None => format!("{:?}", entry.observation()),
                };
                println!("   {} ms {:?} {whole}", entry.at_ms, entry.from);
            }
        }
    }
    println!(
        "{runs} runs from run {first}: {} ms, {sends} sends, {received} events received, {:.0} sends/s for one job",
        total.as_millis(),
        sends as f64 / total.as_secs_f64()
    );
    Ok(())
}

/// An entry in a few words: its event's type, or its observation.
fn what(e: &Entry) -> String {
    match e.event() {
        Some(event) => match event.get("type") {
            Some(t) => t.to_string(),
            None => event.to_string().chars().take(60).collect(),
        },
        None => format!("{:?}", e.observation()).chars().take(80).collect(),
    }
}
