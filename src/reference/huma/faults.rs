//! The HUMA reference target's faults: each breaks one rule area on purpose.

use crate::fault;
use crate::reference::Fault;
use crate::rules::ids::{
    HUMA_CLI_001, HUMA_CLI_002, HUMA_CLI_003, HUMA_CLI_004, HUMA_CLI_005, HUMA_CLI_006,
    HUMA_CLI_007, HUMA_CLI_008, HUMA_CLI_009, HUMA_ERR_001, HUMA_ERR_002, HUMA_ERR_003,
    HUMA_LC_001, HUMA_LC_002, HUMA_LC_003, HUMA_LC_004, HUMA_LC_005, HUMA_SRV_001, HUMA_SRV_002,
    HUMA_SRV_003, HUMA_SRV_004, HUMA_TR_001, HUMA_VAL_001, HUMA_VAL_002, HUMA_VAL_003,
    HUMA_VAL_004, HUMA_VAL_005, HUMA_VAL_006, HUMA_VAL_007, HUMA_VAL_008,
};

pub static FAULTS: &[Fault] = &[
    fault!(
        "accepts-unknown-type",
        [HUMA_VAL_001],
        "accepts client events of any type",
        [
            ("huma.invalid.not-an-object", Fail),
            ("huma.invalid.unknown-type", Fail),
            ("huma.invalid.type-case", Fail),
        ],
    ),
    fault!(
        "no-name-limit",
        [HUMA_VAL_002],
        "accepts context-update names over 128 characters",
        [("huma.invalid.name-129", Fail)],
    ),
    fault!(
        "accepts-bad-outcome",
        [HUMA_VAL_003],
        "accepts tool-result outcomes off the list",
        [("huma.invalid.outcome", Fail)],
    ),
    fault!(
        "no-result-limit",
        [HUMA_VAL_004],
        "accepts results over 65,536 characters",
        [("huma.invalid.result-65537", Fail)],
    ),
    fault!(
        "accepts-addon-without-data",
        [HUMA_VAL_005],
        "accepts addon-tool-event without an object data",
        [("huma.invalid.addon-without-data", Fail)],
    ),
    fault!(
        "accepts-forbidden-keys",
        [HUMA_VAL_006, HUMA_VAL_008],
        "does not look for __proto__, constructor or prototype",
        [
            ("huma.invalid.proto-top", Fail),
            ("huma.invalid.constructor-top", Fail),
            ("huma.invalid.prototype-top", Fail),
            ("huma.invalid.forbidden-five-deep", Fail),
            ("huma.invalid.forbidden-in-array", Fail),
            ("huma.invalid.forbidden-in-data", Fail),
            ("huma.invalid.proto-in-result", Warn),
        ],
    ),
    fault!(
        "rejects-canceled-results",
        [HUMA_VAL_007],
        "answers a canceled tool-result with an error",
        [("huma.valid.canceled-result", Fail), ("huma.cancel.on-triggering", Fail)],
    ),
    fault!(
        "error-without-message",
        [HUMA_ERR_001],
        "sends error events without message",
        [("huma.error.shape", Fail)],
    ),
    fault!(
        "wrong-error-code",
        [HUMA_ERR_002],
        "sends validation errors with code BAD_EVENT",
        [("huma.error.code", Warn)],
    ),
    fault!(
        "disconnects-after-error",
        [HUMA_ERR_003],
        "disconnects the client after answering an invalid event",
        [("huma.error.connection-usable", Warn)],
    ),
    fault!(
        "error-on-event-channel",
        [HUMA_TR_001],
        "sends errors on the 'event' channel",
        [("huma.transport.error-channel", Fail)],
    ),
    fault!(
        "unknown-server-event",
        [HUMA_SRV_001],
        "sends a {type: thinking} event before acting",
        [("huma.server.known-types", Fail)],
    ),
    fault!(
        "bad-tool-call-id",
        [HUMA_SRV_002],
        "tool-call ids are not UUIDs",
        [("huma.tool-call.shape", Fail)],
    ),
    fault!(
        "cancels-unknown-tool-call",
        [HUMA_SRV_003],
        "cancels a tool call it never issued on every triggering event",
        [("huma.cancel.names-outstanding", Fail)],
    ),
    fault!(
        "bad-message-index",
        [HUMA_SRV_004, HUMA_LC_001],
        "message_sent carries messageIndex equal to messageCount (so the order is wrong too)",
        [
            ("huma.messaging.order", Fail),
            ("huma.messaging.fields", Fail),
            ("huma.messaging.waits-for-confirmation", Skip),
            ("huma.messaging.timeout-proceeds", Skip),
            ("huma.messaging.abort", Skip),
        ],
    ),
    fault!(
        "message-before-typing",
        [HUMA_LC_001],
        "sends the first message_sent before typing_start",
        [("huma.messaging.order", Fail)],
    ),
    fault!(
        "no-confirmation-wait",
        [HUMA_LC_002, HUMA_LC_005],
        "sends the next message without waiting for the confirmation (so a burst ends before it can be aborted)",
        [("huma.messaging.waits-for-confirmation", Fail), ("huma.messaging.abort", Warn)],
    ),
    fault!(
        "never-proceeds",
        [HUMA_LC_003],
        "waits for a missing confirmation forever",
        [("huma.messaging.timeout-proceeds", Warn)],
    ),
    fault!(
        "no-interrupt",
        [HUMA_LC_004],
        "does not cancel outstanding tool calls on a triggering event",
        [("huma.cancel.on-triggering", Warn), ("huma.cancel.names-outstanding", Skip)],
    ),
    fault!(
        "no-typing-end-on-abort",
        [HUMA_LC_005],
        "ends an aborted burst without typing_end",
        [("huma.messaging.abort", Warn)],
    ),
];

