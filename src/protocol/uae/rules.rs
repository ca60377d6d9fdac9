//! The UAE rule catalogue. The spec (`002_32720a159e3ec1f9.txt`) is "conceptual": it defines
//! the shapes of six envelopes and has no RFC 2119 keywords. What it states (the common
//! envelope every event uses, each type's payload fields, who sends what to whom) is `must`;
//! what only an example's values show (`evt_` ids, the timestamp's form, `a2ui.v1`) is
//! `should`; behaviour it leaves open is `info`. `suites/uae/ERRATA.md` gives each reading.

use crate::rules::{Level::*, Rule};

macro_rules! rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!("002_32720a159e3ec1f9.txt", $($rule)*)
    };
}

/// A rule only an agent or an executor can break.
macro_rules! server_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Server, "002_32720a159e3ec1f9.txt", $($rule)*)
    };
}

/// A rule only the Web UI can break (wireprobe serves it as the agent; `run uae --client`).
macro_rules! ui_rule {
    ($($rule:tt)*) => {
        $crate::spec_rule!(binds Client, "002_32720a159e3ec1f9.txt", $($rule)*)
    };
}

pub static RULES: &[Rule] = &[
    // The common envelope.
    rule!("UAE-ENV-001", Must, "Common envelope",
        "Every event is one JSON object with a string type, a string id, a string ts, a string session_id and an object payload; a trace_id, when present, is a string.",
        "All events use: … \"type\": \"string\", \"id\": \"evt_...\", \"ts\": \"2026-01-08T12:34:56.789Z\", \"trace_id\": \"tr_...\", \"session_id\": \"sess_...\", \"payload\": {}"),
    rule!("UAE-ENV-002", Must, "Common envelope",
        "tool.call and tool.result carry a trace_id (the common envelope lists it and both tool examples carry it).",
        "\"type\": \"tool.call\", \"id\": \"evt_...\", \"ts\": \"...\", \"trace_id\": \"tr_...\", … \"type\": \"tool.result\", \"id\": \"evt_...\", \"ts\": \"...\", \"trace_id\": \"tr_...\","),
    rule!("UAE-ENV-003", Info, "Common envelope",
        "Whether ui.* and assistant.* events carry a trace_id is recorded: the common envelope lists it, their examples leave it out.",
        "\"trace_id\": \"tr_...\", … \"type\": \"ui.message\", \"id\": \"evt_...\", \"ts\": \"...\", \"session_id\": \"...\", … \"type\": \"assistant.message\", \"id\": \"evt_...\", \"ts\": \"...\", \"session_id\": \"...\","),
    rule!("UAE-ENV-004", Should, "Common envelope",
        "An id starts with evt_ and a trace_id with tr_, as the envelope shows.",
        "\"id\": \"evt_...\", … \"trace_id\": \"tr_...\","),
    rule!("UAE-ENV-005", Should, "Common envelope",
        "ts is an RFC 3339 timestamp, as the envelope's example (2026-01-08T12:34:56.789Z) is.",
        "\"ts\": \"2026-01-08T12:34:56.789Z\","),
    rule!("UAE-ENV-008", Info, "Common envelope",
        "Whether the target's ts is in UTC with at least milliseconds, as the envelope's one example (\"ts\": \"2026-01-08T12:34:56.789Z\") is, is recorded (the spec's own measured_at carries an offset).",
        "\"ts\": \"2026-01-08T12:34:56.789Z\", … \"measured_at\": \"2026-01-08T12:00:00-05:00\","),
    rule!("UAE-ENV-009", Should, "Common envelope",
        "The target sends its events as JSON text (a text frame, a line): \"All events use\" the JSON common envelope, and the spec names no transport, so a binary frame carries no event.",
        "All events use: ```json"),
    rule!("UAE-ENV-006", Should, "Design goals",
        "Event ids are unique within a session (typed envelopes that are easy to log, replay and audit).",
        "Explicit, typed envelopes (easy to log, replay, audit)."),
    rule!("UAE-ENV-007", Info, "Event protocol (conceptual)",
        "Events of a type the spec does not define are recorded.",
        "This document defines the *shapes* of messages that move between Web UI, Agent, and API Executor."),
    rule!("UAE-SES-001", Must, "Common envelope",
        "Everything a target sends carries the session_id of the session it serves: the one the other party's events name, never another.",
        "\"session_id\": \"sess_...\", … Correlation IDs everywhere."),
    server_rule!("UAE-DIR-001", Must, "UI → Agent: user input",
        "Only the Web UI sends ui.* events: an agent or an executor never does.",
        "UI → Agent: user input … UI events are distinct from tool calls."),
    // Agent → UI.
    server_rule!("UAE-MSG-001", Must, "`assistant.message`",
        "assistant.message carries payload.text, a string.",
        "\"type\": \"assistant.message\", … \"payload\": { \"text\": \"Got it. Please confirm the entry:\" }"),
    server_rule!("UAE-VIEW-001", Must, "`assistant.view`",
        "assistant.view carries payload.view: an object with a string kind, a string view_id and an object tree.",
        "\"payload\": { \"view\": { \"kind\": \"a2ui.v1\", \"view_id\": \"view_...\", \"tree\": {} }"),
    server_rule!("UAE-VIEW-002", Should, "`assistant.view`",
        "view.kind is a2ui.v1 and view_id starts with view_, as the example shows.",
        "\"kind\": \"a2ui.v1\", \"view_id\": \"view_...\","),
    server_rule!("UAE-ACT-001", Info, "`ui.action`",
        "What the agent sends after a ui.action on one of its views is recorded (the spec names no acknowledgement).",
        "User interacted with rendered A2UI."),
    // Agent → API Executor.
    server_rule!("UAE-CALL-001", Must, "Agent → API Executor: tool call request",
        "tool.call names its tool (payload.tool, a non-empty string) and carries payload.args (\"Tools are requested by name with JSON args\").",
        "Tools are requested by name with JSON args. … \"tool\": \"weight_entry_save_batch\", \"args\": {"),
    server_rule!("UAE-CALL-002", Should, "Agent → API Executor: tool call request",
        "tool.call's args are a JSON object, as the example shows.",
        "Tools are requested by name with JSON args. … \"args\": { \"rows\": ["),
    server_rule!("UAE-CALL-003", Info, "API Executor → Agent: tool result",
        "How the agent tells the UI about a failed tool call is recorded (the spec does not say).",
        "Error case: … \"ok\": false, … Agent → UI: assistant output"),
    server_rule!("UAE-TRC-001", Info, "Design goals",
        "Whether the agent's output after a tool result carries the call's trace_id is recorded (\"Correlation IDs everywhere\"; no example shows it).",
        "Correlation IDs everywhere."),
    // API Executor → Agent.
    server_rule!("UAE-RES-001", Must, "API Executor → Agent: tool result",
        "Each tool.call is answered by exactly one tool.result: none goes unanswered, none is answered twice.",
        "Agent → API Executor: tool call request … API Executor → Agent: tool result"),
    server_rule!("UAE-RES-002", Must, "API Executor → Agent: tool result",
        "A tool.result carries the trace_id, the session_id and the tool of the call it answers.",
        "Correlation IDs everywhere. … \"trace_id\": \"tr_...\", \"session_id\": \"...\", \"payload\": { \"tool\": \"weight_entry_save_batch\","),
    server_rule!("UAE-RES-003", Must, "API Executor → Agent: tool result",
        "A tool.result's payload.ok is a boolean; with ok true, result is present (null for a tool that returns nothing) and error is null (or absent).",
        "\"ok\": true, \"result\": { \"saved\": 1, \"ids\": [\"wt_...\"] }, \"error\": null"),
    server_rule!("UAE-RES-004", Must, "API Executor → Agent: tool result",
        "With ok false, result is null (or absent) and error is an object with a string code and a string message (details, when present, an object).",
        "\"ok\": false, \"result\": null, \"error\": { \"code\": \"VALIDATION_ERROR\", \"message\": \"weight_lbs must be > 0\", \"details\": {\"path\": [\"rows\", 0, \"weight_lbs\"]}"),
    server_rule!("UAE-EXE-001", Should, "API Executor → Agent: tool result",
        "A call naming a tool the executor does not have is answered with ok false and an error code.",
        "Error case: … \"ok\": false, … \"code\": \"VALIDATION_ERROR\","),
    server_rule!("UAE-EXE-002", Should, "API Executor → Agent: tool result",
        "A call whose args the tool rejects (the example: weight_lbs must be > 0) is answered with ok false and an error code, and never carried out.",
        "Error case: … \"code\": \"VALIDATION_ERROR\", \"message\": \"weight_lbs must be > 0\","),
    // UI → Agent (judged in recorded traffic: live, wireprobe is the UI).
    ui_rule!("UAE-UI-001", Must, "`ui.message`",
        "ui.message carries payload.text, a string.",
        "\"type\": \"ui.message\", … \"payload\": { \"text\": \"Weigh-in 187.6 today\" }"),
    ui_rule!("UAE-UI-002", Must, "`ui.action`",
        "ui.action carries payload.view_id, a string, and payload.action, an object with a string kind.",
        "\"payload\": { \"view_id\": \"view_...\", \"action\": { \"kind\": \"form.submit\","),
    ui_rule!("UAE-UI-005", Should, "`ui.action`",
        "A form.submit action names its form (form_id, a string) and gives its values as an object of the form's fields, as the spec's one example does; any action's form_id and values have those shapes.",
        "\"action\": { \"kind\": \"form.submit\", \"form_id\": \"weight_entry\", \"values\": { \"measured_at\": \"2026-01-08\", \"weight_lbs\": 187.6 }"),
    ui_rule!("UAE-UI-003", Should, "`ui.action`",
        "A ui.action names a view_id that an assistant.view of the session carried (\"User interacted with rendered A2UI\").",
        "User interacted with rendered A2UI. … \"view_id\": \"view_...\","),
    ui_rule!("UAE-UI-004", Should, "Common envelope",
        "A Web UI stays in one session on a connection: its events carry the session it opened or one the agent used, not a third the agent never heard of (\"Correlation IDs everywhere\").",
        "\"session_id\": \"sess_...\", … Correlation IDs everywhere."),
    // Robustness.
    rule!("UAE-ROB-001", Should, "Event protocol (conceptual)",
        "After input it cannot use (not JSON, not an envelope, an unknown type, a call it cannot run) the target keeps serving: the next valid event is answered.",
        "This document defines the *shapes* of messages that move between Web UI, Agent, and API Executor."),
];
