//! Faults of the Nuum reference target: each breaks one rule area on purpose.

use crate::fault;
use crate::reference::Fault;

pub static FAULTS: &[Fault] = &[
    fault!("stdout-log-lines", ["NUUM-TR-001"], "prints a plain-text log line on stdout after init"),
    fault!("exits-when-idle", ["NUUM-TR-002"], "exits, stdin still open, once idle for 800 ms after its first turn"),
    fault!("init-not-first", ["NUUM-INIT-001"], "writes a system/starting line before init"),
    fault!("init-twice", ["NUUM-INIT-001"], "sends system/init twice"),
    fault!("init-after-input", ["NUUM-INIT-001"], "writes system/init only once it has read its first input line"),
    fault!("init-without-version", ["NUUM-INIT-003"], "init has no version"),
    fault!("init-without-session-id", ["NUUM-INIT-002"], "init has no session_id"),
    fault!("assistant-wrong-role", ["NUUM-OUT-002"], "assistant messages have role \"model\""),
    fault!("assistant-without-session-id", ["NUUM-AST-001"], "assistant lines carry no session_id"),
    fault!("tool-use-without-input", ["NUUM-AST-002"], "tool_use blocks have no input"),
    fault!("tool-result-wrong-id", ["NUUM-TOOL-001", "NUUM-TOOL-002"], "tool results name a tool_use_id no tool_use had"),
    // The second result of a turn that comes after the next user message is, for all a judge
    // can tell, that message's turn's result before its turn_accepted (NUUM-TURN-001).
    fault!("double-result", ["NUUM-RES-001", "NUUM-TURN-001"], "every turn ends with two results"),
    fault!("no-result-on-fail", ["NUUM-RES-001"], "a failing turn ends with system/error and no result"),
    fault!("result-unknown-subtype", ["NUUM-RES-002"], "a failed turn's result has subtype \"failed\""),
    // The public build's own forms (specs/README.md): reported as the spec's wording grades
    // them (suites/nuum/ERRATA.md 19).
    fault!("error-subtypes", ["NUUM-RES-002"], "a failed turn's result has subtype error_during_execution, as the public build writes it"),
    fault!("status-subtype", ["NUUM-CTL-006"], "status is answered with system/status, as the public build does"),
    fault!("result-without-duration", ["NUUM-OUT-002"], "results have no duration_ms"),
    fault!("result-without-session-id", ["NUUM-RES-003"], "results carry no session_id"),
    fault!("is-error-on-success", ["NUUM-RES-004"], "success results say is_error: true"),
    fault!("no-turn-accepted", ["NUUM-TURN-001"], "turns start without system/turn_accepted"),
    fault!("rejects-content-blocks", ["NUUM-TURN-002"], "a user message whose content is an array of blocks is refused"),
    fault!("bad-task-status", ["NUUM-TASK-001"], "alarms have status \"scheduled\""),
    fault!("task-without-timestamps", ["NUUM-TASK-002"], "tasks have no createdAt and alarms no firesAt"),
    fault!("no-tasks-snapshot", ["NUUM-TASK-003"], "never sends a tasks snapshot"),
    fault!("error-without-message", ["NUUM-SYS-001"], "system/error carries `error`, not `message`"),
    fault!("session-id-drift", ["NUUM-SID-001"], "results carry a session_id other than init's"),
    fault!("new-session-id", ["NUUM-SID-002"], "a new session_id on every start (none stored in the database)"),
    fault!("ignores-interrupt", ["NUUM-CTL-001"], "interrupt does not cancel the running turn"),
    fault!("no-status-answer", ["NUUM-CTL-002"], "status gets no answer"),
    fault!("no-heartbeat-ack", ["NUUM-CTL-003"], "heartbeat gets no answer"),
    fault!("status-always-idle", ["NUUM-CTL-004"], "status_response says running: false during a turn"),
    fault!("no-queueing", ["NUUM-INJ-001", "NUUM-INJ-002"], "a message sent mid-turn gets no system/queued and waits for the turn to end"),
    fault!("no-injection", ["NUUM-INJ-002"], "queued messages are not injected; they run as the next turn"),
    fault!("exits-on-bad-input", ["NUUM-BAD-001"], "exits with status 1 on any bad input line"),
    fault!("stalls-on-huge-line", ["NUUM-BAD-001", "NUUM-BAD-002"], "stops reading stdin after a line over its limit (so that line gets no system/error either)"),
    fault!("silent-on-bad-input", ["NUUM-BAD-002"], "ignores bad input without a system/error"),
];

/// Faults of the Nuum reference host (`wireprobe client nuum --fault NAME`).
pub static CLIENT_FAULTS: &[Fault] = &[
    fault!(
        "bad-role",
        ["NUUM-HOST-001"],
        "its user messages say role \"human\""
    ),
    fault!(
        "unknown-action",
        ["NUUM-HOST-001"],
        "sends a control message with action \"pause\" before each user message"
    ),
    fault!(
        "not-json",
        ["NUUM-HOST-002"],
        "writes a line of plain text before each user message"
    ),
    fault!(
        "stops-on-garbage",
        ["NUUM-HOST-003"],
        "sends nothing more after an agent line that is not JSON"
    ),
    fault!(
        "stops-on-unknown-output",
        ["NUUM-HOST-003"],
        "sends nothing more after output of a type or subtype it does not know"
    ),
    fault!(
        "stops-on-error",
        ["NUUM-HOST-003"],
        "sends nothing more after a system error or a failed turn"
    ),
];
