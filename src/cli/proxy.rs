//! `wireprobe proxy`: forwards a real client's traffic to a real server, judges both sides,
//! prints each violation as it happens and writes the reports when it ends.

use super::args::ProxyArgs;
use super::{protocol_named, read_ids, usage, Failure, EXIT_UNREACHABLE};
use anyhow::{anyhow, Context};
use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};
use wireprobe::proxy::{self, Live, Plan};
use wireprobe::report::{self, console, Gate, Report, Transcripts};
use wireprobe::results::CaseResult;
use wireprobe::transport::passthrough::{PassOptions, Upstream};

/// How long one direction of a relayed connection may go on after the other ended.
const LINGER: Duration = Duration::from_secs(5);

pub(super) async fn proxy(args: ProxyArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    let known_failing = read_ids("--known-failing", args.known_failing.as_deref())?;
    if !args.command.is_empty() {
        return stand_in(p, &args, &known_failing).await;
    }
    let (Some(listen), Some(upstream)) = (&args.listen, &args.upstream) else {
        return Err(usage(anyhow!(
            "proxy needs --listen ADDR --upstream URL, or -- CMD ARGS for a stdio agent"
        )));
    };
    let upstream = Upstream::parse(upstream).map_err(|e| usage(e.into()))?;
    let opts = PassOptions {
        max_frame: args.max_frame_bytes,
        insecure: args.insecure,
        connect_timeout: Duration::from_millis(args.timeout_ms),
        linger: LINGER,
    };
    // An upstream that cannot be reached now is told before any client is let in.
    if let Err(e) = upstream.dial(opts.insecure, opts.connect_timeout).await {
        return Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!("upstream unreachable: {e}"),
        });
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))
        .map_err(usage)?;
    let bound = listener
        .local_addr()
        .context("the listener has no address")
        .map_err(usage)?;
    eprintln!(
        "wireprobe: proxy for {} listening on {bound}, forwarding to {}",
        p.id(),
        upstream.url()
    );
    let started_at = SystemTime::now();
    let started = Instant::now();
    // Only failing connections keep their transcripts unless told: a proxy may run for days.
    let transcripts = args.transcripts.unwrap_or(Transcripts::Failing);
    let plan = Plan {
        upstream: upstream.clone(),
        pass: opts,
        transcripts,
        once: args.once,
    };
    let carried = proxy::carry(p, listener, plan, stopped(args.duration), print_live).await;
    let ran = Ran {
        target: upstream.url(),
        started_at,
        started,
        cases: carried.cases,
    };
    finish(p, &args, ran, &known_failing, false).and_then(|code| match carried.never_reached {
        true => Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!(
                "the upstream {} could not be reached for any connection",
                upstream.url()
            ),
        }),
        false => Ok(code),
    })
}

/// Resolves on SIGINT, SIGTERM or when `duration` seconds have passed.
async fn stopped(duration: Option<u64>) {
    let after = async {
        match duration {
            Some(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
            None => std::future::pending().await,
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = after => {}
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

/// A violation on stderr, the first time its connection shows it.
fn print_live(v: &Live) {
    eprintln!(
        "proxy.{}: {} ({}) broken by the {} at {}: {}",
        v.connection, v.rule, v.level, v.side, v.kind, v.message
    );
}

/// The stdio form: wireprobe in the agent's place for a host that starts it. The agent's
/// stdout is the host's protocol stream, so everything of wireprobe's goes to stderr, and
/// the exit status is the agent's (the host reads it); the reports say how both sides did.
async fn stand_in(
    p: &dyn wireprobe::protocol::Protocol,
    args: &ProxyArgs,
    known_failing: &BTreeSet<String>,
) -> Result<u8, Failure> {
    if args.listen.is_some() {
        return Err(usage(anyhow!(
            "--listen/--upstream and -- CMD are two forms of proxy: give one"
        )));
    }
    if args.reports.iter().any(|r| r.path.is_none()) {
        return Err(usage(anyhow!(
            "the stdio form's stdout is the agent's: write reports to files"
        )));
    }
    let started_at = SystemTime::now();
    let started = Instant::now();
    let host = proxy::Host {
        input: tokio::io::stdin(),
        output: tokio::io::stdout(),
        errors: tokio::io::stderr(),
    };
    let transcripts = args.transcripts.unwrap_or(Transcripts::Failing);
    let stood = proxy::stand_in(
        p,
        &args.command,
        args.max_frame_bytes,
        transcripts,
        host,
        print_live,
    )
    .await;
    let status = stood.status.map_err(|e| Failure {
        code: EXIT_UNREACHABLE,
        error: anyhow!("cannot start the agent: {e}"),
    })?;
    let ran = Ran {
        target: &args.command.join(" "),
        started_at,
        started,
        cases: stood.cases,
    };
    let written = finish(p, args, ran, known_failing, true);
    let code = match status.code() {
        Some(code) => code,
        None => {
            #[cfg(unix)]
            let signalled = std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0);
            #[cfg(not(unix))]
            let signalled = 0;
            128 + signalled
        }
    };
    if let Err(Failure { error, .. }) = written {
        eprintln!("wireprobe: {error:#}");
    }
    // The host's stdin is read on a thread of its own: leave without waiting for it.
    std::process::exit(code)
}

/// What a proxy carried, for its reports.
struct Ran<'a> {
    target: &'a str,
    started_at: SystemTime,
    started: Instant,
    cases: Vec<CaseResult>,
}

/// Writes the reports and gives the exit code (`summary_to_stderr`: stdout is not ours).
fn finish(
    p: &dyn wireprobe::protocol::Protocol,
    args: &ProxyArgs,
    ran: Ran<'_>,
    known_failing: &BTreeSet<String>,
    summary_to_stderr: bool,
) -> Result<u8, Failure> {
    let report = Report::new(
        p.id(),
        ran.target,
        ran.started_at,
        ran.started.elapsed().as_millis() as u64,
        p.rules(),
        ran.cases,
    );
    let gate = Gate::evaluate(&report, args.strict, known_failing);
    let summary = console::summary(&report, &gate);
    match summary_to_stderr || args.reports.iter().any(|r| r.path.is_none()) {
        true => eprint!("{summary}"),
        false => say!("{}", summary.trim_end()),
    }
    let write = report::WriteOptions {
        strict: args.strict,
        transcripts: Some(args.transcripts.unwrap_or(Transcripts::Failing)),
    };
    report::write_all(&report, &args.reports, write)
        .context("writing a report")
        .map_err(usage)?;
    Ok(gate.exit_code() as u8)
}
