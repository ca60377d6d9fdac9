//! Wireprobe's side of a HAIP session, as the client (the default) or as the server facing a
//! client under test: handshake, envelope filling, acknowledgement state.

use super::model::{self, AGENT_CHANNEL, EVENT_TYPES, HAIP_VERSION, SYSTEM_CHANNEL, USER_CHANNEL};
use super::open_work::OpenWork;
use crate::protocol::{merge, Decoded, ProtocolError, Session};
use crate::transcript::Direction;
use crate::transport::{Frame, Outgoing};
use serde_json::{json, Map, Value};
use std::time::{SystemTime, UNIX_EPOCH};

/// A `seq` value that stands for the number the previous message got (not a new one): how a
/// case sends a message that either fills the slot a rejected message left or duplicates it.
pub const REPEAT_SEQ: &str = "$repeat";

/// A `seq` value that stands for one past the next number: the next number is left out, a gap
/// the target must notice (how the fuzzer sends a message out of order).
pub const SKIP_SEQ: &str = "$skip";

/// Credit we advertise by default: large enough never to hold a target back.
const DEFAULT_CREDIT_MESSAGES: u64 = 1_000_000;
const DEFAULT_CREDIT_BYTES: u64 = 1 << 40;

/// Wireprobe's HAIP state for one session (it survives reconnects, as the spec's session does).
#[derive(Debug)]
pub struct HaipSession {
    /// The side wireprobe plays.
    plays: Direction,
    /// The session UUID: one of ours as the client; as the server, the one the client's HAI
    /// named (ours until it has).
    session_id: String,
    /// The seq the next automatically numbered message gets.
    next_seq: u64,
    /// Highest seq received from the target with no gap before it (our cumulative ack).
    delivered: Option<u64>,
    /// The channels the target has sent on, and those we paused: what `unblocking` frees.
    channels: Channels,
    /// The runs the target began on this connection and the calls we made on it that are
    /// not over yet.
    open: OpenWork,
}

/// At most this many channels are remembered (a target may name a new one in every message).
const MAX_CHANNELS: usize = 32;

/// Channel names in the order first seen, bounded by [`MAX_CHANNELS`].
#[derive(Debug, Default)]
struct Channels {
    used_by_target: Vec<String>,
    paused_by_us: Vec<String>,
    /// How many of `used_by_target` (the first ones) an `unblock` has granted credit on;
    /// `None` until one has. A channel the target starts sending on after it is granted as
    /// its first message comes (see `Session::answer`): an unblock frees the target's output
    /// for the rest of the session, not only on the channels seen by then.
    granted: std::cell::Cell<Option<usize>>,
}

/// A grant of what one `unblock` gives on `channel`.
fn grant(channel: &str) -> Value {
    json!({"type": "FLOW_UPDATE", "payload": {"channel": channel,
        "add_messages": UNBLOCK_MESSAGES, "add_bytes": UNBLOCK_BYTES}})
}

impl Channels {
    /// Remembers `channel` when it is one a message of ours may name (§Envelope's pattern).
    fn note(list: &mut Vec<String>, channel: Option<&str>) {
        if let Some(ch) = channel.filter(|c| model::is_channel(c)) {
            if list.len() < MAX_CHANNELS && !list.iter().any(|c| c == ch) {
                list.push(ch.to_owned());
            }
        }
    }
}

impl Default for HaipSession {
    fn default() -> Self {
        Self::new()
    }
}

impl HaipSession {
    /// Wireprobe as the client.
    pub fn new() -> Self {
        Self::playing(Direction::Client)
    }

    /// Wireprobe as the server a client under test connects to.
    pub fn serving() -> Self {
        Self::playing(Direction::Server)
    }

    fn playing(plays: Direction) -> Self {
        HaipSession {
            plays,
            session_id: uuid::Uuid::new_v4().to_string(),
            next_seq: 1,
            delivered: None,
            channels: Channels::default(),
            open: OpenWork::default(),
        }
    }

