//! Nuum wire protocol (`003_d7769e1c0369e72c.txt`): NDJSON over a child process's stdin and
//! stdout. wireprobe spawns the target and plays the host application.

pub mod checker;
pub mod fuzz;
pub mod fuzz_client;
pub mod input;
pub mod rules;
pub mod scenarios;
pub mod session;
pub mod validate;

use super::{Checker, Descriptor, Protocol, Session, TokenPlacement, TransportKind};
use serde_json::Value;

/// The spec file every Nuum rule cites.
pub const SPEC_FILE: &str = "003_d7769e1c0369e72c.txt";

/// What Nuum is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "nuum",
    title: "Nuum wire protocol",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::Stdio],
    roles: &[],
    // Unused: a process has no bearer tokens.
    token_placement: TokenPlacement::Query,
    suite: crate::bundled_suite!("nuum", ["protocol.toml", "turns.toml", "robustness.toml"]),
    client_suite: crate::bundled_suite!("nuum", ["client/host.toml"]),
    errata: crate::bundled_errata!("nuum"),
    http_routes: None,
    has_handshake: true,
    // The process announces itself with system/init.
    target_speaks_first: true,
    one_conversation: false,
    broken_input_excuses: &[],
};

/// The Nuum profile.
pub struct Nuum;

impl Protocol for Nuum {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::NuumSession::default())
    }

    /// The agent a host under test starts (its stdio relayed to the run: `{agent}`).
    fn serving_session(&self, transport: TransportKind) -> Option<Box<dyn Session>> {
        (transport == TransportKind::Stdio)
            .then(|| Box::new(session::NuumSession::serving()) as Box<dyn Session>)
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::NuumChecker::default())
    }

    fn client_fuzzing(
        &self,
        _transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz_client::NuumHostFuzz)
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::NuumFuzz)
    }

    /// A JSON object whose type is one Nuum writes to stdout.
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        let crate::protocol::Observed::Event(frame, _) = item else {
            return false;
        };
        matches!(
            frame.value().get("type").and_then(Value::as_str),
            // The agent's output types, and the host's input types (user, control).
            Some("system" | "assistant" | "result" | "user" | "control")
        )
    }
}
