//! `wireprobe fuzz`: runs the fuzz engine against a target, shows progress, and writes a
//! finding as a replayable suite case plus its transcript.

use super::target;
use super::{protocol_named, usage, Failure, EXIT_FAIL, EXIT_OK, EXIT_UNREACHABLE};
use crate::cli::args::FuzzArgs;
use anyhow::{anyhow, Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wireprobe::fuzz::campaign_report::{Campaign, CampaignReport, FindingReport};
use wireprobe::fuzz::company::Company;
use wireprobe::fuzz::coverage;
use wireprobe::fuzz::engine::{self, Finding, FuzzConfig, FuzzError, Progress};
use wireprobe::fuzz::replays::{self, Replay, ReplayKind};
use wireprobe::protocol::Protocol;
use wireprobe::report::Format;
use wireprobe::suite::runner::RunConfig;
use wireprobe::suite::writer;

/// What a fuzz command ended with.
pub enum Ended {
    Clean,
    Found,
    /// The target never completed a run.
    Unusable(String),
}

pub(super) async fn command(args: FuzzArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    match fuzz(p, args).await.map_err(usage)? {
        Ended::Clean => Ok(EXIT_OK),
        Ended::Found => Ok(EXIT_FAIL),
        Ended::Unusable(why) => Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!("target unreachable: {why}"),
        }),
    }
}

