//! The HPD Agent events rule catalogue. The spec (`004_194452bd36a9fc7f.txt`) is a
//! documentation page: what it states about live envelopes and input handling is `must`; what
//! only the UI guidance implies, or only the public framework does (the routes, `id:` numbers,
//! field names), is `should` or `info`. `suites/hpd/ERRATA.md` gives each reading.

use crate::rules::{Level::*, Rule};

macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!("004_194452bd36a9fc7f.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // The live envelope.
    rule!("HPD-ENV-001", Must, "Live Event Envelope",
        "Every live event (an SSE event's data, a WebSocket text frame) is one JSON object carrying a string version and a string type (\"Live envelopes always include version and type\")."),
    rule!("HPD-ENV-002", Should, "Live Event Envelope",
        "version is \"1.0\" (the envelope example; the framework's serializer)."),
    rule!("HPD-ENV-003", Should, "Live Event Envelope",
        "Built-in type names are SCREAMING_SNAKE_CASE (the framework reads type case-insensitively, so another case is a should finding)."),
    rule!("HPD-ENV-004", Must, "Live Event Envelope",
        "Payload property names are camelCase (no snake_case, kebab-case or PascalCase names)."),
    rule!("HPD-ENV-005", Must, "Live Event Envelope",
        "Null values are omitted: no payload property is null."),
    rule!("HPD-ENV-006", Info, "Event Families",
        "An event type this profile does not know (a custom or newer event) is recorded, never failed."),
    rule!("HPD-ENV-007", Info, "Correlation And Projection Fields",
        "The types the framework gives a known event's fields are recorded (the spec gives none): ids (messageTurnId, callId, permissionId, continuationId, requestId) non-empty strings, iteration an integer, argsJson a string, approved a boolean, duration a number or a TimeSpan string."),
    rule!("HPD-ENV-008", Should, "Live Event Envelope",
        "messageId and a delta's text are strings, as the spec's one envelope example shows them."),
    rule!("HPD-ENV-009", Should, "Live Event Envelope",
        "The agent sends each live event over the WebSocket as a text frame holding its envelope (\"AgentEventSerializer envelopes\" are JSON; the spec names no frame type)."),
    // Input handling.
    rule!("HPD-IN-001", Must, "Live Event Envelope",
        "HTTP input answers an invalid event envelope (not JSON, no type, an unknown type) as a bad request: HTTP 400."),
    rule!("HPD-IN-002", Must, "Live Event Envelope",
        "The WebSocket closes on an invalid event frame with the invalid-payload close status, 1007."),
    rule!("HPD-IN-003", Should, "Event Families",
        "A valid input envelope (USER_TEXT_INPUT, USER_MESSAGES_INPUT) posted to the inputs route is accepted with a 2xx status (the framework answers 202)."),
    rule!("HPD-IN-004", Should, "UI Rendering Guidance",
        "A response event naming a request id the agent never issued is answered with HTTP 404 (the framework's hosted /responses route)."),
    rule!("HPD-IN-005", Should, "Live Event Envelope",
        "A binary WebSocket frame is a policy problem: the socket closes with 1008 (the framework's hosted WebSocket)."),
    rule!("HPD-IN-006", Must, "Live Event Envelope",
        "Rejected input is a bad request, not a fault of the agent: after it the agent still answers the next valid input with a message turn."),
    // Message and agent turns.
    rule!("HPD-TURN-001", Must, "Event Families",
        "A message turn that starts (MESSAGE_TURN_STARTED) ends with exactly one MESSAGE_TURN_FINISHED or MESSAGE_TURN_ERROR; none ends without having started."),
    rule!("HPD-TURN-002", Should, "Correlation And Projection Fields",
        "A message turn's events carry one messageTurnId from STARTED to its FINISHED or ERROR (ids do not drift inside a turn)."),
    rule!("HPD-TURN-003", Should, "Event Families",
        "Agent turns pair by iteration inside a message turn: AGENT_TURN_FINISHED names an iteration that started, and every started iteration finishes before the message turn does."),
    rule!("HPD-TURN-004", Should, "Event Families",
        "Text, reasoning, tool and interactive events arrive inside a message turn, never after it ended."),
    // Streaming blocks.
    rule!("HPD-STREAM-001", Must, "UI Rendering Guidance",
        "Text and reasoning blocks follow start/delta/end by messageId: a DELTA or END names a block its START opened, and nothing names a block after its END."),
    rule!("HPD-STREAM-002", Should, "UI Rendering Guidance",
        "Every text and reasoning block that starts ends (TEXT_MESSAGE_END, REASONING_MESSAGE_END) before its message turn ends."),
    // Tool calls.
    rule!("HPD-TOOL-001", Must, "UI Rendering Guidance",
        "TOOL_CALL_ARGS, TOOL_CALL_END and TOOL_CALL_RESULT carry the callId of a TOOL_CALL_START sent before them."),
    rule!("HPD-TOOL-002", Info, "Correlation And Projection Fields",
        "Whether TOOL_CALL_ARGS.argsJson is a string holding JSON is recorded (the spec never says; the framework's name suggests it)."),
    rule!("HPD-TOOL-003", Should, "UI Rendering Guidance",
        "Every tool call that starts gets its TOOL_CALL_RESULT and TOOL_CALL_END (in either order) before its message turn ends."),
    // Interactive middleware.
    rule!("HPD-ASK-001", Should, "UI Rendering Guidance",
        "A permission request answered with a matching PERMISSION_RESPONSE gets its outcome: PERMISSION_APPROVED or PERMISSION_DENIED with the same permissionId, as the response decided."),
    rule!("HPD-ASK-002", Should, "UI Rendering Guidance",
        "A denied permission's call does not run: no TOOL_CALL_RESULT carrying the tool's output (anything but the denial's text) follows PERMISSION_DENIED for its callId."),
    rule!("HPD-ASK-003", Should, "UI Rendering Guidance",
        "A clarification or continuation request answered with its matching response event lets the turn go on to its end (an approved continuation runs further agent turns)."),
    // Interruption.
    rule!("HPD-INT-001", Should, "Event Families",
        "An INTERRUPTION_REQUEST during a turn ends it: open blocks close, the turn ends (FINISHED or ERROR) and nothing more of it arrives."),
    // The hosted SSE stream.
    rule!("HPD-SSE-001", Should, "Live Event Envelope",
        "SSE event ids (the framework's sequence numbers) strictly increase along the stream."),
    rule!("HPD-SSE-002", Should, "Live Event Envelope",
        "A stream resumed after id N (Last-Event-ID or ?after=N) delivers exactly the events after N that were missed: no gap, no repeat."),
];
