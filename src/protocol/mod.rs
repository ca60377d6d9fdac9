//! Protocol profiles: one module per protocol, each behind the [`Protocol`] trait.
//!
//! A profile owns its event model, rule catalogue, validator, lifecycle checker and the
//! client-side session logic (envelope filling, handshakes). It never opens a socket: the
//! runner moves the frames a profile produces over the transport the profile names.

pub mod agui;
pub mod descriptor;
pub mod haip;
pub mod hpd;
pub mod huma;
pub mod json;
pub mod nuum;
pub mod recent;
pub mod uae;

pub use descriptor::Descriptor;

use crate::rules::Violation;
use crate::transcript::Direction;
use crate::transport::{Body, Frame, HttpAnswer, Outgoing, SseMeta, StreamFrom};
use serde_json::Value;
use std::sync::Arc;

pub use crate::transport::TransportKind;

/// The routes of a protocol bound to SSE + HTTP, under the target's URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpRoutes {
    /// The event stream (`GET`); `None` when the binding keeps no standing stream and each
    /// POST's answer is the stream (AG-UI).
    pub stream: Option<&'static str>,
    /// Where a frame goes that does not name its route (`POST`).
    pub post: &'static str,
    /// Every route a client POSTs to (what wireprobe serves when it judges a client).
    pub posts: &'static [&'static str],
    /// The WebSocket a client may open instead of the stream (`GET`, upgraded).
    pub ws: &'static str,
    /// Media types of answers whose bodies are 4-byte length-prefixed binary frames.
    pub framed: &'static [&'static str],
}

/// Where a bearer token goes on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenPlacement {
    /// `?token=...` on the URL.
    Query,
    /// An entry of `Sec-WebSocket-Protocol`.
    Subprotocol,
    /// `Authorization: Bearer ...`.
    Header,
}

/// A protocol profile: its [`Descriptor`] (every constant fact) and the behaviour that
/// differs from protocol to protocol.
pub trait Protocol: Send + Sync + 'static {
    /// What the protocol is: id, title, spec, transports, roles, suite, rules.
    fn descriptor(&self) -> &'static Descriptor;
    /// The URL a connection over `transport` opens, given the user's `--target` (a protocol
    /// with fixed routes appends them).
    fn endpoint(&self, transport: TransportKind, target: &str) -> String {
        let _ = transport;
        target.to_owned()
    }
    /// A fresh client-side session over `transport` (it spans reconnects within one case).
    fn session(&self, transport: TransportKind) -> Box<dyn Session>;
    /// A fresh server-side session over `transport`, for judging a client; `None` while the
    /// protocol cannot serve one.
    fn serving_session(&self, transport: TransportKind) -> Option<Box<dyn Session>> {
        let _ = transport;
        None
    }
    /// How wireprobe answers a client's POSTs when it serves the SSE + HTTP binding; `None`
    /// while the protocol has none to serve.
    fn responder(&self) -> Option<std::sync::Arc<dyn crate::transport::sse_server::Responder>> {
        None
    }
    /// A fresh transcript checker (validator plus lifecycle).
    fn checker(&self) -> Box<dyn Checker>;
    /// True when something a target sent is recognisably a message of this protocol,
    /// well-formed or not; a target that never sends one has not answered at all.
    fn recognises(&self, item: Observed<'_>) -> bool;
    /// True when `item`, from the target, may be its answer to input of ours (an error, a
    /// refusal, an HTTP status, the connection's end): see [`Descriptor::broken_input_excuses`].
    fn may_answer_input(&self, item: Observed<'_>) -> bool {
        matches!(item, Observed::Closed { .. })
    }
    /// The names of the tools `event` advertises, when it is the protocol's tool list.
    fn advertised_tools(&self, event: &Value) -> Option<Vec<String>> {
        let _ = event;
        None
    }
    /// What the fuzzer needs of this protocol, when it can be fuzzed.
    fn fuzzing(&self) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        None
    }
    /// What the fuzzer needs to judge a client served over `transport` (`fuzz --client`):
    /// server events, the adversarial ones a client must keep working through, and a probe it
    /// answers.
    fn client_fuzzing(
        &self,
        transport: TransportKind,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        let _ = transport;
        None
    }
    /// What the fuzzer needs against a target playing `role` (`None`: the default role).
    fn fuzzing_as(
        &self,
        role: Option<&str>,
    ) -> Option<&'static dyn crate::fuzz_profile::FuzzProfile> {
        let _ = role;
        self.fuzzing()
    }
}

