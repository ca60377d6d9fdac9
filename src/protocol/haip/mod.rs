//! HAIP — Human-Agent Interaction Protocol v1.1.2 (`001_1704fd641f081645.txt`).
//!
//! wireprobe plays the UI client; the target is a HAIP agent server over WebSocket.

use crate::rules::ids::HAIP_ENV_004;
pub mod checker;
pub mod facts;
pub mod fast;
pub mod fuzz;
pub mod fuzz_client;
pub mod model;
mod open_work;
pub mod rules;
pub mod scenarios;
pub mod schema;
pub mod session;
mod values;

use super::{Checker, Descriptor, Protocol, Session, TokenPlacement, TransportKind};

/// The HAIP profile.
pub struct Haip;

/// What HAIP is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "haip",
    title: "HAIP v1.1.2",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::WebSocket],
    roles: &[],
    token_placement: TokenPlacement::Query,
    suite: crate::bundled_suite!(
        "haip",
        [
            "handshake.toml",
            "envelope.toml",
            "sequencing.toml",
            "runs.toml",
            "tools.toml",
            "flow.toml",
            "media.toml",
            "auth.toml"
        ]
    ),
    client_suite: crate::bundled_suite!("haip", ["client/basics.toml"]),
    errata: crate::bundled_errata!("haip"),
    http_routes: None,
    has_handshake: true,
    target_speaks_first: false,
    one_conversation: false,
    // An ERROR answering a malformed message may go out on the channel that message named
    // (an ERROR's related_id echoing a malformed id is the checker's to excuse).
    broken_input_excuses: &[HAIP_ENV_004],
};

/// The spec file every HAIP rule cites.
pub const SPEC_FILE: &str = "001_1704fd641f081645.txt";

impl Protocol for Haip {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::HaipSession::new())
    }

    fn serving_session(&self, _transport: TransportKind) -> Option<Box<dyn Session>> {
        Some(Box::new(session::HaipSession::serving()))
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::HaipChecker::new())
    }

    fn client_fuzzing(
        &self,
        _transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz_client::HaipClientFuzz)
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::HaipFuzz)
    }

    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        matches!(item, crate::protocol::Observed::Event(e, _) if model::event_type(e.value()).is_some())
    }

    /// An ERROR, or the connection's end, may answer what we sent.
    fn may_answer_input(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::protocol::Observed;
        match item {
            Observed::Event(e, _) => model::event_type(e.value()) == Some("ERROR"),
            Observed::Closed { .. } => true,
            _ => false,
        }
    }

    fn advertised_tools(&self, event: &serde_json::Value) -> Option<Vec<String>> {
        if model::event_type(event) != Some("TOOL_LIST") {
            return None;
        }
        let tools = event.pointer("/payload/tools")?.as_array()?;
        Some(
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
                .collect(),
        )
    }
}
