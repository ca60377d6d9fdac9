//! Faults of the HPD reference target: each breaks the rules it names and nothing else. Those
//! that reshape a turn's events act in `event_faults.rs`, the envelope ones in
//! `envelope::render`, the faults of behaviour where the agent decides.

use crate::fault;
use crate::reference::Fault;
use crate::rules::ids::{
    HPD_ASK_001, HPD_ASK_002, HPD_ASK_003, HPD_CLI_001, HPD_CLI_002, HPD_CLI_003, HPD_CLI_004,
    HPD_CLI_005, HPD_ENV_001, HPD_ENV_002, HPD_ENV_003, HPD_ENV_004, HPD_ENV_005, HPD_ENV_007,
    HPD_ENV_008, HPD_INT_001, HPD_IN_001, HPD_IN_002, HPD_IN_003, HPD_IN_004, HPD_IN_005,
    HPD_IN_006, HPD_SSE_001, HPD_SSE_002, HPD_STREAM_001, HPD_STREAM_002, HPD_TOOL_001,
    HPD_TOOL_002, HPD_TOOL_003, HPD_TURN_001, HPD_TURN_002, HPD_TURN_003, HPD_TURN_004,
};

pub static FAULTS: &[Fault] = &[
    fault!(
        "missing-version",
        [HPD_ENV_001],
        "no event carries version",
        [("hpd.envelope.version-and-type@sse", Fail), ("hpd.envelope.version-and-type@ws", Fail)],
    ),
    fault!(
        "wrong-version",
        [HPD_ENV_002],
        "every event says version \"2.0\"",
        [("hpd.envelope.version-1-0@sse", Warn), ("hpd.envelope.version-1-0@ws", Warn)],
    ),
    fault!(
        "lower-case-types",
        [HPD_ENV_003],
        "event types in lower case (text_delta)",
        [("hpd.envelope.type-case@sse", Warn), ("hpd.envelope.type-case@ws", Warn)],
    ),
    fault!(
        "snake-case-fields",
        [HPD_ENV_004],
        "payload names in snake_case (message_id, message_turn_id)",
        [("hpd.envelope.camel-case@sse", Fail), ("hpd.envelope.camel-case@ws", Fail)],
    ),
    fault!(
        "null-fields",
        [HPD_ENV_005],
        "tool events carry \"toolkitName\": null and MESSAGE_TURN_FINISHED \"usage\": null",
        [("hpd.envelope.no-nulls@sse", Fail), ("hpd.envelope.no-nulls@ws", Fail)],
    ),
    fault!(
        "accepts-invalid-input",
        [HPD_IN_001],
        "POST inputs answers 202 to an invalid envelope",
        [
            ("hpd.input.no-type@sse", Fail),
            ("hpd.input.not-json@sse", Fail),
            ("hpd.input.unknown-type@sse", Fail),
        ],
    ),
    fault!(
        "no-1007",
        [HPD_IN_002],
        "an invalid WebSocket text frame is ignored; the socket stays open",
        [("hpd.ws.invalid-frame@ws", Fail), ("hpd.ws.unknown-type@ws", Fail)],
    ),
    fault!(
        "unknown-response-200",
        [HPD_IN_004],
        "POST responses answers 200 to a request id never issued",
        [("hpd.responses.unknown-id@sse", Warn)],
    ),
    fault!(
        "accepts-binary",
        [HPD_IN_005],
        "binary WebSocket frames are ignored, not closed with 1008",
        [("hpd.ws.binary@ws", Warn)],
    ),
    fault!(
        "stalls-after-bad-input",
        [HPD_IN_006],
        "after any invalid input, inputs are still answered 202 but no turn runs again",
        [("hpd.input.not-json@sse", Fail), ("hpd.ws.invalid-frame@ws", Fail)],
    ),
    // A turn that never ends: the turn-end cases fail, the others cannot see a whole turn.
    fault!(
        "turn-never-finished",
        [HPD_TURN_001, HPD_INT_001, HPD_ASK_003],
        "no MESSAGE_TURN_FINISHED or MESSAGE_TURN_ERROR",
        "hpd.turn.*",
        [
            ("hpd.turn.agent-turns@sse", Skip),
            ("hpd.turn.agent-turns@ws", Skip),
            ("hpd.turn.ends@sse", Fail),
            ("hpd.turn.ends@ws", Fail),
            ("hpd.turn.error-ends@sse", Fail),
            ("hpd.turn.error-ends@ws", Fail),
            ("hpd.turn.nothing-after-end@sse", Skip),
            ("hpd.turn.nothing-after-end@ws", Skip),
            ("hpd.turn.one-id@sse", Skip),
            ("hpd.turn.one-id@ws", Skip),
        ],
    ),
    // HPD-ENV-007 only records: the spec gives the framework's fields no type.
    fault!(
        "string-iterations",
        [HPD_ENV_007],
        "AGENT_TURN_STARTED and AGENT_TURN_FINISHED carry iteration as a string (\"1\")",
        [],
    ),
    fault!(
        "number-message-ids",
        [HPD_ENV_008],
        "messageId is a number, not the string the spec's example shows",
        [("hpd.envelope.example-types@sse", Warn), ("hpd.envelope.example-types@ws", Warn)],
    ),
    fault!(
        "rejects-messages-input",
        [HPD_IN_003],
        "USER_MESSAGES_INPUT is answered 400 over HTTP and ignored over the WebSocket",
        [("hpd.input.messages@sse", Warn), ("hpd.input.messages@ws", Warn)],
    ),
    fault!(
        "output-after-finish",
        [HPD_TURN_004],
        "after every turn's end, one more text block",
        [("hpd.turn.nothing-after-end@sse", Warn), ("hpd.turn.nothing-after-end@ws", Warn)],
    ),
    fault!(
        "turn-id-drift",
        [HPD_TURN_002],
        "MESSAGE_TURN_FINISHED (and _ERROR) carries another messageTurnId",
        [("hpd.turn.one-id@sse", Warn), ("hpd.turn.one-id@ws", Warn)],
    ),
    fault!(
        "agent-turn-unfinished",
        [HPD_TURN_003],
        "no AGENT_TURN_FINISHED",
        [("hpd.turn.agent-turns@sse", Warn), ("hpd.turn.agent-turns@ws", Warn)],
    ),
    fault!(
        "delta-before-start",
        [HPD_STREAM_001],
        "a text block's first TEXT_DELTA comes before its TEXT_MESSAGE_START",
        [
            ("hpd.reasoning.block@sse", Fail),
            ("hpd.reasoning.block@ws", Fail),
            ("hpd.text.order@sse", Fail),
            ("hpd.text.order@ws", Fail),
        ],
    ),
    // One case alone has no conversation beside it: nothing to show (a campaign's
    // overlapping runs do, tests/it/fuzz_live/replays.rs).
    fault!(
        "shared-block-id",
        [HPD_STREAM_001],
        "names each TEXT_DELTA by the text block last started in any conversation (one id kept \
         for the whole server): conversations streaming at once get each other's ids",
        "hpd.envelope.no-nulls",
        [],
    ),
    fault!(
        "missing-end",
        [HPD_STREAM_002],
        "text blocks never get TEXT_MESSAGE_END",
        [
            ("hpd.reasoning.block@sse", Warn),
            ("hpd.reasoning.block@ws", Warn),
            ("hpd.text.ends@sse", Warn),
            ("hpd.text.ends@ws", Warn),
        ],
    ),
    fault!(
        "wrong-call-id",
        [HPD_TOOL_001],
        "TOOL_CALL_ARGS carries a callId no TOOL_CALL_START had (END and RESULT keep the right one)",
        [("hpd.tool.call-id@sse", Fail), ("hpd.tool.call-id@ws", Fail)],
    ),
    // HPD-TOOL-002 only records: the spec never says argsJson holds JSON.
    fault!(
        "bad-args-json",
        [HPD_TOOL_002],
        "argsJson holds the arguments' debug form, not JSON",
        [],
    ),
    fault!(
        "tool-without-result",
        [HPD_TOOL_003],
        "tool calls get no TOOL_CALL_RESULT",
        [("hpd.tool.completes@sse", Warn), ("hpd.tool.completes@ws", Warn)],
    ),
    fault!(
        "no-permission-outcome",
        [HPD_ASK_001],
        "neither PERMISSION_APPROVED nor PERMISSION_DENIED is sent",
        [
            ("hpd.permission.approved@sse", Warn),
            ("hpd.permission.approved@ws", Warn),
            ("hpd.permission.denied@sse", Warn),
            ("hpd.permission.denied@ws", Warn),
        ],
    ),
    fault!(
        "denied-runs-text-tool",
        [HPD_ASK_002],
        "a gated tool's output is text, and a denied call still runs it: its result reads like a denial's text",
        [
            ("hpd.permission.denied-does-not-run@sse", Warn),
            ("hpd.permission.denied-does-not-run@ws", Warn),
        ],
    ),
    fault!(
        "denied-permission-runs",
        [HPD_ASK_002],
        "a denied call still runs and gets its TOOL_CALL_RESULT",
        [
            ("hpd.permission.denied-does-not-run@sse", Warn),
            ("hpd.permission.denied-does-not-run@ws", Warn),
        ],
    ),
    fault!(
        "ignores-clarification",
        [HPD_ASK_003],
        "clarification and continuation responses are accepted but the turn waits out its timeout",
        [
            ("hpd.clarification.answered@sse", Warn),
            ("hpd.clarification.answered@ws", Warn),
            ("hpd.continuation.approved@sse", Warn),
            ("hpd.continuation.approved@ws", Warn),
        ],
    ),
    fault!(
        "interrupt-ignored",
        [HPD_INT_001],
        "INTERRUPTION_REQUEST does nothing",
        [("hpd.interrupt.ends-turn@sse", Warn), ("hpd.interrupt.ends-turn@ws", Warn)],
    ),
    fault!(
        "non-monotonic-ids",
        [HPD_SSE_001],
        "every third SSE id is lower than the one before (ids 1, 3, 2, 4, 6, 5, ...)",
        [("hpd.sse.ids-increase@sse", Warn)],
    ),
    fault!(
        "resume-from-start",
        [HPD_SSE_002],
        "a resumed stream (after / Last-Event-ID) replays the whole history",
        [("hpd.sse.resume-after@sse", Warn), ("hpd.sse.resume-last-event-id@sse", Warn)],
    ),
];

