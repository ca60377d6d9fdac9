//! The stdio proxy at work: wireprobe in place of a host's agent, starting the agent itself,
//! relaying on one side while the judge takes what passes on the other.

use super::session::Live;
use super::sessions::Sessions;
use crate::protocol::Protocol;
use crate::report::Transcripts;
use crate::results::CaseResult;
use crate::transport::pipe_relay::relay_child;
use crate::transport::tap::tap;
use crate::transport::TransportError;
use std::process::ExitStatus;
use tokio::io::{AsyncRead, AsyncWrite};

/// The host's three streams: what it writes to its agent, and where the agent's output and
/// errors go.
pub struct Host<I, O, E> {
    pub input: I,
    pub output: O,
    pub errors: E,
}

/// What the stdio proxy saw: the session's case, and how the agent ended (or why it could
/// not start).
#[derive(Debug)]
pub struct StoodIn {
    pub cases: Vec<CaseResult>,
    pub status: Result<ExitStatus, TransportError>,
}

/// Starts the agent `argv` for `host` and judges both sides with `protocol`'s checker until
/// the agent's output ends; `live` hears each violation the first time it shows.
pub async fn stand_in<I, O, E>(
    protocol: &dyn Protocol,
    argv: &[String],
    max_line: usize,
    transcripts: Transcripts,
    host: Host<I, O, E>,
    mut live: impl FnMut(&Live),
) -> StoodIn
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    E: AsyncWrite + Unpin,
{
    let (tx, mut rx) = tap();
    let relay = relay_child(argv, max_line, host.input, host.output, host.errors, tx);
    let mut sessions = Sessions::new(protocol, transcripts);
    let judge = async {
        while let Some(relayed) = rx.recv().await {
            sessions.take(relayed).live.iter().for_each(&mut live);
        }
    };
    let (status, ()) = tokio::join!(relay, judge);
    StoodIn {
        cases: sessions.finish(),
        status,
    }
}
