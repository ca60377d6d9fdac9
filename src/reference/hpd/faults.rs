//! Faults of the HPD reference target: each breaks the rules it names and nothing else.

use crate::fault;
use crate::reference::Fault;

pub static FAULTS: &[Fault] = &[
    fault!(
        "missing-version",
        ["HPD-ENV-001"],
        "no event carries version"
    ),
    fault!(
        "wrong-version",
        ["HPD-ENV-002"],
        "every event says version \"2.0\""
    ),
    fault!(
        "lower-case-types",
        ["HPD-ENV-003"],
        "event types in lower case (text_delta)"
    ),
    fault!(
        "snake-case-fields",
        ["HPD-ENV-004"],
        "payload names in snake_case (message_id, message_turn_id)"
    ),
    fault!(
        "null-fields",
        ["HPD-ENV-005"],
        "tool events carry \"toolkitName\": null and MESSAGE_TURN_FINISHED \"usage\": null"
    ),
    fault!(
        "accepts-invalid-input",
        ["HPD-IN-001"],
        "POST inputs answers 202 to an invalid envelope"
    ),
    fault!(
        "no-1007",
        ["HPD-IN-002"],
        "an invalid WebSocket text frame is ignored; the socket stays open"
    ),
    fault!(
        "unknown-response-200",
        ["HPD-IN-004"],
        "POST responses answers 200 to a request id never issued"
    ),
    fault!(
        "accepts-binary",
        ["HPD-IN-005"],
        "binary WebSocket frames are ignored, not closed with 1008"
    ),
    fault!(
        "stalls-after-bad-input",
        ["HPD-IN-006"],
        "after any invalid input, inputs are still answered 202 but no turn runs again"
    ),
    fault!(
        "turn-never-finished",
        ["HPD-TURN-001", "HPD-INT-001", "HPD-ASK-003"],
        "no MESSAGE_TURN_FINISHED or MESSAGE_TURN_ERROR"
    ),
    fault!(
        "string-iterations",
        ["HPD-ENV-007"],
        "AGENT_TURN_STARTED and AGENT_TURN_FINISHED carry iteration as a string (\"1\")"
    ),
    fault!(
        "number-message-ids",
        ["HPD-ENV-008"],
        "messageId is a number, not the string the spec's example shows"
    ),
    fault!(
        "rejects-messages-input",
        ["HPD-IN-003"],
        "USER_MESSAGES_INPUT is answered 400 over HTTP and ignored over the WebSocket"
    ),
    fault!(
        "output-after-finish",
        ["HPD-TURN-004"],
        "after every turn's end, one more text block"
    ),
    fault!(
        "turn-id-drift",
        ["HPD-TURN-002"],
        "MESSAGE_TURN_FINISHED (and _ERROR) carries another messageTurnId"
    ),
    fault!(
        "agent-turn-unfinished",
        ["HPD-TURN-003"],
        "no AGENT_TURN_FINISHED"
    ),
    fault!(
        "delta-before-start",
        ["HPD-STREAM-001"],
        "a text block's first TEXT_DELTA comes before its TEXT_MESSAGE_START"
    ),
    fault!(
        "missing-end",
        ["HPD-STREAM-002"],
        "text blocks never get TEXT_MESSAGE_END"
    ),
    fault!(
        "wrong-call-id",
        ["HPD-TOOL-001"],
        "TOOL_CALL_ARGS carries a callId no TOOL_CALL_START had (END and RESULT keep the right one)"
    ),
    fault!(
        "bad-args-json",
        ["HPD-TOOL-002"],
        "argsJson holds the arguments' debug form, not JSON"
    ),
    fault!(
        "tool-without-result",
        ["HPD-TOOL-003"],
        "tool calls get no TOOL_CALL_RESULT"
    ),
    fault!(
        "no-permission-outcome",
        ["HPD-ASK-001"],
        "neither PERMISSION_APPROVED nor PERMISSION_DENIED is sent"
    ),
    fault!(
        "denied-runs-text-tool",
        ["HPD-ASK-002"],
        "a gated tool's output is text, and a denied call still runs it: its result reads like a denial's text"
    ),
    fault!(
        "denied-permission-runs",
        ["HPD-ASK-002"],
        "a denied call still runs and gets its TOOL_CALL_RESULT"
    ),
    fault!(
        "ignores-clarification",
        ["HPD-ASK-003"],
        "clarification and continuation responses are accepted but the turn waits out its timeout"
    ),
    fault!(
        "interrupt-ignored",
        ["HPD-INT-001"],
        "INTERRUPTION_REQUEST does nothing"
    ),
    fault!(
        "non-monotonic-ids",
        ["HPD-SSE-001"],
        "every third SSE id is lower than the one before (ids 1, 3, 2, 4, 6, 5, ...)"
    ),
    fault!(
        "resume-from-start",
        ["HPD-SSE-002"],
        "a resumed stream (after / Last-Event-ID) replays the whole history"
    ),
];
