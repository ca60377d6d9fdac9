//! How wireprobe answers an AG-UI client's POSTs when it serves the agent (`--client`): each
//! POST is answered with its run's stream (the transport's), an event stream, or with
//! `--transport protobuf` length-prefixed protobuf frames when the request's `Accept` admits
//! the media type (HTTP + Protobuf › Negotiation: a producer that supports the binding "SHOULD
//! answer with it whenever the client's `Accept` admits the media type").

use super::PROTO_MEDIA_TYPE;
use crate::transport::sse_server::Responder;
use serde_json::Value;

/// The agent's answers: a stream for every POST, and the protobuf encoding of each event.
#[derive(Debug, Default)]
pub struct AguiResponder;

impl Responder for AguiResponder {
    fn sent(&self, _text: &str) {}

    /// Every POST's answer is its run's stream (a status of its own is never asked for).
    fn status(&self, _route: &str, _body: &[u8]) -> u16 {
        200
    }

    /// An event as one `ag_ui.Event` message; `None` for one the wire schema cannot carry (a
    /// type of no arm, a value of the wrong kind), which a case sends over SSE only.
    fn framed(&self, media: &str, text: &str) -> Option<Vec<u8>> {
        if media != PROTO_MEDIA_TYPE {
            return None;
        }
        let event: Value = serde_json::from_str(text).ok()?;
        super::proto::encode(&event).ok()
    }
}
