//! How a suite is run: the target, credentials, budgets and selections a run is given.

use super::filter::CaseFilter;
use super::model::{Case, Suite};
use crate::protocol::Protocol;
use crate::transcript::Direction;
use crate::transport::TransportKind;
use crate::transport::{socketio, DEFAULT_MAX_FRAME};
use std::time::Duration;

/// In a target URL, where each case's own path segment goes: cases against a target that is
/// one conversation run side by side only when each has its own.
pub const CASE_SCOPE: &str = "{case}";

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
    /// Judging a client: tools it runs long enough to be cancelled (`--slow-tool`).
    pub slow_tools: Vec<ToolOffer>,
    /// The transport to use (`--transport`); `None`: every one the protocol has, in turn.
    pub transport: Option<TransportKind>,
    /// The part the target plays (`--role`); `None`: the protocol's default.
    pub role: Option<String>,
    /// Start no new case once this many have failed or errored (`--max-failures`).
    pub max_failures: Option<usize>,
    /// `wss://` and `https://` targets: accept any certificate (`--insecure`).
    pub insecure: bool,
    /// The side the run judges; wireprobe plays the other (a server's, unless `--client`).
    pub judged: Direction,
    /// Judging a client: the command that starts it, once per case (`{url}`, `{token}` and
    /// `{tmp}` not yet expanded); empty when the user's harness starts it.
    pub client_command: Vec<String>,
    /// Judging a client the user's harness starts: the listener its connections arrive at,
    /// one case per connection in suite order (`--client --listen ADDR`).
    pub client_listener: Option<SharedListener>,
    /// Write each step's report line into its case's result. The fuzzer's runs go without
    /// (a run's lines are written afresh only for the one it reports).
    pub step_lines: bool,
    /// Keep in each case's result the rules its run exercised ([`CaseResult::exercised`]):
    /// a campaign's coverage is made of them.
    ///
    /// [`CaseResult::exercised`]: crate::results::CaseResult::exercised
    pub record_exercised: bool,
}

/// A listener the cases of a run take connections from in turn.
pub type SharedListener = std::sync::Arc<tokio::sync::Mutex<tokio::net::TcpListener>>;

/// A tool the user says the target offers (`--tool NAME[=JSON params]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOffer {
    pub name: String,
    /// Params to call it with (`None`: the case's own).
    pub params: Option<serde_json::Value>,
}

/// As `--tool` takes it: `NAME` or `NAME=JSON`.
impl std::fmt::Display for ToolOffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.params {
            Some(params) => write!(f, "{}={params}", self.name),
            None => f.write_str(&self.name),
        }
    }
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
            slow_tools: Vec::new(),
            transport: None,
            role: None,
            max_failures: None,
            insecure: false,
            judged: Direction::Server,
            client_command: Vec::new(),
            step_lines: true,
            record_exercised: false,
            client_listener: None,
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
        // A harness's connections come one at a time, each the next case's.
        if self.client_listener.is_some() {
            return 1;
        }
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
    pub(super) fn transports(&self, protocol: &dyn Protocol) -> Vec<TransportKind> {
        match self.transport {
            Some(kind) => vec![kind],
            None => protocol.transports().to_vec(),
        }
    }

    /// True when `case` runs over `kind`: selected, and written for that transport and for the
    /// role the target plays.
    pub(super) fn selects(
        &self,
        protocol: &dyn Protocol,
        case: &Case,
        kind: TransportKind,
    ) -> bool {
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
