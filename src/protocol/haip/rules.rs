//! The HAIP rule catalogue: every normative statement of the spec, with its source.
//!
//! Levels follow the spec's words. Imperatives in the spec's rule lists ("Connection Rules",
//! "Sequencing and Replay") are read as MUST; exact timings are SHOULD; statements that
//! cannot be observed on the wire are `info`. `suites/haip/ERRATA.md` explains each reading.

use crate::rules::{Level::*, Rule};

macro_rules! src {
    ($section:literal) => {
        concat!("001_1704fd641f081645.txt §", $section)
    };
}

macro_rules! rule {
    ($id:literal, $level:expr, $section:literal, $text:literal) => {
        Rule {
            id: $id,
            level: $level,
            text: $text,
            source: src!($section),
        }
    };
}

pub static RULES: &[Rule] = &[
    // Handshake and versions.
    rule!("HAIP-HS-001", Must, "HAIP Handshake Requirements",
        "The first message each side sends on a connection is HAI (a receiver refusing the handshake may answer with ERROR and close instead)."),
    rule!("HAIP-HS-002", Must, "HAIP Handshake Requirements",
        "A HAI payload includes haip_version, accept_major and accept_events, typed as the schema gives (accept_events lists catalogue event types)."),
    rule!("HAIP-VER-001", Must, "HAIP Handshake Requirements",
        "When no MAJOR version is shared, the receiver sends ERROR{code: VERSION_INCOMPATIBLE} and then aborts the connection (Connection Rules 1)."),
    rule!("HAIP-VER-002", Must, "HAIP Handshake Requirements",
        "A side never sends an event type absent from the peer's accept_events (Connection Rules 2)."),
    rule!("HAIP-VER-003", Info, "HAIP Handshake Requirements",
        "The session uses the highest MINOR both sides support within the agreed MAJOR (Connection Rules 3); the negotiated version is not on the wire, so both sides' haip_version are recorded."),
    rule!("HAIP-VER-004", Must, "Semantic Version Triplet",
        "haip_version is a MAJOR.MINOR.PATCH triplet of decimal numbers."),
    rule!("HAIP-VER-005", Info, "Versioning and Extensibility",
        "Receivers MUST accept deprecated items for one MAJOR cycle; v1.1.2 deprecates nothing, so there is nothing to send that exercises it."),
    // Envelope.
    rule!("HAIP-ENV-001", Must, "Message Envelope",
        "Every message carries id, session, seq, ts, channel, type and an object payload."),
    rule!("HAIP-ENV-002", Must, "JSON-Schema (draft-07)",
        "id, session and run_id are UUIDs matching the schema's pattern."),
    rule!("HAIP-ENV-003", Must, "Message Envelope",
        "seq, ack and ts are decimal strings of 1 to 20 digits."),
    rule!("HAIP-ENV-004", Must, "Message Envelope",
        "channel matches ^[A-Za-z0-9_\\-]{1,128}$ and thread_id is a string of at most 128 characters."),
    rule!("HAIP-ENV-005", Should, "JSON-Schema (draft-07)",
        "Messages carry no properties outside the schema (envelope and payloads are additionalProperties: false); a receiver may ignore unknown fields when crit is not true."),
    rule!("HAIP-ENV-006", Must, "Event Catalogue",
        "type is one of the event types of the catalogue."),
    rule!("HAIP-ENV-007", Must, "Versioning and Extensibility",
        "pv is an integer from 0 to 255, crit a boolean, bin_len a non-negative integer and bin_mime a string."),
    rule!("HAIP-ENV-008", Must, "Versioning and Extensibility",
        "A message with crit: true carrying a field the receiver does not know is answered with ERROR{code: UNSUPPORTED_TYPE}."),
    rule!("HAIP-ENV-009", Must, "JSON-Schema (draft-07)",
        "PING, PONG and REPLAY_REQUEST payloads match the schema (nonce a string; from_seq required; seqs decimal strings)."),
    // Media framing.
    rule!("HAIP-MEDIA-001", Must, "Transport Framing and Media Encoding",
        "In binary mode the JSON envelope carries bin_len, does not contain data, and is followed by one binary frame of exactly bin_len bytes."),
    rule!("HAIP-MEDIA-002", Must, "Transport Framing and Media Encoding",
        "In Base64 mode payload.data holds Base64-encoded bytes and bin_len/bin_mime are omitted."),
    rule!("HAIP-MEDIA-003", Should, "Transport Framing and Media Encoding",
        "The two-frame binary mode is used only towards a peer whose HAI advertised binary_frames."),
    rule!("HAIP-MEDIA-004", Must, "JSON-Schema (draft-07)",
        "AUDIO_CHUNK payloads carry a UUID message_id and a mime string; duration_ms is a decimal string."),
    // Sequencing and replay.
    rule!("HAIP-SEQ-001", Must, "Sequencing and Replay",
        "seq starts at \"1\" in a new session and increases by one with every new message a side sends (a resent message keeps its seq)."),
    rule!("HAIP-SEQ-002", Must, "Sequencing and Replay",
        "ack is cumulative: it never decreases and never exceeds the highest seq the peer has sent."),
    rule!("HAIP-SEQ-003", Must, "Sequencing and Replay",
        "When a gap appears in the peer's seq, the receiver waits 500 ms and then sends REPLAY_REQUEST from the first missing seq."),
    rule!("HAIP-SEQ-004", Should, "Sequencing and Replay",
        "A gap that is filled within the 500 ms wait does not trigger REPLAY_REQUEST."),
    rule!("HAIP-SEQ-005", Must, "Sequencing and Replay",
        "A duplicate (seq at or below the last delivered seq) is dropped silently: not processed and not answered with ERROR."),
    rule!("HAIP-SEQ-006", Must, "Sequencing and Replay",
        "A replay window of at least 1000 messages or five minutes is kept: REPLAY_REQUEST for any of the last 1000 messages is answered by resending them with their original seq."),
    rule!("HAIP-SEQ-007", Must, "Error Handling",
        "A REPLAY_REQUEST the sender can no longer serve is answered with ERROR{code: REPLAY_TOO_OLD}."),
    rule!("HAIP-SEQ-008", Must, "Sequencing and Replay",
        "A HAI with last_rx_seq resumes the session: what was sent after last_rx_seq is resent and numbering continues."),
    rule!("HAIP-SEQ-009", Must, "Sequencing and Replay",
        "A resume that cannot be honoured (unknown session, last_rx_seq beyond what was sent) is answered with ERROR{code: RESUME_FAILED}."),
    // Runs.
    rule!("HAIP-RUN-001", Must, "Concurrency and Threading Model",
        "A message that names a run_id names an open run: one started and not yet ended by RUN_FINISHED or RUN_ERROR."),
    rule!("HAIP-RUN-002", Must, "Concurrency and Threading Model",
        "A run_id is unique within its session: RUN_STARTED never reuses one."),
    rule!("HAIP-RUN-003", Must, "Concurrent Runs",
        "RUN_CANCEL carries run_id in the envelope and the payload; RUN_ERROR carries run_id in the envelope."),
    rule!("HAIP-RUN-004", Must, "Concurrent Runs",
        "RUN_CANCEL cancels the entire run: it ends with RUN_FINISHED (status CANCELLED) or RUN_ERROR."),
    rule!("HAIP-RUN-005", Must, "Concurrent Runs",
        "A run opened beyond the advertised max_concurrent_runs is refused with ERROR{code: RUN_LIMIT_EXCEEDED}."),
    rule!("HAIP-RUN-006", Should, "Concurrency and Threading Model",
        "RUN_STARTED carries the run_id that the run's messages and its RUN_FINISHED/RUN_ERROR use."),
    rule!("HAIP-RUN-007", Must, "JSON-Schema (draft-07)",
        "Run payloads match the schema (RUN_FINISHED status OK, CANCELLED or ERROR; RUN_CANCEL payload run_id a UUID)."),
    // Liveness.
    rule!("HAIP-PING-001", Must, "Event Catalogue",
        "A PING is answered with a PONG."),
    rule!("HAIP-PING-002", Should, "Event Catalogue",
        "A PONG echoes the nonce of the PING it answers."),
    // Text.
    rule!("HAIP-TEXT-001", Must, "Event Catalogue",
        "TEXT_MESSAGE_PART and TEXT_MESSAGE_END name a message_id opened by TEXT_MESSAGE_START and not yet ended."),
    rule!("HAIP-TEXT-002", Must, "JSON-Schema (draft-07)",
        "Text payloads match the schema (message_id a UUID, text a string, tokens a decimal string)."),
    // Tools.
    rule!("HAIP-TOOL-001", Must, "Event Catalogue",
        "TOOL_UPDATE and TOOL_DONE name the call_id of an earlier TOOL_CALL that is not yet done."),
    rule!("HAIP-TOOL-002", Must, "Event Catalogue",
        "A TOOL_CALL of an advertised tool is completed by TOOL_DONE with its call_id."),
    rule!("HAIP-TOOL-003", Must, "Concurrent Runs",
        "TOOL_CANCEL cancels the single call: it ends with TOOL_DONE status CANCELLED."),
    rule!("HAIP-TOOL-004", Must, "JSON-Schema (draft-07)",
        "Tool payloads match the schema (call_id a UUID, TOOL_UPDATE status QUEUED|RUNNING|CANCELLING, progress 0 to 100, TOOL_DONE status OK|CANCELLED|ERROR, TOOL_LIST entries with a name, TOOL_SCHEMA an object schema)."),
    rule!("HAIP-TOOL-005", Info, "Goals and Key Features",
        "Whether and when the agent advertises tools with TOOL_LIST/TOOL_SCHEMA is not fixed; what it advertises is recorded."),
    // Flow control.
    rule!("HAIP-FLOW-001", Must, "Flow Control and Back‑Pressure",
        "A sender never exceeds the credit the peer granted on a channel (initial credit plus FLOW_UPDATE grants), in messages or bytes."),
    rule!("HAIP-FLOW-002", Must, "Flow Control and Back‑Pressure",
        "A peer that exceeds its credit is answered with ERROR{code: FLOW_CONTROL_VIOLATION}."),
    rule!("HAIP-FLOW-003", Must, "Flow Control and Back‑Pressure",
        "After PAUSE_CHANNEL nothing more is sent on that channel until RESUME_CHANNEL."),
    rule!("HAIP-FLOW-004", Should, "Flow Control and Back‑Pressure",
        "Messages held back by a pause or exhausted credit flow again after RESUME_CHANNEL or a FLOW_UPDATE grant."),
    rule!("HAIP-FLOW-005", Must, "JSON-Schema (draft-07)",
        "FLOW_UPDATE, PAUSE_CHANNEL and RESUME_CHANNEL carry channel; add_messages and add_bytes are integers of at least 1."),
    // Errors.
    rule!("HAIP-ERR-001", Must, "Error Handling",
        "Any protocol violation by the peer (malformed JSON, a schema violation, a message before HAI, a bad binary frame) is answered with ERROR."),
    rule!("HAIP-ERR-002", Must, "JSON-Schema (draft-07)",
        "ERROR and RUN_ERROR payloads carry a string code and message; related_id is a UUID and detail an object."),
    rule!("HAIP-ERR-003", Info, "Error Handling",
        "Error codes outside the spec's list of common codes are recorded."),
    // Authentication.
    rule!("HAIP-AUTH-001", Must, "Authentication and Security",
        "A connection that presents no token is refused."),
    rule!("HAIP-AUTH-002", Must, "Authentication and Security",
        "A malformed token (not a JWT) is refused."),
    rule!("HAIP-AUTH-003", Must, "Authentication and Security",
        "A token whose signature does not verify (tampered, signed with another key, or alg: none) is refused."),
    rule!("HAIP-AUTH-004", Must, "Authentication and Security",
        "An expired token (exp in the past) is refused."),
    rule!("HAIP-AUTH-005", Must, "Authentication and Security",
        "A token not yet valid (iat or nbf an hour in the future) is refused."),
    rule!("HAIP-AUTH-006", Must, "Authentication and Security",
        "A valid bearer token presented as ?token= on the WebSocket URL is accepted."),
    rule!("HAIP-AUTH-007", Info, "Authentication and Security",
        "Whether a valid token presented in Sec-WebSocket-Protocol is accepted is recorded (the spec names the header but not the value's form)."),
    rule!("HAIP-AUTH-008", Info, "Authentication and Security",
        "TLS 1.2+ only: whether the target is reached over wss:// is recorded."),
];
