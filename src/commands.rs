//! What each subcommand does; errors become one clear line and an exit code.

use crate::cli::{Command, RunArgs, ServeArgs};
use crate::target;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};
use wireprobe::check::{self, CheckSummary};
use wireprobe::protocol::{self, Protocol};
use wireprobe::reference::{self, ServeOptions};
use wireprobe::report::{self, console, Gate, Report};
use wireprobe::results::CaseResult;
use wireprobe::rules::{self, Level};
use wireprobe::suite::filter::{read_known_failing, CaseFilter};
use wireprobe::suite::runner::{self, RunConfig, RunError};
use wireprobe::suite::{self as suites, Suite};
use wireprobe::transcript::Direction;
use wireprobe::verdict::Verdict;

/// `println!` that never panics: a reader that went away (`wireprobe list | head`) stops the
/// printing, not the command (reports to files are still written).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Exit codes of the CLI contract.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAIL: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_UNREACHABLE: u8 = 3;

/// A failure with the exit code it deserves.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

/// A usage or configuration error (exit 2).
pub fn usage(error: anyhow::Error) -> Failure {
    Failure {
        code: EXIT_USAGE,
        error,
    }
}

pub async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::List(args) => list(&args).map_err(usage),
        Command::Run(args) => run(*args).await,
        Command::Check {
            protocol,
            file,
            from,
            reports,
            strict,
        } => check(&protocol, file, from.as_deref(), &reports, strict),
        Command::Serve(args) => serve(args).await.map_err(usage),
        Command::Gen {
            protocol,
            kind,
            count,
            seed,
            role,
        } => gen(&protocol, kind.as_deref(), count, seed, role.as_deref()).map_err(usage),
        Command::Fuzz(args) => fuzz(args).await,
        Command::Report(args) => crate::report_command::report(args),
    };
    match result {
        Ok(code) => code,
        Err(Failure { code, error }) => {
            eprintln!("wireprobe: {error:#}");
            code
        }
    }
}

fn protocol_named(id: &str) -> Result<&'static dyn Protocol> {
    protocol::get(id).ok_or_else(|| {
        let known: Vec<&str> = protocol::all().iter().map(|p| p.id()).collect();
        anyhow!("unknown protocol {id:?}; known: {}", known.join(", "))
    })
}

fn list(args: &crate::cli::ListArgs) -> Result<u8> {
    let crate::cli::ListArgs {
        rules,
        cases,
        faults,
        variants,
        ..
    } = *args;
    if args.suite_schema {
        say!("{:#}", wireprobe::suite::file_schema());
        return Ok(EXIT_OK);
    }
    let Some(id) = args.protocol.as_deref() else {
        for p in protocol::all() {
            say!(
                "{:<6} {}  ({} rules; spec: {})",
                p.id(),
                p.title(),
                p.rules().len(),
                {
                    let c = wireprobe::citation::cite(p.spec_file());
                    match c.url {
                        Some(url) => format!("{}, {url}", c.text),
                        None => c.text,
                    }
                }
            );
        }
        return Ok(EXIT_OK);
    };
    let p = protocol_named(id)?;
    if let Some(rule) = &args.rule {
        return list_rule(p, rule);
    }
    let all = !rules && !cases && !faults && !variants;
    if rules || all {
        for r in p.rules() {
            say!(
                "{:<15} {:<6} {}\n{:<22} source: {}",
                r.id,
                r.level.to_string(),
                r.text,
                "",
                wireprobe::citation::cite(r.source).text
            );
        }
    }
    if cases || all {
        let suite = suites::load_bundled(p)?;
        for c in &suite.cases {
            say!("{:<44} [{}] {}", c.id, c.rules.join(", "), c.title);
        }
    }
    if faults {
        for f in reference::faults(p.id()).unwrap_or_default() {
            say!(
                "{:<28} breaks {:<32} {}",
                f.name,
                f.breaks.join(","),
                f.description
            );
        }
    }
    if variants {
        for v in reference::variants(p.id()).unwrap_or_default() {
            say!("{:<28} {}", v.name, v.description);
        }
    }
    Ok(EXIT_OK)
}

