//! The faults of the UAE reference target: each breaks one rule on purpose. Envelope faults
//! apply in both roles; the rest to the role that sends the event they break.

use crate::fault;
use crate::reference::Fault;

pub static FAULTS: &[Fault] = &[
    // Envelopes, both roles.
    fault!(
        "epoch-ts",
        ["UAE-ENV-001"],
        "ts is a number of epoch milliseconds, not a string"
    ),
    fault!(
        "no-session-id",
        ["UAE-ENV-001"],
        "events carry no session_id"
    ),
    fault!(
        "payload-string",
        ["UAE-ENV-001"],
        "payload is the payload's JSON text, a string"
    ),
    fault!(
        "id-without-prefix",
        ["UAE-ENV-004"],
        "ids are bare numbers (\"17\"), without evt_"
    ),
    fault!(
        "ts-without-millis",
        ["UAE-ENV-008"],
        "ts gives whole seconds (…:56Z)"
    ),
    fault!(
        "ts-not-rfc3339",
        ["UAE-ENV-005"],
        "ts is written as \"Thu Jan  8 12:34:56 2026\""
    ),
    fault!(
        "duplicate-ids",
        ["UAE-ENV-006"],
        "every event has the id evt_1"
    ),
    fault!(
        "stalls-after-bad-input",
        ["UAE-ROB-001"],
        "after input it cannot use, it never answers again"
    ),
    // The agent.
    fault!(
        "session-drift",
        ["UAE-SES-001"],
        "the agent answers in a session of its own"
    ),
    fault!(
        "echoes-ui",
        ["UAE-DIR-001"],
        "the agent sends each ui.message back, as a ui.message"
    ),
    fault!(
        "call-without-trace",
        ["UAE-ENV-002"],
        "tool.call carries no trace_id"
    ),
    fault!(
        "message-without-text",
        ["UAE-MSG-001"],
        "assistant.message puts its text under content"
    ),
    fault!(
        "view-without-view-id",
        ["UAE-VIEW-001"],
        "assistant.view's view has no view_id"
    ),
    fault!(
        "view-kind-other",
        ["UAE-VIEW-002"],
        "assistant.view's view.kind is html"
    ),
    fault!(
        "call-without-tool",
        ["UAE-CALL-001"],
        "tool.call names no tool"
    ),
    fault!(
        "args-not-object",
        ["UAE-CALL-002"],
        "tool.call's args are the args' JSON text, a string"
    ),
    // The executor.
    // A result that names no trace, or another one, leaves its call unanswered as well.
    fault!(
        "result-without-trace",
        ["UAE-ENV-002", "UAE-RES-001"],
        "tool.result carries no trace_id"
    ),
    fault!(
        "result-other-trace",
        ["UAE-RES-002", "UAE-RES-001"],
        "tool.result carries a trace_id of its own"
    ),
    fault!(
        "result-other-tool",
        ["UAE-RES-002"],
        "tool.result names another tool"
    ),
    fault!(
        "two-results",
        ["UAE-RES-001"],
        "every call is answered twice"
    ),
    // Unanswered, an unknown tool or a rejected row is not refused either.
    fault!(
        "no-result-for-failures",
        ["UAE-RES-001", "UAE-EXE-001", "UAE-EXE-002"],
        "a call that fails gets no result"
    ),
    fault!(
        "ok-not-boolean",
        ["UAE-RES-003"],
        "ok is the string \"true\" or \"false\""
    ),
    fault!(
        "ok-true-with-error",
        ["UAE-RES-003"],
        "a success carries an error object too"
    ),
    fault!(
        "ok-false-with-result",
        ["UAE-RES-004"],
        "a failure carries a result object too"
    ),
    fault!(
        "error-without-code",
        ["UAE-RES-004"],
        "a failure's error has no code"
    ),
    fault!(
        "unknown-tool-ok",
        ["UAE-EXE-001"],
        "a call to a tool it does not have succeeds"
    ),
    fault!(
        "no-validation",
        ["UAE-EXE-002"],
        "args are never checked: weight_lbs -5 is saved"
    ),
];

/// Faults of the UAE reference Web UI (`wireprobe client uae --fault NAME`).
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "message-without-text",
        ["UAE-UI-001"],
        "its ui.message carries payload.body, not payload.text"
    ),
    fault!(
        "action-without-kind",
        ["UAE-UI-002"],
        "its ui.action's action has no kind"
    ),
    fault!(
        "values-as-pairs",
        ["UAE-UI-005"],
        "its form.submit gives values as an array of [name, value] pairs, not an object"
    ),
    fault!(
        "stops-on-unrenderable-view",
        ["UAE-ROB-001"],
        "stops acting after a view whose kind it does not render"
    ),
    fault!(
        "acts-on-unknown-view",
        ["UAE-UI-003"],
        "its ui.action names a view_id no assistant.view carried"
    ),
    fault!(
        "switches-session",
        ["UAE-UI-004"],
        "each ui.action carries a session_id of its own, not the session's"
    ),
    fault!(
        "reuses-ids",
        ["UAE-ENV-006"],
        "every event it sends has the id evt_1"
    ),
    fault!(
        "stops-on-garbage",
        ["UAE-ROB-001"],
        "stops acting (or calling) after a frame that is not JSON"
    ),
    fault!(
        "stops-on-unknown-type",
        ["UAE-ROB-001"],
        "stops acting (or calling) after an event of a type the spec does not define"
    ),
    // As the agent calling its executor over stdio.
    fault!(
        "call-without-tool",
        ["UAE-CALL-001"],
        "its tool.call's payload names no tool"
    ),
    fault!(
        "args-not-object",
        ["UAE-CALL-002"],
        "its tool.call's args are a string, not an object"
    ),
    fault!(
        "stops-after-failure",
        ["UAE-ROB-001"],
        "stops calling after a tool.result with ok false"
    ),
];