/// The reference client's faults (`wireprobe client huma --fault NAME`): each breaks one
/// client rule.
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "oversized-result",
        [HUMA_CLI_001],
        "answers lookup_movie with a result over 65,536 characters"
    ),
    fault!(
        "wrong-tool-name",
        [HUMA_CLI_002],
        "names another tool (NAME_v2) in its tool-results"
    ),
    fault!(
        "answers-twice",
        [HUMA_CLI_002],
        "sends each successful tool-result twice"
    ),
    fault!(
        "unknown-tool-success",
        [HUMA_CLI_003],
        "answers a tool-call for a tool it does not have with outcome success"
    ),
    fault!(
        "failure-without-error",
        [HUMA_CLI_004],
        "sends failure results without an error message"
    ),
    fault!(
        "ignores-cancel",
        [HUMA_CLI_005],
        "runs a cancelled tool on and answers it with success"
    ),
    fault!(
        "canceled-triggering",
        [HUMA_CLI_006],
        "sends canceled results with triggering true"
    ),
    fault!(
        "no-confirmation",
        [HUMA_CLI_007],
        "never confirms a message_sent"
    ),
    fault!(
        "wrong-message-index",
        [HUMA_CLI_007],
        "confirms a message_sent with the next messageIndex"
    ),
    fault!(
        "result-with-proto",
        [HUMA_CLI_008],
        "puts a __proto__ key in lookup_movie's result"
    ),
    fault!(
        "dies-after-error",
        [HUMA_CLI_009],
        "disconnects when an error event arrives"
    ),
    fault!(
        "crashes-on-unknown-type",
        [HUMA_CLI_009],
        "disconnects when a server event of an unknown type arrives"
    ),
    fault!(
        "pollutes",
        [HUMA_CLI_009],
        "disconnects when a tool-call's arguments hold __proto__, constructor or prototype"
    ),
    fault!(
        "chokes-on-oversize",
        [HUMA_CLI_009],
        "disconnects when a message_sent over 1,000,000 bytes arrives"
    ),
];