/// `list P --rule ID`: a rule with the spec's words it rests on and everything that tests it.
fn list_rule(p: &dyn Protocol, id: &str) -> Result<u8> {
    let rule = wireprobe::rules::find(p.rules(), id).ok_or_else(|| {
        anyhow!(
            "{} has no rule {id:?} (`wireprobe list {} --rules` lists them)",
            p.id(),
            p.id()
        )
    })?;
    say!("{} ({})", rule.id, rule.level);
    say!("  {}", rule.text);
    say!("the spec says:");
    for excerpt in rule.excerpts() {
        say!("  \"{excerpt}\"");
    }
    let citation = wireprobe::citation::cite(rule.source);
    match citation.url {
        Some(url) => say!("source: {}, {url}", citation.text),
        None => say!("source: {}", citation.text),
    }
    let named = |names: Vec<String>| match names.is_empty() {
        true => "  (none)".to_owned(),
        false => names
            .iter()
            .map(|n| format!("  {n}"))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let suite = suites::load_bundled(p)?;
    let cases = suite
        .cases
        .iter()
        .filter(|c| c.rules.iter().any(|r| r == rule.id))
        .map(|c| format!("{} — {}", c.id, c.title))
        .collect();
    say!("cases written for it:\n{}", named(cases));
    let faults = reference::faults(p.id())
        .unwrap_or_default()
        .iter()
        .filter(|f| f.breaks.contains(&rule.id))
        .map(|f| format!("{} — {}", f.name, f.description))
        .collect();
    say!("reference faults that break it:\n{}", named(faults));
    let variants = reference::variants(p.id())
        .unwrap_or_default()
        .iter()
        .map(|v| format!("{} — {}", v.name, v.description))
        .collect();
    say!(
        "reference variants it must pass (every variant passes every rule):\n{}",
        named(variants)
    );
    Ok(EXIT_OK)
}

fn parse_headers(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|h| {
            let (k, v) = h
                .split_once(':')
                .ok_or_else(|| anyhow!("--header takes \"Name: value\", got {h:?}"))?;
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

fn load_suite(p: &dyn Protocol, path: Option<&std::path::Path>) -> Result<Suite> {
    Ok(match path {
        Some(path) => suites::load_path(p, path)?,
        None => suites::load_bundled(p)?,
    })
}

async fn run(args: RunArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    let suite = load_suite(p, args.suite.as_deref()).map_err(usage)?;
    let read_ids = |flag: &str, path: &Option<std::path::PathBuf>| match path {
        Some(path) => read_known_failing(path)
            .with_context(|| format!("{flag} {}", path.display()))
            .map_err(usage),
        None => Ok(BTreeSet::new()),
    };
    let known_failing = read_ids("--known-failing", &args.known_failing)?;
    let known_flaky = read_ids("--known-flaky", &args.known_flaky)?;
    let filter = CaseFilter::new(&args.cases, &args.skips)
        .and_then(|f| f.with_rules(&args.rules))
        .map_err(|e| usage(e.into()))?;
    let role = target::chosen_role(p, args.target.role.as_deref()).map_err(usage)?;
    crate::preflight::check(
        p,
        &suite,
        &filter,
        role.as_deref(),
        &known_failing.union(&known_flaky).cloned().collect(),
        &args.reports,
    )
    .map_err(usage)?;
    let prepared = target::prepare(p, &args.target).await.map_err(usage)?;
    let url = prepared.url.clone();

    let config = RunConfig {
        target_url: url.clone(),
        step_timeout: Duration::from_millis(args.timeout_ms),
        jobs: args.jobs as usize,
        filter,
        credentials: prepared.credentials.clone(),
        headers: parse_headers(&args.headers).map_err(usage)?,
        max_frame: args.max_frame_bytes,
        socketio_path: args.path.clone(),
        exec: prepared.exec.clone(),
        cwd: args.target.cwd.clone(),
        tools: args.target.tools.clone(),
        transport: prepared.transport,
        role: prepared.role.clone(),
        max_failures: args.max_failures.map(|n| n as usize),
        insecure: args.target.insecure,
        handshake_defaults: match &args.auth {
            None => None,
            Some(_) if p.transport() != protocol::TransportKind::SocketIo => {
                return Err(usage(anyhow!(
                    "--auth applies to Socket.IO protocols (huma), not {}",
                    p.id()
                )))
            }
            Some(json) => Some(serde_json::json!({
                "auth": serde_json::from_str::<serde_json::Value>(json)
                    .with_context(|| format!("--auth {json:?} is not JSON"))
                    .map_err(usage)?
            })),
        },
    };
    let started_at = SystemTime::now();
    let started = Instant::now();
    // The per-case lines and the summary are the command's output, on stdout, unless a
    // report is written there.
    let to_stderr = args.reports.iter().any(|r| r.path.is_none());
    let human = move |text: &str| {
        if to_stderr {
            eprint!("{text}");
        } else {
            use std::io::Write as _;
            let _ = write!(std::io::stdout(), "{text}");
        }
    };
    let bar = crate::progress::bar(Some(config.planned_runs(p, &suite) as u64), "cases");
    let print = |r: &CaseResult| {
        bar.suspend(|| human(&format!("{}\n", console::case_line(r))));
        bar.inc(1);
    };
    let results = runner::run_suite(p, &suite, &config, &print).await;
    bar.finish_and_clear();
    // A target that never spoke the protocol still gets its reports (nothing lost), then the
    // one line and exit 3.
    let (mut results, never_spoke) = match results {
        Ok(r) => (r, None),
        Err(RunError::NeverSpoke { why, results }) => (results, Some(why)),
        Err(RunError::Unreachable(e)) => {
            return Err(Failure {
                code: EXIT_UNREACHABLE,
                error: anyhow!("target unreachable: {e}"),
            });
        }
        Err(RunError::Refused(why) | RunError::Mute(why)) => {
            return Err(Failure {
                code: EXIT_UNREACHABLE,
                error: anyhow!("{why}"),
            });
        }
    };
    let flips = crate::flaky::rerun(
        p,
        &suite,
        &config,
        &mut results,
        &known_flaky,
        args.flaky_retries as usize,
        args.strict,
    )
    .await;
    for flip in &flips {
        human(&format!("flaky: {flip}\n"));
    }
    let shown_target = prepared.shown.clone();
    let report = Report::new(
        p.id(),
        &shown_target,
        started_at,
        started.elapsed().as_millis() as u64,
        p.rules(),
        results,
    );
    let mut gate = Gate::evaluate(&report, args.strict, &known_failing);
    gate.excuse(&known_flaky);
    if never_spoke.is_none() {
        human(&console::summary(&report, &gate));
    }
    let write = report::WriteOptions {
        strict: args.strict,
        transcripts: args.transcripts,
    };
    report::write_all(&report, &args.reports, write)
        .context("writing a report")
        .map_err(usage)?;
    if let Some(why) = never_spoke {
        return Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!("{why}"),
        });
    }
    Ok(gate.exit_code() as u8)
}

fn check(
    id: &str,
    file: Option<std::path::PathBuf>,
    from: Option<&str>,
    reports: &[report::ReportTarget],
    strict: bool,
) -> Result<u8, Failure> {
    let p = protocol_named(id).map_err(usage)?;
    let bare_from = from.map(|f| {
        if f == "client" {
            Direction::Client
        } else {
            Direction::Server
        }
    });
    let started_at = SystemTime::now();
    let started = Instant::now();
    let shown = file
        .as_ref()
        .map_or("-".to_owned(), |f| f.display().to_string());
    let reader: Box<dyn BufRead> = match file.as_deref() {
        None => Box::new(std::io::stdin().lock()),
        Some(path) if path.as_os_str() == "-" => Box::new(std::io::stdin().lock()),
        Some(path) => Box::new(std::io::BufReader::with_capacity(
            256 * 1024,
            std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))
                .map_err(usage)?,
        )),
    };
    let mut printed = 0usize;
    let summary = check::check_stream(p, reader, bare_from, |f| {
        if printed < 50 {
            let from = if f.from == Direction::Client {
                "client"
            } else {
                "server"
            };
            let level = rules::find(p.rules(), f.violation.rule).map_or(Level::Info, |r| r.level);
            say!(
                "line {} ({from}) [{level}] {} {}",
                f.line,
                f.violation.rule,
                f.violation.message
            );
        }
        printed += 1;
    })
    .with_context(|| format!("reading {shown}"))
    .map_err(usage)?;
    if printed > 50 {
        say!("… and {} more findings", printed - 50);
    }
    for bad in summary.bad_lines.iter().take(20) {
        eprintln!("line {}: {}", bad.line, bad.reason);
    }
    let report = check_report(
        p,
        &shown,
        started_at,
        started.elapsed().as_millis() as u64,
        &summary,
    );
    let gate = Gate::evaluate(&report, strict, &BTreeSet::new());
    eprintln!(
        "{}: {} lines, {} events, {} findings, {} unreadable lines",
        shown,
        summary.lines,
        summary.events,
        summary.per_rule.values().sum::<u64>(),
        summary.bad_line_count
    );
    let write = report::WriteOptions {
        strict,
        transcripts: None,
    };
    report::write_all(&report, reports, write)
        .context("writing a report")
        .map_err(usage)?;
    if summary.bad_line_count > 0 && summary.events == 0 {
        return Err(usage(anyhow!("{shown} holds no transcript lines")));
    }
    Ok(gate.exit_code() as u8)
}

