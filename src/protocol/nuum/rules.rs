//! The Nuum rule catalogue. The spec (`003_d7769e1c0369e72c.txt`) has no RFC 2119 keywords: it
//! describes what Nuum does, and those descriptions are its normative content. Where a
//! behaviour is only shown in an example, or only implied, the rule is `should` and
//! `suites/nuum/ERRATA.md` says why.

use crate::rules::{Level::*, Rule};

macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!("003_d7769e1c0369e72c.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // Transport.
    rule!("NUUM-TR-001", Must, "Transport",
        "Every line the process writes to stdout is JSON (\"Newline-delimited JSON\"); blank lines are tolerated."),
    rule!("NUUM-TR-002", Must, "Transport",
        "The process stays alive between turns and keeps accepting messages: it does not exit while its stdin is open."),
    // Startup.
    rule!("NUUM-INIT-001", Must, "Init Message",
        "system/init is the first line on stdout and is sent once per process start."),
    rule!("NUUM-INIT-002", Must, "Session Identity",
        "init carries a session_id (\"The session_id appears in: The init message\")."),
    rule!("NUUM-INIT-003", Should, "Init Message",
        "init carries a string version and tools, an array of strings (only the example shows them)."),
    // Output messages.
    rule!("NUUM-OUT-001", Info, "Output Messages (Nuum → stdout)",
        "Output the spec does not list (another type, a system subtype or a content block type of its own) is recorded."),
    rule!("NUUM-OUT-002", Should, "Output Messages (Nuum → stdout)",
        "Each line the process writes has the form and field types the spec's examples show: an object with a string type; string session_id, message.role \"assistant\", model, ids, names, descriptions and messages; message.content and tasks arrays; boolean is_error and running; non-negative integer duration_ms and num_turns, positive integer position and message_count; a tool_result block with type tool_result, a string tool_use_id and content."),
    rule!("NUUM-AST-001", Must, "Session Identity",
        "An assistant line carries a message and a session_id (\"The session_id appears in: … All assistant messages\")."),
    rule!("NUUM-AST-002", Should, "Content Block Types",
        "A text block carries a string text; a tool_use block a string id, a string name and an object input."),
    rule!("NUUM-TOOL-001", Must, "Tool Result",
        "A tool result's tool_use_id names an earlier tool_use (\"Emitted after each tool execution\")."),
    rule!("NUUM-TOOL-002", Must, "Tool Result",
        "Each tool execution is followed by system/tool_result: in a turn that ends in success every tool_use has its tool_result before the result."),
    rule!("NUUM-RES-001", Must, "Result Message",
        "Every turn ends with exactly one result: no result arrives without a turn open."),
    rule!("NUUM-RES-002", Must, "Result Message",
        "A result's subtype is success, error or cancelled (error_during_execution and error_max_turns, as public builds write an error, count as error)."),
    rule!("NUUM-RES-003", Must, "Session Identity",
        "A result carries a session_id (\"The session_id appears in: … All result messages\")."),
    rule!("NUUM-RES-004", Should, "Result Message",
        "is_error is false on a success result and true on an error result."),
    rule!("NUUM-TURN-001", Must, "Turn Accepted",
        "A user message that starts a turn gets system/turn_accepted before the turn's first assistant output, tool result or result."),
    rule!("NUUM-TURN-002", Must, "User Message",
        "A user message whose content is a string or an array of text blocks is accepted: it starts a turn that ends in a result, with no system/error."),
    rule!("NUUM-TASK-001", Must, "Tasks Snapshot",
        "Each task's type is research, reflect or alarm (\"Task types\"), and its status running for a task, pending for an alarm (\"Task statuses\")."),
    rule!("NUUM-TASK-002", Should, "Tasks Snapshot",
        "A task carries createdAt and an alarm firesAt, as RFC 3339 timestamps."),
    rule!("NUUM-TASK-003", Must, "Tasks Snapshot",
        "A tasks snapshot is emitted when a task or an alarm is created, and when a task completes or an alarm fires."),
    rule!("NUUM-SYS-001", Should, "System Messages",
        "system/error carries a string message."),
    rule!("NUUM-SID-001", Must, "Session Identity",
        "Within a process, session_id is the same in init, every assistant and result line, and every other line that carries one."),
    rule!("NUUM-SID-002", Must, "Session Identity",
        "The session_id persists with the database: after a restart on the same database, init carries the same one."),
    // Control messages.
    rule!("NUUM-CTL-001", Must, "Control Messages",
        "interrupt during a turn ends it with a result of subtype cancelled."),
    rule!("NUUM-CTL-002", Must, "System Messages",
        "status (\"Get server status\") is answered with system/status_response, or system/status as public builds write it."),
    rule!("NUUM-CTL-003", Must, "System Messages",
        "heartbeat is answered with system/heartbeat_ack."),
    rule!("NUUM-CTL-004", Should, "Control Messages",
        "status_response.running is true while a turn runs and false when none does."),
    rule!("NUUM-CTL-005", Info, "Control Messages",
        "What the process does with interrupt when no turn runs is recorded (the spec does not say)."),
    // Mid-turn injection.
    rule!("NUUM-INJ-001", Must, "Mid-Turn Message Injection",
        "A user message sent while a turn runs is answered with system/queued."),
    rule!("NUUM-INJ-002", Must, "Mid-Turn Message Injection",
        "Queued messages are injected (system/injected, its message_count never more than are queued) before the turn's next assistant output."),
    // Bad input.
    rule!("NUUM-BAD-001", Must, "Transport",
        "After bad input (invalid JSON, a line that is not an object, an unknown type or control action, a user message with a wrong role or no content, a huge line, invalid UTF-8) the process keeps running and answers the next message."),
    rule!("NUUM-BAD-002", Should, "System Messages",
        "Bad input is answered with system/error, so the host learns the line was not taken."),
];
