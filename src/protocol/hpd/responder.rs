//! How wireprobe answers a client's POSTs when it serves the hosted routes: as the binding
//! the framework serves does (`../shared/specs/README.md` § HPD), so a client is never judged
//! on answers no agent would give. An invalid envelope is 400 (the spec: "HTTP input treats
//! invalid event envelopes as bad requests"), an envelope on another type's route 400, a
//! response naming a request never issued 404, an input 202, a response 200. Over the
//! WebSocket an invalid frame closes the socket with 1007 ("WebSocket closes invalid event
//! frames with an invalid-payload close status").

use super::checker::{classify, Sent};
use super::events;
use super::{INPUTS_ROUTE, INTERRUPT_ROUTE, RESPONSES_ROUTE};
use crate::transport::sse_server::Responder;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Mutex;

/// Request ids remembered; past this the oldest are forgotten (their responses get 404).
const REMEMBERED: usize = 4096;

/// The hosted routes' answers, with the request ids the agent issued.
#[derive(Debug, Default)]
pub struct HpdResponder {
    issued: Mutex<HashSet<String>>,
}

impl Responder for HpdResponder {
    fn sent(&self, text: &str) {
        let Ok(event) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if let (Some((id, _)), Ok(mut issued)) = (events::request_of(&event), self.issued.lock()) {
            if issued.len() >= REMEMBERED {
                issued.clear();
            }
            issued.insert(id.to_owned());
        }
    }

    fn status(&self, route: &str, body: &[u8]) -> u16 {
        // An empty POST to the interrupt route is a plain "stop", as a button sends it.
        if route == INTERRUPT_ROUTE && body.iter().all(u8::is_ascii_whitespace) {
            return 202;
        }
        let parsed = serde_json::from_slice::<Value>(body).map_err(|_| "not JSON");
        match (classify(parsed.as_ref().map_err(|why| *why), route), route) {
            (Sent::Invalid(_), _) => 400,
            (Sent::Input | Sent::Doubtful, INPUTS_ROUTE) => 202,
            (Sent::Interrupt, INTERRUPT_ROUTE) => 202,
            (Sent::Response { id, .. }, RESPONSES_ROUTE) => {
                let known = self.issued.lock().is_ok_and(|i| i.contains(&id));
                if known {
                    200
                } else {
                    404
                }
            }
            // The framework takes a bare {text} on the inputs route.
            (Sent::Other, INPUTS_ROUTE) => 202,
            _ => 400,
        }
    }

    /// "WebSocket closes invalid event frames with an invalid-payload close status": 1007.
    fn refuses_frame(&self, text: &str) -> Option<(u16, String)> {
        let parsed = serde_json::from_str::<Value>(text).map_err(|_| "not JSON");
        match classify(parsed.as_ref().map_err(|why| *why), "") {
            Sent::Invalid(why) => Some((1007, format!("invalid event envelope: {why}"))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_are_answered_as_the_hosted_routes_answer_them() {
        let r = HpdResponder::default();
        r.sent(r#"{"version":"1.0","type":"PERMISSION_REQUEST","permissionId":"p1"}"#);
        let response = br#"{"version":"1.0","type":"PERMISSION_RESPONSE","permissionId":"p1","approved":true}"#;
        let unknown = br#"{"version":"1.0","type":"PERMISSION_RESPONSE","permissionId":"p2","approved":true}"#;
        let input = br#"{"version":"1.0","type":"USER_TEXT_INPUT","text":"hi"}"#;
        assert_eq!(r.status(RESPONSES_ROUTE, response), 200);
        assert_eq!(r.status(RESPONSES_ROUTE, unknown), 404);
        assert_eq!(r.status(INPUTS_ROUTE, response), 400);
        assert_eq!(r.status(INPUTS_ROUTE, input), 202);
        assert_eq!(r.status(INPUTS_ROUTE, br#"{"text":"hi"}"#), 202);
        assert_eq!(r.status(INPUTS_ROUTE, b"nope"), 400);
        assert_eq!(r.status(INPUTS_ROUTE, br#"{"type":"NO_SUCH"}"#), 400);
        assert_eq!(r.status(INTERRUPT_ROUTE, b""), 202);
    }
}
