//! HUMA Event Protocol v0.2.0 (`000_9be7860959b3b922.txt`): wireprobe plays the client
//! application; the target is a HUMA server reached over Socket.IO.

mod bursts;
pub mod checker;
pub mod duties;
pub mod fuzz;
pub mod fuzz_client;
pub mod rules;
pub mod scenarios;
pub mod session;
pub mod truncated;
pub mod validate;

use super::{Checker, Descriptor, Protocol, Session, TokenPlacement, TransportKind};

/// The spec file every HUMA rule cites.
pub const SPEC_FILE: &str = "000_9be7860959b3b922.txt";

/// What HUMA is.
pub static DESCRIPTOR: Descriptor = Descriptor {
    id: "huma",
    title: "HUMA Event Protocol v0.2.0",
    spec_file: SPEC_FILE,
    rules: rules::RULES,
    transports: &[TransportKind::SocketIo],
    roles: &[],
    token_placement: TokenPlacement::Query,
    suite: crate::bundled_suite!(
        "huma",
        ["validation.toml", "lifecycle.toml", "robustness.toml"]
    ),
    client_suite: crate::bundled_suite!("huma", ["client/basics.toml"]),
    errata: crate::bundled_errata!("huma"),
    http_routes: None,
    has_handshake: true,
    target_speaks_first: false,
    one_conversation: false,
    broken_input_excuses: &[],
};

/// The HUMA profile.
pub struct Huma;

impl Protocol for Huma {
    fn descriptor(&self) -> &'static Descriptor {
        &DESCRIPTOR
    }

    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(session::HumaSession::default())
    }

    fn serving_session(&self, transport: TransportKind) -> Option<Box<dyn Session>> {
        (transport == TransportKind::SocketIo)
            .then(|| Box::new(session::HumaSession::serving()) as Box<dyn Session>)
    }

    fn checker(&self) -> Box<dyn Checker> {
        Box::new(checker::HumaChecker::default())
    }

    fn client_fuzzing(
        &self,
        _transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz_client::HumaClientFuzz)
    }

    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        Some(&fuzz::HumaFuzz)
    }

    /// Socket.IO frames are not JSON, so transcripts hold them as text: any Socket.IO packet
    /// (a CONNECT reply, an event) is an answer; Engine.IO pings are not.
    fn recognises(&self, item: crate::protocol::Observed<'_>) -> bool {
        use crate::transport::socketio::packet::{parse_eio, parse_sio, EioPacket};
        let Some(text) = packet_text(&item) else {
            return false;
        };
        matches!(parse_eio(&text), Ok(EioPacket::Message(m)) if parse_sio(&m).is_ok())
    }
}

/// The text of a frame that may be a Socket.IO packet. Transcripts hold frames that are not
/// JSON as text, but a few packets are JSON numbers (a client's CONNECT `40`, a pong `3`):
/// those come back to the text they were.
pub(crate) fn packet_text<'a>(
    item: &crate::protocol::Observed<'a>,
) -> Option<std::borrow::Cow<'a, str>> {
    use crate::protocol::Observed;
    match item {
        Observed::Garbage(text) => Some(std::borrow::Cow::Borrowed(text)),
        Observed::Event(event, None) => match event.value() {
            serde_json::Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
            _ => None,
        },
        _ => None,
    }
}
