//! The HUMA rule catalogue. The spec's sections are plain lines (no markup); a rule's source
//! names the line that heads its section.

use crate::rules::{Level::*, Rule};

/// A rule for what the HUMA server does (the side the spec's catalogue was first written for).
macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Server, "000_9be7860959b3b922.txt", $($rule)*)
    };
}

/// A rule for what the client does.
macro_rules! client_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Client, "000_9be7860959b3b922.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // Transport.
    rule!("HUMA-TR-001", Must, "Transport",
        "Server events arrive as Socket.IO 'event' emits (tool-call, cancel-tool-call, messaging); errors arrive as 'error' emits.",
        "All communication uses Socket.IO over WebSocket. … socket.on('event', handler)  // tool-call, messaging … socket.on('error', handler)  // error events … All server events arrive on the \"event\" Socket.IO channel: socket.on('event', handler)."),
    rule!("HUMA-TR-002", Info, "Transport",
        "What the server does with malformed Socket.IO input (an unknown packet type, truncated JSON, an event other than 'message', a frame over maxPayload) is recorded, and whether a valid event is still accepted afterwards.",
        "All communication uses Socket.IO over WebSocket. … Every client event is a JSON object sent via socket.emit('message', event)."),
    // What the server must accept and reject.
    rule!("HUMA-VAL-001", Must, "Client Events",
        "A client event that is not a JSON object whose type is context-update, tool-result or addon-tool-event is rejected with an error event.",
        "Validation: The event must be a JSON object with a type field set to one of: context-update, tool-result, addon-tool-event. … error — validation or server error"),
    rule!("HUMA-VAL-002", Must, "context-update",
        "A context-update without a boolean triggering, a name of 1 to 128 characters, an object context and a string description is rejected.",
        "triggeringbooleanYesWhether this event should trigger the agent to respond … namestringYesEvent name identifying what happened (1–128 chars) … contextobjectYesArbitrary key-value data representing current state … descriptionstringYesHuman-readable description of what triggered this event"),
    rule!("HUMA-VAL-003", Must, "tool-result",
        "A tool-result without a boolean triggering, string toolCallId and toolName, and an outcome of success, failure or canceled (or with a non-string error) is rejected.",
        "triggeringbooleanYesWhether to trigger further agent action … toolCallIdstringYesThe toolCallId from the original tool-call event … toolNamestringYesThe tool name from the original tool-call event … outcomestringYes\"success\", \"failure\", or \"canceled\" … errorstringNoError message on failure"),
    rule!("HUMA-VAL-004", Must, "Validation Limits",
        "A tool-result whose result is longer than 65,536 characters JSON-serialised is rejected; one of exactly 65,536 is accepted.",
        "Maximum result size (tool-result)65,536 characters (JSON-serialized) … resultanyNoReturn value on success. Must be JSON-serializable, max 65,536 chars."),
    rule!("HUMA-VAL-005", Must, "addon-tool-event",
        "An addon-tool-event without a string toolCallId and an object data is rejected.",
        "toolCallIdstringYesThe toolCallId from the addon's originating event … dataobjectYesPayload for the addon (structure depends on the addon)"),
    rule!("HUMA-VAL-006", Must, "Client Events",
        "A client event with __proto__, constructor or prototype as a key anywhere in context or data (nested, inside arrays too) is rejected (\"in context and data fields\").",
        "Any Record field is recursively checked for dangerous keys (__proto__, constructor, prototype). … Forbidden keys (recursive, in context and data fields)__proto__, constructor, prototype"),
    rule!("HUMA-VAL-008", Should, "Validation Limits",
        "The server rejects a tool-result whose object result holds __proto__, constructor or prototype as a key (\"Any Record field is recursively checked\"; result is typed any, so a should).",
        "Any Record field is recursively checked for dangerous keys (__proto__, constructor, prototype). … resultanyNoReturn value on success. Must be JSON-serializable, max 65,536 chars."),
    rule!("HUMA-VAL-007", Must, "Client Events",
        "A valid client event is accepted: no error event answers it.",
        "Validation: The event must be a JSON object with a type field set to one of: context-update, tool-result, addon-tool-event. … error — validation or server error"),
    // Errors.
    rule!("HUMA-ERR-001", Must, "error",
        "An error event is an object with type \"error\", a string message and, optionally, a string code.",
        "typestringAlways \"error\" … messagestringHuman-readable error description … codestring?Error code (e.g., \"INVALID_EVENT\")"),
    rule!("HUMA-ERR-002", Should, "error",
        "A validation error carries code \"INVALID_EVENT\".",
        "code: 'INVALID_EVENT' … codestring?Error code (e.g., \"INVALID_EVENT\")"),
    rule!("HUMA-ERR-003", Should, "error",
        "After rejecting an invalid event the connection stays usable: the server does not disconnect, and a valid event afterwards is accepted.",
        "Server-side error. Arrives on the \"error\" Socket.IO channel: socket.on('error', handler)."),
    // Server events.
    rule!("HUMA-SRV-001", Must, "Server Events",
        "Every server event is an object whose type is tool-call, cancel-tool-call or messaging.",
        "Each event is a JSON object with a type field. … tool-call — request tool execution … cancel-tool-call — abort pending tool … messaging — typing & message delivery"),
    rule!("HUMA-SRV-002", Must, "tool-call",
        "A tool-call carries a UUID toolCallId, a string toolName and an object arguments.",
        "toolCallIdstringUnique identifier (UUID). Use this in the tool-result response. … toolNamestringName of the tool to execute. Must match a registered tool. … argumentsobjectArguments for the tool, as determined by the agent."),
    rule!("HUMA-SRV-003", Must, "cancel-tool-call",
        "A cancel-tool-call carries a string toolCallId and toolName (reason, if present, a string) and names a tool call that is still outstanding.",
        "The agent is requesting cancellation of a previously issued tool call. … toolCallIdstringThe toolCallId of the tool call to cancel … toolNamestringName of the tool being canceled … reasonstring?Human-readable reason for cancellation"),
    rule!("HUMA-SRV-004", Must, "messaging",
        "A messaging event's event is typing_start, message_sent or typing_end; message_sent carries a string message and numbers messageIndex < messageCount; toolCallId and reason are strings and extra_args an object when present.",
        "eventstring\"typing_start\", \"message_sent\", or \"typing_end\" … toolCallIdstring?Tool call ID for the send_message invocation … messagestring?Message text (present on message_sent) … messageIndexnumber?Zero-based index in the burst (present on message_sent) … messageCountnumber?Total messages in the burst (present on message_sent) … reasonstring?Reason for typing_end (e.g., \"canceled\") … extra_argsobject?Additional parameters passed through from the agent"),
    // Lifecycles.
    rule!("HUMA-LC-001", Must, "Messaging Lifecycle",
        "A burst runs typing_start, then message_sent with messageIndex 0, 1, … in order, then typing_end.",
        "The full lifecycle for a burst of N messages: … Servertyping_startClient shows typing indicator … Servermessage_sentClient delivers message … (repeat for remaining messages) … messageIndexnumber?Zero-based index in the burst (present on message_sent) … Hide the typing indicator."),
    rule!("HUMA-LC-002", Must, "Messaging Addon Confirmation",
        "The server waits for the client's addon-tool-event confirming a message before it sends the next one (up to the 30-second timeout).",
        "Clientaddon-tool-eventServer receives confirmation … Timeout: The server waits up to 30 seconds for each confirmation."),
    rule!("HUMA-LC-003", Should, "Messaging Addon Confirmation",
        "Without a confirmation the server proceeds after the 30-second timeout.",
        "If no confirmation arrives, it assumes success and proceeds. … Messaging addon confirmation timeout30 seconds"),
    rule!("HUMA-LC-004", Should, "cancel-tool-call",
        "A triggering event that arrives while a tool call is outstanding interrupts the agent: the server cancels that call with cancel-tool-call.",
        "This happens when the agent is interrupted (e.g., a new triggering event arrives while a tool is still executing)."),
    rule!("HUMA-LC-005", Should, "messaging",
        "A burst that is aborted ends with typing_end whose reason is \"canceled\".",
        "reasonstring?Reason for typing_end (e.g., \"canceled\") … reason: \"canceled\" means the messaging burst was aborted."),
    rule!("HUMA-LC-006", Info, "tool-result",
        "What the server does with a tool-result for a toolCallId it never issued is recorded (the spec does not say).",
        "Returns the result of a tool call that the agent previously requested via a tool-call server event. … toolCallIdstringYesThe toolCallId from the original tool-call event"),
    // What binds the client (wireprobe serves; `run huma --client`). The spec is written for
    // client implementers: its "Client Responsibility" paragraphs are the client's rules.
    client_rule!("HUMA-CLI-001", Must, "Client Events",
        "Every event the client sends is a JSON object emitted on 'message' whose type is context-update, tool-result or addon-tool-event, with the fields its table requires and within the validation limits (name 1 to 128 characters, result at most 65,536 characters serialised, no __proto__, constructor or prototype key in context or data).",
        "Every client event is a JSON object sent via socket.emit('message', event). There are exactly three event types. … Validation: The event must be a JSON object with a type field set to one of: context-update, tool-result, addon-tool-event. … Maximum result size (tool-result)65,536 characters (JSON-serialized) … Forbidden keys (recursive, in context and data fields)__proto__, constructor, prototype"),
    client_rule!("HUMA-CLI-002", Must, "tool-call",
        "Each tool-call is answered by one tool-result carrying its toolCallId and toolName; no tool-result names a call the server never issued or one already answered.",
        "Send back a tool-result event with the matching toolCallId and toolName. … Returns the result of a tool call that the agent previously requested via a tool-call server event."),
    client_rule!("HUMA-CLI-003", Must, "tool-call",
        "A tool-call naming a tool the client does not have is answered with outcome failure.",
        "If the tool is unknown, send a failed result:"),
    client_rule!("HUMA-CLI-004", Should, "The outcome Field",
        "A tool-result with outcome failure carries the error message in error.",
        "failureTool failed. error should contain the error message."),
    client_rule!("HUMA-CLI-005", Must, "cancel-tool-call",
        "A cancel-tool-call for an outstanding call is answered by a tool-result with outcome canceled, and no other outcome is sent for that call after the cancel.",
        "Abort the in-flight tool execution if possible, then send a canceled result: … canceledTool was canceled in response to a cancel-tool-call from the server."),
    client_rule!("HUMA-CLI-006", Should, "The triggering Field in Tool Results",
        "A canceled result has triggering false.",
        "Result is recorded but doesn't trigger further action. Use for canceled results or side-effect-only tools (e.g., update_preferences)."),
    client_rule!("HUMA-CLI-007", Must, "message_sent",
        "Each message_sent is confirmed by an addon-tool-event whose toolCallId is the event's and whose data echoes its messageIndex with a boolean success (context, when present, an object; error, when present, a string).",
        "Deliver the message to the platform, then send an addon-tool-event confirmation back to the server. … messageIndexnumberZero-based index echoed from message_sent … successbooleanWhether the message was delivered successfully … contextobject?Updated conversation context (on success), to keep agent state synchronized … errorstring?Error message (on failure)"),
    client_rule!("HUMA-CLI-008", Should, "Client Events",
        "A tool-result's object result holds no __proto__, constructor or prototype key (\"Any Record field is recursively checked\"; result is typed any, so a should).",
        "Any Record field is recursively checked for dangerous keys (__proto__, constructor, prototype). … resultanyNoReturn value on success. Must be JSON-serializable, max 65,536 chars."),
    client_rule!("HUMA-CLI-009", Should, "Server Events",
        "The client keeps serving after an error event, a server event of a type it does not know, a tool-call whose arguments hold __proto__ keys, or an oversized message: it stays connected and still answers a tool-call (ERRATA: the spec lists what arrives, nothing allows a client to stop).",
        "Server-side error. Arrives on the \"error\" Socket.IO channel: socket.on('error', handler). … All server events arrive on the \"event\" Socket.IO channel: socket.on('event', handler). Each event is a JSON object with a type field."),
    client_rule!("HUMA-CLI-010", Info, "Transport",
        "What the client does with a Socket.IO packet it cannot parse is recorded: socket.io-client closes the connection on a parse error, and the spec, which only names Socket.IO, does not say otherwise (ERRATA).",
        "All communication uses Socket.IO over WebSocket."),
];
