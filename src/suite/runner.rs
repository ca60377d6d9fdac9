//! Runs a suite against a live target: filters, capability gates, parallel cases, passive
//! checks of everything the target sent, and one verdict per case.

use super::filter::CaseFilter;
use super::model::{Case, Requirement, Suite};
use super::steps::{CaseRun, Outcome};
use super::verdicts::{case_level, judge_case};
use crate::judge::FrameViolation;
use crate::protocol::{Protocol, TransportKind};
use crate::rules::Level;
use crate::transcript::Entry;
use crate::transport::{
    socketio, sse, stdio, websocket, Connection, TransportError, DEFAULT_MAX_FRAME,
};
use crate::verdict::Verdict;
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Credentials for targets that require authentication.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// A valid token (`--token`).
    pub token: Option<String>,
    /// The target's HS256 secret (`--jwt-secret`): wireprobe mints valid and invalid tokens.
    pub jwt_secret: Option<String>,
    /// Claims merged into every minted token (`--claims`): a server may need its own
    /// (`userId`, `aud`, `iss`).
    pub claims: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Credentials {
    pub fn any(&self) -> bool {
        self.token.is_some() || self.jwt_secret.is_some()
    }

    /// The claims a minted token starts from: those of `--token` (so a minted token looks
    /// like the user's), then `--claims` over them.
    pub fn claims_template(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let mut template = self.token.as_deref().and_then(crate::auth::peek_claims);
        if let Some(extra) = &self.claims {
            let base = template.get_or_insert_with(Default::default);
            base.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        template
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
    /// Tools the target offers (`--tool NAME[=JSON params]`), before any it advertises.
    pub tools: Vec<ToolOffer>,
    /// The transport to use (`--transport`); `None`: every one the protocol has, in turn.
    pub transport: Option<TransportKind>,
    /// The part the target plays (`--role`); `None`: the protocol's default.
    pub role: Option<String>,
    /// Start no new case once this many have failed or errored (`--max-failures`).
    pub max_failures: Option<usize>,
    /// `wss://` and `https://` targets: accept any certificate (`--insecure`).
    pub insecure: bool,
}

/// A tool the user says the target offers (`--tool NAME[=JSON params]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOffer {
    pub name: String,
    /// Params to call it with (`None`: the case's own).
    pub params: Option<serde_json::Value>,
}

impl std::str::FromStr for ToolOffer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, params) = match s.split_once('=') {
            None => (s, None),
            Some((name, json)) => match serde_json::from_str::<serde_json::Value>(json) {
                Ok(v @ serde_json::Value::Object(_)) => (name, Some(v)),
                Ok(_) => return Err(format!("--tool {name}=JSON takes a JSON object of params")),
                Err(e) => return Err(format!("--tool {name}: the params are not JSON: {e}")),
            },
        };
        if name.trim().is_empty() {
            return Err("--tool needs a tool name (NAME or NAME=JSON)".into());
        }
        Ok(ToolOffer {
            name: name.trim().to_owned(),
            params,
        })
    }
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
            tools: Vec::new(),
            transport: None,
            role: None,
            max_failures: None,
            insecure: false,
        }
    }

    /// The part the target plays: the one chosen, else the protocol's default (`None` for a
    /// protocol whose targets play one part).
    pub fn role_of<'a>(&'a self, protocol: &dyn Protocol) -> Option<&'a str> {
        self.role
            .as_deref()
            .or_else(|| protocol.roles().first().copied())
    }

    /// The transport a connection opens over: the one chosen, else the protocol's default.
    pub fn transport_of(&self, protocol: &dyn Protocol) -> TransportKind {
        self.transport.unwrap_or(protocol.transport())
    }

    /// How many cases (or fuzz runs) go at once: `jobs`, but one at a time against a target
    /// that is one conversation, unless its URL gives each its own path segment (`{case}`):
    /// otherwise each would see every other one's events.
    pub fn parallel_jobs(&self, protocol: &dyn Protocol) -> usize {
        match protocol.one_conversation() && !self.target_url.contains(CASE_SCOPE) {
            true => 1,
            false => self.jobs.max(1),
        }
    }

    /// `url` with a path segment of its own for each case (`URL/{case}`) when `protocol`'s
    /// targets are one conversation each, for a target that hosts one per route prefix (the
    /// reference does): such cases then run side by side.
    pub fn scoped_per_case(protocol: &dyn Protocol, url: &str) -> String {
        match protocol.one_conversation() {
            true => format!("{}/{CASE_SCOPE}", url.trim_end_matches('/')),
            false => url.to_owned(),
        }
    }

    /// The transports a run covers, in order.
    fn transports(&self, protocol: &dyn Protocol) -> Vec<TransportKind> {
        match self.transport {
            Some(kind) => vec![kind],
            None => protocol.transports().to_vec(),
        }
    }

    /// True when `case` runs over `kind`: selected, and written for that transport and for the
    /// role the target plays.
    fn selects(&self, protocol: &dyn Protocol, case: &Case, kind: TransportKind) -> bool {
        self.filter.selects_case(case)
            && case.runs_over(kind)
            && case.runs_as(self.role_of(protocol))
    }

    /// How many case runs [`run_suite`] makes of `suite` (a case per transport it runs over).
    pub fn planned_runs(&self, protocol: &dyn Protocol, suite: &Suite) -> usize {
        self.transports(protocol)
            .into_iter()
            .map(|kind| {
                suite
                    .cases
                    .iter()
                    .filter(|c| self.selects(protocol, c, kind))
                    .count()
            })
            .sum()
    }
}

