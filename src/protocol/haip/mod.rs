//! HAIP — Human-Agent Interaction Protocol v1.1.2 (`001_1704fd641f081645.txt`).
//!
//! wireprobe plays the UI client; the target is a HAIP agent server over WebSocket.

pub mod checker;
pub mod facts;
pub mod fast;
pub mod fuzz;
pub mod model;
pub mod rules;
pub mod scenarios;
pub mod schema;
pub mod session;

use super::{Checker, Protocol, Session, TokenPlacement, TransportKind};
use crate::rules::Rule;

/// The HAIP profile.
pub struct Haip;

/// The spec file every HAIP rule cites.
pub const SPEC_FILE: &str = "001_1704fd641f081645.txt";

static SUITE: &[(&str, &str)] = &[
    (
        "handshake.toml",
        include_str!("../../../suites/haip/handshake.toml"),
    ),
    (
        "envelope.toml",
        include_str!("../../../suites/haip/envelope.toml"),
    ),
    (
        "sequencing.toml",
        include_str!("../../../suites/haip/sequencing.toml"),
    ),
    ("runs.toml", include_str!("../../../suites/haip/runs.toml")),
    (
        "tools.toml",
        include_str!("../../../suites/haip/tools.toml"),
    ),
    ("flow.toml", include_str!("../../../suites/haip/flow.toml")),
    (
        "media.toml",
        include_str!("../../../suites/haip/media.toml"),
    ),
    ("auth.toml", include_str!("../../../suites/haip/auth.toml")),
];

impl Protocol for Haip {
    fn id(&self) -> &'static str {
        "haip"
    }

    fn title(&self) -> &'static str {
        "HAIP v1.1.2"
    }

    fn spec_file(&self) -> &'static str {
        SPEC_FILE
    }

    fn rules(&self) -> &'static [Rule] {
        rules::RULES
    }

    fn transport(&self) -> TransportKind {
        TransportKind::WebSocket
    }

    fn token_placement(&self) -> TokenPlacement {
        TokenPlacement::Query
    }

    fn bundled_suite(&self) -> &'static [(&'static str, &'static str)] {
        SUITE
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::HaipSession::new())
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::HaipChecker::new())
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz::FuzzProfile> {
        Some(&fuzz::HaipFuzz)
    }

    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        matches!(item, crate::protocol::Observed::Event(e, _) if model::event_type(e).is_some())
    }

    /// An ERROR, or the connection's end, may answer what we sent.
    fn may_answer_input(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::protocol::Observed;
        match item {
            Observed::Event(e, _) => model::event_type(e) == Some("ERROR"),
            Observed::Closed { .. } => true,
            _ => false,
        }
    }

    /// An ERROR answering a malformed message may go out on the channel that message named
    /// (an ERROR's related_id echoing a malformed id is the checker's to excuse).
    fn broken_input_excuses(&self) -> &'static [&'static str] {
        &["HAIP-ENV-004"]
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
