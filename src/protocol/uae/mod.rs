//! The UI–Agent–Executor event protocol (`002_32720a159e3ec1f9.txt`): typed envelopes between
//! a Web UI, an Agent and an API Executor. The spec names no transport; wireprobe binds it to
//! one JSON envelope per WebSocket text frame or per NDJSON line on a child's stdio
//! (`suites/uae/ERRATA.md`). The target is the Agent (wireprobe plays the UI and the
//! Executor) or, with `--role executor`, the API Executor (wireprobe plays the Agent).

use crate::rules::ids::{UAE_ENV_001, UAE_ENV_002, UAE_RES_002, UAE_SES_001};
pub mod checker;
pub mod fuzz;
pub mod fuzz_client;
pub mod rules;
pub mod session;
pub mod validate;

use super::{Checker, Descriptor, Protocol, Session, TokenPlacement, TransportKind};
use serde_json::Value;

/// The spec file every UAE rule cites.
pub const SPEC_FILE: &str = "002_32720a159e3ec1f9.txt";

/// The parts a UAE target plays, the default first.
pub const ROLES: &[&str] = &["agent", "executor"];

/// What UAE is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "uae",
    title: "UI–Agent–Executor event protocol",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::WebSocket, TransportKind::Stdio],
    roles: ROLES,
    // The spec has no authentication; a token, when given, goes on the URL.
    token_placement: TokenPlacement::Query,
    suite: crate::bundled_suite!("uae", ["agent.toml", "executor.toml"]),
    client_suite: crate::bundled_suite!("uae", ["client/ui.toml", "client/agent.toml"]),
    errata: crate::bundled_errata!("uae"),
    http_routes: None,
    has_handshake: false,
    target_speaks_first: false,
    one_conversation: false,
    // A refusal of input without a trace, session or tool cannot carry the input's, and an
    // answer to text that is no event cannot name the session it had none of.
    broken_input_excuses: &[UAE_ENV_001, UAE_ENV_002, UAE_RES_002, UAE_SES_001],
};

/// The UAE profile.
pub struct Uae;

impl Protocol for Uae {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::UaeSession::default())
    }

    /// The Agent facing a Web UI under test, over the WebSocket; the API Executor of an
    /// agent under test that starts it as its child (`{agent}`, over stdio).
    fn serving_session(&self, transport: TransportKind) -> Option<Box<dyn Session>> {
        match transport {
            TransportKind::WebSocket => Some(Box::new(session::UaeSession::serving())),
            TransportKind::Stdio => Some(Box::new(session::UaeSession::executor_serving())),
            _ => None,
        }
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::UaeChecker::default())
    }

    /// A Web UI (over the WebSocket). An agent calling its executor over stdio is not fuzzed
    /// yet: its probe would answer a call whose trace only the run knows.
    fn client_fuzzing(
        &self,
        transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        (transport == TransportKind::WebSocket).then_some(&fuzz_client::UaeUiFuzz as _)
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::AgentFuzz)
    }

    fn fuzzing_as(
        &self,
        role: Option<&str>,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        match role {
            Some("executor") => Some(&fuzz::ExecutorFuzz),
            _ => self.fuzzing(),
        }
    }

    /// UAE has no error event: whatever the agent or executor sends after broken input may be
    /// its answer (a refusal is a tool.result with ok false, or an assistant message).
    fn may_answer_input(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::protocol::Observed;
        matches!(
            item,
            Observed::Event(..) | Observed::Garbage(_) | Observed::Closed { .. }
        )
    }

    /// A JSON object whose type is one of the six the spec defines.
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        let crate::protocol::Observed::Event(frame, _) = item else {
            return false;
        };
        frame
            .value()
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|ty| !matches!(validate::Kind::of(ty), validate::Kind::Other(_)))
    }
}
