//! The HAIP reference target's faults: each breaks one rule area on purpose.

use crate::fault;
use crate::reference::Fault;

pub static FAULTS: &[Fault] = &[
    // Handshake and versions.
    fault!(
        "hai-not-first",
        ["HAIP-HS-001"],
        "sends TOOL_LIST before its HAI"
    ),
    fault!(
        "hai-missing-accept-events",
        ["HAIP-HS-002"],
        "its HAI omits accept_events"
    ),
    fault!(
        "no-version-check",
        ["HAIP-VER-001"],
        "accepts a HAI that shares no MAJOR version"
    ),
    fault!(
        "errors-on-pong",
        ["HAIP-ERR-004"],
        "answers every PONG with ERROR UNSUPPORTED_TYPE naming and acknowledging no message, as the public server does"
    ),
    fault!(
        "wrong-error-code",
        ["HAIP-VER-001"],
        "answers a MAJOR mismatch with PROTOCOL_VIOLATION instead of VERSION_INCOMPATIBLE"
    ),
    fault!(
        "no-close-on-version",
        ["HAIP-VER-001"],
        "sends VERSION_INCOMPATIBLE but keeps the connection open"
    ),
    fault!(
        "ignores-accept-events",
        ["HAIP-VER-002"],
        "sends event types the client's accept_events leaves out"
    ),
    fault!(
        "bad-version-string",
        ["HAIP-VER-004"],
        "announces haip_version \"1.1\""
    ),
    // Envelope.
    fault!(
        "no-timestamp",
        ["HAIP-ENV-001"],
        "sends envelopes without ts"
    ),
    fault!("bad-uuid", ["HAIP-ENV-002"], "message ids are not UUIDs"),
    fault!(
        "numeric-seq",
        ["HAIP-ENV-003", "HAIP-SEQ-001"],
        "sends seq as a JSON number (so the replay and resume cases, which copy it, skip)"
    ),
    fault!(
        "bad-channel",
        ["HAIP-ENV-004"],
        "sends on a channel with a space in its name"
    ),
    fault!(
        "extra-envelope-field",
        ["HAIP-ENV-005"],
        "adds an x_debug field to every envelope"
    ),
    fault!(
        "unknown-event-type",
        ["HAIP-ENV-006", "HAIP-VER-002"],
        "sends a THINKING event before answering a user message"
    ),
    fault!("bad-pv", ["HAIP-ENV-007"], "sends pv 300"),
    fault!(
        "crit-ignored",
        ["HAIP-ENV-008"],
        "ignores unknown fields even when crit is true"
    ),
    fault!(
        "bad-ping-payload",
        ["HAIP-ENV-009", "HAIP-PING-002"],
        "answers PING with a PONG whose nonce is a number (so it echoes no nonce either)"
    ),
    // Media.
    fault!(
        "binary-len-mismatch",
        ["HAIP-MEDIA-001"],
        "the binary frame after an AUDIO_CHUNK is one byte short of bin_len"
    ),
    fault!(
        "base64-with-bin-mime",
        ["HAIP-MEDIA-002"],
        "Base64-mode AUDIO_CHUNKs also carry bin_mime"
    ),
    fault!(
        "binary-to-non-binary-peer",
        ["HAIP-MEDIA-003"],
        "uses binary frames even when the client did not advertise binary_frames"
    ),
    fault!(
        "audio-without-mime",
        ["HAIP-MEDIA-004"],
        "AUDIO_CHUNK payloads lack mime"
    ),
    // Sequencing and replay.
    fault!(
        "seq-starts-at-0",
        ["HAIP-SEQ-001"],
        "numbers its messages from 0"
    ),
    fault!("seq-skips", ["HAIP-SEQ-001"], "increments seq by 2"),
    fault!(
        "ack-beyond",
        ["HAIP-SEQ-002"],
        "acks 5 beyond what the client sent"
    ),
    fault!(
        "stale-ack",
        ["HAIP-SEQ-011"],
        "never moves its ack past the client's HAI (\"1\") while it receives everything in order"
    ),
    fault!(
        "no-replay-request",
        ["HAIP-SEQ-003"],
        "never asks for missing messages"
    ),
    fault!(
        "eager-replay-request",
        ["HAIP-SEQ-004"],
        "asks for missing messages at once instead of waiting 500 ms"
    ),
    fault!(
        "no-duplicate-drop",
        ["HAIP-SEQ-005"],
        "processes duplicate messages again"
    ),
    fault!(
        "small-replay-window",
        ["HAIP-SEQ-006"],
        "keeps only the last 100 messages for replay"
    ),
    fault!(
        "silent-replay-too-old",
        ["HAIP-SEQ-007"],
        "ignores replay requests it can no longer serve"
    ),
    fault!(
        "no-resume",
        ["HAIP-SEQ-008"],
        "treats a resuming HAI as a new session"
    ),
    fault!(
        "resume-unknown-accepted",
        ["HAIP-SEQ-009"],
        "accepts a resume of a session it never had"
    ),
    // Runs.
    fault!(
        "run-finished-twice",
        ["HAIP-RUN-001"],
        "sends RUN_FINISHED twice"
    ),
    fault!(
        "run-id-reuse",
        ["HAIP-RUN-002"],
        "gives every run it starts the same run_id"
    ),
    fault!(
        "run-error-without-run-id",
        ["HAIP-RUN-003"],
        "sends RUN_ERROR without run_id"
    ),
    fault!(
        "ignores-run-cancel",
        ["HAIP-RUN-004"],
        "keeps running after RUN_CANCEL"
    ),
    fault!(
        "no-run-limit",
        ["HAIP-RUN-005"],
        "opens runs beyond max_concurrent_runs"
    ),
    fault!(
        "bad-run-status",
        ["HAIP-RUN-007"],
        "ends runs with status DONE"
    ),
    // Liveness.
    fault!("no-pong", ["HAIP-PING-001"], "does not answer PING"),
    fault!(
        "pong-nonce",
        ["HAIP-PING-002"],
        "answers PING with a different nonce"
    ),
    // Text.
    fault!(
        "text-part-before-start",
        ["HAIP-TEXT-001"],
        "sends the first TEXT_MESSAGE_PART before TEXT_MESSAGE_START"
    ),
    fault!(
        "bad-message-id",
        ["HAIP-TEXT-002"],
        "text message_ids are not UUIDs"
    ),
    // Tools.
    fault!(
        "tool-update-after-done",
        ["HAIP-TOOL-001"],
        "sends a TOOL_UPDATE after TOOL_DONE"
    ),
    fault!(
        "no-tool-done",
        ["HAIP-TOOL-002"],
        "never completes wireprobe.echo"
    ),
    fault!(
        "ignores-tool-cancel",
        ["HAIP-TOOL-003"],
        "lets a cancelled tool call run to completion"
    ),
    fault!(
        "bad-tool-progress",
        ["HAIP-TOOL-004"],
        "reports progress 150"
    ),
    // Flow control.
    fault!(
        "ignores-client-credit",
        ["HAIP-FLOW-001"],
        "sends beyond the credit the client granted"
    ),
    fault!(
        "no-flow-enforcement",
        ["HAIP-FLOW-002"],
        "accepts messages beyond the credit it granted"
    ),
    fault!(
        "ignores-pause",
        ["HAIP-FLOW-003"],
        "keeps sending on a paused channel"
    ),
    fault!(
        "zero-credit-grant",
        ["HAIP-FLOW-005"],
        "grants credit with add_messages 0"
    ),
    // Errors.
    fault!(
        "lenient-envelope",
        ["HAIP-ERR-001"],
        "accepts messages that break the schema without an ERROR"
    ),
    fault!(
        "error-without-message",
        ["HAIP-ERR-002"],
        "sends ERROR payloads without message"
    ),
    // Authentication (only with --jwt-secret).
    fault!(
        "auth-optional",
        ["HAIP-AUTH-001"],
        "lets clients in without a token"
    ),
    fault!(
        "auth-accepts-garbage",
        ["HAIP-AUTH-002"],
        "accepts tokens that are not JWTs"
    ),
    fault!(
        "auth-ignores-signature",
        ["HAIP-AUTH-003"],
        "does not verify token signatures"
    ),
    fault!("token-expiry", ["HAIP-AUTH-004"], "accepts expired tokens"),
    fault!(
        "auth-ignores-iat",
        ["HAIP-AUTH-005"],
        "accepts tokens issued in the future"
    ),
    fault!(
        "auth-query-ignored",
        ["HAIP-AUTH-006"],
        "reads tokens only from Sec-WebSocket-Protocol, not ?token="
    ),
];

