//! HPD Agent events (`004_194452bd36a9fc7f.txt`): live event envelopes from a hosted agent,
//! over Server-Sent Events with HTTP POSTs up, or over a WebSocket carrying envelopes both
//! ways. wireprobe plays the client, or serves the hosted routes to judge one (`--client`).

pub mod checker;
pub mod duties;
pub mod events;
pub mod fuzz;
pub mod fuzz_client;
pub mod lifecycle;
pub mod responder;
pub mod rules;
pub mod scenarios;
pub mod session;
pub mod stream;
pub mod validate;

use super::{Checker, Descriptor, HttpRoutes, Protocol, Session, TokenPlacement, TransportKind};
use serde_json::Value;

/// The spec file every HPD rule cites.
pub const SPEC_FILE: &str = "004_194452bd36a9fc7f.txt";

/// The event stream's route under the target's prefix.
pub const STREAM_ROUTE: &str = "/events/live";
/// Where inputs go.
pub const INPUTS_ROUTE: &str = "/inputs";
/// Where response events go.
pub const RESPONSES_ROUTE: &str = "/responses";
/// Where an interruption request goes.
pub const INTERRUPT_ROUTE: &str = "/interrupt";
/// The WebSocket's route under the target's prefix.
pub const WS_ROUTE: &str = "/ws";

/// What HPD is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "hpd",
    title: "HPD Agent events",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::Sse, TransportKind::WebSocket],
    roles: &[],
    // HPD names no authentication; a deployment that wants a token reads the header.
    token_placement: TokenPlacement::Header,
    suite: crate::bundled_suite!(
        "hpd",
        [
            "envelope.toml",
            "turns.toml",
            "interactive.toml",
            "input.toml",
            "stream.toml"
        ]
    ),
    client_suite: crate::bundled_suite!("hpd", ["client/basics.toml"]),
    errata: crate::bundled_errata!("hpd"),
    http_routes: Some(HttpRoutes {
        stream: Some(STREAM_ROUTE),
        post: INPUTS_ROUTE,
        posts: &[INPUTS_ROUTE, RESPONSES_ROUTE, INTERRUPT_ROUTE],
        ws: WS_ROUTE,
        framed: &[],
    }),
    // A client subscribes and posts: there is no handshake.
    has_handshake: false,
    target_speaks_first: false,
    // A hosted agent is one conversation: every client sees every event.
    one_conversation: true,
    broken_input_excuses: &[],
};

/// The HPD profile.
pub struct Hpd;

impl Protocol for Hpd {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    /// `http://host:port/prefix` is where the routes live; the WebSocket is `ws://…/prefix/ws`.
    fn endpoint(&self, transport: TransportKind, target: &str) -> String {
        let base = target.trim_end_matches('/');
        match transport {
            TransportKind::WebSocket => {
                let ws = match base.split_once("://") {
                    Some(("https", rest)) => format!("wss://{rest}"),
                    Some(("http", rest)) => format!("ws://{rest}"),
                    _ => base.to_owned(),
                };
                format!("{ws}{WS_ROUTE}")
            }
            _ => base.to_owned(),
        }
    }

    fn session(&self, transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::HpdSession::new(transport))
    }

    fn serving_session(&self, transport: TransportKind) -> Option<Box<dyn Session>> {
        Some(Box::new(session::HpdSession::serving(transport)))
    }

    fn responder(&self) -> Option<std::sync::Arc<dyn crate::transport::sse_server::Responder>> {
        Some(std::sync::Arc::new(responder::HpdResponder::default()))
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::HpdChecker::default())
    }

    fn client_fuzzing(
        &self,
        _transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz_client::HpdClientFuzz)
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::HpdFuzz)
    }

    /// An envelope with a string type, sent as an event or POSTed (what a POST answers is
    /// HTTP, not an HPD event), or the event stream opened (a client's subscription).
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::protocol::Observed;
        let typed = |e: &Value| e.get("type").is_some_and(Value::is_string);
        match item {
            Observed::Event(e, _) => typed(e.value()),
            Observed::Post {
                body: crate::transport::Body::Json(e),
                ..
            } => typed(e),
            Observed::StreamOpened(_) => true,
            _ => false,
        }
    }
}
