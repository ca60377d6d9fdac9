//! Faults of the Nuum reference target: each breaks one rule area on purpose.

use crate::fault;
use crate::reference::Fault;
use crate::rules::ids::{
    NUUM_AST_001, NUUM_AST_002, NUUM_BAD_001, NUUM_BAD_002, NUUM_CTL_001, NUUM_CTL_002,
    NUUM_CTL_003, NUUM_CTL_004, NUUM_CTL_006, NUUM_HOST_001, NUUM_HOST_002, NUUM_HOST_003,
    NUUM_INIT_001, NUUM_INIT_002, NUUM_INIT_003, NUUM_INJ_001, NUUM_INJ_002, NUUM_OUT_002,
    NUUM_RES_001, NUUM_RES_002, NUUM_RES_003, NUUM_RES_004, NUUM_SID_001, NUUM_SID_002,
    NUUM_SYS_001, NUUM_TASK_001, NUUM_TASK_002, NUUM_TASK_003, NUUM_TOOL_001, NUUM_TOOL_002,
    NUUM_TR_001, NUUM_TR_002, NUUM_TURN_001, NUUM_TURN_002,
};

pub static FAULTS: &[Fault] = &[
    fault!("stdout-log-lines", [NUUM_TR_001], "prints a plain-text log line on stdout after init"),
    fault!("exits-when-idle", [NUUM_TR_002], "exits, stdin still open, once idle for 800 ms after its first turn"),
    fault!("init-not-first", [NUUM_INIT_001], "writes a system/starting line before init"),
    fault!("init-twice", [NUUM_INIT_001], "sends system/init twice"),
    fault!("init-after-input", [NUUM_INIT_001], "writes system/init only once it has read its first input line"),
    fault!("init-without-version", [NUUM_INIT_003], "init has no version"),
    fault!("init-without-session-id", [NUUM_INIT_002], "init has no session_id"),
    fault!("assistant-wrong-role", [NUUM_OUT_002], "assistant messages have role \"model\""),
    fault!("assistant-without-session-id", [NUUM_AST_001], "assistant lines carry no session_id"),
    fault!("tool-use-without-input", [NUUM_AST_002], "tool_use blocks have no input"),
    fault!("tool-result-wrong-id", [NUUM_TOOL_001, NUUM_TOOL_002], "tool results name a tool_use_id no tool_use had"),
    // The second result of a turn that comes after the next user message is, for all a judge
    // can tell, that message's turn's result before its turn_accepted (NUUM-TURN-001).
    fault!("double-result", [NUUM_RES_001, NUUM_TURN_001], "every turn ends with two results"),
    fault!("no-result-on-fail", [NUUM_RES_001], "a failing turn ends with system/error and no result"),
    fault!("result-unknown-subtype", [NUUM_RES_002], "a failed turn's result has subtype \"failed\""),
    // The public build's own forms (specs/README.md): reported as the spec's wording grades
    // them (suites/nuum/ERRATA.md 19).
    fault!("error-subtypes", [NUUM_RES_002], "a failed turn's result has subtype error_during_execution, as the public build writes it"),
    fault!("status-subtype", [NUUM_CTL_006], "status is answered with system/status, as the public build does"),
    fault!("result-without-duration", [NUUM_OUT_002], "results have no duration_ms"),
    fault!("result-without-session-id", [NUUM_RES_003], "results carry no session_id"),
    fault!("is-error-on-success", [NUUM_RES_004], "success results say is_error: true"),
    fault!("no-turn-accepted", [NUUM_TURN_001], "turns start without system/turn_accepted"),
    fault!("rejects-content-blocks", [NUUM_TURN_002], "a user message whose content is an array of blocks is refused"),
    fault!("bad-task-status", [NUUM_TASK_001], "alarms have status \"scheduled\""),
    fault!("task-without-timestamps", [NUUM_TASK_002], "tasks have no createdAt and alarms no firesAt"),
    fault!("no-tasks-snapshot", [NUUM_TASK_003], "never sends a tasks snapshot"),
    fault!("error-without-message", [NUUM_SYS_001], "system/error carries `error`, not `message`"),
    fault!("session-id-drift", [NUUM_SID_001], "results carry a session_id other than init's"),
    fault!("new-session-id", [NUUM_SID_002], "a new session_id on every start (none stored in the database)"),
    fault!("ignores-interrupt", [NUUM_CTL_001], "interrupt does not cancel the running turn"),
    fault!("no-status-answer", [NUUM_CTL_002], "status gets no answer"),
    fault!("no-heartbeat-ack", [NUUM_CTL_003], "heartbeat gets no answer"),
    fault!("status-always-idle", [NUUM_CTL_004], "status_response says running: false during a turn"),
    fault!("no-queueing", [NUUM_INJ_001, NUUM_INJ_002], "a message sent mid-turn gets no system/queued and waits for the turn to end"),
    fault!("no-injection", [NUUM_INJ_002], "queued messages are not injected; they run as the next turn"),
    fault!("exits-on-bad-input", [NUUM_BAD_001], "exits with status 1 on any bad input line"),
    fault!("stalls-on-huge-line", [NUUM_BAD_001, NUUM_BAD_002], "stops reading stdin after a line over its limit (so that line gets no system/error either)"),
    fault!("silent-on-bad-input", [NUUM_BAD_002], "ignores bad input without a system/error"),
];

/// Faults of the Nuum reference host (`wireprobe client nuum --fault NAME`).
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "bad-role",
        [NUUM_HOST_001],
        "its user messages say role \"human\""
    ),
    fault!(
        "unknown-action",
        [NUUM_HOST_001],
        "sends a control message with action \"pause\" before each user message"
    ),
    fault!(
        "not-json",
        [NUUM_HOST_002],
        "writes a line of plain text before each user message"
    ),
    fault!(
        "stops-on-garbage",
        [NUUM_HOST_003],
        "sends nothing more after an agent line that is not JSON"
    ),
    fault!(
        "stops-on-unknown-output",
        [NUUM_HOST_003],
        "sends nothing more after output of a type or subtype it does not know"
    ),
    fault!(
        "stops-on-error",
        [NUUM_HOST_003],
        "sends nothing more after a system error or a failed turn"
    ),
];
