//! The reference client's faults (each breaks the client rules it names, and only those) and
//! variants (what real AG-UI clients do differently, all legal), by name.

use crate::reference::{Fault, Variant};
use crate::rules::ids::{
    AGUI_CLI_001, AGUI_CLI_002, AGUI_CLI_003, AGUI_CLI_004, AGUI_CLI_005, AGUI_CLI_006,
    AGUI_CLI_007, AGUI_CLI_008, AGUI_CLI_009, AGUI_CLI_010, AGUI_CLI_011, AGUI_CLI_012,
    AGUI_CLI_013, AGUI_CLI_014, AGUI_CLI_015, AGUI_CLI_016, AGUI_CLI_017, AGUI_CLI_018,
};
use crate::{fault, variant};

pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "malformed-input",
        [AGUI_CLI_001],
        "sends its user message with content 42, a number where the schema wants text"
    ),
    fault!(
        "null-member",
        [AGUI_CLI_002],
        "sends parentRunId: null rather than leaving it out"
    ),
    fault!(
        "extra-member",
        [AGUI_CLI_003],
        "sends a member RunAgentInput does not describe"
    ),
    fault!(
        "reuses-run-id",
        [AGUI_CLI_004],
        "continues a thread under the runId of the run before"
    ),
    fault!(
        "duplicate-message-id",
        [AGUI_CLI_005],
        "sends a developer message under the user message's id"
    ),
    fault!(
        "no-protocol-version",
        [AGUI_CLI_006],
        "declares no protocolVersion"
    ),
    fault!(
        "accepts-anything",
        [AGUI_CLI_007],
        "sends Accept: */* though it reads only SSE"
    ),
    fault!(
        "keeps-activity",
        [AGUI_CLI_008],
        "sends its activity messages back to the agent"
    ),
    fault!(
        "drops-tool-result",
        [AGUI_CLI_009],
        "continues a thread without a tool message for the call it ran"
    ),
    fault!(
        "no-call-in-history",
        [AGUI_CLI_010],
        "continues a thread with the tool's result but not the assistant message that made the call"
    ),
    fault!(
        "forgets-state",
        [AGUI_CLI_011],
        "starts every run from the empty state"
    ),
    fault!(
        "partial-patch",
        [AGUI_CLI_012],
        "applies a patch operation by operation, keeping what applied before one failed"
    ),
    fault!(
        "merges-snapshot",
        [AGUI_CLI_013],
        "merges a state snapshot into the state it had rather than replacing it"
    ),
    fault!(
        "stops-on-unknown",
        [AGUI_CLI_014],
        "gives up on a run that carries an event of a type it does not know"
    ),
    fault!(
        "accepts-after-close",
        [AGUI_CLI_015],
        "takes events that come after its run closed as part of the run"
    ),
    fault!(
        "coerces-malformed",
        [AGUI_CLI_016],
        "reads a malformed known value as best it can and carries on"
    ),
    fault!(
        "fails-on-sse-fields",
        [AGUI_CLI_017],
        "fails a run whose stream carries an id:, event: or retry: field"
    ),
    fault!(
        "new-thread-per-run",
        [AGUI_CLI_018],
        "starts every run on a thread of its own"
    ),
];

pub static CLIENT_VARIANTS: &[Variant] = &[
    variant!(
        "numbered-ids",
        "mints run-1, run-2… and message ids m-1, m-2… rather than UUIDs"
    ),
    variant!(
        "explicit-empty",
        "sends state, context and forwardedProps when they are empty rather than leaving them out"
    ),
    variant!(
        "accept-proto",
        "admits the protobuf media type in its Accept besides text/event-stream"
    ),
    variant!(
        "tool-error",
        "answers its tool's call with a tool message saying it failed (error set)"
    ),
    variant!("version-1-0", "declares protocolVersion 1.0"),
];