async fn fuzz(args: crate::cli::FuzzArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    match crate::fuzzing::fuzz(p, args).await.map_err(usage)? {
        crate::fuzzing::Ended::Clean => Ok(EXIT_OK),
        crate::fuzzing::Ended::Found => Ok(EXIT_FAIL),
        crate::fuzzing::Ended::Unusable(why) => Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!("target unreachable: {why}"),
        }),
    }
}

/// `wireprobe gen`: generated events as NDJSON on stdout, reproducible from the seed (which is
/// printed to stderr when it was not given).
fn gen(
    id: &str,
    kind: Option<&str>,
    count: Option<u64>,
    seed: Option<u64>,
    role: Option<&str>,
) -> Result<u8> {
    use wireprobe::fuzz::gen::{self as generate, Kind};
    let p = protocol_named(id)?;
    let role = target::chosen_role(p, role)?;
    let profile = p
        .fuzzing_as(role.as_deref())
        .ok_or_else(|| anyhow!("{} has no generators yet", p.id()))?;
    let count = usize::try_from(count.unwrap_or(10))
        .ok()
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| anyhow!("--count is at most 1000000"))?;
    let seed = seed.unwrap_or_else(|| {
        let seed = uuid::Uuid::new_v4().as_u64_pair().0;
        eprintln!("wireprobe: --seed {seed}");
        seed
    });
    match Kind::parse(kind.unwrap_or("valid")) {
        Kind::Valid => {
            for event in generate::valid(profile, count, seed)? {
                say!("{event}");
            }
        }
        Kind::Invalid => {
            for m in generate::invalid(profile, None, count, seed)? {
                say!("{}", generate::render(&m));
            }
        }
        Kind::Mutator(name) => {
            for m in generate::invalid(profile, Some(&name), count, seed)? {
                say!("{}", generate::render(&m));
            }
        }
    }
    Ok(EXIT_OK)
}

