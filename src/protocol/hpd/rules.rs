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

/// A rule only the agent can break (what it sends, how it answers).
macro_rules! agent_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Server, "004_194452bd36a9fc7f.txt", $($rule)*)
    };
}

/// A rule only the client can break (wireprobe serves; `run hpd --client`).
macro_rules! client_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Client, "004_194452bd36a9fc7f.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // The live envelope.
    rule!("HPD-ENV-001", Must, "Live Event Envelope",
        "Every live event (an SSE event's data, a WebSocket text frame) is one JSON object carrying a string version and a string type (\"Live envelopes always include version and type\").",
        "Hosted SSE and WebSocket use AgentEventSerializer envelopes: … Live envelopes always include version and type"),
    rule!("HPD-ENV-002", Should, "Live Event Envelope",
        "version is \"1.0\" (the envelope example; the framework's serializer).",
        "\"version\": \"1.0\", … facts: Every live envelope has `\"version\":\"1.0\"` and `\"type\"`"),
    rule!("HPD-ENV-003", Should, "Live Event Envelope",
        "Built-in type names are SCREAMING_SNAKE_CASE (the framework reads type case-insensitively, so another case is a should finding).",
        "Built-in type names use SCREAMING_SNAKE_CASE. … facts: The framework's deserializer matches `type` case-insensitively — the spec says built-in names are SCREAMING_SNAKE_CASE, so a lower-case type is a `should`-level finding at most."),
    rule!("HPD-ENV-004", Must, "Live Event Envelope",
        "Payload property names are camelCase (no snake_case, kebab-case or PascalCase names).",
        "Payload properties are camelCase and null values are omitted."),
    rule!("HPD-ENV-005", Must, "Live Event Envelope",
        "Null values are omitted: no payload property is null.",
        "Payload properties are camelCase and null values are omitted."),
    rule!("HPD-ENV-006", Info, "Event Families",
        "An event type this profile does not know (a custom or newer event) is recorded, never failed.",
        "Unknown or missing type values cannot be deserialized as known events. … handle unknown custom events through onAny(...)"),
    rule!("HPD-ENV-007", Info, "Correlation And Projection Fields",
        "The types the framework gives a known event's fields are recorded (the spec gives none): ids (messageTurnId, callId, permissionId, continuationId, requestId) non-empty strings, iteration an integer, argsJson a string, approved a boolean, duration a number or a TimeSpan string.",
        "callId | Tool-call lifecycle grouping | … permissionId and other request ids | Bidirectional request/response grouping | … facts: | `AGENT_TURN_STARTED`, `AGENT_TURN_FINISHED` | `iteration` | … facts: | `TOOL_CALL_ARGS` | `callId`, `argsJson` |"),
    rule!("HPD-ENV-008", Should, "Live Event Envelope",
        "messageId and a delta's text are strings, as the spec's one envelope example shows them.",
        "\"type\": \"TEXT_DELTA\", \"text\": \"hello\", \"messageId\": \"message-id\""),
    agent_rule!("HPD-ENV-009", Should, "Live Event Envelope",
        "The agent sends each live event over the WebSocket as a text frame holding its envelope (\"AgentEventSerializer envelopes\" are JSON; the spec names no frame type).",
        "Hosted SSE and WebSocket use AgentEventSerializer envelopes: … facts: `GET …/ws` (WebSocket: text frames carry input/response envelopes;"),
    // Input handling.
    agent_rule!("HPD-IN-001", Must, "Live Event Envelope",
        "HTTP input answers an invalid event envelope (not JSON, no type, an unknown type) as a bad request: HTTP 400.",
        "Unknown or missing type values cannot be deserialized as known events. HTTP input treats invalid event envelopes as bad requests. … facts: 200, or 400 for an invalid envelope"),
    agent_rule!("HPD-IN-002", Must, "Live Event Envelope",
        "The WebSocket closes on an invalid event frame with the invalid-payload close status, 1007.",
        "WebSocket closes invalid event frames with an invalid-payload close status. … facts: an invalid frame closes with 1007 invalid payload"),
    agent_rule!("HPD-IN-003", Should, "Event Families",
        "A valid input envelope (USER_TEXT_INPUT, USER_MESSAGES_INPUT) posted to the inputs route is accepted with a 2xx status (the framework answers 202).",
        "| Input | UserTextInputEvent, UserMessagesInputEvent, InterruptionRequestEvent | upstream/control | input handling surface; … facts: `POST …/inputs` (body: a `USER_TEXT_INPUT`/`USER_MESSAGES_INPUT` envelope or `{text}`; 202)"),
    agent_rule!("HPD-IN-004", Should, "UI Rendering Guidance",
        "A response event naming a request id the agent never issued is answered with HTTP 404 (the framework's hosted /responses route).",
        "answer with the matching response event through WebSocket, the hosted HTTP /responses route, or agent.RespondAsync(...) in a local app. … facts: 404 unknown request id"),
    agent_rule!("HPD-IN-005", Should, "Live Event Envelope",
        "A binary WebSocket frame is a policy problem: the socket closes with 1008 (the framework's hosted WebSocket).",
        "facts: text frames carry input/response envelopes … facts: a policy problem with 1008"),
    agent_rule!("HPD-IN-006", Must, "Live Event Envelope",
        "Rejected input is a bad request, not a fault of the agent: after it the agent still answers the next valid input with a message turn.",
        "HTTP input treats invalid event envelopes as bad requests."),
    // Message and agent turns.
    agent_rule!("HPD-TURN-001", Must, "Event Families",
        "A message turn that starts (MESSAGE_TURN_STARTED) ends with exactly one MESSAGE_TURN_FINISHED or MESSAGE_TURN_ERROR; none ends without having started.",
        "| Message turn lifecycle | MessageTurnStartedEvent, MessageTurnFinishedEvent, MessageTurnErrorEvent |"),
    agent_rule!("HPD-TURN-002", Should, "Correlation And Projection Fields",
        "A message turn's events carry one messageTurnId from STARTED to its FINISHED or ERROR (ids do not drift inside a turn).",
        "Clients can project that stream into transcripts, timelines, workflow views, prompt queues, or trace trees by using correlation fields when they are present. … facts: | `MESSAGE_TURN_STARTED` | `messageTurnId`, `conversationId`, `agentName` | … facts: | `MESSAGE_TURN_FINISHED` | `messageTurnId`, `conversationId`, `agentName`, `duration`, `usage` |"),
    agent_rule!("HPD-TURN-003", Should, "Event Families",
        "Agent turns pair by iteration inside a message turn: AGENT_TURN_FINISHED names an iteration that started, and every started iteration finishes before the message turn does.",
        "| Agent turn lifecycle | AgentTurnStartedEvent, AgentTurnFinishedEvent | … facts: | `AGENT_TURN_STARTED`, `AGENT_TURN_FINISHED` | `iteration` |"),
    agent_rule!("HPD-TURN-004", Should, "Event Families",
        "Text, reasoning, tool and interactive events arrive inside a message turn, never after it ended.",
        "| Message turn lifecycle | MessageTurnStartedEvent, MessageTurnFinishedEvent, MessageTurnErrorEvent | … messageId | Text, reasoning, and tool activity under a message |"),
    // Streaming blocks.
    agent_rule!("HPD-STREAM-001", Must, "UI Rendering Guidance",
        "Text and reasoning blocks follow start/delta/end by messageId: a DELTA or END names a block its START opened, and nothing names a block after its END.",
        "For text output, render TextMessageStartEvent, append TextDeltaEvent, and close the block on TextMessageEndEvent. … For reasoning output, use the same start/delta/end pattern … messageId | Text, reasoning, and tool activity under a message |"),
    agent_rule!("HPD-STREAM-002", Should, "UI Rendering Guidance",
        "Every text and reasoning block that starts ends (TEXT_MESSAGE_END, REASONING_MESSAGE_END) before its message turn ends.",
        "For text output, render TextMessageStartEvent, append TextDeltaEvent, and close the block on TextMessageEndEvent. … For reasoning output, use the same start/delta/end pattern"),
    // Tool calls.
    agent_rule!("HPD-TOOL-001", Must, "UI Rendering Guidance",
        "TOOL_CALL_ARGS, TOOL_CALL_END and TOOL_CALL_RESULT carry the callId of a TOOL_CALL_START sent before them.",
        "For tool calls, use start/args/result/end events to show activity, arguments, and results. … callId | Tool-call lifecycle grouping |"),
    agent_rule!("HPD-TOOL-002", Info, "Correlation And Projection Fields",
        "Whether TOOL_CALL_ARGS.argsJson is a string holding JSON is recorded (the spec never says; the framework's name suggests it).",
        "For tool calls, use start/args/result/end events to show activity, arguments, and results. … facts: | `TOOL_CALL_ARGS` | `callId`, `argsJson` |"),
    agent_rule!("HPD-TOOL-003", Should, "UI Rendering Guidance",
        "Every tool call that starts gets its TOOL_CALL_RESULT and TOOL_CALL_END (in either order) before its message turn ends.",
        "For tool calls, use start/args/result/end events to show activity, arguments, and results. … | Tool calls | ToolCallStartEvent, ToolCallArgsEvent, ToolCallResultEvent, ToolCallEndEvent |"),
    // Interactive middleware.
    agent_rule!("HPD-ASK-001", Should, "UI Rendering Guidance",
        "A permission request answered with a matching PERMISSION_RESPONSE gets its outcome: PERMISSION_APPROVED or PERMISSION_DENIED with the same permissionId, as the response decided.",
        "For interactive middleware, render request events and answer with the matching response event … permissionId and other request ids | Bidirectional request/response grouping | … facts: | `PERMISSION_APPROVED` | `permissionId`, `sourceName` | … facts: | `PERMISSION_DENIED` | `permissionId`, `sourceName`, `callId`, `reason` |"),
    agent_rule!("HPD-ASK-002", Should, "UI Rendering Guidance",
        "A denied permission's call does not run: no TOOL_CALL_RESULT carrying the tool's output (anything but the denial's text) follows PERMISSION_DENIED for its callId.",
        "For interactive middleware, render request events and answer with the matching response event … facts: | `PERMISSION_DENIED` | `permissionId`, `sourceName`, `callId`, `reason` |"),
    agent_rule!("HPD-ASK-003", Should, "UI Rendering Guidance",
        "A clarification or continuation request answered with its matching response event lets the turn go on to its end (an approved continuation runs further agent turns).",
        "For interactive middleware, render request events and answer with the matching response event … facts: | `CONTINUATION_RESPONSE` (client → server) | `continuationId`, `sourceName`, `approved`, `extensionAmount` |"),
    // Interruption.
    agent_rule!("HPD-INT-001", Should, "Event Families",
        "An INTERRUPTION_REQUEST during a turn ends it: open blocks close, the turn ends (FINISHED or ERROR) and nothing more of it arrives.",
        "| Input | UserTextInputEvent, UserMessagesInputEvent, InterruptionRequestEvent | upstream/control | … | Control | branch-run lifecycle and interruption handling |"),
    // The hosted SSE stream.
    agent_rule!("HPD-SSE-001", Should, "Live Event Envelope",
        "SSE event ids (the framework's sequence numbers) strictly increase along the stream.",
        "Events arrive as a stream. … facts: `GET …/events/live` (SSE, one envelope per `data:` line, `id:` = sequence number,"),
    agent_rule!("HPD-SSE-002", Should, "Live Event Envelope",
        "A stream resumed after id N (Last-Event-ID or ?after=N) delivers exactly the events after N that were missed: no gap, no repeat.",
        "facts: `?after=N` to resume"),
    // What binds the client: a UI facing a hosted agent (wireprobe serves the binding).
    client_rule!("HPD-CLI-001", Should, "UI Rendering Guidance",
        "A response event answers a request the agent issued, with the response type of that request (PERMISSION_RESPONSE for PERMISSION_REQUEST by permissionId, CONTINUATION_RESPONSE by continuationId, CLARIFICATION_RESPONSE and CLIENT_TOOL_INVOKE_RESPONSE by requestId), once.",
        "For interactive middleware, render request events and answer with the matching response event through WebSocket, the hosted HTTP /responses route, or agent.RespondAsync(...) in a local app. … permissionId and other request ids | Bidirectional request/response grouping |"),
    client_rule!("HPD-CLI-002", Should, "UI Rendering Guidance",
        "Each envelope goes to its route: a response event to /responses, an input to /inputs, an interruption to /interrupt (or every one over the WebSocket).",
        "answer with the matching response event through WebSocket, the hosted HTTP /responses route … facts: `POST …/inputs` (body: a `USER_TEXT_INPUT`/`USER_MESSAGES_INPUT` envelope or `{text}`; 202), … facts: `POST …/responses` (a response envelope such as `PERMISSION_RESPONSE`;"),
    client_rule!("HPD-CLI-003", Should, "UI Rendering Guidance",
        "A permission, continuation or clarification request is answered with its response event (the case waits for it).",
        "For interactive middleware, render request events and answer with the matching response event through WebSocket, the hosted HTTP /responses route"),
    client_rule!("HPD-CLI-004", Should, "Correlation And Projection Fields",
        "A client whose event stream the agent ended reopens it resuming after the last event id it received (Last-Event-ID or ?after=N): not at the live end, which loses what was sent meanwhile, and not from an earlier or unknown id.",
        "Events arrive as a stream. … facts: `GET …/events/live` (SSE, one envelope per `data:` line, `id:` = sequence number, `: heartbeat` comments, `?after=N` to resume)"),
    client_rule!("HPD-CLI-005", Should, "UI Rendering Guidance",
        "The client keeps working through what it does not know: after a custom event type, heartbeat comments and an event that is not JSON it still answers the next request.",
        "For JavaScript and TypeScript apps, use AgentClient to … handle unknown custom events through onAny(...) … Unknown or missing type values cannot be deserialized as known events."),
    client_rule!("HPD-CLI-006", Should, "Live Event Envelope",
        "What the client sends is an event the agent can deserialize: an input, a response or an interruption of the spec's families, not a type the profile does not know (an invalid envelope, which HTTP input refuses as a bad request; a custom type needs the agent's own registration).",
        "Unknown or missing type values cannot be deserialized as known events. HTTP input treats invalid event envelopes as bad requests. … Custom event types must be registered with the event serializer"),
];
