//! The HUMA transcript checker. So far it validates every server emit on its own; the
//! lifecycle state machine (tool calls, messaging bursts) comes with the reference target.

use super::session::decode_sio;
use super::validate;
use crate::protocol::{Checker, Observed};
use crate::rules::Violation;
use crate::transcript::Direction;
use crate::transport::socketio::packet::{self, EioPacket};

/// The HUMA [`Checker`].
#[derive(Debug, Default)]
pub struct HumaChecker;

impl Checker for HumaChecker {
    fn observe(
        &mut self,
        from: Direction,
        _at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        // Socket.IO frames are not JSON, so transcripts hold them as text.
        let Observed::Garbage(text) = item else {
            return;
        };
        let Ok(EioPacket::Message(m)) = packet::parse_eio(text) else {
            return;
        };
        let Ok(p) = packet::parse_sio(&m) else { return };
        let decoded = decode_sio(&p);
        let (Some(channel), Some(event)) = (
            decoded.get("channel").and_then(|c| c.as_str()),
            decoded.get("event"),
        ) else {
            return;
        };
        match from {
            Direction::Server => out.extend(validate::server_event_violations(channel, event)),
            Direction::Client if channel == "message" => {
                out.extend(validate::client_event_violations(event))
            }
            Direction::Client => {}
        }
    }
}