/// Runs `wireprobe fuzz`.
pub async fn fuzz(p: &'static dyn Protocol, args: FuzzArgs) -> Result<Ended> {
    let known_failing =
        super::read_ids("--known-failing", args.known_failing.as_deref()).map_err(|f| f.error)?;
    // A rule id the protocol does not have is a typo that would hide nothing: say so.
    if let Some(unknown) = known_failing
        .iter()
        .find(|id| wireprobe::rules::find(p.rules(), id).is_none())
    {
        anyhow::bail!(
            "--known-failing names {unknown}, which is no rule of {} (`wireprobe list {} --rules`)",
            p.id(),
            p.id()
        );
    }
    // Only a campaign's JSON report exists: a wrong format is refused before anything runs.
    if let Some(other) = args.reports.iter().find(|r| r.format != Format::Json) {
        anyhow::bail!(
            "fuzz writes a JSON report only (--report json=PATH), not {:?}",
            other.format
        );
    }
    let prepared = match args.client {
        true => target::prepare_client(p, &args.target, None)?,
        false => target::prepare(p, &args.target).await?,
    };
    let seed = args
        .seed
        .unwrap_or_else(|| uuid::Uuid::new_v4().as_u64_pair().0);
    // A builtin target's runs go to the ones the worker threads start, each on a port of its
    // own: a finding's transcript may name one of those.
    let copies = match prepared.on_each_worker {
        Some(_) => "; the runs, and the shrinking of what they find, go to a copy of it on each worker thread",
        None => "",
    };
    eprintln!(
        "wireprobe: fuzzing {} at {} with --seed {seed}{copies}",
        p.id(),
        prepared.shown
    );
    let mut run_cfg = RunConfig::new(prepared.url.clone());
    run_cfg.step_timeout = Duration::from_millis(args.timeout_ms);
    run_cfg.credentials = prepared.credentials.clone();
    // A served client's command is `client_command`; `exec` is a stdio target's.
    match args.client {
        true => {
            run_cfg.judged = wireprobe::transcript::Direction::Client;
            run_cfg.client_command = prepared.exec.clone();
            run_cfg.slow_tools = prepared.slow_tools.clone();
        }
        false => run_cfg.exec = prepared.exec.clone(),
    }
    run_cfg.cwd = args.target.cwd.clone();
    run_cfg.tools = prepared.tools.clone();
    run_cfg.transport = prepared.transport;
    run_cfg.role = prepared.role.clone();
    run_cfg.jobs = args.jobs as usize;
    run_cfg.insecure = args.target.insecure;
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
        shard: args.shard,
        waiting: args.waiting as usize,
        known_failing,
        local_target: prepared.on_each_worker.clone(),
        max_findings: args.max_findings as usize,
        guided: !args.unguided,
        ..FuzzConfig::default()
    };
    // A spinner when only a duration bounds the runs.
    let share = cfg.shard.map_or(cfg.runs, |s| s.runs_of(cfg.runs));
    let bar = super::progress::bar((cfg.runs != u64::MAX).then_some(share), "runs");
    let started = std::time::Instant::now();
    let started_at = std::time::SystemTime::now();
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
    let coverage = coverage::coverage(p, run_cfg.judged, &outcome.exercised, outcome.out_of_reach);
    eprintln!("wireprobe: {}", coverage.summary());
    if args.waiting > 0 {
        eprintln!(
            "wireprobe: runs waiting on the target lent their place {} times (--waiting {})",
            outcome.lent, args.waiting
        );
    }
    if let Some(why) = &outcome.last_error {
        eprintln!("wireprobe: the last run that could not complete: {why}");
    }
    if let Some(why) = &outcome.last_skip {
        eprintln!(
            "wireprobe: {} runs skipped, the last: {why}",
            outcome.skipped
        );
    }
    if outcome.known_only > 0 {
        eprintln!(
            "wireprobe: {} runs broke only rules in --known-failing",
            outcome.known_only
        );
    }
    let mut reported = Vec::new();
    for finding in &outcome.findings {
        let written = write_finding(&args.out, p, seed, finding)
            .with_context(|| format!("writing the finding to {}", args.out.display()))?;
        let replay = replay_command(p, &written, &args.target, args.client, args.timeout_ms);
        println!("{}", finding_lines(finding, &replay));
        let case = written.display().to_string();
        reported.push(FindingReport::of(finding, Some(case), Some(replay)));
    }
    match outcome.findings.is_empty() {
        true => eprintln!("wireprobe: {}", nothing_found(&outcome)),
        false => println!(
            "wireprobe: {}",
            found_summary(&outcome.findings, cfg.max_findings)
        ),
    }
    let campaign = Campaign {
        protocol: p.id().to_owned(),
        target: prepared.shown.clone(),
        seed,
        shard: cfg.shard.map(|s| s.to_string()),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    let report = CampaignReport::new(campaign, &outcome, coverage, reported).to_json();
    for target in &args.reports {
        let shown = target.path.as_deref().unwrap_or(Path::new("-")).display();
        wireprobe::report::emit(target.path.as_deref(), &report)
            .with_context(|| format!("writing the campaign's report to {shown}"))?;
    }
    Ok(match outcome.findings.iter().any(Finding::reproduces) {
        true => Ended::Found,
        false => Ended::Clean,
    })
}

/// What is printed of one finding: a counted one as `finding: …`, one that never failed again
/// as `flaky: …`; then how its replays went, its input, and the command that replays it.
fn finding_lines(finding: &Finding, replay: &str) -> String {
    let f = &finding.failure;
    let mut lines = Vec::new();
    let among = company_words(&finding.company);
    let counted = match finding.reproduces() {
        true => "finding",
        false => "flaky",
    };
    lines.push(format!(
        "{counted}: {} ({}) in run {} (after {:.1} s): {}",
        f.rule,
        f.verdict,
        finding.run,
        finding.found_after.as_secs_f64(),
        f.message
    ));
    lines.push(
        match (finding.reproduces(), finding.needs_company.is_some()) {
            (true, false) => format!(
                "  shrunk from {} to {} steps; reproduced {}/{}{}",
                finding.steps_before,
                finding.steps_after,
                finding.reproduced,
                finding.attempts,
                if finding.is_flaky() { " (flaky)" } else { "" }
            ),
            (true, true) => format!(
                "  failed again as it ran ({among}) in a frame the target sent, never alone \
             ({}/{}): the runs it ran among are part of it",
                finding.reproduced, finding.attempts
            ),
            (false, _) => format!(
                "  did not fail again in {} replays alone, as it ran: not counted",
                finding.attempts
            ),
        },
    );
    if !finding.replays.is_empty() {
        lines.push(format!(
            "  replays: {}",
            replay_words(&finding.replays, &among)
        ));
    }
    if let Some(missed) = finding.missed() {
        lines.push(format!(
            "  a replay that did not fail the same way ended {missed}"
        ));
    }
    lines.push(format!("  input: {}", shape_words(&finding.shape)));
    if finding.repeats > 0 {
        lines.push(format!(
            "  {} other runs failed the same way on such input",
            finding.repeats
        ));
    }
    lines.push(format!("  replay: {replay}"));
    lines.join("\n")
}