    /// The session UUID every envelope carries.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The full envelope `encode` sends for `event`: numbered, stamped and acknowledged,
    /// with the event's own fields over the defaults.
    pub fn envelope(&mut self, event: &Value) -> Result<Value, ProtocolError> {
        let Value::Object(fields) = event else {
            return Err(ProtocolError::InvalidEvent(
                "a sent event must be a table/object".into(),
            ));
        };
        let ty = fields.get("type").and_then(Value::as_str).unwrap_or("");
        let auto_seq = self.next_seq;
        let header = Header {
            id: uuid::Uuid::new_v4().to_string(),
            session: &self.session_id,
            seq: auto_seq,
            ack: self.delivered,
            ts: now_ms().to_string(),
        };
        let mut envelope = Value::Object(header.envelope(self.plays, ty, json!({})));
        merge(&mut envelope, event);
        if let Some(seq) = envelope.get_mut("seq") {
            if *seq == REPEAT_SEQ {
                *seq = json!(auto_seq.saturating_sub(1).max(1).to_string());
            } else if *seq == SKIP_SEQ {
                *seq = json!((auto_seq + 1).to_string());
            }
            // An explicit seq moves the counter forward only (a duplicate must not rewind it).
            match model::parse_seq(seq) {
                Some(seq) if seq >= auto_seq => self.next_seq = seq + 1,
                _ => {}
            }
        }
        if ty == "PAUSE_CHANNEL" {
            let channel = envelope.pointer("/payload/channel").and_then(Value::as_str);
            Channels::note(&mut self.channels.paused_by_us, channel);
        }
        Ok(envelope)
    }
}

/// The fields that number and stamp a message.
pub struct Header<'a> {
    pub id: String,
    pub session: &'a str,
    pub seq: u64,
    /// The highest seq delivered to us, once there is one.
    pub ack: Option<u64>,
    pub ts: String,
}

impl Header<'_> {
    /// The envelope of a `ty` message with `payload`, sent by `from` on its default channel:
    /// the fields in the order wireprobe writes them.
    pub fn envelope(self, from: Direction, ty: &str, payload: Value) -> Map<String, Value> {
        // Sized for the fields below (growing the map was 1% of fuzzing's CPU).
        let mut envelope = Map::with_capacity(8);
        envelope.insert("id".into(), Value::String(self.id));
        envelope.insert("session".into(), json!(self.session));
        envelope.insert("seq".into(), json!(self.seq.to_string()));
        if let Some(ack) = self.ack {
            envelope.insert("ack".into(), json!(ack.to_string()));
        }
        envelope.insert("ts".into(), Value::String(self.ts));
        envelope.insert("channel".into(), json!(default_channel(ty, from)));
        envelope.insert("type".into(), json!(ty));
        envelope.insert("payload".into(), payload);
        envelope
    }
}

/// Milliseconds since the Unix epoch, as HAIP's `ts` wants it.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The default channel for an event type sent by `from`: control on SYSTEM, content on USER
/// (the client's) or AGENT (the server's).
pub fn default_channel(ty: &str, from: Direction) -> &'static str {
    match (model::consumes_credit(ty), from) {
        (false, _) => SYSTEM_CHANNEL,
        (true, Direction::Client) => USER_CHANNEL,
        (true, Direction::Server) => AGENT_CHANNEL,
    }
}

impl HaipSession {
    /// `event` with its envelope filled, as the text frame that carries it.
    fn frame(&mut self, event: &Value) -> Result<Frame, ProtocolError> {
        self.framed(event).map(|(frame, _)| frame)
    }

    /// [`HaipSession::frame`], with the envelope it carries.
    fn framed(&mut self, event: &Value) -> Result<(Frame, Value), ProtocolError> {
        let envelope = self.envelope(event)?;
        if self.plays == Direction::Client {
            self.open.sent(&envelope);
        }
        serde_json::to_string(&envelope)
            .map(|text| (Frame::Text(text), envelope))
            .map_err(|e| ProtocolError::InvalidEvent(e.to_string()))
    }
}

impl Session for HaipSession {
    fn handshake(
        &mut self,
        with: Option<&Value>,
        resume: bool,
    ) -> Result<Vec<Frame>, ProtocolError> {
        let mut payload = json!({
            "haip_version": HAIP_VERSION,
            "accept_major": [1],
            "accept_events": EVENT_TYPES,
            "capabilities": {
                "binary_frames": true,
                "flow_control": {
                    "initial_credit_messages": DEFAULT_CREDIT_MESSAGES,
                    "initial_credit_bytes": DEFAULT_CREDIT_BYTES,
                }
            }
        });
        if resume {
            if let Some(last) = self.delivered {
                payload["last_rx_seq"] = json!(last.to_string());
            }
        } else {
            // A new connection's runs and calls are its own: the old one's ended with it.
            self.open = OpenWork::default();
        }
        let mut hai = json!({ "type": "HAI", "payload": payload });
        if let Some(with) = with {
            merge(&mut hai, with);
        }
        Ok(vec![self.frame(&hai)?])
    }

