//! `wireprobe run`: a suite against a live target, reports, and the exit code CI gates on.

use super::args::RunArgs;
use super::target;
use super::{
    load_suite, parse_headers, protocol_named, read_ids, usage, Failure, EXIT_UNREACHABLE,
};
use anyhow::{anyhow, Context, Result};
use std::time::{Duration, Instant, SystemTime};
use wireprobe::protocol;
use wireprobe::report::{self, console, Gate, Report};
use wireprobe::results::CaseResult;
use wireprobe::suite::filter::CaseFilter;
use wireprobe::suite::runner::{self, RunConfig, RunError};

pub(super) async fn run(args: RunArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    let suite = match (args.client, args.suite.as_deref()) {
        (true, None) => {
            let suite = wireprobe::suite::load_bundled_client(p).map_err(|e| usage(e.into()))?;
            if suite.cases.is_empty() {
                return Err(usage(anyhow!("{} has no client suite yet", p.id())));
            }
            suite
        }
        (_, path) => load_suite(p, path).map_err(usage)?,
    };
    let known_failing = read_ids("--known-failing", args.known_failing.as_deref())?;
    let known_flaky = read_ids("--known-flaky", args.known_flaky.as_deref())?;
    let filter = CaseFilter::new(&args.cases, &args.skips)
        .and_then(|f| f.with_rules(&args.rules))
        .map_err(|e| usage(e.into()))?
        .with_shard(args.shard);
    let role = target::chosen_role(p, args.target.role.as_deref()).map_err(usage)?;
    super::preflight::check(
        p,
        &suite,
        &filter,
        role.as_deref(),
        &known_failing.union(&known_flaky).cloned().collect(),
        &args.reports,
    )
    .map_err(usage)?;
    let prepared = match args.client {
        true => target::prepare_client(p, &args.target, args.listen.as_deref()),
        false => target::prepare(p, &args.target).await,
    }
    .map_err(usage)?;
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
        // A served client's command is `client_command`; `exec` is a stdio target's.
        exec: match args.client {
            true => Vec::new(),
            false => prepared.exec.clone(),
        },
        cwd: args.target.cwd.clone(),
        tools: prepared.tools.clone(),
        slow_tools: prepared.slow_tools.clone(),
        transport: prepared.transport,
        role: prepared.role.clone(),
        max_failures: args.max_failures.map(|n| n as usize),
        insecure: args.target.insecure,
        judged: match args.client {
            true => wireprobe::transcript::Direction::Client,
            false => wireprobe::transcript::Direction::Server,
        },
        client_command: match args.client {
            true => prepared.exec.clone(),
            false => Vec::new(),
        },
        client_listener: match &args.listen {
            Some(addr) => {
                let transport = prepared
                    .transport
                    .unwrap_or(protocol::TransportKind::WebSocket);
                Some(harness_listener(p, transport, addr).await.map_err(usage)?)
            }
            None => None,
        },
        step_lines: true,
        record_exercised: false,
        handshake_defaults: match &args.auth {
            None => None,
            Some(_) if !p.transports().contains(&protocol::TransportKind::SocketIo) => {
                return Err(usage(anyhow!(
                    "--auth applies to Socket.IO protocols ({}), not {}",
                    super::protocols_where(|p| p
                        .transports()
                        .contains(&protocol::TransportKind::SocketIo)),
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
    let bar = super::progress::bar(Some(config.planned_runs(p, &suite) as u64), "cases");
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
    let flips = super::flaky::rerun(
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
    // The rules table holds what the judged side can break: a client run leaves out the rules
    // that bind only servers, and the other way round, except those a case of the run names
    // (UAE's rules about a tool.call bind the agent, which a Web UI faces as its server and
    // an executor as its client).
    let named = |id: &str| results.iter().any(|c| c.rules.iter().any(|r| r == id));
    let testable: Vec<wireprobe::rules::Rule> = p
        .rules()
        .iter()
        .filter(|r| r.binds.applies(!args.client) || named(r.id))
        .copied()
        .collect();
    let mut report = Report::new(
        p.id(),
        &shown_target,
        started_at,
        started.elapsed().as_millis() as u64,
        &testable,
        results,
    );
    if args.client {
        report.side = Some(wireprobe::transcript::Direction::Client);
    }
    if let Some(shard) = args.shard {
        let whole_run = suite
            .cases
            .iter()
            .filter(|c| config.filter.selects_for_run(c));
        report.shard = Some(shard.of_run(p.id(), whole_run.map(|c| c.id.as_str())));
    }
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

/// The listener a harness's clients connect to (`--client --listen ADDR`), announced on stderr
/// so the harness can start its clients.
async fn harness_listener(
    p: &dyn protocol::Protocol,
    transport: protocol::TransportKind,
    addr: &str,
) -> Result<wireprobe::suite::runner::SharedListener> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener
        .local_addr()
        .context("the listener has no address")?;
    let bound = bound.to_string();
    match transport {
        protocol::TransportKind::Stdio => eprintln!(
            "wireprobe: serving hosts: start yours with the agent command `{}` (one case per start)",
            wireprobe::suite::relay_command(&bound)
        ),
        _ => eprintln!(
            "wireprobe: serving clients on {} (one case per connection)",
            wireprobe::suite::client_address(p, transport, &bound)
        ),
    }
    Ok(std::sync::Arc::new(tokio::sync::Mutex::new(listener)))
}
