//! The Nuum rule catalogue. The spec (`003_d7769e1c0369e72c.txt`) has no RFC 2119 keywords: it
//! describes what Nuum does, and those descriptions are its normative content. Where a
//! behaviour is only shown in an example, or only implied, the rule is `should` and
//! `suites/nuum/ERRATA.md` says why.

use crate::rules::{Level::*, Rule};

/// A rule the Nuum process (the agent) can break.
macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Server, "003_d7769e1c0369e72c.txt", $($rule)*)
    };
}

/// A rule the host that starts the process can break (wireprobe stands in for its agent;
/// `run nuum --client`).
macro_rules! host_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Client, "003_d7769e1c0369e72c.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // Transport.
    rule!("NUUM-TR-001", Must, "Transport",
        "Every line the process writes to stdout is JSON (\"Newline-delimited JSON\"); blank lines are tolerated.",
        "**Format**: Newline-delimited JSON (NDJSON) … **Output**: stdout"),
    rule!("NUUM-TR-002", Must, "Transport",
        "The process stays alive between turns and keeps accepting messages: it does not exit while its stdin is open.",
        "**Lifecycle**: Process stays alive between turns, accepts ongoing messages"),
    // Startup.
    rule!("NUUM-INIT-001", Must, "Init Message",
        "system/init is the first line on stdout and is sent once per process start.",
        "Sent once on startup:"),
    rule!("NUUM-INIT-002", Must, "Session Identity",
        "init carries a session_id (\"The session_id appears in: The init message\").",
        "The session_id appears in: … The `init` message on startup"),
    rule!("NUUM-INIT-003", Should, "Init Message",
        "init carries a string version and tools, an array of strings (only the example shows them).",
        "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"nuum_01JD...\",\"version\":\"0.1.0\",\"tools\":[\"read\",\"write\",\"edit\",\"bash\",\"glob\",\"grep\"]}"),
    // Output messages.
    rule!("NUUM-OUT-001", Info, "Output Messages (Nuum → stdout)",
        "Output the spec does not list (another type, a system subtype or a content block type of its own) is recorded.",
        "Various events and metadata:"),
    rule!("NUUM-OUT-002", Should, "Output Messages (Nuum → stdout)",
        "Each line the process writes has the form and field types the spec's examples show: an object with a string type; string session_id, message.role \"assistant\", model, ids, names, descriptions and messages; message.content and tasks arrays; boolean is_error and running; non-negative integer duration_ms and num_turns, positive integer position and message_count; a tool_result block with type tool_result, a string tool_use_id and content.",
        "{\"type\":\"result\",\"subtype\":\"success\",\"duration_ms\":1234,\"is_error\":false,\"num_turns\":3,\"session_id\":\"nuum_01JD...\",\"result\":\"Done!\",\"usage\":{\"input_tokens\":100,\"output_tokens\":50}} … {\"type\":\"system\",\"subtype\":\"tool_result\",\"tool_result\":{\"type\":\"tool_result\",\"tool_use_id\":\"call_123\",\"content\":\"file contents here\"}} … {\"type\":\"system\",\"subtype\":\"queued\",\"position\":1} … {\"type\":\"system\",\"subtype\":\"injected\",\"message_count\":2} … {\"type\":\"system\",\"subtype\":\"status_response\",\"running\":true,\"session_id\":\"nuum_01JD...\"}"),
    rule!("NUUM-AST-001", Must, "Session Identity",
        "An assistant line carries a message and a session_id (\"The session_id appears in: … All assistant messages\").",
        "The session_id appears in: … All `assistant` messages"),
    rule!("NUUM-AST-002", Should, "Content Block Types",
        "A text block carries a string text; a tool_use block a string id, a string name and an object input.",
        "{\"type\":\"text\",\"text\":\"Hello world\"} … {\"type\":\"tool_use\",\"id\":\"call_123\",\"name\":\"read\",\"input\":{\"filePath\":\"/tmp/test.txt\"}}"),
    rule!("NUUM-TOOL-001", Must, "Tool Result",
        "A tool result's tool_use_id names an earlier tool_use (\"Emitted after each tool execution\").",
        "Emitted after each tool execution: … ← {\"type\":\"system\",\"subtype\":\"tool_result\",\"tool_result\":{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"content\":\"Hello world!\"}}"),
    rule!("NUUM-TOOL-002", Must, "Tool Result",
        "Each tool execution is followed by system/tool_result: in a turn that ends in success every tool_use has its tool_result before the result.",
        "Emitted after each tool execution: … Sent when a turn completes:"),
    rule!("NUUM-RES-001", Must, "Result Message",
        "Every turn ends with exactly one result: no result arrives without a turn open.",
        "Sent when a turn completes:"),
    rule!("NUUM-RES-002", Must, "Result Message",
        "A result's subtype is success, error or cancelled: the spec lists them (a public build's error_during_execution or error_max_turns is none of them).",
        "Subtypes: … `success`: Turn completed normally … `error`: Turn failed with error … `cancelled`: Turn was interrupted"),
    rule!("NUUM-RES-003", Must, "Session Identity",
        "A result carries a session_id (\"The session_id appears in: … All result messages\").",
        "The session_id appears in: … All `result` messages"),
    rule!("NUUM-RES-004", Should, "Result Message",
        "is_error is false on a success result and true on an error result.",
        "{\"type\":\"result\",\"subtype\":\"success\",\"duration_ms\":1234,\"is_error\":false,\"num_turns\":3,\"session_id\":\"nuum_01JD...\",\"result\":\"Done!\",\"usage\":{\"input_tokens\":100,\"output_tokens\":50}} … `error`: Turn failed with error"),
    rule!("NUUM-TURN-001", Must, "Turn Accepted",
        "A user message that starts a turn gets system/turn_accepted before the turn's first assistant output, tool result or result.",
        "Emitted immediately when a message is received and processing begins: … This allows UIs to show a \"thinking...\" state before the first assistant output arrives."),
    rule!("NUUM-TURN-002", Must, "User Message",
        "A user message whose content is a string or an array of text blocks is accepted: it starts a turn that ends in a result, with no system/error.",
        "Send a user message to start or continue a conversation: … `message.content`: String or array of content blocks"),
    rule!("NUUM-TASK-001", Must, "Tasks Snapshot",
        "Each task's type is research, reflect or alarm (\"Task types\"), and its status running for a task, pending for an alarm (\"Task statuses\").",
        "Task types: `research`, `reflect`, `alarm` … Task statuses: `running` (for tasks), `pending` (for alarms)"),
    rule!("NUUM-TASK-002", Should, "Tasks Snapshot",
        "A task carries createdAt and an alarm firesAt, as RFC 3339 timestamps.",
        "{\"id\":\"bgtask_01JD...\",\"type\":\"research\",\"description\":\"How does Stripe work?\",\"status\":\"running\",\"createdAt\":\"2026-02-05T15:00:00Z\"} … {\"id\":\"bgtask_01JE...\",\"type\":\"alarm\",\"description\":\"Check deployment\",\"status\":\"pending\",\"firesAt\":\"2026-02-05T16:00:00Z\"}"),
    rule!("NUUM-TASK-003", Must, "Tasks Snapshot",
        "A tasks snapshot is emitted when a task or an alarm is created, and when a task completes or an alarm fires.",
        "Emitted whenever background tasks or alarms change: … Task created (`background_research`, `background_reflect`) … Task completed or failed … Alarm created (`set_alarm`) … Alarm fired"),
    rule!("NUUM-SYS-001", Should, "System Messages",
        "system/error carries a string message.",
        "{\"type\":\"system\",\"subtype\":\"error\",\"message\":\"Something went wrong\"}"),
    rule!("NUUM-SID-001", Must, "Session Identity",
        "Within a process, session_id is the same in init, every assistant and result line, and every other line that carries one.",
        "Nuum generates a stable `session_id` on first run, stored in the database. … Clients can use this to correlate responses and track agent identity across restarts."),
    rule!("NUUM-SID-002", Must, "Session Identity",
        "The session_id persists with the database: after a restart on the same database, init carries the same one.",
        "This ID persists forever for that database — one database = one agent identity. … Clients can use this to correlate responses and track agent identity across restarts."),
    // Control messages.
    rule!("NUUM-CTL-001", Must, "Control Messages",
        "interrupt during a turn ends it with a result of subtype cancelled.",
        "`interrupt`: Cancel the current turn … `cancelled`: Turn was interrupted"),
    rule!("NUUM-CTL-002", Must, "System Messages",
        "status (\"Get server status\") is answered with a system line saying whether a turn runs (system/status_response in the spec's example; NUUM-CTL-006 judges the name).",
        "`status`: Get server status … {\"type\":\"system\",\"subtype\":\"status_response\",\"running\":true,\"session_id\":\"nuum_01JD...\"}"),
    rule!("NUUM-CTL-003", Must, "System Messages",
        "heartbeat is answered with system/heartbeat_ack.",
        "`heartbeat`: Keep-alive ping … {\"type\":\"system\",\"subtype\":\"heartbeat_ack\"}"),
    rule!("NUUM-CTL-004", Should, "Control Messages",
        "status_response.running is true while a turn runs and false when none does.",
        "{\"type\":\"system\",\"subtype\":\"status_response\",\"running\":true,\"session_id\":\"nuum_01JD...\"}"),
    rule!("NUUM-CTL-006", Should, "System Messages",
        "The answer to status has subtype status_response: only the spec's example names it (a public build writes system/status).",
        "{\"type\":\"system\",\"subtype\":\"status_response\",\"running\":true,\"session_id\":\"nuum_01JD...\"}"),
    rule!("NUUM-CTL-005", Info, "Control Messages",
        "What the process does with interrupt when no turn runs is recorded (the spec does not say).",
        "`interrupt`: Cancel the current turn"),
    // Mid-turn injection.
    rule!("NUUM-INJ-001", Must, "Mid-Turn Message Injection",
        "A user message sent while a turn runs is answered with system/queued.",
        "Messages sent while a turn is running are queued and injected at the next opportunity (before the next model call). … ← {\"type\":\"system\",\"subtype\":\"queued\",\"position\":1}"),
    rule!("NUUM-INJ-002", Must, "Mid-Turn Message Injection",
        "Queued messages are injected (system/injected, its message_count never more than are queued) before the turn's next assistant output.",
        "Messages sent while a turn is running are queued and injected at the next opportunity (before the next model call). … ← {\"type\":\"system\",\"subtype\":\"injected\",\"message_count\":1}"),
    // Bad input.
    rule!("NUUM-BAD-001", Must, "Transport",
        "After bad input (invalid JSON, a line that is not an object, an unknown type or control action, a user message with a wrong role or no content, a huge line, invalid UTF-8) the process keeps running and answers the next message.",
        "**Lifecycle**: Process stays alive between turns, accepts ongoing messages … facts: Bad JSON on stdin gets `{\"type\":\"system\",\"subtype\":\"error\",\"message\":\"Parse error: invalid JSON\"}` and the process keeps running."),
    rule!("NUUM-BAD-002", Should, "System Messages",
        "Bad input is answered with system/error, so the host learns the line was not taken.",
        "{\"type\":\"system\",\"subtype\":\"error\",\"message\":\"Something went wrong\"} … facts: Bad JSON on stdin gets `{\"type\":\"system\",\"subtype\":\"error\",\"message\":\"Parse error: invalid JSON\"}` and the process keeps running."),
    // What binds the host.
    host_rule!("NUUM-HOST-001", Must, "Input Messages (stdin → Nuum)",
        "Each line the host writes is a message the spec lists: a user message (type \"user\", message.role \"user\", message.content a string or an array of content blocks) or a control message (type \"control\", action interrupt, status or heartbeat).",
        "Fields: - `type`: Always `\"user\"` - `message.role`: Always `\"user\"` - `message.content`: String or array of content blocks … Actions: - `interrupt`: Cancel the current turn - `status`: Get server status - `heartbeat`: Keep-alive ping"),
    host_rule!("NUUM-HOST-002", Must, "Transport",
        "Each line the host writes is one JSON object (NDJSON): not text that is not JSON.",
        "**Format**: Newline-delimited JSON (NDJSON) … **Input**: stdin"),
    host_rule!("NUUM-HOST-003", Should, "Transport",
        "The host keeps the session going through what it does not expect from its agent (an output type or subtype it does not know, a line that is not JSON, a system error, a failed turn): it still sends its next message.",
        "**Lifecycle**: Process stays alive between turns, accepts ongoing messages"),
];