    fn is_handshake_reply(&self, event: &Value) -> bool {
        model::event_type(event) == Some("HAI")
    }

    /// As the server, wireprobe's HAI answers the client's.
    fn answers_handshake(&self) -> bool {
        self.plays == Direction::Server
    }

    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        self.frame(event).map(Outgoing::Frame)
    }

    fn encode_parsed(&mut self, event: &Value) -> Result<(Outgoing, Option<Value>), ProtocolError> {
        self.framed(event)
            .map(|(frame, envelope)| (Outgoing::Frame(frame), Some(envelope)))
    }

    /// A frame is one JSON event.
    fn decodes_verbatim(&self) -> bool {
        true
    }

    fn decode(&mut self, frame: &Frame) -> Decoded {
        let text = match frame {
            Frame::Text(t) => t.as_str(),
            Frame::Binary(b) => return Decoded::Binary(b.len()),
            Frame::RawText(b) => return Decoded::Garbage(String::from_utf8_lossy(b).into_owned()),
        };
        match serde_json::from_str::<Value>(text) {
            Ok(event) => {
                // Serving, the session is the one the client's HAI names (a resume names the
                // one it had); whether that HAI is well formed is the checker's to judge.
                let ty = model::event_type(&event);
                if let (Direction::Server, Some("HAI")) = (self.plays, ty) {
                    if let Some(id) = event.get("session").and_then(Value::as_str) {
                        self.session_id = id.to_owned();
                    }
                }
                // Only a message that used up credit can have run out of it.
                if ty.is_some_and(model::consumes_credit) {
                    let channel = event.get("channel").and_then(Value::as_str);
                    Channels::note(&mut self.channels.used_by_target, channel);
                }
                if let Some(seq) = event.get("seq").and_then(model::parse_seq) {
                    if seq == self.delivered.map_or(1, |d| d + 1) {
                        self.delivered = Some(seq);
                    }
                }
                if self.plays == Direction::Client {
                    self.open.received(ty, &event);
                }
                Decoded::Event(event)
            }
            Err(_) => Decoded::Garbage(text.to_owned()),
        }
    }

    /// Every run the target began on this connection has ended and every call we made on it
    /// was answered (as the client; serving, the client's work is not ours to wait for).
    fn settled(&self) -> Option<bool> {
        match self.plays {
            Direction::Client => self.open.settled(),
            Direction::Server => None,
        }
    }

    /// After an `unblock`, the first message on a channel the target had not sent on by then
    /// is answered with that channel's grant. A run that opened with one message of credit
    /// otherwise let whichever call's update came first spend it, and a scenario waiting for
    /// another call's update (cancel-tool) was not reached when the first had not come before
    /// the unblock: a replay's outcome then turned on timing.
    fn answer(&mut self, event: &Value) -> Option<Value> {
        let granted = self.channels.granted.get()?;
        let used = &self.channels.used_by_target;
        if granted >= used.len() || !model::event_type(event).is_some_and(model::consumes_credit) {
            return None;
        }
        self.channels.granted.set(Some(granted + 1));
        Some(grant(&used[granted]))
    }

    fn error_code(&self, event: &Value) -> Option<String> {
        // An ERROR without a code is still an error: the runner reports it as the wrong reason.
        (model::event_type(event) == Some("ERROR"))
            .then(|| model::error_code(event).unwrap_or("(no code)").to_owned())
    }

    fn capability(&self, reply: &Value, name: &str) -> Option<Value> {
        model::hai_capability(reply, name).cloned()
    }

    /// §Flow Control and Back-Pressure: "Send `FLOW_UPDATE` to grant more credit", "`PAUSE_CHANNEL`/
    /// `RESUME_CHANNEL` for immediate throttle": credit on every channel the target has spent
    /// some on, and every channel we paused resumed (a run may have opened with little credit,
    /// or paused a channel and never resumed it). A channel we paused gets credit too: what the
    /// target held back on it spends credit once the channel resumes, before anything new can
    /// pass (fuzzing opened with 3 messages' credit, and a scenario skipped after the resume let
    /// out only the three the pause had held).
    fn unblocking(&self) -> Vec<Value> {
        let channels = &self.channels;
        channels.granted.set(Some(channels.used_by_target.len()));
        let paused_only =
            (channels.paused_by_us.iter()).filter(|ch| !channels.used_by_target.contains(ch));
        let grants = (channels.used_by_target.iter().chain(paused_only)).map(|ch| grant(ch));
        let resumes = (self.channels.paused_by_us.iter())
            .map(|ch| json!({"type": "RESUME_CHANNEL", "payload": {"channel": ch}}));
        grants.chain(resumes).collect()
    }
}