/// The runs a finding's run ran among, in words: `after run 3, beside runs 5 and 6`.
fn company_words(company: &Company) -> String {
    let runs = |runs: &[u64]| {
        let named: Vec<String> = runs.iter().map(u64::to_string).collect();
        match named.as_slice() {
            [one] => format!("run {one}"),
            [rest @ .., last] => format!("runs {} and {last}", rest.join(", ")),
            [] => String::new(),
        }
    };
    let mut words = Vec::new();
    if let Some(before) = company.before {
        words.push(format!("after run {before}"));
    }
    if !company.beside.is_empty() {
        words.push(format!("beside {}", runs(&company.beside)));
    }
    match words.is_empty() {
        true => "alone".to_owned(),
        false => words.join(", "),
    }
}

/// Which replays failed the same way, kind by kind: `as it ran (after run 3): failed the same;
/// alone: 0 of 3; shrunk: 3 of 3`.
fn replay_words(replays: &[Replay], among: &str) -> String {
    let mut parts = Vec::new();
    for (kind, name) in [
        (ReplayKind::AsItRan, format!("as it ran ({among})")),
        (ReplayKind::Alone, "alone".to_owned()),
        (ReplayKind::Shrunk, "shrunk".to_owned()),
    ] {
        let (same, all) = replays::tally(replays, kind);
        let part = match (kind, same, all) {
            (_, _, 0) => continue,
            (ReplayKind::AsItRan, 1, 1) => format!("{name}: failed the same"),
            (ReplayKind::AsItRan, 0, 1) => format!("{name}: did not"),
            _ => format!("{name}: {same} of {all} failed the same"),
        };
        parts.push(part);
    }
    parts.join("; ")
}

/// A finding's shape in words.
fn shape_words(shape: &[&str]) -> String {
    match shape {
        [] => "valid events alone".to_owned(),
        kinds => format!("valid events and {}", kinds.join(", ")),
    }
}

/// The last line of a campaign that found something: the distinct findings and their rules,
/// the flaky ones apart, and whether `--max-findings` stopped it.
fn found_summary(findings: &[Finding], max_findings: usize) -> String {
    // Each rule once, in the order first found, with how many findings it has past one.
    let rules = |counted: bool| {
        let of_kind: Vec<&str> = findings
            .iter()
            .filter(|f| f.reproduces() == counted)
            .map(|f| f.failure.rule.as_str())
            .collect();
        let mut named: Vec<(&str, usize)> = Vec::new();
        for rule in &of_kind {
            match named.iter_mut().find(|(r, _)| r == rule) {
                Some((_, n)) => *n += 1,
                None => named.push((rule, 1)),
            }
        }
        let words: Vec<String> = named
            .iter()
            .map(|(rule, n)| match n {
                1 => rule.to_string(),
                n => format!("{rule} ×{n}"),
            })
            .collect();
        (of_kind.len(), words.join(", "))
    };
    let (found, found_rules) = rules(true);
    let (flaky, flaky_rules) = rules(false);
    let mut line = match found {
        0 => "no finding reproduced".to_owned(),
        1 => format!("1 finding ({found_rules})"),
        n => format!("{n} distinct findings ({found_rules})"),
    };
    if flaky > 0 {
        line.push_str(&format!("; {flaky} flaky, not counted ({flaky_rules})"));
    }
    if found >= max_findings {
        line.push_str(&format!("; stopped at --max-findings {max_findings}"));
    }
    line
}

