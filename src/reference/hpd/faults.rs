//! Faults of the HPD reference target: each breaks the rules it names and nothing else.

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
        "no event carries version"
    ),
    fault!(
        "wrong-version",
        [HPD_ENV_002],
        "every event says version \"2.0\""
    ),
    fault!(
        "lower-case-types",
        [HPD_ENV_003],
        "event types in lower case (text_delta)"
    ),
    fault!(
        "snake-case-fields",
        [HPD_ENV_004],
        "payload names in snake_case (message_id, message_turn_id)"
    ),
    fault!(
        "null-fields",
        [HPD_ENV_005],
        "tool events carry \"toolkitName\": null and MESSAGE_TURN_FINISHED \"usage\": null"
    ),
    fault!(
        "accepts-invalid-input",
        [HPD_IN_001],
        "POST inputs answers 202 to an invalid envelope"
    ),
    fault!(
        "no-1007",
        [HPD_IN_002],
        "an invalid WebSocket text frame is ignored; the socket stays open"
    ),
    fault!(
        "unknown-response-200",
        [HPD_IN_004],
        "POST responses answers 200 to a request id never issued"
    ),
    fault!(
        "accepts-binary",
        [HPD_IN_005],
        "binary WebSocket frames are ignored, not closed with 1008"
    ),
    fault!(
        "stalls-after-bad-input",
        [HPD_IN_006],
        "after any invalid input, inputs are still answered 202 but no turn runs again"
    ),
    fault!(
        "turn-never-finished",
        [HPD_TURN_001, HPD_INT_001, HPD_ASK_003],
        "no MESSAGE_TURN_FINISHED or MESSAGE_TURN_ERROR"
    ),
    fault!(
        "string-iterations",
        [HPD_ENV_007],
        "AGENT_TURN_STARTED and AGENT_TURN_FINISHED carry iteration as a string (\"1\")"
    ),
    fault!(
        "number-message-ids",
        [HPD_ENV_008],
        "messageId is a number, not the string the spec's example shows"
    ),
    fault!(
        "rejects-messages-input",
        [HPD_IN_003],
        "USER_MESSAGES_INPUT is answered 400 over HTTP and ignored over the WebSocket"
    ),
    fault!(
        "output-after-finish",
        [HPD_TURN_004],
        "after every turn's end, one more text block"
    ),
    fault!(
        "turn-id-drift",
        [HPD_TURN_002],
        "MESSAGE_TURN_FINISHED (and _ERROR) carries another messageTurnId"
    ),
    fault!(
        "agent-turn-unfinished",
        [HPD_TURN_003],
        "no AGENT_TURN_FINISHED"
    ),
    fault!(
        "delta-before-start",
        [HPD_STREAM_001],
        "a text block's first TEXT_DELTA comes before its TEXT_MESSAGE_START"
    ),
    fault!(
        "shared-block-id",
        [HPD_STREAM_001],
        "names each TEXT_DELTA by the text block last started in any conversation (one id kept \
         for the whole server): conversations streaming at once get each other's ids"
    ),
    fault!(
        "missing-end",
        [HPD_STREAM_002],
        "text blocks never get TEXT_MESSAGE_END"
    ),
    fault!(
        "wrong-call-id",
        [HPD_TOOL_001],
        "TOOL_CALL_ARGS carries a callId no TOOL_CALL_START had (END and RESULT keep the right one)"
    ),
    fault!(
        "bad-args-json",
        [HPD_TOOL_002],
        "argsJson holds the arguments' debug form, not JSON"
    ),
    fault!(
        "tool-without-result",
        [HPD_TOOL_003],
        "tool calls get no TOOL_CALL_RESULT"
    ),
    fault!(
        "no-permission-outcome",
        [HPD_ASK_001],
        "neither PERMISSION_APPROVED nor PERMISSION_DENIED is sent"
    ),
    fault!(
        "denied-runs-text-tool",
        [HPD_ASK_002],
        "a gated tool's output is text, and a denied call still runs it: its result reads like a denial's text"
    ),
    fault!(
        "denied-permission-runs",
        [HPD_ASK_002],
        "a denied call still runs and gets its TOOL_CALL_RESULT"
    ),
    fault!(
        "ignores-clarification",
        [HPD_ASK_003],
        "clarification and continuation responses are accepted but the turn waits out its timeout"
    ),
    fault!(
        "interrupt-ignored",
        [HPD_INT_001],
        "INTERRUPTION_REQUEST does nothing"
    ),
    fault!(
        "non-monotonic-ids",
        [HPD_SSE_001],
        "every third SSE id is lower than the one before (ids 1, 3, 2, 4, 6, 5, ...)"
    ),
    fault!(
        "resume-from-start",
        [HPD_SSE_002],
        "a resumed stream (after / Last-Event-ID) replays the whole history"
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
