//! Runs a suite against a live target: filters, capability gates, parallel cases, passive
//! checks of everything the target sent, and one verdict per case.

use super::filter::CaseFilter;
use super::model::{Case, Requirement, Suite};
use super::steps::{CaseRun, Outcome};
use crate::check::observe_entry;
use crate::protocol::{Protocol, TransportKind};
use crate::rules::{self, Level, Violation};
use crate::transcript::{Direction, Entry};
use crate::transport::{socketio, stdio, websocket, Connection, TransportError, DEFAULT_MAX_FRAME};
use crate::verdict::Verdict;
use futures_util::StreamExt;
use std::time::{Duration, Instant};

/// Credentials for targets that require authentication.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// A valid token (`--token`).
    pub token: Option<String>,
    /// The target's HS256 secret (`--jwt-secret`): wireprobe mints valid and invalid tokens.
    pub jwt_secret: Option<String>,
}

impl Credentials {
    pub fn any(&self) -> bool {
        self.token.is_some() || self.jwt_secret.is_some()
    }
}

/// How to run a suite.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target_url: String,
    /// Default budget for each waiting step (`--timeout-ms`).
    pub step_timeout: Duration,
    /// Cases run at once, each on its own connection (`--jobs`).
    pub jobs: usize,
    pub filter: CaseFilter,
    pub credentials: Credentials,
    /// Extra request headers (`--header`).
    pub headers: Vec<(String, String)>,
    /// Largest frame accepted from the target.
    pub max_frame: usize,
    /// The Engine.IO path of Socket.IO targets.
    pub socketio_path: String,
    /// Merged under every case's `handshake_with` (`--auth` puts the CONNECT payload here).
    pub handshake_defaults: Option<serde_json::Value>,
    /// Stdio protocols: the target's command, split into words (`{tmp}` not yet expanded).
    pub exec: Vec<String>,
    /// Stdio protocols: the target's working directory.
    pub cwd: Option<std::path::PathBuf>,
}

impl RunConfig {
    pub fn new(target_url: impl Into<String>) -> Self {
        RunConfig {
            target_url: target_url.into(),
            step_timeout: Duration::from_millis(5000),
            jobs: 4,
            filter: CaseFilter::default(),
            credentials: Credentials::default(),
            headers: Vec::new(),
            max_frame: DEFAULT_MAX_FRAME,
            socketio_path: socketio::DEFAULT_PATH.to_owned(),
            handshake_defaults: None,
            exec: Vec::new(),
            cwd: None,
        }
    }
}

/// The result of one case (serialised as-is into the JSON report's `cases`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseResult {
    pub id: String,
    pub title: String,
    pub rules: Vec<String>,
    /// The strictest level among the case's rules.
    pub level: Level,
    pub verdict: Verdict,
    pub message: String,
    pub duration_ms: u64,
    pub transcript: Vec<Entry>,
}

/// Why a run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Unreachable(TransportError),
}