/// A check's findings as a report: one entry per rule, failed when the transcript breaks it.
fn check_report(
    p: &dyn Protocol,
    input: &str,
    started_at: SystemTime,
    duration_ms: u64,
    summary: &CheckSummary,
) -> Report {
    let results = p
        .rules()
        .iter()
        .map(|rule| {
            let count = summary.per_rule.get(rule.id).copied().unwrap_or(0);
            let first = summary
                .findings
                .iter()
                .find(|f| f.violation.rule == rule.id);
            let verdict = match count {
                0 => Verdict::Pass,
                _ => Verdict::broken(rule.level),
            };
            let message = first.map_or(String::new(), |f| {
                format!(
                    "{count} violation(s); first at line {}: {}",
                    f.line, f.violation.message
                )
            });
            CaseResult {
                id: format!("check.{}", rule.id),
                title: rule.text.to_owned(),
                rules: vec![rule.id.to_owned()],
                level: rule.level,
                verdict,
                message,
                duration_ms: 0,
                judged: [(rule.id.to_owned(), verdict)].into(),
                violations: Vec::new(),
                transcript: Vec::new(),
                steps: Vec::new(),
                stopped_at: None,
            }
        })
        .collect();
    Report::new(p.id(), input, started_at, duration_ms, p.rules(), results)
}

