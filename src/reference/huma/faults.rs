//! The HUMA reference target's faults: each breaks one rule area on purpose.

use crate::fault;
use crate::reference::Fault;

pub static FAULTS: &[Fault] = &[
    fault!(
        "accepts-unknown-type",
        ["HUMA-VAL-001"],
        "accepts client events of any type"
    ),
    fault!(
        "no-name-limit",
        ["HUMA-VAL-002"],
        "accepts context-update names over 128 characters"
    ),
    fault!(
        "accepts-bad-outcome",
        ["HUMA-VAL-003"],
        "accepts tool-result outcomes off the list"
    ),
    fault!(
        "no-result-limit",
        ["HUMA-VAL-004"],
        "accepts results over 65,536 characters"
    ),
    fault!(
        "accepts-addon-without-data",
        ["HUMA-VAL-005"],
        "accepts addon-tool-event without an object data"
    ),
    fault!(
        "accepts-forbidden-keys",
        ["HUMA-VAL-006", "HUMA-VAL-008"],
        "does not look for __proto__, constructor or prototype"
    ),
    fault!(
        "rejects-canceled-results",
        ["HUMA-VAL-007"],
        "answers a canceled tool-result with an error"
    ),
    fault!(
        "error-without-message",
        ["HUMA-ERR-001"],
        "sends error events without message"
    ),
    fault!(
        "wrong-error-code",
        ["HUMA-ERR-002"],
        "sends validation errors with code BAD_EVENT"
    ),
    fault!(
        "disconnects-after-error",
        ["HUMA-ERR-003"],
        "disconnects the client after answering an invalid event"
    ),
    fault!(
        "error-on-event-channel",
        ["HUMA-TR-001"],
        "sends errors on the 'event' channel"
    ),
    fault!(
        "unknown-server-event",
        ["HUMA-SRV-001"],
        "sends a {type: thinking} event before acting"
    ),
    fault!(
        "bad-tool-call-id",
        ["HUMA-SRV-002"],
        "tool-call ids are not UUIDs"
    ),
    fault!(
        "cancels-unknown-tool-call",
        ["HUMA-SRV-003"],
        "cancels a tool call it never issued on every triggering event"
    ),
    fault!(
        "bad-message-index",
        ["HUMA-SRV-004", "HUMA-LC-001"],
        "message_sent carries messageIndex equal to messageCount (so the order is wrong too)"
    ),
    fault!(
        "message-before-typing",
        ["HUMA-LC-001"],
        "sends the first message_sent before typing_start"
    ),
    fault!(
        "no-confirmation-wait",
        ["HUMA-LC-002", "HUMA-LC-005"],
        "sends the next message without waiting for the confirmation (so a burst ends before it can be aborted)"
    ),
    fault!(
        "never-proceeds",
        ["HUMA-LC-003"],
        "waits for a missing confirmation forever"
    ),
    fault!(
        "no-interrupt",
        ["HUMA-LC-004"],
        "does not cancel outstanding tool calls on a triggering event"
    ),
    fault!(
        "no-typing-end-on-abort",
        ["HUMA-LC-005"],
        "ends an aborted burst without typing_end"
    ),
];

/// The reference client's faults (`wireprobe client huma --fault NAME`): each breaks one
/// client rule.
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "oversized-result",
        ["HUMA-CLI-001"],
        "answers lookup_movie with a result over 65,536 characters"
    ),
    fault!(
        "wrong-tool-name",
        ["HUMA-CLI-002"],
        "names another tool (NAME_v2) in its tool-results"
    ),
    fault!(
        "answers-twice",
        ["HUMA-CLI-002"],
        "sends each successful tool-result twice"
    ),
    fault!(
        "unknown-tool-success",
        ["HUMA-CLI-003"],
        "answers a tool-call for a tool it does not have with outcome success"
    ),
    fault!(
        "failure-without-error",
        ["HUMA-CLI-004"],
        "sends failure results without an error message"
    ),
    fault!(
        "ignores-cancel",
        ["HUMA-CLI-005"],
        "runs a cancelled tool on and answers it with success"
    ),
    fault!(
        "canceled-triggering",
        ["HUMA-CLI-006"],
        "sends canceled results with triggering true"
    ),
    fault!(
        "no-confirmation",
        ["HUMA-CLI-007"],
        "never confirms a message_sent"
    ),
    fault!(
        "wrong-message-index",
        ["HUMA-CLI-007"],
        "confirms a message_sent with the next messageIndex"
    ),
    fault!(
        "result-with-proto",
        ["HUMA-CLI-008"],
        "puts a __proto__ key in lookup_movie's result"
    ),
    fault!(
        "dies-after-error",
        ["HUMA-CLI-009"],
        "disconnects when an error event arrives"
    ),
    fault!(
        "crashes-on-unknown-type",
        ["HUMA-CLI-009"],
        "disconnects when a server event of an unknown type arrives"
    ),
    fault!(
        "pollutes",
        ["HUMA-CLI-009"],
        "disconnects when a tool-call's arguments hold __proto__, constructor or prototype"
    ),
    fault!(
        "chokes-on-oversize",
        ["HUMA-CLI-009"],
        "disconnects when a message_sent over 1,000,000 bytes arrives"
    ),
];