/// Runs every case of `suite` (in parallel up to `cfg.jobs`); results come in suite order.
/// `on_result` sees each result as it completes.
pub async fn run_suite(
    protocol: &dyn Protocol,
    suite: &Suite,
    cfg: &RunConfig,
    on_result: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    if suite.cases.iter().any(|c| cfg.filter.selects(&c.id)) {
        probe(protocol, cfg).await?;
    }
    let jobs = cfg.jobs.max(1);
    let mut results: Vec<(usize, CaseResult)> =
        futures_util::stream::iter(suite.cases.iter().enumerate())
            .map(|(i, case)| async move {
                let result = run_case(protocol, case, cfg).await;
                on_result(&result);
                (i, result)
            })
            .buffer_unordered(jobs)
            .collect()
            .await;
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

/// Checks the target is there at all, so an unreachable target is one clear error rather than
/// a wall of per-case errors.
async fn probe(protocol: &dyn Protocol, cfg: &RunConfig) -> Result<(), RunError> {
    let mut opts = websocket::WsOptions::new(cfg.target_url.clone());
    opts.connect_timeout = cfg.step_timeout;
    let tmp = CaseDir::create().map_err(RunError::Unreachable)?;
    match open_transport(protocol.transport(), opts, cfg, tmp.path()).await {
        Err(e) if e.is_unreachable() => Err(RunError::Unreachable(e)),
        Ok(conn) => {
            conn.close().await;
            Ok(())
        }
        Err(_) => Ok(()),
    }
}

/// Opens a connection of `kind` to the target `opts` names (a stdio target: `cfg.exec`,
/// with `{tmp}` as `tmp`).
pub(super) async fn open_transport(
    kind: TransportKind,
    opts: websocket::WsOptions,
    cfg: &RunConfig,
    tmp: &std::path::Path,
) -> Result<Connection, TransportError> {
    match kind {
        TransportKind::WebSocket => websocket::connect(&opts).await,
        TransportKind::SocketIo => socketio::connect(opts, &cfg.socketio_path)
            .await
            .map(|(conn, _)| conn),
        TransportKind::Stdio => {
            let stdio_opts = stdio::StdioOptions {
                argv: stdio::expand_tmp(&cfg.exec, tmp),
                cwd: cfg.cwd.clone(),
                max_line: cfg.max_frame,
            };
            stdio::spawn(&stdio_opts).await
        }
    }
}

/// A fresh directory for one case (`{tmp}` of a stdio command), removed when dropped.
pub(super) struct CaseDir(std::path::PathBuf);

impl CaseDir {
    pub(super) fn create() -> Result<CaseDir, TransportError> {
        let path = std::env::temp_dir().join(format!("wireprobe-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).map_err(|e| {
            TransportError::Protocol(format!(
                "cannot create the case directory {}: {e}",
                path.display()
            ))
        })?;
        Ok(CaseDir(path))
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn case_level(protocol: &dyn Protocol, case: &Case) -> Level {
    case.rules
        .iter()
        .filter_map(|r| rules::find(protocol.rules(), r))
        .map(|r| r.level)
        .max()
        .unwrap_or(Level::Info)
}

/// The verdict a broken rule of `level` gives.
fn verdict_for(level: Level) -> Verdict {
    match level {
        Level::Must => Verdict::Fail,
        Level::Should | Level::May => Verdict::Warn,
        Level::Info => Verdict::Info,
    }
}

/// Runs one case to a verdict (never panics on target input; every wait is bounded).
pub async fn run_case(protocol: &dyn Protocol, case: &Case, cfg: &RunConfig) -> CaseResult {
    let started = Instant::now();
    let level = case_level(protocol, case);
    let mut result = CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        rules: case.rules.clone(),
        level,
        verdict: Verdict::Skip,
        message: String::new(),
        duration_ms: 0,
        transcript: Vec::new(),
    };
    if !cfg.filter.selects(&case.id) {
        result.message = "filtered out by --case/--skip".into();
        return result;
    }
    if let Some(why) = unmet_run_requirement(case, cfg) {
        result.message = why;
        return result;
    }

    let mut run = CaseRun::new(protocol, cfg, case);
    // Every step is bounded on its own; the watchdog is the backstop that turns a harness bug
    // into an `error` verdict instead of a hung run.
    let budget = case_budget(case, cfg);
    let outcome = match tokio::time::timeout(budget, run.execute()).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Outcome::Error(format!(
            "the case overran its {} ms budget (a wireprobe bug: please report it with this transcript)",
            budget.as_millis()
        ))),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), run.finish()).await;
    let transcript = run.into_transcript();
    let step_failed = matches!(outcome, Err(Outcome::Fail { .. }));

    let (mut verdict, mut message) = match outcome {
        Ok(()) => (
            if level == Level::Info {
                Verdict::Info
            } else {
                Verdict::Pass
            },
            String::new(),
        ),
        Err(Outcome::Skip(why)) => (Verdict::Skip, why),
        Err(Outcome::Error(why)) => (Verdict::Error, why),
        Err(Outcome::Fail { rule, message }) => {
            let rule_level = rule
                .as_deref()
                .and_then(|r| rules::find(protocol.rules(), r))
                .map_or(level, |r| r.level);
            let prefix = rule.map(|r| format!("{r}: ")).unwrap_or_default();
            (verdict_for(rule_level), format!("{prefix}{message}"))
        }
    };

    // Judge everything the target sent against the case's rules, whatever the steps checked.
    if verdict != Verdict::Skip {
        for v in passive_violations(protocol, &transcript, &case.rules) {
            let rule_level = rules::find(protocol.rules(), v.rule).map_or(Level::Info, |r| r.level);
            verdict = verdict.worst(verdict_for(rule_level));
            if !message.is_empty() {
                message.push_str("; ");
            }
            message.push_str(&format!("{}: {}", v.rule, v.message));
        }
    }
    // A target that never said anything in the protocol (silence, a close, garbage, an
    // oversized frame) has not answered: the case could not be judged.
    let judged_against = step_failed || matches!(verdict, Verdict::Fail | Verdict::Warn);
    if judged_against && !answered(protocol, &transcript) {
        verdict = Verdict::Error;
        message = format!("the target sent no protocol message: {message}");
    }
    if verdict == Verdict::Info && message.is_empty() {
        message = "behaviour recorded: every step held".into();
    }
    result.verdict = verdict;
    result.message = message;
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.transcript = transcript;
    result
}

