//! Every connection the proxy carries, judged: what the relay hands over (a session opened,
//! an item either side sent, a session over) goes to that connection's [`ProxySession`], and
//! a session over becomes its case at once, so only open connections hold transcripts.

use super::session::{Finished, Live, ProxySession};
use crate::protocol::Protocol;
use crate::report::Transcripts;
use crate::results::CaseResult;
use crate::transcript::Direction;
use crate::transport::passthrough::{Peer, Relayed};
use std::collections::BTreeMap;

/// The proxy's judge over all its connections.
pub struct Sessions<'p> {
    protocol: &'p dyn Protocol,
    /// Which connections' cases keep their transcripts.
    transcripts: Transcripts,
    open: BTreeMap<usize, ProxySession<'p>>,
    done: Vec<Finished>,
    /// Connections the upstream was reached for, and those it could not be.
    reached: usize,
    unreachable: usize,
}

/// What taking one relayed item did.
#[derive(Debug, Default)]
pub struct Taken {
    /// Violations shown for the first time on their connection.
    pub live: Vec<Live>,
    /// A connection ended with it.
    pub ended: bool,
}

impl<'p> Sessions<'p> {
    pub fn new(protocol: &'p dyn Protocol, transcripts: Transcripts) -> Self {
        Sessions {
            protocol,
            transcripts,
            open: BTreeMap::new(),
            done: Vec::new(),
            reached: 0,
            unreachable: 0,
        }
    }

    /// Judges one item of the relay.
    pub fn take(&mut self, relayed: Relayed) -> Taken {
        let mut taken = Taken::default();
        match relayed {
            Relayed::Opened { conn, peer, target } => {
                let from = peer.map_or_else(|| "an unknown peer".to_owned(), |p| p.to_string());
                let mut session = ProxySession::new(self.protocol, conn, from.clone());
                session.opened(
                    &format!("{target} (from {from})"),
                    std::time::Instant::now(),
                );
                self.open.insert(conn, session);
            }
            Relayed::Item {
                conn,
                from,
                received,
                at,
            } => {
                if let Some(session) = self.open.get_mut(&conn) {
                    let side = match from {
                        Peer::Client => Direction::Client,
                        Peer::Upstream => Direction::Server,
                    };
                    taken.live = session.pass(side, &received, at);
                }
            }
            Relayed::Ended { conn } => {
                if let Some(session) = self.open.remove(&conn) {
                    self.close(session);
                    taken.ended = true;
                }
            }
        }
        taken
    }

    fn close(&mut self, session: ProxySession<'p>) {
        match session.failed() {
            true => self.unreachable += 1,
            false => self.reached += 1,
        }
        self.done.push(session.finish(self.transcripts));
    }

    /// True when connections came and the upstream could be reached for none of them.
    pub fn never_reached(&self) -> bool {
        self.reached == 0 && self.unreachable > 0 && self.open.values().all(ProxySession::failed)
    }

    /// Every connection's case, in the order they opened; those still open end here.
    pub fn finish(mut self) -> Vec<CaseResult> {
        let open = std::mem::take(&mut self.open);
        for session in open.into_values() {
            self.close(session);
        }
        let mut done: Vec<CaseResult> = self.done.into_iter().map(Finished::into_case).collect();
        done.sort_by_key(|c| {
            c.id.strip_prefix("proxy.")
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        });
        done
    }
}