/// Deviations the reference client can be started with, each breaking a rule that binds the
/// client (`run haip --client --target builtin --fault NAME`).
pub const CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "ping-before-hai",
        ["HAIP-HS-001"],
        "sends a PING before its HAI"
    ),
    fault!(
        "hai-without-accept-events",
        ["HAIP-HS-002"],
        "its HAI leaves out accept_events"
    ),
    fault!("no-pong", ["HAIP-PING-001"], "never answers a PING"),
    fault!(
        "pong-wrong-nonce",
        ["HAIP-PING-002"],
        "answers a PING with a PONG carrying another nonce"
    ),
    fault!(
        "ignores-pause",
        ["HAIP-FLOW-003"],
        "goes on sending on a channel the server paused"
    ),
    fault!(
        "no-replay-request",
        ["HAIP-SEQ-003"],
        "waits out a gap in the server's seq without asking for a replay"
    ),
    fault!(
        "eager-replay-request",
        ["HAIP-SEQ-004"],
        "asks for a replay the moment it sees a gap in the server's seq, without the spec's 500 ms wait"
    ),
    fault!(
        "ack-stuck",
        ["HAIP-SEQ-011"],
        "never moves its ack past the server's HAI (\"1\") while it receives everything in order"
    ),
    fault!(
        "exits-on-unknown-type",
        ["HAIP-ERR-001"],
        "closes the connection, saying nothing, on a message of a type the catalogue does not list"
    ),
    fault!(
        "leaves-after-error",
        ["HAIP-ERR-005"],
        "answers a message the schema rejects with ERROR, then closes the connection"
    ),
    fault!(
        "ignores-credit",
        ["HAIP-FLOW-001"],
        "sends its user text whatever credit the server advertised"
    ),
    fault!(
        "silent-on-garbage",
        ["HAIP-ERR-001"],
        "says nothing when the server sends a frame that is not a HAIP message"
    ),
    fault!(
        "ignores-version",
        ["HAIP-VER-001"],
        "goes on after a server HAI that shares no MAJOR version with it"
    ),
    fault!(
        "ignores-accept-events",
        ["HAIP-VER-002"],
        "sends its user text whatever event types the server's HAI accepts"
    ),
    fault!(
        "answers-duplicates",
        ["HAIP-SEQ-005"],
        "processes a duplicate of a message it already had (a PING is answered twice)"
    ),
    fault!(
        "no-token",
        ["HAIP-AUTH-009"],
        "connects without the token it was handed"
    ),
    fault!(
        "token-in-header",
        ["HAIP-AUTH-009"],
        "presents its token in an Authorization header, the spec's form for HTTP/SSE"
    ),
    fault!(
        "crit-ignored",
        ["HAIP-ENV-008"],
        "acts on a message with crit: true and an unknown field instead of answering UNSUPPORTED_TYPE"
    ),
    fault!(
        "resumes-beyond",
        ["HAIP-SEQ-010"],
        "resumes a dropped connection with last_rx_seq 5 past the highest seq it received"
    ),
    fault!(
        "resumes-below-ack",
        ["HAIP-SEQ-010"],
        "resumes a dropped connection with last_rx_seq \"0\", below what it acknowledged"
    ),
];