/// The result of one case (serialised as-is into the JSON report's `cases`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub title: String,
    pub rules: Vec<String>,
    /// The strictest level among the case's rules.
    pub level: Level,
    pub verdict: Verdict,
    pub message: String,
    pub duration_ms: u64,
    /// The verdict this case gives each of its own rules (a rule it could not reach, because
    /// a step failed under another rule first, is absent).
    #[serde(default)]
    pub judged: BTreeMap<String, Verdict>,
    /// Every rule the target broke anywhere in the transcript, the case's own and any other,
    /// each pinned to the frame where it was seen. Only the case's own rules change its
    /// verdict; the rest count for their rules in the report.
    #[serde(default)]
    pub violations: Vec<FrameViolation>,
    #[serde(default)]
    pub transcript: Vec<Entry>,
    /// The case's steps, one line each (its fallback steps after its own, marked so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// The index in `steps` of the step the case ended at without finishing, when a step
    /// (not the connection or the handshake) ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
}

/// Why a run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Unreachable(TransportError),
    /// The target refuses the connection wireprobe makes with its best credentials: every
    /// case would end the same way, so the run stops with one line saying why.
    #[error("{0}")]
    Refused(String),
    /// The target (a process) ends, or never says a word of the protocol, before any case
    /// could start: one line, not a wall of per-case errors.
    #[error("{0}")]
    Mute(String),
    /// Every case ran and the target never once spoke the protocol (it speaks another, or
    /// nothing): one cause, said once; the results are kept for the reports.
    #[error("{why}")]
    NeverSpoke {
        why: String,
        results: Vec<CaseResult>,
    },
}

/// Runs every case of `suite` that `cfg.filter` selects (in parallel up to `cfg.jobs`);
/// results come in suite order, one per selected case. `on_result` sees each result as it
/// completes. A run over several transports runs the suite over each in turn, and each
/// case's id says which (`ID@sse`); a case written for one transport runs only over it.
pub async fn run_suite(
    protocol: &dyn Protocol,
    suite: &Suite,
    cfg: &RunConfig,
    on_result: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    let kinds = cfg.transports(protocol);
    let labelled = kinds.len() > 1;
    let failures = AtomicUsize::new(0);
    let mut all = Vec::new();
    for kind in kinds {
        let over = RunConfig {
            transport: Some(kind),
            ..cfg.clone()
        };
        let selected = suite
            .cases
            .iter()
            .filter(|c| cfg.selects(protocol, c, kind));
        let label = labelled.then(|| kind.name());
        all.extend(run_cases(protocol, selected, &over, label, &failures, on_result).await?);
    }
    match super::probe::never_spoke(protocol, &all) {
        Some(why) => Err(RunError::NeverSpoke { why, results: all }),
        None => Ok(all),
    }
}

