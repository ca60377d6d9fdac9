//! HUMA Event Protocol v0.2.0 (`000_9be7860959b3b922.txt`): wireprobe plays the client
//! application; the target is a HUMA server reached over Socket.IO.

pub mod checker;
pub mod fuzz;
pub mod rules;
pub mod scenarios;
pub mod session;
pub mod validate;

use super::{Checker, Protocol, Session, TokenPlacement, TransportKind};
use crate::rules::Rule;

/// The spec file every HUMA rule cites.
pub const SPEC_FILE: &str = "000_9be7860959b3b922.txt";

static SUITE: &[(&str, &str)] = &[
    (
        "validation.toml",
        include_str!("../../../suites/huma/validation.toml"),
    ),
    (
        "lifecycle.toml",
        include_str!("../../../suites/huma/lifecycle.toml"),
    ),
    (
        "robustness.toml",
        include_str!("../../../suites/huma/robustness.toml"),
    ),
];

/// The HUMA profile.
pub struct Huma;

impl Protocol for Huma {
    fn id(&self) -> &'static str {
        "huma"
    }

    fn title(&self) -> &'static str {
        "HUMA Event Protocol v0.2.0"
    }

    fn spec_file(&self) -> &'static str {
        SPEC_FILE
    }

    fn rules(&self) -> &'static [Rule] {
        rules::RULES
    }

    fn transport(&self) -> TransportKind {
        TransportKind::SocketIo
    }

    fn token_placement(&self) -> TokenPlacement {
        TokenPlacement::Query
    }

    fn bundled_suite(&self) -> &'static [(&'static str, &'static str)] {
        SUITE
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::HumaSession::default())
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::HumaChecker::default())
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz::FuzzProfile> {
        Some(&fuzz::HumaFuzz)
    }

    /// Socket.IO frames are not JSON, so transcripts hold them as text: any Socket.IO packet
    /// (a CONNECT reply, an event) is an answer; Engine.IO pings are not.
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::transport::socketio::packet::{parse_eio, parse_sio, EioPacket};
        let crate::protocol::Observed::Garbage(text) = item else {
            return false;
        };
        matches!(parse_eio(text), Ok(EioPacket::Message(m)) if parse_sio(&m).is_ok())
    }
}
