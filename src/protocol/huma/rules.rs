//! The HUMA rule catalogue. The spec's sections are plain lines (no markup); a rule's source
//! names the line that heads its section.

use crate::rules::{Level::*, Rule};

macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!("000_9be7860959b3b922.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // Transport.
    rule!("HUMA-TR-001", Must, "Transport",
        "Server events arrive as Socket.IO 'event' emits (tool-call, cancel-tool-call, messaging); errors arrive as 'error' emits."),
    rule!("HUMA-TR-002", Info, "Transport",
        "What the server does with malformed Socket.IO input (an unknown packet type, truncated JSON, an event other than 'message', a frame over maxPayload) is recorded, and whether a valid event is still accepted afterwards."),
    // What the server must accept and reject.
    rule!("HUMA-VAL-001", Must, "Client Events",
        "A client event that is not a JSON object whose type is context-update, tool-result or addon-tool-event is rejected with an error event."),
    rule!("HUMA-VAL-002", Must, "context-update",
        "A context-update without a boolean triggering, a name of 1 to 128 characters, an object context and a string description is rejected."),
    rule!("HUMA-VAL-003", Must, "tool-result",
        "A tool-result without a boolean triggering, string toolCallId and toolName, and an outcome of success, failure or canceled (or with a non-string error) is rejected."),
    rule!("HUMA-VAL-004", Must, "Validation Limits",
        "A tool-result whose result is longer than 65,536 characters JSON-serialised is rejected; one of exactly 65,536 is accepted."),
    rule!("HUMA-VAL-005", Must, "addon-tool-event",
        "An addon-tool-event without a string toolCallId and an object data is rejected."),
    rule!("HUMA-VAL-006", Must, "Client Events",
        "A client event with __proto__, constructor or prototype as a key anywhere in context or data (nested, inside arrays too) is rejected (\"in context and data fields\")."),
    rule!("HUMA-VAL-008", Should, "Validation Limits",
        "The server rejects a tool-result whose object result holds __proto__, constructor or prototype as a key (\"Any Record field is recursively checked\"; result is typed any, so a should)."),
    rule!("HUMA-VAL-007", Must, "Client Events",
        "A valid client event is accepted: no error event answers it."),
    // Errors.
    rule!("HUMA-ERR-001", Must, "error",
        "An error event is an object with type \"error\", a string message and, optionally, a string code."),
    rule!("HUMA-ERR-002", Should, "error",
        "A validation error carries code \"INVALID_EVENT\"."),
    rule!("HUMA-ERR-003", Should, "error",
        "After rejecting an invalid event the connection stays usable: the server does not disconnect, and a valid event afterwards is accepted."),
    // Server events.
    rule!("HUMA-SRV-001", Must, "Server Events",
        "Every server event is an object whose type is tool-call, cancel-tool-call or messaging."),
    rule!("HUMA-SRV-002", Must, "tool-call",
        "A tool-call carries a UUID toolCallId, a string toolName and an object arguments."),
    rule!("HUMA-SRV-003", Must, "cancel-tool-call",
        "A cancel-tool-call carries a string toolCallId and toolName (reason, if present, a string) and names a tool call that is still outstanding."),
    rule!("HUMA-SRV-004", Must, "messaging",
        "A messaging event's event is typing_start, message_sent or typing_end; message_sent carries a string message and numbers messageIndex < messageCount; toolCallId and reason are strings and extra_args an object when present."),
    // Lifecycles.
    rule!("HUMA-LC-001", Must, "Messaging Lifecycle",
        "A burst runs typing_start, then message_sent with messageIndex 0, 1, … in order, then typing_end."),
    rule!("HUMA-LC-002", Must, "Messaging Addon Confirmation",
        "The server waits for the client's addon-tool-event confirming a message before it sends the next one (up to the 30-second timeout)."),
    rule!("HUMA-LC-003", Should, "Messaging Addon Confirmation",
        "Without a confirmation the server proceeds after the 30-second timeout."),
    rule!("HUMA-LC-004", Should, "cancel-tool-call",
        "A triggering event that arrives while a tool call is outstanding interrupts the agent: the server cancels that call with cancel-tool-call."),
    rule!("HUMA-LC-005", Should, "messaging",
        "A burst that is aborted ends with typing_end whose reason is \"canceled\"."),
    rule!("HUMA-LC-006", Info, "tool-result",
        "What the server does with a tool-result for a toolCallId it never issued is recorded (the spec does not say)."),
];
