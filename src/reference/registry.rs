//! Every reference target, as data: one [`Reference`] per protocol, written in that protocol's
//! reference module, read by `serve`, `run --target builtin`, `list` and the tests. Nothing
//! outside a reference module names a protocol to start, switch or serve it.

use super::{Fault, RunningTarget, ServeError, ServeOptions, Variant};
use crate::protocol::Protocol;
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
}

/// Every reference target wireprobe has.
pub fn all() -> &'static [&'static Reference] {
    static ALL: &[&Reference] = &[
        &super::haip::REFERENCE,
        &super::hpd::REFERENCE,
        &super::huma::REFERENCE,
        &super::nuum::REFERENCE,
        &super::uae::REFERENCE,
    ];
    ALL
}

/// The reference target of `protocol`.
pub fn of(protocol: &dyn Protocol) -> Option<&'static Reference> {
    get(protocol.id())
}

/// The reference target of the protocol with this id.
pub fn get(id: &str) -> Option<&'static Reference> {
    all().iter().copied().find(|r| r.protocol.id() == id)
}

/// Starts the reference target of the protocol with this id on `addr`.
pub async fn start(
    protocol: &str,
    addr: SocketAddr,
    opts: &ServeOptions,
) -> Result<RunningTarget, ServeError> {
    get(protocol)
        .ok_or_else(|| ServeError::UnknownProtocol(protocol.to_owned()))?
        .start(addr, opts)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_has_one_reference_that_starts_somehow() {
        for p in crate::protocol::all() {
            let found: Vec<_> = all().iter().filter(|r| r.protocol.id() == p.id()).collect();
            assert_eq!(found.len(), 1, "{} has {} references", p.id(), found.len());
            let r = found[0];
            assert!(
                r.listen.is_some() || r.stdio.is_some(),
                "{}: no way to start",
                p.id()
            );
            let serves_stdio = p
                .transports()
                .contains(&crate::protocol::TransportKind::Stdio);
            assert_eq!(r.stdio.is_some(), serves_stdio, "{}: stdio form", p.id());
            assert!(!r.keeps_database || r.stdio.is_some(), "{}: --db", p.id());
        }
    }
}
