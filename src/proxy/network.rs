//! The network proxy at work: the relay forwarding on its tasks, the judge taking what it
//! hands over on this one, until told to stop.

use super::session::Live;
use super::sessions::Sessions;
use crate::protocol::Protocol;
use crate::report::Transcripts;
use crate::results::CaseResult;
use crate::transport::passthrough::{self, Grouping, PassOptions, Upstream};
use crate::transport::tap::tap;
use crate::transport::TransportKind;
use std::future::Future;
use tokio::net::TcpListener;

/// What the proxy forwards to, how, and what it keeps.
#[derive(Clone, Debug)]
pub struct Plan {
    pub upstream: Upstream,
    pub pass: PassOptions,
    /// Which connections' cases keep their transcripts (those not kept are let go as each
    /// connection ends, so a long session's memory stays flat).
    pub transcripts: Transcripts,
    /// Stop after the first connection ends (besides the future `carry` is given).
    pub once: bool,
}

/// What the proxy saw.
#[derive(Debug)]
pub struct Carried {
    /// One case per connection, in the order they opened.
    pub cases: Vec<CaseResult>,
    /// Connections came and the upstream could be reached for none of them.
    pub never_reached: bool,
}

/// Forwards every client of `listener` to the plan's upstream and judges both sides with
/// `protocol`'s checker until `stop` resolves (or the plan says); `live` hears each
/// violation the first time its connection shows it.
pub async fn carry(
    protocol: &dyn Protocol,
    listener: TcpListener,
    plan: Plan,
    stop: impl Future<Output = ()>,
    mut live: impl FnMut(&Live),
) -> Carried {
    let (tx, mut rx) = tap();
    let grouping = grouping_of(protocol);
    let relay = tokio::spawn(passthrough::serve(
        listener,
        plan.upstream,
        plan.pass,
        grouping,
        tx,
    ));
    let mut sessions = Sessions::new(protocol, plan.transcripts);
    tokio::pin!(stop);
    loop {
        let relayed = tokio::select! {
            _ = &mut stop => break,
            relayed = rx.recv() => relayed,
        };
        let Some(relayed) = relayed else { break };
        let taken = sessions.take(relayed);
        taken.live.iter().for_each(&mut live);
        if plan.once && taken.ended {
            break;
        }
    }
    relay.abort();
    // What the relay had already handed over is judged too: nothing seen is lost.
    while let Some(relayed) = rx.try_recv() {
        sessions.take(relayed).live.iter().for_each(&mut live);
    }
    let never_reached = sessions.never_reached();
    Carried {
        cases: sessions.finish(),
        never_reached,
    }
}

/// How a protocol's binding spreads a session over HTTP requests: Socket.IO's polling by its
/// sid, a standing event stream and its POST routes by their prefix, each POST alone when
/// the answer is the stream.
fn grouping_of(protocol: &dyn Protocol) -> Grouping {
    if protocol.transports().contains(&TransportKind::SocketIo) {
        return Grouping::EngineIo;
    }
    let Some(routes) = protocol.descriptor().http_routes else {
        return Grouping::Untapped;
    };
    let posts = routes.posts.iter().map(|p| p.to_string()).collect();
    match routes.stream {
        Some(stream) => Grouping::Routes {
            stream: stream.to_owned(),
            posts,
        },
        None => Grouping::EachPost {
            framed: routes.framed.iter().map(|m| m.to_string()).collect(),
        },
    }
}
