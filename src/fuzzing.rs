//! `wireprobe fuzz`: runs the fuzz engine against a target, shows progress, and writes a
//! finding as a replayable suite case plus its transcript.

use crate::cli::FuzzArgs;
use crate::target;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wireprobe::fuzz::engine::{self, Finding, FuzzConfig, FuzzError, Progress};
use wireprobe::protocol::Protocol;
use wireprobe::suite::runner::RunConfig;
use wireprobe::suite::writer;

/// What a fuzz command ended with.
pub enum Ended {
    Clean,
    Found,
    /// The target never completed a run.
    Unusable(String),
}

/// Runs `wireprobe fuzz`.
pub async fn fuzz(p: &'static dyn Protocol, args: FuzzArgs) -> Result<Ended> {
    let prepared = target::prepare(p, &args.target).await?;
    let seed = args
        .seed
        .unwrap_or_else(|| uuid::Uuid::new_v4().as_u64_pair().0);
    eprintln!(
        "wireprobe: fuzzing {} at {} with --seed {seed}",
        p.id(),
        prepared.shown
    );
    let mut run_cfg = RunConfig::new(prepared.url.clone());
    run_cfg.step_timeout = Duration::from_millis(args.timeout_ms);
    run_cfg.credentials = prepared.credentials.clone();
    run_cfg.exec = prepared.exec.clone();
    run_cfg.cwd = args.target.cwd.clone();
    run_cfg.tools = args.target.tools.clone();
    run_cfg.transport = prepared.transport;
    run_cfg.role = prepared.role.clone();
    run_cfg.jobs = args.jobs as usize;
    let cfg = FuzzConfig {
        seed,
        runs: args.runs.unwrap_or(if args.duration.is_some() {
            u64::MAX
        } else {
            200
        }),
        duration: args.duration.map(Duration::from_secs),
        max_len: args.max_len as usize,
        shrink_time: Duration::from_secs(args.shrink_secs),
        ..FuzzConfig::default()
    };
    let bar = progress_bar(&cfg);
    let started = std::time::Instant::now();
    let mut events = 0u64;
    let mut show = |progress: Progress| match progress {
        Progress::Run { events: n, .. } => {
            events += n as u64;
            let rate = events as f64 / started.elapsed().as_secs_f64().max(0.001);
            bar.inc(1);
            bar.set_message(format!("{events} events, {rate:.0}/s"));
        }
        Progress::Shrink { steps, still_fails } => bar.set_message(format!(
            "shrinking: {steps} steps ({})",
            if still_fails { "fails" } else { "passes" }
        )),
    };
    let outcome = engine::fuzz(p, &cfg, &run_cfg, &mut show).await;
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(FuzzError::Unusable(why)) => return Ok(Ended::Unusable(why)),
        Err(e) => return Err(e.into()),
    };
    let elapsed = started.elapsed().as_secs_f64().max(0.001);
    eprintln!(
        "wireprobe: {} runs, {} events in {elapsed:.1} s ({:.0} events/s), {} runs could not complete",
        outcome.runs,
        outcome.events,
        outcome.events as f64 / elapsed,
        outcome.errors
    );
    if let Some(why) = &outcome.last_error {
        eprintln!("wireprobe: the last run that could not complete: {why}");
    }
    let Some(finding) = outcome.finding else {
        eprintln!("wireprobe: nothing found");
        return Ok(Ended::Clean);
    };
    let written = write_finding(&args.out, p, seed, &finding)
        .with_context(|| format!("writing the finding to {}", args.out.display()))?;
    println!(
        "finding: {} ({}) in run {}: {}",
        finding.failure.rule, finding.failure.verdict, finding.run, finding.failure.message
    );
    println!(
        "  shrunk from {} to {} steps; reproduced {}/{}{}",
        finding.steps_before,
        finding.steps_after,
        finding.reproduced,
        finding.attempts,
        if finding.is_flaky() { " (flaky)" } else { "" }
    );
    println!(
        "  replay: wireprobe run {} --suite {} …",
        p.id(),
        written.display()
    );
    Ok(Ended::Found)
}

/// A bar over the runs (a spinner when only a duration bounds them) on a terminal; hidden
/// otherwise, so logs get only the plain summary lines.
fn progress_bar(cfg: &FuzzConfig) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bounded = cfg.runs != u64::MAX;
    let bar = if bounded {
        ProgressBar::new(cfg.runs)
    } else {
        ProgressBar::new_spinner()
    };
    let template = if bounded {
        "  {bar:30} {pos}/{len} runs  {msg}"
    } else {
        "  {spinner} {pos} runs  {msg}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// Writes `PROTOCOL-sSEED-rRUN.toml` (the case) and `.ndjson` (its transcript) under `out`.
fn write_finding(out: &Path, p: &dyn Protocol, seed: u64, finding: &Finding) -> Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let stem = format!("{}-s{seed}-r{}", p.id(), finding.run);
    let toml = out.join(format!("{stem}.toml"));
    let header = format!(
        "# wireprobe fuzz finding: {} ({}), seed {seed}, run {}; reproduced {}/{}.\n# {}\n\n",
        finding.failure.rule,
        finding.failure.verdict,
        finding.run,
        finding.reproduced,
        finding.attempts,
        finding.failure.message.replace('\n', " ")
    );
    std::fs::write(&toml, header + &writer::case_to_toml(&finding.case))?;
    let mut lines = String::new();
    for entry in &finding.result.transcript {
        lines.push_str(&serde_json::to_string(entry)?);
        lines.push('\n');
    }
    std::fs::write(out.join(format!("{stem}.ndjson")), lines)?;
    Ok(toml)
}