/// What one `unblock` grants a channel: room for any scenario's answer.
const UNBLOCK_MESSAGES: u64 = 1000;
const UNBLOCK_BYTES: u64 = 1 << 24;

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(session: &mut HaipSession, event: Value) -> Value {
        match session.encode(&event) {
            Ok(Outgoing::Frame(Frame::Text(text))) => serde_json::from_str(&text).expect("JSON"),
            other => panic!("not a text frame: {other:?}"),
        }
    }

    #[test]
    fn as_the_client_it_opens_with_its_own_session_on_user_channels() {
        let mut client = HaipSession::new();
        assert!(!client.answers_handshake());
        let hai = client.handshake(None, false).expect("a HAI");
        let Frame::Text(hai) = &hai[0] else {
            panic!("text")
        };
        assert!(hai.contains(client.session_id()));
        let text = sent(&mut client, json!({"type": "TEXT_MESSAGE_START"}));
        assert_eq!(text["channel"], "USER");
        assert_eq!(text["seq"], "2");
    }

    #[test]
    fn as_the_server_it_answers_in_the_client_s_session_on_agent_channels() {
        let mut server = HaipSession::serving();
        assert!(server.answers_handshake());
        let theirs = "cec25548-5672-4190-968d-b5c4f206e96c";
        let hello = json!({
            "id": "54686bd7-47e2-4f4b-9c24-b3f5bffdffa0", "session": theirs, "seq": "1",
            "ts": "1700000000000", "channel": "SYSTEM", "type": "HAI",
            "payload": {"haip_version": "1.1.2", "accept_major": [1], "accept_events": ["HAI"]}
        });
        let decoded = server.decode(&Frame::Text(hello.to_string()));
        assert!(matches!(&decoded, Decoded::Event(e) if server.is_handshake_reply(e)));
        let hai = server.handshake(None, false).expect("a HAI");
        let Frame::Text(hai) = &hai[0] else {
            panic!("text")
        };
        let hai: Value = serde_json::from_str(hai).expect("JSON");
        assert_eq!(hai["session"], theirs);
        // The client's HAI (seq 1) is acknowledged.
        assert_eq!(hai["ack"], "1");
        let run = sent(&mut server, json!({"type": "RUN_STARTED"}));
        assert_eq!(run["channel"], "AGENT");
        assert_eq!(run["session"], theirs);
    }

    #[test]
    fn after_an_unblock_a_channel_the_target_opens_later_is_granted_at_its_first_message() {
        let mut client = HaipSession::new();
        let update =
            |channel: &str| json!({"channel": channel, "type": "TOOL_UPDATE", "payload": {}});
        let arrive = |client: &mut HaipSession, e: Value| {
            client.decode(&Frame::Text(e.to_string()));
            client.answer(&e)
        };
        // Before any unblock, nothing is granted by itself.
        assert_eq!(arrive(&mut client, update("USER")), None);
        assert_eq!(client.unblocking().len(), 1);
        // A channel seen before the unblock was granted by it; AGENT is new: granted once.
        assert_eq!(arrive(&mut client, update("USER")), None);
        let granted = arrive(&mut client, update("AGENT")).expect("a grant");
        assert_eq!(granted["type"], "FLOW_UPDATE");
        assert_eq!(granted["payload"]["channel"], "AGENT");
        assert_eq!(arrive(&mut client, update("AGENT")), None);
        // A control message spends no credit and opens nothing.
        let pong = json!({"channel": "SYSTEM", "type": "PONG", "payload": {}});
        assert_eq!(arrive(&mut client, pong), None);
    }

    #[test]
    fn unblocking_frees_the_channels_the_target_spent_credit_on_and_those_we_paused() {
        let mut client = HaipSession::new();
        assert!(
            client.unblocking().is_empty(),
            "nothing seen, nothing to free"
        );
        let from_target = |channel: &str, ty: &str| {
            Frame::Text(json!({"channel": channel, "type": ty, "payload": {}}).to_string())
        };
        for (channel, ty) in [
            ("talk", "TEXT_MESSAGE_PART"),
            ("talk", "TEXT_MESSAGE_END"),
            // Control messages spend no credit; a name no message of ours may carry is kept out.
            ("SYSTEM", "PONG"),
            ("not a channel!", "TEXT_MESSAGE_PART"),
        ] {
            client.decode(&from_target(channel, ty));
        }
        for i in 0..2 * MAX_CHANNELS {
            client.decode(&from_target(&format!("c{i}"), "TOOL_UPDATE"));
        }
        sent(
            &mut client,
            json!({"type": "PAUSE_CHANNEL", "payload": {"channel": "mic"}}),
        );
        let out = client.unblocking();
        let named = |ty: &str| -> Vec<&str> {
            (out.iter().filter(|e| e["type"] == ty))
                .filter_map(|e| e.pointer("/payload/channel")?.as_str())
                .collect()
        };
        let granted = named("FLOW_UPDATE");
        assert_eq!(
            granted.len(),
            MAX_CHANNELS + 1,
            "bounded, and the paused one"
        );
        assert_eq!(granted[0], "talk");
        assert_eq!(
            granted.last(),
            Some(&"mic"),
            "a paused channel gets credit too"
        );
        assert!(!granted.contains(&"SYSTEM") && !granted.contains(&"not a channel!"));
        assert_eq!(named("RESUME_CHANNEL"), ["mic"]);
    }

    #[test]
    fn a_channel_paused_before_the_target_used_it_gets_credit_as_it_resumes() {
        let mut client = HaipSession::new();
        sent(
            &mut client,
            json!({"type": "PAUSE_CHANNEL", "payload": {"channel": "AGENT"}}),
        );
        let out = client.unblocking();
        let types: Vec<(&str, &str)> = out
            .iter()
            .filter_map(|e| {
                Some((
                    e["type"].as_str()?,
                    e.pointer("/payload/channel")?.as_str()?,
                ))
            })
            .collect();
        assert_eq!(
            types,
            [("FLOW_UPDATE", "AGENT"), ("RESUME_CHANNEL", "AGENT")]
        );
    }

    #[test]
    fn the_envelope_it_hands_the_transcript_is_the_frame_s_json() {
        let mut client = HaipSession::new();
        let event = json!({"type": "TEXT_MESSAGE_PART", "seq": SKIP_SEQ, "x": [1.5, -2, "é\u{1F600}", null],
            "payload": {"message_id": crate::protocol::OMIT, "text": "a \"quoted\" ${not} \\ text"}});
        let (out, parsed) = client.encode_parsed(&event).expect("encodes");
        let Outgoing::Frame(Frame::Text(text)) = out else {
            panic!("a text frame")
        };
        let back: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(parsed, Some(back));
    }

    /// As the client it is settled once every run the target began on this connection has
    /// ended; a new connection starts with none; serving, it cannot tell.
    #[test]
    fn settled_once_every_run_begun_has_ended() {
        let mut s = HaipSession::new();
        let take = |s: &mut HaipSession, ty: &str, run: &str| {
            let event = json!({"type": ty, "run_id": run, "payload": {}});
            s.decode(&Frame::Text(event.to_string()));
        };
        assert_eq!(s.settled(), Some(true), "nothing begun");
        take(&mut s, "RUN_STARTED", "r1");
        take(&mut s, "RUN_STARTED", "r2");
        take(&mut s, "TEXT_MESSAGE_PART", "r1");
        take(&mut s, "RUN_FINISHED", "r1");
        assert_eq!(s.settled(), Some(false), "r2 runs");
        take(&mut s, "RUN_ERROR", "r2");
        assert_eq!(s.settled(), Some(true));
        take(&mut s, "RUN_STARTED", "r3");
        s.handshake(None, false).expect("a handshake");
        assert_eq!(
            s.settled(),
            Some(true),
            "a new connection's runs are its own"
        );
        assert_eq!(HaipSession::serving().settled(), None);
    }
}