async fn serve(args: ServeArgs) -> Result<u8> {
    let p = protocol_named(&args.protocol)?;
    let kinds = p.transports();
    if args.role.is_some() && p.roles().is_empty() {
        bail!("--role applies to uae, not {}", p.id());
    }
    if kinds == [protocol::TransportKind::Stdio] && !args.stdio {
        bail!(
            "{} is served over stdio: use `serve {} --stdio [--db PATH]`",
            p.id(),
            p.id()
        );
    }
    if args.stdio {
        if !kinds.contains(&protocol::TransportKind::Stdio) {
            bail!("{} is served over the network: use --listen ADDR", p.id());
        }
        return serve_stdio(p, args).await;
    }
    let listen = args
        .listen
        .ok_or_else(|| anyhow!("serve needs --listen ADDR (e.g. 127.0.0.1:9000)"))?;
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen:?} is not HOST:PORT"))?;
    if args.prefix.is_some() && p.http_routes().is_none() {
        bail!(
            "--prefix applies to protocols with HTTP routes (hpd), not {}",
            p.id()
        );
    }
    let opts = ServeOptions {
        faults: args.faults,
        variants: args.variants,
        jwt_secret: args.jwt_secret,
        confirm_timeout: args.confirm_timeout_ms.map(Duration::from_millis),
        prefix: args.prefix,
        role: args.role,
    };
    let running = reference::start(p.id(), addr, &opts).await?;
    say!(
        "wireprobe: {} reference target listening on {}",
        p.title(),
        running.url
    );
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = running.wait() => {}
    }
    Ok(EXIT_OK)
}

/// Serves a stdio protocol's reference target on this process's stdin and stdout, then exits
/// the process at once: tokio's stdin reader is a blocking thread that would keep a faulted
/// agent (one that stops with stdin still open) from exiting.
async fn serve_stdio(p: &dyn Protocol, args: ServeArgs) -> Result<u8> {
    if p.id() == "uae" {
        if args.db.is_some() {
            bail!("--db applies to nuum, whose agent keeps its identity in a database");
        }
        let opts = ServeOptions {
            faults: args.faults,
            variants: args.variants,
            role: args.role,
            ..ServeOptions::default()
        };
        reference::uae::serve_stdio(tokio::io::stdin(), tokio::io::stdout(), &opts).await?;
        std::process::exit(0);
    }
    let opts = reference::nuum::NuumOptions {
        db: args.db,
        faults: args.faults,
        variants: args.variants,
    };
    let stop = reference::nuum::serve(tokio::io::stdin(), tokio::io::stdout(), &opts).await?;
    std::process::exit(match stop {
        reference::nuum::Stop::InputClosed => 0,
        reference::nuum::Stop::Fault(code) => code,
    })
}
