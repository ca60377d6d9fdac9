//! Every reference target, as data: one [`Reference`] per protocol, written in that protocol's
//! reference module, read by `serve`, `run --target builtin`, `list` and the tests. Nothing
//! outside a reference module names a protocol to start, switch or serve it.

use super::{Reference, RunningTarget, ServeError, ServeOptions};
use crate::protocol::Protocol;
use std::net::SocketAddr;

/// Every reference target wireprobe has.
pub fn all() -> &'static [&'static Reference] {
    static ALL: &[&Reference] = &[
        &super::agui::REFERENCE,
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
                .contains(&crate::transport::TransportKind::Stdio);
            assert_eq!(r.stdio.is_some(), serves_stdio, "{}: stdio form", p.id());
            assert!(!r.keeps_database || r.stdio.is_some(), "{}: --db", p.id());
        }
    }
}