/// The last line of a campaign without a finding. Runs that could not complete or were skipped
/// tested nothing, so the line counts only the runs judged when there were such runs.
fn nothing_found(outcome: &engine::Outcome) -> String {
    let untested = outcome.errors + outcome.skipped;
    match untested {
        0 => "nothing found".to_owned(),
        _ => format!(
            "nothing found in the {} runs judged; {untested} of {} tested nothing (above)",
            outcome.runs.saturating_sub(untested),
            outcome.runs
        ),
    }
}

/// The `run` that replays a finding against the same target, as one line a shell takes
/// (secrets stand as environment variables, never in the clear).
fn replay_command(
    p: &dyn Protocol,
    suite: &std::path::Path,
    t: &crate::cli::args::TargetFlags,
    client: bool,
    timeout_ms: u64,
) -> String {
    let mut words = vec!["wireprobe".to_owned(), "run".into(), p.id().into()];
    if client {
        words.push("--client".into());
    }
    words.extend(["--suite".into(), shell_quote(&suite.to_string_lossy())]);
    let mut flag = |name: &str, value: &str| {
        words.push(name.to_owned());
        words.push(shell_quote(value));
    };
    if let Some(target) = &t.target {
        flag("--target", target);
    }
    if let Some(exec) = &t.exec {
        flag("--exec", exec);
    }
    if let Some(cwd) = &t.cwd {
        flag("--cwd", &cwd.to_string_lossy());
    }
    if let Some(transport) = t.transport {
        flag("--transport", transport.name());
    }
    if let Some(role) = &t.role {
        flag("--role", role);
    }
    for fault in &t.faults {
        flag("--fault", fault);
    }
    for variant in &t.variants {
        flag("--variant", variant);
    }
    if let Some(claims) = &t.claims {
        flag("--claims", claims);
    }
    for tool in &t.tools {
        flag("--tool", &tool.to_string());
    }
    for tool in &t.slow_tools {
        flag("--slow-tool", &tool.to_string());
    }
    flag("--timeout-ms", &timeout_ms.to_string());
    if t.insecure {
        words.push("--insecure".into());
    }
    if t.token.is_some() {
        words.push("--token \"$WIREPROBE_TOKEN\"".into());
    }
    if t.jwt_secret.is_some() {
        words.push("--jwt-secret \"$WIREPROBE_JWT_SECRET\"".into());
    }
    words.join(" ")
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    match plain {
        true => s.to_owned(),
        false => format!("'{}'", s.replace('\'', "'\\''")),
    }
}

