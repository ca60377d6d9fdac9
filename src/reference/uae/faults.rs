//! The faults of the UAE reference target: each breaks one rule on purpose. Envelope faults
//! apply in both roles; the rest to the role that sends the event they break. Those that
//! reshape an event act in `event_faults.rs`, the faults of behaviour where the peer decides.

use crate::fault;
use crate::reference::Fault;
use crate::rules::ids::{
    UAE_CALL_001, UAE_CALL_002, UAE_DIR_001, UAE_ENV_001, UAE_ENV_002, UAE_ENV_004, UAE_ENV_005,
    UAE_ENV_006, UAE_ENV_008, UAE_EXE_001, UAE_EXE_002, UAE_MSG_001, UAE_RES_001, UAE_RES_002,
    UAE_RES_003, UAE_RES_004, UAE_ROB_001, UAE_SES_001, UAE_UI_001, UAE_UI_002, UAE_UI_003,
    UAE_UI_004, UAE_UI_005, UAE_VIEW_001, UAE_VIEW_002,
};

pub static FAULTS: &[Fault] = &[
    // Envelopes, both roles.
    fault!(
        "epoch-ts",
        [UAE_ENV_001],
        "ts is a number of epoch milliseconds, not a string",
        [("uae.agent.envelope", Fail), ("uae.exec.envelope", Fail)],
    ),
    fault!(
        "no-session-id",
        [UAE_ENV_001],
        "events carry no session_id",
        [
            ("uae.agent.envelope", Fail),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
            ("uae.exec.envelope", Fail),
        ],
    ),
    // A payload that is a string hides the view_id and the tool a case needs to answer.
    fault!(
        "payload-string",
        [UAE_ENV_001],
        "payload is the payload's JSON text, a string",
        [
            ("uae.agent.envelope", Fail),
            ("uae.agent.action-answered", Skip),
            ("uae.agent.tool-failure", Skip),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
            ("uae.exec.envelope", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    fault!(
        "id-without-prefix",
        [UAE_ENV_004],
        "ids are bare numbers (\"17\"), without evt_",
        [
            ("uae.agent.id-prefixes", Warn),
            ("uae.exec.id-prefixes", Warn)
        ],
    ),
    // Only recorded (UAE-ENV-008, info): nothing fails.
    fault!(
        "ts-without-millis",
        [UAE_ENV_008],
        "ts gives whole seconds (…:56Z)",
        [],
    ),
    fault!(
        "ts-not-rfc3339",
        [UAE_ENV_005],
        "ts is written as \"Thu Jan  8 12:34:56 2026\"",
        [
            ("uae.agent.timestamps", Warn),
            ("uae.exec.timestamps", Warn)
        ],
    ),
    fault!(
        "duplicate-ids",
        [UAE_ENV_006],
        "every event has the id evt_1",
        [
            ("uae.agent.unique-ids", Warn),
            ("uae.exec.unique-ids", Warn)
        ],
    ),
    fault!(
        "stalls-after-bad-input",
        [UAE_ROB_001],
        "after input it cannot use, it never answers again",
        [
            ("uae.agent.keeps-serving", Warn),
            ("uae.exec.keeps-serving", Warn)
        ],
    ),
    // The agent.
    fault!(
        "session-drift",
        [UAE_SES_001],
        "the agent answers in a session of its own",
        [("uae.agent.session", Fail)],
    ),
    fault!(
        "echoes-ui",
        [UAE_DIR_001],
        "the agent sends each ui.message back, as a ui.message",
        [("uae.agent.no-ui-events", Fail)],
    ),
    // Without a trace_id the call cannot be answered in a way the agent can pair: the cases
    // that need the agent's output after a result cannot see it.
    fault!(
        "call-without-trace",
        [UAE_ENV_002],
        "tool.call carries no trace_id",
        [
            ("uae.agent.call-trace", Fail),
            ("uae.agent.envelope", Skip),
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.tool-failure", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    fault!(
        "message-without-text",
        [UAE_MSG_001],
        "assistant.message puts its text under content",
        [("uae.agent.message", Fail)],
    ),
    fault!(
        "view-without-view-id",
        [UAE_VIEW_001],
        "assistant.view's view has no view_id",
        [
            ("uae.agent.view", Fail),
            ("uae.agent.action-answered", Skip)
        ],
    ),
    fault!(
        "view-kind-other",
        [UAE_VIEW_002],
        "assistant.view's view.kind is html",
        [("uae.agent.view-kind", Warn)],
    ),
    fault!(
        "call-without-tool",
        [UAE_CALL_001],
        "tool.call names no tool",
        [
            ("uae.agent.call", Fail),
            ("uae.agent.tool-failure", Skip),
            ("uae.agent.envelope", Skip),
            // wireprobe answers no call it cannot copy a session and tool from: the turn
            // that needs the answer does not finish, and the cases that need it skip.
            ("uae.agent.id-prefixes", Skip),
            ("uae.agent.session", Skip),
            ("uae.agent.trace-after-result", Skip),
            ("uae.agent.unique-ids", Skip),
        ],
    ),
    fault!(
        "args-not-object",
        [UAE_CALL_002],
        "tool.call's args are the args' JSON text, a string",
        [("uae.agent.call-args", Warn)],
    ),
    // The executor.
    // A result that names no trace, or another one, leaves its call unanswered as well.
    // A result that names no trace, or another one, answers no call a case is waiting on.
    fault!(
        "result-without-trace",
        [UAE_ENV_002, UAE_RES_001],
        "tool.result carries no trace_id",
        [
            ("uae.exec.result-trace", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    fault!(
        "result-other-trace",
        [UAE_RES_002, UAE_RES_001],
        "tool.result carries a trace_id of its own",
        [
            ("uae.exec.correlation", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.success", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    fault!(
        "result-other-tool",
        [UAE_RES_002],
        "tool.result names another tool",
        [("uae.exec.correlation", Fail)],
    ),
    fault!(
        "two-results",
        [UAE_RES_001],
        "every call is answered twice",
        [("uae.exec.one-result", Fail)],
    ),
    // Unanswered, an unknown tool or a rejected row is not refused either.
    // A case whose only call fails hears nothing at all: it cannot be judged (error), and
    // the one that only records, records that.
    fault!(
        "no-result-for-failures",
        [UAE_RES_001, UAE_EXE_001, UAE_EXE_002],
        "a call that fails gets no result",
        [
            ("uae.exec.one-result", Fail),
            ("uae.exec.correlation", Skip),
            ("uae.exec.envelope", Skip),
            ("uae.exec.failure", Error),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.unknown-tool", Error),
        ],
    ),
    fault!(
        "ok-not-boolean",
        [UAE_RES_003],
        "ok is the string \"true\" or \"false\"",
        [
            ("uae.exec.success", Fail),
            ("uae.exec.failure", Skip),
            ("uae.exec.rejects-invalid-args", Skip),
            ("uae.exec.unknown-tool", Skip),
        ],
    ),
    fault!(
        "ok-true-with-error",
        [UAE_RES_003],
        "a success carries an error object too",
        [("uae.exec.success", Fail)],
    ),
    fault!(
        "ok-false-with-result",
        [UAE_RES_004],
        "a failure carries a result object too",
        [("uae.exec.failure", Fail)],
    ),
    fault!(
        "error-without-code",
        [UAE_RES_004],
        "a failure's error has no code",
        [("uae.exec.failure", Fail)],
    ),
    fault!(
        "unknown-tool-ok",
        [UAE_EXE_001],
        "a call to a tool it does not have succeeds",
        [("uae.exec.unknown-tool", Warn)],
    ),
    fault!(
        "no-validation",
        [UAE_EXE_002],
        "args are never checked: weight_lbs -5 is saved",
        [("uae.exec.rejects-invalid-args", Warn)],
    ),
];

/// Faults of the UAE reference Web UI (`wireprobe client uae --fault NAME`).
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "message-without-text",
        [UAE_UI_001],
        "its ui.message carries payload.body, not payload.text"
    ),
    fault!(
        "action-without-kind",
        [UAE_UI_002],
        "its ui.action's action has no kind"
    ),
    fault!(
        "values-as-pairs",
        [UAE_UI_005],
        "its form.submit gives values as an array of [name, value] pairs, not an object"
    ),
    fault!(
        "stops-on-unrenderable-view",
        [UAE_ROB_001],
        "stops acting after a view whose kind it does not render"
    ),
    fault!(
        "acts-on-unknown-view",
        [UAE_UI_003],
        "its ui.action names a view_id no assistant.view carried"
    ),
    fault!(
        "switches-session",
        [UAE_UI_004],
        "each ui.action carries a session_id of its own, not the session's"
    ),
    fault!(
        "reuses-ids",
        [UAE_ENV_006],
        "every event it sends has the id evt_1"
    ),
    fault!(
        "stops-on-garbage",
        [UAE_ROB_001],
        "stops acting (or calling) after a frame that is not JSON"
    ),
    fault!(
        "stops-on-unknown-type",
        [UAE_ROB_001],
        "stops acting (or calling) after an event of a type the spec does not define"
    ),
    // As the agent calling its executor over stdio.
    fault!(
        "call-without-tool",
        [UAE_CALL_001],
        "its tool.call's payload names no tool"
    ),
    fault!(
        "args-not-object",
        [UAE_CALL_002],
        "its tool.call's args are a string, not an object"
    ),
    fault!(
        "stops-after-failure",
        [UAE_ROB_001],
        "stops calling after a tool.result with ok false"
    ),
];
