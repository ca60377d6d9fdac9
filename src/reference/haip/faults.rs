//! The HAIP reference target's faults: each breaks one rule area on purpose. Those that reshape
//! an agent's event act in `event_faults.rs`, the envelope ones where a message is sealed
//! (`outbox.rs`), the faults of behaviour where the agent or the connection decides.

use crate::fault;
use crate::reference::Fault;
use crate::rules::ids::{
    HAIP_AUTH_001, HAIP_AUTH_002, HAIP_AUTH_003, HAIP_AUTH_004, HAIP_AUTH_005, HAIP_AUTH_006,
    HAIP_AUTH_009, HAIP_ENV_001, HAIP_ENV_002, HAIP_ENV_003, HAIP_ENV_004, HAIP_ENV_005,
    HAIP_ENV_006, HAIP_ENV_007, HAIP_ENV_008, HAIP_ENV_009, HAIP_ERR_001, HAIP_ERR_002,
    HAIP_ERR_004, HAIP_ERR_005, HAIP_FLOW_001, HAIP_FLOW_002, HAIP_FLOW_003, HAIP_FLOW_005,
    HAIP_HS_001, HAIP_HS_002, HAIP_MEDIA_001, HAIP_MEDIA_002, HAIP_MEDIA_003, HAIP_MEDIA_004,
    HAIP_PING_001, HAIP_PING_002, HAIP_RUN_001, HAIP_RUN_002, HAIP_RUN_003, HAIP_RUN_004,
    HAIP_RUN_005, HAIP_RUN_007, HAIP_SEQ_001, HAIP_SEQ_002, HAIP_SEQ_003, HAIP_SEQ_004,
    HAIP_SEQ_005, HAIP_SEQ_006, HAIP_SEQ_007, HAIP_SEQ_008, HAIP_SEQ_009, HAIP_SEQ_010,
    HAIP_SEQ_011, HAIP_TEXT_001, HAIP_TEXT_002, HAIP_TOOL_001, HAIP_TOOL_002, HAIP_TOOL_003,
    HAIP_TOOL_004, HAIP_VER_001, HAIP_VER_002, HAIP_VER_004,
};

