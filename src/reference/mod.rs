//! Reference targets: a correct implementation of the target side of each protocol, with a
//! deterministic scripted agent and named faults that each break one rule on purpose.

pub mod agui;
pub mod directive;
pub mod entry;
pub mod haip;
pub mod hpd;
pub mod http_body;
pub mod huma;
pub mod later;
pub mod nuum;
pub mod registry;
pub mod uae;

pub use entry::{ClientEnd, ClientOptions, Reference, ReferenceClient, StdioPipes};
pub use registry::{get, of, start};

use crate::transport::listen::{self, Listening};
use crate::verdict::Verdict;
use std::collections::BTreeSet;
use std::net::SocketAddr;

/// A deliberate deviation a reference target can be started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub name: &'static str,
    /// The rules this fault breaks.
    pub breaks: &'static [&'static str],
    pub description: &'static str,
    /// The bundled suite's cases that do not pass against the target with this fault, and
    /// their verdicts: every other case passes (or only records). The fault-matrix tests hold
    /// each fault to it, which shows each check can fail and nothing else fires. Empty for a
    /// fault of a reference client, whose runs its own tests judge.
    pub fails: &'static [(&'static str, Verdict)],
    /// The cases (`--case` pattern) the matrix runs this fault on, when not the whole suite.
    pub cases: Option<&'static str>,
}

/// A [`Fault`]: `fault!("name", [RULE, ...], "what it does")`, then, for a target's fault, the
/// cases it fails as `[("case.id", Fail), ...]`, behind the `--case` pattern to run when not
/// every case: `fault!("name", [RULE], "what it does", "case.*", [("case.id", Fail)])`.
#[macro_export]
macro_rules! fault {
    ($name:literal, [$($rule:expr),+ $(,)?], $description:literal $(,)?) => {
        $crate::reference::Fault {
            name: $name,
            breaks: &[$($rule),+],
            description: $description,
            fails: &[],
            cases: None,
        }
    };
    ($name:literal, [$($rule:expr),+ $(,)?], $description:literal, $($cases:literal,)?
        [$(($case:literal, $verdict:ident)),* $(,)?] $(,)?) => {
        $crate::reference::Fault {
            name: $name,
            breaks: &[$($rule),+],
            description: $description,
            fails: &[$(($case, $crate::verdict::Verdict::$verdict)),*],
            cases: $crate::reference::case_pattern(&[$($cases)?]),
        }
    };
}

/// A [`fault!`]'s case pattern, when it gives one.
pub const fn case_pattern(given: &[&'static str]) -> Option<&'static str> {
    match given {
        [first, ..] => Some(first),
        [] => None,
    }
}

/// A legal-but-different behaviour a reference target can be started with (other wording,
/// ids, order, timing the spec allows): a suite that passes every variant does not fit one
/// implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub name: &'static str,
    pub description: &'static str,
}

/// A [`Variant`]: `variant!("name", "what it does differently")`.
#[macro_export]
macro_rules! variant {
    ($name:literal, $description:literal $(,)?) => {
        $crate::reference::Variant {
            name: $name,
            description: $description,
        }
    };
}

/// Something a target can be switched to: a [`Fault`] or a [`Variant`].
pub trait Switch {
    fn name(&self) -> &'static str;
    /// What the command line calls it (`fault`, `variant`).
    const KIND: &'static str;
}

impl Switch for Fault {
    fn name(&self) -> &'static str {
        self.name
    }
    const KIND: &'static str = "fault";
}

impl Switch for Variant {
    fn name(&self) -> &'static str {
        self.name
    }
    const KIND: &'static str = "variant";
}

