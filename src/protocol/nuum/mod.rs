//! Nuum wire protocol (`003_d7769e1c0369e72c.txt`): NDJSON over a child process's stdin and
//! stdout. wireprobe spawns the target and plays the host application.

pub mod checker;
pub mod fuzz;
pub mod input;
pub mod rules;
pub mod scenarios;
pub mod session;
pub mod validate;

use super::{Checker, Protocol, Session, TokenPlacement, TransportKind};
use crate::rules::Rule;
use serde_json::Value;

/// The spec file every Nuum rule cites.
pub const SPEC_FILE: &str = "003_d7769e1c0369e72c.txt";

static SUITE: &[(&str, &str)] = &[
    (
        "protocol.toml",
        include_str!("../../../suites/nuum/protocol.toml"),
    ),
    (
        "turns.toml",
        include_str!("../../../suites/nuum/turns.toml"),
    ),
    (
        "robustness.toml",
        include_str!("../../../suites/nuum/robustness.toml"),
    ),
];

/// The Nuum profile.
pub struct Nuum;

impl Protocol for Nuum {
    fn id(&self) -> &'static str {
        "nuum"
    }

    fn title(&self) -> &'static str {
        "Nuum wire protocol"
    }

    fn spec_file(&self) -> &'static str {
        SPEC_FILE
    }

    fn rules(&self) -> &'static [Rule] {
        rules::RULES
    }

    fn transport(&self) -> TransportKind {
        TransportKind::Stdio
    }

    /// The process announces itself with system/init.
    fn target_speaks_first(&self) -> bool {
        true
    }

    /// Unused: a process has no bearer tokens.
    fn token_placement(&self) -> TokenPlacement {
        TokenPlacement::Query
    }

    fn bundled_suite(&self) -> &'static [(&'static str, &'static str)] {
        SUITE
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::NuumSession)
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::NuumChecker::default())
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz::FuzzProfile> {
        Some(&fuzz::NuumFuzz)
    }

    /// A JSON object whose type is one Nuum writes to stdout.
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        let crate::protocol::Observed::Event(frame, _) = item else {
            return false;
        };
        matches!(
            frame.get("type").and_then(Value::as_str),
            Some("system" | "assistant" | "result" | "user")
        )
    }
}
