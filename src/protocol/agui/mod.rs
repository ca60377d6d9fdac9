//! AG-UI, the Agent–User Interaction protocol (specification 1.1, kept verbatim in
//! `suites/agui/spec/`): a client POSTs a `RunAgentInput` to the agent's endpoint and the
//! answer is the run's stream of events — Server-Sent Events carrying JSON, or length-prefixed
//! protobuf frames. wireprobe plays the client and judges the agent, or serves the agent and
//! judges a client (`--client`).

pub mod checker;
#[cfg(test)]
mod checker_tests;
pub mod closed_sets;
pub mod consumer;
pub mod conversation;
pub mod events;
pub mod fuzz;
pub mod fuzz_client;
pub mod http;
pub mod identity;
pub mod lifecycle;
pub mod patches;
pub mod proto;
pub mod responder;
pub mod rules;
pub mod schema;
pub mod session;
pub mod steps;
pub mod streams;
pub mod subagents;
pub mod tools;
pub mod validate;

use super::{
    Checker, Descriptor, HttpRoutes, Observed, Protocol, Session, TokenPlacement, TransportKind,
};
use serde_json::Value;

/// The key every AG-UI rule's source names (the specification's pages under
/// `suites/agui/spec/1.1/`).
pub const SPEC_FILE: &str = "ag-ui-1.1";

/// The protobuf binding's media type (HTTP + Protobuf › Negotiation).
pub const PROTO_MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";
/// What wireprobe's requests accept: SSE only, named explicitly (a wildcard admits protobuf).
pub const ACCEPT_SSE: &str = "text/event-stream";
/// What wireprobe's requests accept with `--encoding proto`.
pub const ACCEPT_PROTO: &str = "application/vnd.ag-ui.event+proto, text/event-stream";

/// What AG-UI is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "agui",
    title: "AG-UI (Agent–User Interaction Protocol)",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::Sse, TransportKind::Protobuf],
    roles: &[],
    // AG-UI defines no credential; an HTTP deployment reads the Authorization header.
    token_placement: TokenPlacement::Header,
    suite: crate::bundled_suite!("agui", ["runs.toml", "input.toml", "flows.toml"]),
    client_suite: crate::bundled_suite!("agui", ["client/runs.toml"]),
    errata: crate::bundled_errata!("agui"),
    http_routes: Some(HttpRoutes {
        stream: None,
        post: "",
        posts: &[""],
        ws: "",
        framed: &[PROTO_MEDIA_TYPE],
    }),
    // Each exchange is one POST and its answer: there is no handshake.
    has_handshake: false,
    target_speaks_first: false,
    // Every case runs its own thread: an agent serves each POST on its own.
    one_conversation: false,
    // The checker judges what answers broken input by the rules about it alone.
    broken_input_excuses: &[],
};

/// The AG-UI profile.
pub struct Agui;

impl Protocol for Agui {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    fn session(&self, transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::AguiSession::new(
            transport == TransportKind::Protobuf,
        ))
    }

    /// The agent's side: each POST answered with its run's stream, SSE, or protobuf frames
    /// over the protobuf binding when the request admits them.
    fn serving_session(&self, _transport: TransportKind) -> Option<Box<dyn Session>> {
        Some(Box::new(session::AguiSession::serving()))
    }

    fn responder(&self) -> Option<std::sync::Arc<dyn crate::transport::sse_server::Responder>> {
        Some(std::sync::Arc::new(responder::AguiResponder))
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::AguiChecker::default())
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::AguiFuzz)
    }

    /// Over SSE: what a client must survive (an unknown event type, an SSE comment) has no
    /// protobuf encoding.
    fn client_fuzzing(
        &self,
        transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        (transport == TransportKind::Sse).then_some(&fuzz_client::AguiClientFuzz as _)
    }

    /// An event with a string type, or an answer to the POST that is the binding's own: a
    /// success, a refusal of the input (4xx: the path rejected input takes), or the endpoint
    /// failing on it (500: judged by the case that sent it), but not the statuses that say the
    /// URL is no agent endpoint (404, 405) or that nothing answered there (the other 5xx: a
    /// gateway's, an unavailable service's); from a client, an input POSTed as a JSON object.
    fn recognises(&self, item: Observed<'_>) -> bool {
        match item {
            Observed::Event(e, _) => e.value().get("type").is_some_and(Value::is_string),
            Observed::Post {
                body: crate::transport::Body::Json(input),
                ..
            } => input.is_object(),
            Observed::Http(answer) => answer.status <= 500 && !matches!(answer.status, 404 | 405),
            _ => false,
        }
    }

    /// An HTTP status, the end of the answer, or the connection's.
    fn may_answer_input(&self, item: Observed<'_>) -> bool {
        matches!(
            item,
            Observed::Http(_) | Observed::AnswerEnded { .. } | Observed::Closed { .. }
        )
    }
}