/// Why the profile could not produce a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("cannot build the event: {0}")]
    InvalidEvent(String),
}

/// A received frame as the profile understands it.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A protocol event (JSON).
    Event(Value),
    /// A binary frame (payload of a two-frame message, or garbage).
    Binary(usize),
    /// Text that is not an event of this protocol.
    Garbage(String),
    /// A transport-level packet (an Engine.IO ping, say): kept in the transcript, never
    /// matched by a step.
    Control,
}

impl Decoded {
    /// A frame of a protocol whose events are JSON text frames: the parsed event, text that is
    /// not JSON as garbage, a binary frame by its length.
    pub fn json_frame(frame: &Frame) -> Decoded {
        match frame {
            Frame::Text(text) => serde_json::from_str(text)
                .map_or_else(|_| Decoded::Garbage(text.clone()), Decoded::Event),
            Frame::Binary(b) => Decoded::Binary(b.len()),
            Frame::RawText(b) => Decoded::Garbage(String::from_utf8_lossy(b).into_owned()),
        }
    }
}

/// Client-side state of one logical session with the target.
pub trait Session: Send {
    /// Frames that open a connection (the handshake), with `with` deep-merged into the
    /// protocol's default handshake payload. `resume` is true on a reconnect. By default none:
    /// a protocol without a handshake (HPD, UAE, AG-UI) is ready as soon as it connects.
    fn handshake(
        &mut self,
        with: Option<&Value>,
        resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        let _ = (with, resume);
        Ok(Vec::new())
    }
    /// True when `event` answers the handshake (or, for a session that answers the other
    /// side's handshake, opens it). By default nothing does (no handshake).
    fn is_handshake_reply(&self, event: &Value) -> bool {
        let _ = event;
        false
    }
    /// True when the other side opens the handshake and this session answers it (a server
    /// waiting for the client's hello): the handshake frames go out after its opening arrives.
    fn answers_handshake(&self) -> bool {
        false
    }
    /// Fills the envelope of an outgoing event (ids, sequence numbers, timestamps) unless the
    /// event sets those fields itself, and encodes it (as a frame, or over SSE + HTTP as the
    /// POST that carries it).
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError>;
    /// [`Session::encode`], with the JSON the frame carries when the frame is exactly that
    /// JSON's text, so the transcript keeps it without parsing it back (by default without).
    fn encode_parsed(&mut self, event: &Value) -> Result<(Outgoing, Option<Value>), ProtocolError> {
        self.encode(event).map(|out| (out, None))
    }
    /// Decodes a received frame, updating acknowledgement state.
    fn decode(&mut self, frame: &Frame) -> Decoded;
    /// [`Session::decode`] for a text whose JSON the caller has already parsed (`event`, as
    /// written), such as an SSE event's data the transcript keeps: `None` when the session
    /// reads it exactly as parsed (its state updated), so the caller shares the one tree; else
    /// what the session makes of it (by default, [`Session::decode`] of the text).
    fn decode_shared(&mut self, text: &str, event: &std::sync::Arc<Value>) -> Option<Decoded> {
        let _ = event;
        Some(self.decode(&Frame::Text(text.to_owned())))
    }
    /// True when an event decoded from a text frame is exactly that frame's JSON text parsed,
    /// so the transcript can keep it instead of parsing the frame a second time.
    fn decodes_verbatim(&self) -> bool {
        false
    }
    /// True when an event too large to keep whole in the transcript may be kept with its long
    /// strings cut ([`crate::transcript::condensed`]): the protocol's rules never read them.
    fn condenses(&self) -> bool {
        false
    }
    /// What wireprobe answers to `event` by itself, playing a party that must answer it (UAE:
    /// a `tool.result` for each `tool.call` an agent makes): the event to send, before the
    /// envelope is filled. Cases with `auto_answer = false` answer in their steps instead.
    fn answer(&mut self, event: &Value) -> Option<Value> {
        let _ = event;
        None
    }
    /// The error code when `event` is the protocol's error event.
    fn error_code(&self, event: &Value) -> Option<String>;
    /// The error code when an HTTP answer to a POST refuses it (SSE + HTTP): by default its
    /// status, when it is 400 or more.
    fn http_error_code(&self, answer: &HttpAnswer) -> Option<String> {
        (answer.status >= 400).then(|| answer.status.to_string())
    }
    /// A capability the target declared in its handshake reply.
    fn capability(&self, reply: &Value, name: &str) -> Option<Value>;