/// Faults of the HPD reference client (`wireprobe client hpd --fault NAME`).
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "ignores-clarification",
        [HPD_CLI_003],
        "never answers a CLARIFICATION_REQUEST"
    ),
    fault!(
        "ignores-continuation",
        [HPD_CLI_003],
        "never answers a CONTINUATION_REQUEST"
    ),
    fault!(
        "repeats-first-answer",
        [HPD_CLI_001, HPD_CLI_003],
        "answers every permission request of a message turn with the permissionId of its first"
    ),
    fault!(
        "answers-twice",
        [HPD_CLI_001],
        "sends each PERMISSION_RESPONSE twice"
    ),
    fault!(
        "wrong-answer-type",
        [HPD_CLI_001, HPD_CLI_003],
        "answers a CONTINUATION_REQUEST with a CLARIFICATION_RESPONSE naming its continuationId"
    ),
    fault!(
        "responses-to-inputs",
        [HPD_CLI_002],
        "POSTs its response events to /inputs, not /responses"
    ),
    fault!(
        "no-resume",
        [HPD_CLI_004],
        "reopens an ended stream at the live end, without Last-Event-ID"
    ),
    fault!(
        "resumes-from-first",
        [HPD_CLI_004],
        "reopens an ended stream after the first id it received, not the last"
    ),
    fault!(
        "no-reconnect",
        [HPD_CLI_004],
        "never reopens a stream the agent ended"
    ),
    fault!(
        "stops-on-custom-type",
        [HPD_CLI_005],
        "stops answering after an event of a type it does not know"
    ),
    fault!(
        "stops-on-garbage",
        [HPD_CLI_005],
        "stops answering after an event whose data is not JSON"
    ),
    fault!(
        "stops-on-oversize",
        [HPD_CLI_005],
        "stops answering after an event over 1 MB"
    ),
    fault!(
        "snake-case-responses",
        [HPD_ENV_004],
        "writes permission_id and source_name in its PERMISSION_RESPONSE"
    ),
    fault!(
        "null-fields",
        [HPD_ENV_005],
        "sends \"reason\": null in its PERMISSION_RESPONSE"
    ),
];
