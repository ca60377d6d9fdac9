//! The reference agent's faults (each breaks the rules it names, and only those) and variants
//! (what real AG-UI servers do differently, all legal), by name.

use crate::reference::{Fault, Variant};
use crate::rules::ids::{
    AGUI_ACT_001, AGUI_ACT_002, AGUI_HTTP_001, AGUI_HTTP_002, AGUI_HTTP_003, AGUI_HTTP_004,
    AGUI_HTTP_005, AGUI_ID_001, AGUI_ID_002, AGUI_ID_003, AGUI_ID_004, AGUI_INT_001, AGUI_IN_001,
    AGUI_IN_002, AGUI_IN_003, AGUI_RUN_001, AGUI_RUN_002, AGUI_RUN_003, AGUI_RUN_004, AGUI_RUN_005,
    AGUI_RUN_006, AGUI_RUN_007, AGUI_STATE_001, AGUI_STEP_001, AGUI_STR_001, AGUI_STR_002,
    AGUI_STR_003, AGUI_STR_004, AGUI_STR_005, AGUI_STR_006, AGUI_STR_007, AGUI_SUB_001,
    AGUI_SUB_002, AGUI_SUB_003, AGUI_SUB_004, AGUI_SUB_005, AGUI_SUB_006, AGUI_TOOL_001,
    AGUI_TOOL_002, AGUI_TOOL_003, AGUI_TOOL_004, AGUI_VAL_001, AGUI_VAL_002, AGUI_VAL_003,
    AGUI_VAL_004, AGUI_VER_001, AGUI_VER_002, AGUI_VER_003,
};
use crate::{fault, variant};