pub static FAULTS: &[Fault] = &[
    // Handshake and versions.
    fault!(
        "hai-not-first",
        [HAIP_HS_001],
        "sends TOOL_LIST before its HAI",
        [("haip.handshake.server-hai-first", Fail)],
    ),
    fault!(
        "hai-missing-accept-events",
        [HAIP_HS_002],
        "its HAI omits accept_events",
        [("haip.handshake.server-hai-fields", Fail)],
    ),
    fault!(
        "no-version-check",
        [HAIP_VER_001],
        "accepts a HAI that shares no MAJOR version",
        [("haip.handshake.major-mismatch", Fail)],
    ),
    fault!(
        "errors-on-pong",
        [HAIP_ERR_004],
        "answers every PONG with ERROR UNSUPPORTED_TYPE naming and acknowledging no message, as the public server does",
        [("haip.error.valid-not-refused", Fail)],
    ),
    fault!(
        "wrong-error-code",
        [HAIP_VER_001],
        "answers a MAJOR mismatch with PROTOCOL_VIOLATION instead of VERSION_INCOMPATIBLE",
        [("haip.handshake.major-mismatch", Fail)],
    ),
    fault!(
        "no-close-on-version",
        [HAIP_VER_001],
        "sends VERSION_INCOMPATIBLE but keeps the connection open",
        [("haip.handshake.major-mismatch", Fail)],
    ),
    fault!(
        "ignores-accept-events",
        [HAIP_VER_002],
        "sends event types the client's accept_events leaves out",
        [("haip.handshake.accept-events-honoured", Fail)],
    ),
    fault!(
        "bad-version-string",
        [HAIP_VER_004],
        "announces haip_version \"1.1\"",
        [("haip.version.triplet", Fail)],
    ),
    // Envelope.
    fault!(
        "no-timestamp",
        [HAIP_ENV_001],
        "sends envelopes without ts",
        [("haip.envelope.required-fields", Fail)],
    ),
    fault!("bad-uuid", [HAIP_ENV_002], "message ids are not UUIDs",
        [("haip.envelope.uuids", Fail)],
    ),
    fault!(
        "numeric-seq",
        [HAIP_ENV_003, HAIP_SEQ_001],
        "sends seq as a JSON number (so the replay and resume cases, which copy it, skip)",
        [
            ("haip.envelope.decimal-strings", Fail),
            ("haip.seq.server-numbering", Fail),
            // A REPLAY_REQUEST or resuming HAI naming a numeric seq would break the schema:
            // the cases that copy it cannot probe, and skip.
            ("haip.seq.replay-window", Skip),
            ("haip.seq.replay-too-old", Skip),
            ("haip.seq.resume", Skip),
        ],
    ),
    fault!(
        "bad-channel",
        [HAIP_ENV_004],
        "sends on a channel with a space in its name",
        [("haip.envelope.channel-pattern", Fail)],
    ),
    fault!(
        "extra-envelope-field",
        [HAIP_ENV_005],
        "adds an x_debug field to every envelope",
        [("haip.envelope.no-extra-fields", Warn)],
    ),
    fault!(
        "unknown-event-type",
        [HAIP_ENV_006, HAIP_VER_002],
        "sends a THINKING event before answering a user message",
        [("haip.handshake.accept-events-honoured", Fail), ("haip.envelope.known-types", Fail)],
    ),
    fault!("bad-pv", [HAIP_ENV_007], "sends pv 300",
        [("haip.envelope.extension-fields", Fail)],
    ),
    fault!(
        "crit-ignored",
        [HAIP_ENV_008],
        "ignores unknown fields even when crit is true",
        [("haip.envelope.crit-unknown-field", Fail)],
    ),
    fault!(
        "bad-ping-payload",
        [HAIP_ENV_009, HAIP_PING_002],
        "answers PING with a PONG whose nonce is a number (so it echoes no nonce either)",
        [("haip.envelope.ping-payload", Fail), ("haip.ping.nonce-echo", Warn)],
    ),
    // Media.
    fault!(
        "binary-len-mismatch",
        [HAIP_MEDIA_001],
        "the binary frame after an AUDIO_CHUNK is one byte short of bin_len",
        [("haip.media.binary-two-frame", Fail)],
    ),
    fault!(
        "base64-with-bin-mime",
        [HAIP_MEDIA_002],
        "Base64-mode AUDIO_CHUNKs also carry bin_mime",
        [("haip.media.base64-mode", Fail)],
    ),
    fault!(
        "binary-to-non-binary-peer",
        [HAIP_MEDIA_003],
        "uses binary frames even when the client did not advertise binary_frames",
        [("haip.media.binary-only-if-advertised", Warn)],
    ),
    fault!(
        "audio-without-mime",
        [HAIP_MEDIA_004],
        "AUDIO_CHUNK payloads lack mime",
        [("haip.media.audio-payload", Fail)],
    ),
    // Sequencing and replay.
    fault!(
        "seq-starts-at-0",
        [HAIP_SEQ_001],
        "numbers its messages from 0",
        [("haip.seq.server-numbering", Fail)],
    ),
    fault!("seq-skips", [HAIP_SEQ_001], "increments seq by 2",
        [("haip.seq.server-numbering", Fail)],
    ),
    fault!(
        "ack-beyond",
        [HAIP_SEQ_002],
        "acks 5 beyond what the client sent",
        [("haip.seq.ack-cumulative", Fail)],
    ),
    fault!(
        "stale-ack",
        [HAIP_SEQ_011],
        "never moves its ack past the client's HAI (\"1\") while it receives everything in order",
        [("haip.seq.ack-keeps-up", Warn)],
    ),
    fault!(
        "no-replay-request",
        [HAIP_SEQ_003],
        "never asks for missing messages",
        [("haip.seq.gap-triggers-replay", Fail)],
    ),
    fault!(
        "eager-replay-request",
        [HAIP_SEQ_004],
        "asks for missing messages at once instead of waiting 500 ms",
        [("haip.seq.gap-filled-in-time", Warn)],
    ),
    fault!(
        "no-duplicate-drop",
        [HAIP_SEQ_005],
        "processes duplicate messages again",
        [("haip.seq.duplicate-dropped", Fail)],
    ),
    fault!(
        "small-replay-window",
        [HAIP_SEQ_006],
        "keeps only the last 100 messages for replay",
        [("haip.seq.replay-window", Fail)],
    ),
    fault!(
        "silent-replay-too-old",
        [HAIP_SEQ_007],
        "ignores replay requests it can no longer serve",
        [("haip.seq.replay-too-old", Fail)],
    ),
    fault!(
        "no-resume",
        [HAIP_SEQ_008],
        "treats a resuming HAI as a new session",
        [("haip.seq.resume", Fail)],
    ),
    fault!(
        "resume-unknown-accepted",
        [HAIP_SEQ_009],
        "accepts a resume of a session it never had",
        [("haip.seq.resume-unknown-session", Fail), ("haip.seq.resume-beyond-sent", Fail)],
    ),
    // Runs.
    fault!(
        "run-finished-twice",
        [HAIP_RUN_001],
        "sends RUN_FINISHED twice",
        [("haip.run.boundaries", Fail)],
    ),
    fault!(
        "run-id-reuse",
        [HAIP_RUN_002],
        "gives every run it starts the same run_id",
        [("haip.run.unique-ids", Fail)],
    ),
    fault!(
        "run-error-without-run-id",
        [HAIP_RUN_003],
        "sends RUN_ERROR without run_id",
        [("haip.run.error-carries-run-id", Fail)],
    ),
    fault!(
        "ignores-run-cancel",
        [HAIP_RUN_004],
        "keeps running after RUN_CANCEL",
        [("haip.run.cancel", Fail)],
    ),
    fault!(
        "no-run-limit",
        [HAIP_RUN_005],
        "opens runs beyond max_concurrent_runs",
        [("haip.run.limit", Fail)],
    ),
    fault!(
        "bad-run-status",
        [HAIP_RUN_007],
        "ends runs with status DONE",
        [("haip.run.payloads", Fail)],
    ),
    // Liveness.
    // Without PONGs the liveness probe many cases lean on is gone: those skip ("cannot judge").
    fault!("no-pong", [HAIP_PING_001], "does not answer PING",
        [
            ("haip.handshake.accept-events-honoured", Skip),
            ("haip.envelope.required-fields", Skip),
            ("haip.envelope.uuids", Skip),
            ("haip.error.valid-not-refused", Skip),
            ("haip.envelope.decimal-strings", Skip),
            ("haip.envelope.no-extra-fields", Skip),
            ("haip.envelope.extension-fields", Skip),
            ("haip.envelope.ping-payload", Skip),
            ("haip.seq.server-numbering", Skip),
            ("haip.seq.ack-cumulative", Skip),
            ("haip.seq.ack-keeps-up", Skip),
            ("haip.seq.gap-triggers-replay", Skip),
            ("haip.seq.gap-filled-in-time", Skip),
            ("haip.seq.duplicate-dropped", Skip),
            ("haip.seq.replay-window", Skip),
            ("haip.seq.replay-too-old", Skip),
            ("haip.seq.resume", Skip),
            ("haip.seq.resume-beyond-sent", Skip),
            ("haip.run.boundaries", Skip),
            ("haip.ping.pong", Fail),
            ("haip.ping.nonce-echo", Skip),
            ("haip.tool.lifecycle", Skip),
            ("haip.media.client-binary-accepted", Skip),
        ],
    ),
    fault!(
        "pong-nonce",
        [HAIP_PING_002],
        "answers PING with a different nonce",
        [("haip.ping.nonce-echo", Warn)],
    ),
    // Text.
    fault!(
        "text-part-before-start",
        [HAIP_TEXT_001],
        "sends the first TEXT_MESSAGE_PART before TEXT_MESSAGE_START",
        [("haip.text.stream-lifecycle", Fail)],
    ),
    fault!(
        "bad-message-id",
        [HAIP_TEXT_002],
        "text message_ids are not UUIDs",
        [("haip.text.payloads", Fail)],
    ),
    // Tools.
    fault!(
        "tool-update-after-done",
        [HAIP_TOOL_001],
        "sends a TOOL_UPDATE after TOOL_DONE",
        [("haip.tool.lifecycle", Fail)],
    ),
    fault!(
        "no-tool-done",
        [HAIP_TOOL_002],
        "never completes wireprobe.echo",
        [("haip.tool.echo-completes", Fail), ("haip.tool.lifecycle", Skip)],
    ),
    fault!(
        "ignores-tool-cancel",
        [HAIP_TOOL_003],
        "lets a cancelled tool call run to completion",
        [("haip.tool.cancel", Fail)],
    ),
    fault!(
        "bad-tool-progress",
        [HAIP_TOOL_004],
        "reports progress 150",
        [("haip.tool.payloads", Fail)],
    ),
    // Flow control.
    fault!(
        "ignores-client-credit",
        [HAIP_FLOW_001],
        "sends beyond the credit the client granted",
        [("haip.flow.server-respects-credit", Fail)],
    ),
    fault!(
        "no-flow-enforcement",
        [HAIP_FLOW_002],
        "accepts messages beyond the credit it granted",
        [("haip.flow.client-credit-enforced", Fail)],
    ),
    fault!(
        "ignores-pause",
        [HAIP_FLOW_003],
        "keeps sending on a paused channel",
        [("haip.flow.pause", Fail)],
    ),
    fault!(
        "zero-credit-grant",
        [HAIP_FLOW_005],
        "grants credit with add_messages 0",
        [("haip.flow.grant-payload", Fail)],
    ),
    // Errors.
    fault!(
        "lenient-envelope",
        [HAIP_ERR_001],
        "accepts messages that break the schema without an ERROR",
        [
            ("haip.error.missing-field", Fail),
            ("haip.error.bad-seq", Fail),
            ("haip.error.bad-uuid", Fail),
            ("haip.error.unknown-type", Fail),
            ("haip.error.bad-channel", Fail),
            ("haip.error.bad-payload", Fail),
        ],
    ),
    fault!(
        "error-without-message",
        [HAIP_ERR_002],
        "sends ERROR payloads without message",
        [("haip.error.payload-shape", Fail)],
    ),
    // Authentication (only with --jwt-secret).
    fault!(
        "auth-optional",
        [HAIP_AUTH_001],
        "lets clients in without a token",
        [("haip.auth.missing-token", Fail)],
    ),
    fault!(
        "auth-accepts-garbage",
        [HAIP_AUTH_002],
        "accepts tokens that are not JWTs",
        [("haip.auth.malformed-token", Fail)],
    ),
    fault!(
        "auth-ignores-signature",
        [HAIP_AUTH_003],
        "does not verify token signatures",
        [
            ("haip.auth.tampered-signature", Fail),
            ("haip.auth.alg-none", Fail),
            ("haip.auth.wrong-key", Fail),
        ],
    ),
    fault!("token-expiry", [HAIP_AUTH_004], "accepts expired tokens",
        [("haip.auth.expired", Fail)],
    ),
    fault!(
        "auth-ignores-iat",
        [HAIP_AUTH_005],
        "accepts tokens issued in the future",
        [("haip.auth.not-yet-valid", Fail)],
    ),
    // haip.auth.transport-recorded only records (info): the refusal is its record.
    fault!(
        "auth-query-ignored",
        [HAIP_AUTH_006],
        "reads tokens only from Sec-WebSocket-Protocol, not ?token=",
        "haip.auth.*",
        [("haip.auth.valid-token-query", Fail)],
    ),
];