/// Runs `cases` over one transport, in parallel up to [`RunConfig::parallel_jobs`]; with a
/// `label`, each result's id says which transport (`ID@label`).
async fn run_cases<'a>(
    protocol: &dyn Protocol,
    cases: impl Iterator<Item = &'a Case> + Clone,
    cfg: &RunConfig,
    label: Option<&str>,
    failures: &AtomicUsize,
    on_result: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    if cases.clone().next().is_some() {
        super::probe::probe(protocol, cfg).await?;
    }
    let mut results: Vec<(usize, CaseResult)> = futures_util::stream::iter(cases.enumerate())
        .map(|(i, case)| async move {
            let stopped = cfg
                .max_failures
                .filter(|max| failures.load(Ordering::Relaxed) >= *max);
            let mut result = match stopped {
                Some(max) => not_run(
                    protocol,
                    case,
                    format!("not run: --max-failures {max} reached"),
                ),
                None => run_case(protocol, case, cfg).await,
            };
            if matches!(result.verdict, Verdict::Fail | Verdict::Error) {
                failures.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(label) = label {
                result.id = format!("{}@{label}", result.id);
            }
            on_result(&result);
            (i, result)
        })
        .buffer_unordered(cfg.parallel_jobs(protocol))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

/// In a target URL, where each case's own path segment goes: cases against a target that is
/// one conversation run side by side only when each has its own.
pub const CASE_SCOPE: &str = "{case}";

/// Opens a connection over the run's transport to the target `opts` names (a stdio target:
/// `cfg.exec`, with `{tmp}` as `tmp`).
pub(super) async fn open_transport(
    protocol: &dyn Protocol,
    opts: websocket::WsOptions,
    cfg: &RunConfig,
    tmp: &std::path::Path,
) -> Result<Connection, TransportError> {
    match cfg.transport_of(protocol) {
        TransportKind::Sse => {
            let routes = protocol
                .http_routes()
                .ok_or_else(|| TransportError::BadTarget {
                    target: opts.url.clone(),
                    reason: format!("{} has no SSE + HTTP binding", protocol.id()),
                })?;
            sse::connect(&sse::SseOptions {
                base: opts.url,
                stream_path: routes.stream.to_owned(),
                default_post_path: routes.post.to_owned(),
                headers: opts.headers,
                max_frame: opts.max_frame,
                timeout: opts.connect_timeout,
                insecure: opts.insecure,
            })
            .await
        }
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

/// A case that did not run, skipped for `why`.
fn not_run(protocol: &dyn Protocol, case: &Case, why: String) -> CaseResult {
    CaseResult {
        id: case.id.clone(),
        title: case.title.clone(),
        rules: case.rules.clone(),
        level: case_level(protocol, case),
        verdict: Verdict::Skip,
        message: why,
        duration_ms: 0,
        judged: BTreeMap::new(),
        violations: Vec::new(),
        transcript: Vec::new(),
        steps: case
            .steps
            .iter()
            .map(super::model::Step::describe)
            .chain(
                case.fallback
                    .iter()
                    .map(|s| format!("fallback: {}", s.describe())),
            )
            .collect(),
        stopped_at: None,
    }
}

/// Runs one case to a verdict (never panics on target input; every wait is bounded).
pub async fn run_case(protocol: &dyn Protocol, case: &Case, cfg: &RunConfig) -> CaseResult {
    let started = Instant::now();
    if !cfg.filter.selects_case(case) {
        return not_run(
            protocol,
            case,
            "filtered out by --case/--skip/--rule".into(),
        );
    }
    let mut result = not_run(protocol, case, String::new());
    if let Some(why) = unmet_run_requirement(case, cfg) {
        let judged = judge_case(protocol, case, Err(Outcome::Skip(why)), &[]);
        result.verdict = judged.verdict;
        result.message = judged.message;
        result.judged = judged.rules;
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
    result.stopped_at = run.at_step.filter(|_| outcome.is_err());
    let transcript = run.into_transcript();
    let judged = judge_case(protocol, case, outcome, &transcript);
    result.verdict = judged.verdict;
    result.message = judged.message;
    result.judged = judged.rules;
    result.violations = judged.violations;
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.transcript = transcript;
    result
}

/// Generous upper bound on a case's run time: every step's own limit, plus slack.
fn case_budget(case: &Case, cfg: &RunConfig) -> Duration {
    use super::vocabulary::StepKind as _;
    let step_ms = case
        .timeout_ms
        .unwrap_or(cfg.step_timeout.as_millis() as u64);
    let steps: u64 = case
        .steps
        .iter()
        .chain(&case.fallback)
        .map(|s| s.action.budget_ms(step_ms))
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
        Requirement::Transport(kind) if cfg.transport.is_some_and(|t| t != *kind) => {
            Some(format!("runs over the {} transport only", kind.name()))
        }
        Requirement::Role(role) if cfg.role.as_deref().is_some_and(|r| r != role) => {
            Some(format!("runs only against a target playing the {role} role"))
        }
        _ => None,
    })
}