    /// Events that release what this session's own messages may be holding back of the other
    /// side's output, by what the traffic so far shows (HAIP: credit on every channel the
    /// target has sent on, each channel we paused resumed). An `unblock` step sends them before
    /// a scenario waits for the target to act. By default none (no flow control).
    fn unblocking(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The target's answer to a POST this side made (SSE + HTTP), for a session that keeps
    /// count of what the target took in.
    fn answered(&mut self, answer: &HttpAnswer) {
        let _ = answer;
    }

    /// True when the target owes nothing more for what it took in, as far as the protocol's
    /// structure shows (HPD: every input it accepted has had its turn, and every turn has
    /// ended); `None` when the protocol cannot tell. A `wait` with `settled` ends on it.
    fn settled(&self) -> Option<bool> {
        None
    }

    /// True when everything the target owes for an input comes in the transport's own answer
    /// to it (AG-UI: a run's events stream in the answer to its POST): once every answer has
    /// come whole, a `wait` with `settled` ends.
    fn answers_in_reply(&self) -> bool {
        false
    }
}

/// A JSON message as a checker sees it: the transcript's own (shared, so a checker that must
/// remember it keeps a count on it, not a copy of the tree), or one a caller parsed for a
/// single look (`check` reading a capture line by line, where sharing would cost an
/// allocation per event that nothing keeps).
#[derive(Debug, Clone, Copy)]
pub enum EventRef<'a> {
    Shared(&'a Arc<Value>),
    Borrowed(&'a Value),
}

impl<'a> EventRef<'a> {
    /// The message, for as long as what it was borrowed from.
    pub fn value(self) -> &'a Value {
        match self {
            EventRef::Shared(event) => event,
            EventRef::Borrowed(event) => event,
        }
    }

    /// The message to keep: the transcript's own, or a copy of a borrowed one.
    pub fn kept(self) -> Arc<Value> {
        match self {
            EventRef::Shared(event) => Arc::clone(event),
            EventRef::Borrowed(event) => Arc::new(event.clone()),
        }
    }
}

impl<'a> From<&'a Value> for EventRef<'a> {
    fn from(event: &'a Value) -> Self {
        EventRef::Borrowed(event)
    }
}

impl<'a> From<&'a Arc<Value>> for EventRef<'a> {
    fn from(event: &'a Arc<Value>) -> Self {
        EventRef::Shared(event)
    }
}