pub static FAULTS: &[Fault] = &[
    fault!(
        "malformed-field",
        [AGUI_VAL_001],
        "restates the conversation with a user message that has no content"
    ),
    fault!(
        "reasoning-as-assistant",
        [AGUI_VAL_001],
        "opens its reasoning message with role \"assistant\", a role the schema does not allow there (with `reason`)"
    ),
    fault!(
        "null-optional",
        [AGUI_VAL_002],
        "sends RUN_STARTED with parentRunId: null"
    ),
    fault!(
        "extra-field",
        [AGUI_VAL_003],
        "adds a property the schema does not describe to RUN_FINISHED"
    ),
    fault!(
        "private-event",
        [AGUI_VAL_004],
        "emits an event type the protocol does not describe inside the run"
    ),
    fault!(
        "starts-with-text",
        [AGUI_RUN_001],
        "opens the stream with a CUSTOM event before RUN_STARTED"
    ),
    fault!(
        "event-after-finish",
        [AGUI_RUN_002],
        "sends a CUSTOM event after RUN_FINISHED"
    ),
    fault!(
        "nested-run",
        [AGUI_RUN_003],
        "sends a second RUN_STARTED while the run is active"
    ),
    fault!(
        "leaves-message-open",
        [AGUI_RUN_004],
        "finishes the run without its last TEXT_MESSAGE_END"
    ),
    fault!(
        "truncates",
        [AGUI_RUN_005],
        "ends the answer's body before RUN_FINISHED"
    ),
    fault!(
        "unknown-outcome",
        [AGUI_RUN_006],
        "finishes the run with an outcome of type \"paused\""
    ),
    fault!(
        "cancelled-with-result",
        [AGUI_RUN_007],
        "finishes the run as cancelled and with a result"
    ),
    fault!(
        "own-thread-id",
        [AGUI_ID_001],
        "names a thread of its own on RUN_STARTED and RUN_FINISHED"
    ),
    fault!(
        "finishes-other-thread",
        [AGUI_ID_001],
        "names another threadId on RUN_FINISHED than on RUN_STARTED"
    ),
    fault!(
        "finishes-other-run",
        [AGUI_ID_002],
        "names another runId on RUN_FINISHED than on RUN_STARTED"
    ),
    fault!(
        "repeats-run",
        [AGUI_ID_003],
        "streams the requested run, then opens it again under the same runId"
    ),
    fault!(
        "reuses-message-id",
        [AGUI_ID_004],
        "gives its text message the id of the input's last user message"
    ),
    fault!(
        "no-version",
        [AGUI_VER_001],
        "declares no protocolVersion on RUN_STARTED"
    ),
    fault!(
        "echoes-version",
        [AGUI_VER_002],
        "declares the input's protocolVersion back when it is newer than its own"
    ),
    fault!(
        "long-version",
        [AGUI_VER_003],
        "declares protocolVersion \"1.1.0\""
    ),
    fault!(
        "double-start",
        [AGUI_STR_001],
        "sends its text message's TEXT_MESSAGE_START twice"
    ),
    fault!(
        "content-unopened",
        [AGUI_STR_002],
        "sends a TEXT_MESSAGE_CONTENT for a message it never opened"
    ),
    fault!(
        "reopens-as-user",
        [AGUI_STR_003],
        "reopens its closed text message with role user"
    ),
    fault!(
        "chunk-without-id",
        [AGUI_STR_004],
        "sends a first TEXT_MESSAGE_CHUNK without messageId (in chunked text)"
    ),
    fault!(
        "chunk-changes-role",
        [AGUI_STR_005],
        "repeats role as user on a continuation chunk (in chunked text)"
    ),
    fault!(
        "mixes-forms",
        [AGUI_STR_006],
        "closes a chunked text message with an explicit TEXT_MESSAGE_END (in chunked text)"
    ),
    fault!(
        "ambiguous-chunk",
        [AGUI_STR_007],
        "lets two subagents chunk messages at once and continues one without its id or tag"
    ),
    fault!(
        "double-step",
        [AGUI_STEP_001],
        "sends each STEP_STARTED twice (with `step`)"
    ),
    fault!(
        "patch-misses",
        [AGUI_STATE_001],
        "sends a STATE_DELTA replacing a path the state does not have"
    ),
    fault!(
        "activity-without-snapshot",
        [AGUI_ACT_001],
        "sends an ACTIVITY_DELTA for an activity no snapshot created"
    ),
    fault!(
        "activity-not-object",
        [AGUI_ACT_002],
        "sends an ACTIVITY_DELTA that replaces an activity's content with an array"
    ),
    fault!(
        "answers-frontend",
        [AGUI_TOOL_001],
        "answers its frontend tool call with TOOL_CALL_RESULT (with `frontend`)"
    ),
    fault!(
        "frontend-interrupts",
        [AGUI_TOOL_002],
        "finishes a run that left a frontend call as interrupted (with `frontend`)"
    ),
    fault!(
        "no-pending-list",
        [AGUI_TOOL_003],
        "leaves pendingToolCallIds out (with `frontend`)"
    ),
    fault!(
        "wrong-pending-list",
        [AGUI_TOOL_004],
        "lists a call it never made in pendingToolCallIds (with `frontend`)"
    ),
    fault!(
        "same-interrupt-ids",
        [AGUI_INT_001],
        "gives two interrupts of one outcome the same id (with `interrupt`)"
    ),
    fault!(
        "announces-late",
        [AGUI_SUB_001],
        "attributes a CUSTOM event to a subagent before announcing it"
    ),
    fault!(
        "announces-twice",
        [AGUI_SUB_002],
        "announces one subagent invocation twice"
    ),
    fault!(
        "unknown-parent",
        [AGUI_SUB_003],
        "names a parent invocation it never announced"
    ),
    fault!(
        "finishes-unannounced",
        [AGUI_SUB_006],
        "attributes an event to a subagent invocation it never announces, then closes it with SUBAGENT_FINISHED"
    ),
    fault!(
        "subagent-paused",
        [AGUI_SUB_005],
        "finishes a subagent invocation with an outcome of type \"paused\""
    ),
    fault!(
        "other-owner",
        [AGUI_SUB_004],
        "tags its text message's END with a subagent that did not open it"
    ),
    fault!(
        "serves-malformed",
        [AGUI_IN_001, AGUI_IN_003],
        "serves a run (answered 200) for an input the schema rejects"
    ),
    fault!(
        "rejects-novel",
        [AGUI_IN_002, AGUI_VER_002],
        "answers HTTP 400 to an input with members it does not know (a newer version's)"
    ),
    fault!(
        "rejects-in-stream",
        [AGUI_IN_003],
        "answers a malformed input with 200 and a stream opening with RUN_ERROR"
    ),
    fault!(
        "json-content-type",
        [AGUI_HTTP_001],
        "answers a run with Content-Type application/json"
    ),
    fault!(
        "proto-type-parameter",
        [AGUI_HTTP_003],
        "answers protobuf with a parameter on its Content-Type"
    ),
    fault!(
        "undecodable-frame",
        [AGUI_HTTP_004],
        "sends a protobuf frame whose bytes are no message before RUN_FINISHED"
    ),
    fault!(
        "crlf-lines",
        [AGUI_HTTP_005],
        "ends the SSE stream's lines with CR LF"
    ),
    fault!(
        "status-201",
        [AGUI_HTTP_002],
        "answers a run with status 201"
    ),
];

pub static VARIANTS: &[Variant] = &[
    variant!(
        "raw-events",
        "carries a provider event holding the input's last message as every event's rawEvent"
    ),
    variant!(
        "sse-only",
        "does not speak the protobuf binding: answers SSE whatever Accept admits"
    ),
    variant!(
        "chunks",
        "streams every text message as TEXT_MESSAGE_CHUNK events"
    ),
    variant!(
        "ids-on-every-chunk",
        "repeats the messageId on every chunk (with `chunks` or `chunks TEXT`)"
    ),
    variant!(
        "interleaved",
        "streams a tool call inside the text message that carries it"
    ),
    variant!(
        "replays",
        "restates the thread's earlier runs (as MESSAGES_SNAPSHOT) before the requested run"
    ),
    variant!(
        "keep-alive",
        "sends `: keep-alive` comment lines between events"
    ),
    variant!("other-ids", "mints ids of another shape"),
    variant!("echoes-input", "echoes the input on RUN_STARTED"),
    variant!(
        "explicit-success",
        "finishes runs with outcome {\"type\": \"success\"}"
    ),
    variant!("timestamps", "stamps every event with an integer timestamp"),
    variant!(
        "event-fields",
        "adds `event:` and `id:` fields to every SSE event"
    ),
];