/// Deviations the reference client can be started with, each breaking a rule that binds the
/// client (`run haip --client --target builtin --fault NAME`).
pub const CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "ping-before-hai",
        [HAIP_HS_001],
        "sends a PING before its HAI"
    ),
    fault!(
        "hai-without-accept-events",
        [HAIP_HS_002],
        "its HAI leaves out accept_events"
    ),
    fault!("no-pong", [HAIP_PING_001], "never answers a PING"),
    fault!(
        "pong-wrong-nonce",
        [HAIP_PING_002],
        "answers a PING with a PONG carrying another nonce"
    ),
    fault!(
        "ignores-pause",
        [HAIP_FLOW_003],
        "goes on sending on a channel the server paused"
    ),
    fault!(
        "no-replay-request",
        [HAIP_SEQ_003],
        "waits out a gap in the server's seq without asking for a replay"
    ),
    fault!(
        "eager-replay-request",
        [HAIP_SEQ_004],
        "asks for a replay the moment it sees a gap in the server's seq, without the spec's 500 ms wait"
    ),
    fault!(
        "ack-stuck",
        [HAIP_SEQ_011],
        "never moves its ack past the server's HAI (\"1\") while it receives everything in order"
    ),
    fault!(
        "exits-on-unknown-type",
        [HAIP_ERR_001],
        "closes the connection, saying nothing, on a message of a type the catalogue does not list"
    ),
    fault!(
        "leaves-after-error",
        [HAIP_ERR_005],
        "answers a message the schema rejects with ERROR, then closes the connection"
    ),
    fault!(
        "ignores-credit",
        [HAIP_FLOW_001],
        "sends its user text whatever credit the server advertised"
    ),
    fault!(
        "silent-on-garbage",
        [HAIP_ERR_001],
        "says nothing when the server sends a frame that is not a HAIP message"
    ),
    fault!(
        "ignores-version",
        [HAIP_VER_001],
        "goes on after a server HAI that shares no MAJOR version with it"
    ),
    fault!(
        "ignores-accept-events",
        [HAIP_VER_002],
        "sends its user text whatever event types the server's HAI accepts"
    ),
    fault!(
        "answers-duplicates",
        [HAIP_SEQ_005],
        "processes a duplicate of a message it already had (a PING is answered twice)"
    ),
    fault!(
        "no-token",
        [HAIP_AUTH_009],
        "connects without the token it was handed"
    ),
    fault!(
        "token-in-header",
        [HAIP_AUTH_009],
        "presents its token in an Authorization header, the spec's form for HTTP/SSE"
    ),
    fault!(
        "crit-ignored",
        [HAIP_ENV_008],
        "acts on a message with crit: true and an unknown field instead of answering UNSUPPORTED_TYPE"
    ),
    fault!(
        "resumes-beyond",
        [HAIP_SEQ_010],
        "resumes a dropped connection with last_rx_seq 5 past the highest seq it received"
    ),
    fault!(
        "resumes-below-ack",
        [HAIP_SEQ_010],
        "resumes a dropped connection with last_rx_seq \"0\", below what it acknowledged"
    ),
];
