//! What one reference target is, as data: a [`Reference`], written in each protocol's
//! reference module (the list of them all is [`super::registry`]).

use super::{Fault, RunningTarget, ServeError, ServeOptions, Variant};
use crate::protocol::Protocol;
use crate::workers::{LocalTarget, TargetGuard};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use tokio::io::{AsyncRead, AsyncWrite};

/// A future a reference entry point returns.
pub type Started<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServeError>> + Send + 'a>>;

/// Starts a reference target as a network server on an address (port 0 picks a free port).
pub type Listen = for<'a> fn(SocketAddr, &'a ServeOptions) -> Started<'a, RunningTarget>;

/// Serves a reference target on a reader and a writer (NDJSON) until its input ends or a
/// fault stops it: the exit status its process should end with.
pub type Stdio = for<'a> fn(StdioPipes, &'a ServeOptions) -> Started<'a, i32>;

/// Plays a reference client against the server at a URL until the session ends.
pub type Dial = for<'a> fn(&'a str, &'a ClientOptions) -> Started<'a, ClientEnd>;

/// How to start a reference client.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    pub faults: Vec<String>,
    pub variants: Vec<String>,
    /// The token it was handed, to present as its protocol says (`None`: none).
    pub token: Option<String>,
    /// Leave (close normally) once the server has answered the client's message, instead of
    /// waiting for the server to close: what a one-shot client does, and what lets a session
    /// through `proxy` end on its own. Clients that cannot tell say so at the start.
    pub leave_when_answered: bool,
}

/// Why a reference client's session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEnd {
    /// The server closed the connection.
    Closed,
    /// The session ran as long as a client session may (a server that never closes).
    TimedOut,
}

/// A protocol's reference client: what it can be switched to and how it dials.
pub struct ReferenceClient {
    /// Deliberate deviations, each breaking named client rules (`--fault`).
    pub faults: &'static [Fault],
    /// Legal-but-different behaviours (`--variant`).
    pub variants: &'static [Variant],
    pub dial: Dial,
    /// The tools it runs, named for it when it is the client under test (`--tool`).
    pub tools: &'static [&'static str],
    /// The tools it runs until cancelled (`--slow-tool`).
    pub slow_tools: &'static [&'static str],
    /// It can tell when the server has answered its message ([`ClientOptions::leave_when_answered`]).
    pub leaves_when_answered: bool,
}

/// The two ends a stdio reference target speaks on (a process's stdin and stdout).
pub struct StdioPipes {
    pub input: Box<dyn AsyncRead + Unpin + Send>,
    pub output: Box<dyn AsyncWrite + Unpin + Send>,
}

/// One protocol's reference target: what it implements, what it can be switched to, and how
/// it starts.
pub struct Reference {
    /// The profile whose target side it implements.
    pub protocol: &'static dyn Protocol,
    /// Deliberate deviations, each breaking named rules (`--fault`).
    pub faults: &'static [Fault],
    /// Legal-but-different behaviours (`--variant`).
    pub variants: &'static [Variant],
    /// How it starts as a network server; `None`: it is served over stdio only.
    pub listen: Option<Listen>,
    /// How it is served on stdio; `None`: it is a network server only.
    pub stdio: Option<Stdio>,
    /// Its stdio form keeps its identity in a database (`--db PATH`) that outlives a restart.
    pub keeps_database: bool,
    /// The reference client of the protocol, when it has one (`wireprobe client`).
    pub client: Option<ReferenceClient>,
}

impl Reference {
    /// Starts it as a network server on `addr`.
    pub async fn start(
        &self,
        addr: SocketAddr,
        opts: &ServeOptions,
    ) -> Result<RunningTarget, ServeError> {
        match self.listen {
            Some(listen) => listen(addr, opts).await,
            None => Err(ServeError::StdioOnly {
                protocol: self.protocol.id().to_owned(),
            }),
        }
    }

    /// It as a campaign's worker threads start it, each its own on a free loopback port with
    /// `opts` (so a run's client and the target's side of it share a thread).
    pub fn on_each_worker(&'static self, opts: ServeOptions) -> LocalTarget {
        LocalTarget::new(move || {
            let opts = opts.clone();
            Box::pin(async move {
                let running = self
                    .start(SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok((running.url.clone(), Box::new(running) as TargetGuard))
            })
        })
    }
}