/// Generous upper bound on a case's run time: every step's own limit, plus slack.
fn case_budget(case: &Case, cfg: &RunConfig) -> Duration {
    use super::model::Action;
    let step_ms = case
        .timeout_ms
        .unwrap_or(cfg.step_timeout.as_millis() as u64);
    let steps: u64 = case
        .steps
        .iter()
        .map(|s| match &s.action {
            Action::Wait { ms } | Action::ExpectSilence { ms, .. } => *ms,
            Action::Expect {
                within_ms, count, ..
            } => within_ms.unwrap_or(step_ms) * count,
            Action::ExpectError { within_ms, .. }
            | Action::ExpectClose { within_ms, .. }
            | Action::ExpectRefused { within_ms } => within_ms.unwrap_or(step_ms),
            // Sends are bounded per frame; repeated sends get one budget per 100 frames.
            Action::Send { times, .. } | Action::SendRaw { times, .. } => match times {
                super::model::Times::Fixed(n) => step_ms * (1 + n / 100),
                super::model::Times::FromVar { .. } => step_ms * 10,
            },
            _ => step_ms,
        })
        .sum();
    Duration::from_millis(step_ms * 3 + steps * 2 + 5_000)
}

fn unmet_run_requirement(case: &Case, cfg: &RunConfig) -> Option<String> {
    case.requires.iter().find_map(|r| match r {
        Requirement::Credentials if !cfg.credentials.any() => Some(
            "needs --token or --jwt-secret: auth cases run only against a target that requires tokens".into(),
        ),
        Requirement::JwtSecret if cfg.credentials.jwt_secret.is_none() => {
            Some("needs --jwt-secret to mint tokens".into())
        }
        _ => None,
    })
}

/// True when the target answered at all: an explicit refusal of the connection, or a message
/// the protocol recognises as its own.
fn answered(protocol: &dyn Protocol, transcript: &[Entry]) -> bool {
    transcript.iter().any(|e| {
        e.from == Direction::Server
            && (e.frame.get("$rejected").is_some() || protocol.recognises(&e.frame))
    })
}

/// Violations of `rules` by the target (server side) anywhere in the transcript.
fn passive_violations(
    protocol: &dyn Protocol,
    transcript: &[Entry],
    rules: &[String],
) -> Vec<Violation> {
    let mut checker = protocol.checker();
    let mut found = Vec::new();
    let mut scratch = Vec::new();
    for entry in transcript {
        observe_entry(&mut *checker, entry, &mut scratch);
        if entry.from == Direction::Server {
            found.extend(
                scratch
                    .drain(..)
                    .filter(|v| rules.iter().any(|r| r == v.rule)),
            );
        }
        scratch.clear();
    }
    // One line per rule and message is enough: a flood of the same violation helps nobody.
    found.dedup();
    found.truncate(20);
    found
}