/// The faults (or variants) a target was started with, validated against its catalogue.
#[derive(Debug, Clone, Default)]
pub struct Switches(BTreeSet<&'static str>);

/// The faults a target was started with.
pub type Faults = Switches;
/// The variants a target was started with.
pub type Variants = Switches;

impl Switches {
    /// Resolves names against `catalogue`.
    pub fn parse<S: Switch>(
        catalogue: &'static [S],
        names: &[String],
    ) -> Result<Switches, ServeError> {
        let mut set = BTreeSet::new();
        for name in names {
            let known =
                catalogue
                    .iter()
                    .find(|f| f.name() == name)
                    .ok_or_else(|| ServeError::Unknown {
                        kind: S::KIND,
                        name: name.clone(),
                        known: catalogue
                            .iter()
                            .map(Switch::name)
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
            set.insert(known.name());
        }
        Ok(Switches(set))
    }

    /// True when the switch named `name` is on.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// True when no switch is on (the correct target, as it mostly runs).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Starts `command` (one line, split as a shell would) as the child a reference client talks
/// to over its stdio: the agent a Nuum host starts, the executor a UAE agent calls.
pub(crate) async fn start_child(command: &str) -> Result<crate::transport::Connection, ServeError> {
    use crate::transport::stdio::{self, StdioOptions, DEFAULT_MAX_LINE};
    let argv = stdio::split_command(command).map_err(|e| ServeError::Connect(e.to_string()))?;
    stdio::spawn(&StdioOptions {
        argv,
        cwd: None,
        max_line: DEFAULT_MAX_LINE,
    })
    .await
    .map_err(|e| ServeError::Connect(e.to_string()))
}

/// Why a reference target could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("unknown {kind} {name:?}; known: {known}")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    #[error("no reference target for protocol {0:?}")]
    UnknownProtocol(String),
    #[error("{0}")]
    Database(String),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("{protocol} is served over stdio: use `serve {protocol} --stdio`")]
    StdioOnly { protocol: String },
    #[error("cannot listen on {addr}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// How to start a reference target.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    pub faults: Vec<String>,
    /// Legal-but-different behaviours (`--variant`).
    pub variants: Vec<String>,
    /// When set, clients must present an HS256 token signed with it.
    pub jwt_secret: Option<String>,
    /// HUMA: how long a messaging burst waits for each confirmation.
    pub confirm_timeout: Option<std::time::Duration>,
    /// UAE: the part the target plays (`agent`, `executor`; `None`: agent).
    pub role: Option<String>,
    /// A stdio target that keeps its identity in a database (Nuum): where; `None` keeps it in
    /// memory, a new one per start.
    pub db: Option<std::path::PathBuf>,
    /// HPD: the path prefix of the hosted routes (`/agent` serves `/agent/inputs`, ...);
    /// `None` or empty serves them at the root.
    pub prefix: Option<String>,
}

/// A reference target running in this process; dropping it stops it.
pub struct RunningTarget {
    /// Where clients connect (`ws://127.0.0.1:PORT/`; HPD: `http://127.0.0.1:PORT/PREFIX`).
    pub url: String,
    pub addr: SocketAddr,
    listening: Listening,
}

impl RunningTarget {
    /// The target on `listening`, which clients reach at `SCHEME://ADDR/`.
    fn on(listening: Listening, scheme: &str) -> RunningTarget {
        RunningTarget {
            url: format!("{scheme}://{}/", listening.addr),
            addr: listening.addr,
            listening,
        }
    }

    /// Runs until the process is interrupted.
    pub async fn wait(mut self) {
        self.listening.wait().await;
    }
}

/// A target served over HTTP on `addr` (WebSocket upgrades included) by `handle`; clients
/// reach it at `SCHEME://ADDR/`.
pub(crate) async fn serve_http<B, F, Fut>(
    addr: SocketAddr,
    scheme: &str,
    handle: F,
) -> Result<RunningTarget, ServeError>
where
    F: Fn(Option<SocketAddr>, hyper::Request<hyper::body::Incoming>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = hyper::Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listening = listen::serve_http(addr, handle)
        .await
        .map_err(|source| ServeError::Listen { addr, source })?;
    Ok(RunningTarget::on(listening, scheme))
}

/// Starts a Socket.IO server built from `builder` (configured by `setup`) on `addr`, served
/// by hyper; clients reach it at `http://ADDR/`.
pub async fn start_socketio(
    addr: SocketAddr,
    builder: socketioxide::SocketIoBuilder,
    setup: impl FnOnce(&socketioxide::SocketIo),
) -> Result<RunningTarget, ServeError> {
    use hyper::service::Service;
    let (svc, io) = builder.build_svc();
    setup(&io);
    serve_http(addr, "http", move |_, req| {
        let answered = svc.call(req);
        async move { answered.await.unwrap_or_else(|never| match never {}) }
    })
    .await
}