/// One thing a checker observes in a transcript.
#[derive(Debug, Clone, Copy)]
pub enum Observed<'a> {
    /// A new connection opened (to this URL, when the transcript says).
    Connect(&'a str),
    /// A JSON message, with the SSE fields it came with (SSE + HTTP).
    Event(EventRef<'a>, Option<&'a SseMeta>),
    Binary(usize),
    /// A text frame or line that is not JSON: a framing the protocol parses itself (a
    /// Socket.IO packet) or garbage.
    Garbage(&'a str),
    /// A POST wireprobe made (SSE + HTTP).
    Post {
        path: &'a str,
        body: &'a Body,
        /// The request headers it set besides the run's (an `Accept`).
        headers: &'a [(String, String)],
    },
    /// The target's answer to a POST.
    Http(&'a HttpAnswer),
    /// The event stream was reopened from here.
    StreamOpened(&'a StreamFrom),
    /// The event stream was dropped on purpose (by the side it is recorded from).
    StreamDropped,
    /// The body of an answer that was a stream of its own ended: cleanly (`error` is `None`),
    /// or broken.
    AnswerEnded {
        error: Option<&'a str>,
    },
    /// A framing anomaly the transport reported (a blank line, an over-long line).
    Notice(&'a str),
    /// Something kept for the record only (a stderr line): never judged.
    Aside,
    /// The connection ended (with this WebSocket close code, when it had one).
    Closed {
        code: Option<u16>,
    },
    /// A target that speaks first said nothing of the protocol within `waited_ms` of starting
    /// (see [`Descriptor::target_speaks_first`]).
    /// A client handed a token presented it here (`query`, `subprotocol`, `header`), or not.
    TokenPresented(Option<&'a str>),
    NoGreeting {
        waited_ms: u64,
    },
}

/// Validator plus lifecycle state machine over a whole transcript.
pub trait Checker: Send {
    /// Checks one observation made `at_ms` into the transcript; violations are blamed on `from`.
    fn observe(
        &mut self,
        from: Direction,
        at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    );

    /// Checks one event given as raw JSON text without building a `serde_json::Value`, when the
    /// profile can be sure of it; `false` means "not handled", and the caller parses the text
    /// and calls [`Checker::observe`]. The default handles nothing.
    fn observe_raw(
        &mut self,
        from: Direction,
        at_ms: u64,
        raw: &str,
        out: &mut Vec<Violation>,
    ) -> bool {
        let _ = (from, at_ms, raw, out);
        false
    }

    /// After a client item: true when the checker found it broken in a way it reports as no
    /// violation (a frame it cannot read, a session not ours, a request it must refuse). A
    /// must-level violation of the client's item makes it broken too, without this. A checker
    /// takes nothing from broken input that changes what it expects of the target, beyond
    /// what its rules about broken input expect.
    fn input_broken(&self) -> bool {
        false
    }

    /// After the last item: the rules this checker could not judge on what it was shown (a
    /// capture without the input it answers, a stream that stops before its end). The default:
    /// every rule was judged.
    fn unjudged(&self) -> Vec<crate::rules::Unjudged> {
        Vec::new()
    }

    /// Moves into `into` the rules the last observation exercised (see
    /// [`crate::rules::Exercised`]); the judge asks after each one. A rule broken there counts
    /// without being named here. The default names none.
    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        let _ = into;
    }
}

/// The transport a run over `p` takes when none is chosen, for a protocol whose targets are
/// either a process or a server (uae): the one the target's form says (`is_process`: stdio).
/// `None` for every other protocol: a run covers each of its transports.
pub fn transport_of_form(p: &dyn Protocol, is_process: bool) -> Option<TransportKind> {
    let kinds = p.transports();
    let mixed = kinds.len() > 1 && kinds.contains(&TransportKind::Stdio);
    match (mixed, is_process) {
        (false, _) => None,
        (true, true) => Some(TransportKind::Stdio),
        (true, false) => Some(p.transport()),
    }
}

/// Every protocol wireprobe knows.
pub fn all() -> &'static [&'static dyn Protocol] {
    static ALL: &[&dyn Protocol] = &[
        &agui::Agui,
        &haip::Haip,
        &hpd::Hpd,
        &huma::Huma,
        &nuum::Nuum,
        &uae::Uae,
    ];
    ALL
}

/// The protocol with this id.
pub fn get(id: &str) -> Option<&'static dyn Protocol> {
    all().iter().copied().find(|p| p.id() == id)
}

/// The string that, in a patch, removes a field (TOML has no `null`).
pub const OMIT: &str = "$omit";

/// Sets `key` of an event a session fills to `default` unless the event has it; `"$omit"`
/// leaves it out (a case sending what the session would otherwise complete).
pub fn fill(m: &mut serde_json::Map<String, Value>, key: &str, default: impl FnOnce() -> Value) {
    match m.get(key) {
        None => {
            m.insert(key.to_owned(), default());
        }
        Some(v) if v.as_str() == Some(OMIT) => {
            m.remove(key);
        }
        Some(_) => {}
    }
}

/// Deep-merges `patch` into `base`: objects merge key by key, the string `"$omit"` removes a
/// key, anything else replaces.
pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        // Onto nothing, a patch with nothing to omit is itself: one copy of the whole map
        // rather than a key at a time.
        (Value::Object(b), Value::Object(p))
            if b.is_empty() && !p.values().any(|v| v.as_str() == Some(OMIT)) =>
        {
            b.clone_from(p)
        }
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.as_str() == Some(OMIT) {
                    b.remove(k);
                } else if let Some(slot) = b.get_mut(k) {
                    merge(slot, v);
                } else {
                    // Onto nothing, a patch is itself (omissions and all, as merging it onto
                    // null made it): no key copied to look up one that is not there.
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_merge_patches_key_by_key_and_omits_what_it_names() {
        let mut base = json!({"id": "a", "type": "X", "payload": {"keep": 1, "drop": 2}, "n": 1});
        let patch = json!({"type": "Y", "payload": {"drop": OMIT, "add": [1]}, "n": {"m": 2},
            "new": {"inner": OMIT}, "id": OMIT});
        merge(&mut base, &patch);
        // A new key comes last, as it was written (an omission inside it is not applied:
        // there was nothing there to remove); a removed one takes the last key's place.
        assert_eq!(
            serde_json::to_string(&base).expect("serializes"),
            r#"{"new":{"inner":"$omit"},"type":"Y","payload":{"keep":1,"add":[1]},"n":{"m":2}}"#
        );
        let mut empty = json!({});
        merge(&mut empty, &json!({"b": 1, "a": {"c": 2}}));
        assert_eq!(empty.to_string(), r#"{"b":1,"a":{"c":2}}"#);
    }
}