/// `text` as the rest of one TOML comment line: a comment holds no control character but tab
/// (a message quoting the target's bytes may hold a carriage return or a NUL), so each is
/// written escaped, as Rust writes it (`\r`, `\u{0}`).
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() && c != '\t' {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// Writes `PROTOCOL-sSEED-rRUN.toml` (the case) and `.ndjson` (its transcript) under `out`.
fn write_finding(out: &Path, p: &dyn Protocol, seed: u64, finding: &Finding) -> Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let stem = format!("{}-s{seed}-r{}", p.id(), finding.run);
    let toml = out.join(format!("{stem}.toml"));
    let header = format!(
        "# wireprobe fuzz finding: {} ({}), seed {seed}, run {}; reproduced {}/{}{}.\n# {}\n",
        finding.failure.rule,
        finding.failure.verdict,
        finding.run,
        finding.reproduced,
        finding.attempts,
        match (finding.reproduces(), finding.needs_company.is_some()) {
            (true, false) => "",
            (true, true) => " alone; it failed again as it ran, beside its company",
            (false, _) => " (flaky: it never failed again alone, and is not counted)",
        },
        comment_text(&finding.failure.message)
    );
    let among = company_words(&finding.company);
    let header = match finding.replays.is_empty() {
        true => format!("{header}\n"),
        false => format!(
            "{header}# replays: {}\n\n",
            replay_words(&finding.replays, &among)
        ),
    };
    let mut suite = header + &writer::case_to_toml(&finding.case)?;
    // A finding that needs its company replays with it: the cases of the runs it ran among,
    // which `run --suite` runs beside it.
    for companion in finding.needs_company.iter().flatten() {
        suite.push_str(&format!(
            "\n# {} ran beside it (or before it) when it failed.\n",
            companion.id
        ));
        suite.push_str(&writer::case_to_toml(companion)?);
    }
    std::fs::write(&toml, suite)?;
    let mut lines = String::new();
    for entry in &finding.result.transcript {
        lines.push_str(&serde_json::to_string(entry)?);
        lines.push('\n');
    }
    std::fs::write(out.join(format!("{stem}.ndjson")), lines)?;
    Ok(toml)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn nothing_found_counts_only_the_runs_judged() {
        let clean = engine::Outcome {
            runs: 4000,
            ..Default::default()
        };
        assert_eq!(nothing_found(&clean), "nothing found");
        // Runs lost for want of a local port (the harness's) and skipped runs tested nothing.
        let lost = engine::Outcome {
            runs: 4000,
            errors: 3,
            skipped: 2,
            ..Default::default()
        };
        assert_eq!(
            nothing_found(&lost),
            "nothing found in the 3995 runs judged; 5 of 4000 tested nothing (above)"
        );
    }

    /// A finding's words quoting a target's bytes keep its written suite readable: the
    /// comment carries them escaped (a NUL in a comment fails the whole file's parse).
    #[test]
    fn a_message_with_control_characters_is_a_comment_toml_reads() {
        let line = format!("# {}\nx = 1\n", comment_text("a\r\u{0}b\u{7f}\tc\nd\u{1b}"));
        assert_eq!(line, "# a\\r\\u{0}b\\u{7f}\tc\\nd\\u{1b}\nx = 1\n");
        let read: toml::Value = toml::from_str(&line).expect("the comment is valid TOML");
        assert_eq!(read["x"].as_integer(), Some(1));
    }

    #[test]
    fn the_replay_hint_is_a_whole_command_a_shell_takes() {
        let cli = crate::cli::args::Cli::parse_from([
            "wireprobe",
            "fuzz",
            "nuum",
            "--exec",
            "nuum --stdio --db {tmp}/a.db",
            "--jwt-secret",
            "s3cret",
            "--tool",
            "echo={\"x\":1}",
        ]);
        let crate::cli::args::Command::Fuzz(args) = cli.command else {
            panic!("a fuzz command");
        };
        let p = wireprobe::protocol::get("nuum").expect("nuum");
        let line = replay_command(
            p,
            Path::new("/tmp/it's here.toml"),
            &args.target,
            false,
            2000,
        );
        assert_eq!(
            line,
            "wireprobe run nuum --suite '/tmp/it'\\''s here.toml' --exec 'nuum --stdio --db {tmp}/a.db' \
             --tool 'echo={\"x\":1}' --timeout-ms 2000 --jwt-secret \"$WIREPROBE_JWT_SECRET\""
        );
        assert!(!line.contains("s3cret"));
    }

    #[test]
    fn a_client_finding_replays_as_a_client_run() {
        let cli = crate::cli::args::Cli::parse_from([
            "wireprobe",
            "fuzz",
            "huma",
            "--client",
            "--exec",
            "node client.js {url}",
            "--slow-tool",
            "sleep={\"ms\":900}",
        ]);
        let crate::cli::args::Command::Fuzz(args) = cli.command else {
            panic!("a fuzz command");
        };
        let p = wireprobe::protocol::get("huma").expect("huma");
        let line = replay_command(p, Path::new("/tmp/f.toml"), &args.target, args.client, 2000);
        assert_eq!(
            line,
            "wireprobe run huma --client --suite /tmp/f.toml --exec 'node client.js {url}' \
             --slow-tool 'sleep={\"ms\":900}' --timeout-ms 2000"
        );
    }
}
