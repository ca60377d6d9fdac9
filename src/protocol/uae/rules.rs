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

pub static RULES: &[Rule] = &[
    // The common envelope.
    rule!("UAE-ENV-001", Must, "Common envelope",
        "Every event is one JSON object with a string type, a string id, a string ts, a string session_id and an object payload; a trace_id, when present, is a string."),
    rule!("UAE-ENV-002", Must, "Common envelope",
        "tool.call and tool.result carry a trace_id (the common envelope lists it and both tool examples carry it)."),
    rule!("UAE-ENV-003", Info, "Common envelope",
        "Whether ui.* and assistant.* events carry a trace_id is recorded: the common envelope lists it, their examples leave it out."),
    rule!("UAE-ENV-004", Should, "Common envelope",
        "An id starts with evt_ and a trace_id with tr_, as the envelope shows."),
    rule!("UAE-ENV-005", Should, "Common envelope",
        "ts is an RFC 3339 timestamp, as the envelope's example (2026-01-08T12:34:56.789Z) is."),
    rule!("UAE-ENV-008", Info, "Common envelope",
        "Whether the target's ts is in UTC with at least milliseconds, as the envelope's one example (\"ts\": \"2026-01-08T12:34:56.789Z\") is, is recorded (the spec's own measured_at carries an offset)."),
    rule!("UAE-ENV-009", Should, "Common envelope",
        "The target sends its events as JSON text (a text frame, a line): \"All events use\" the JSON common envelope, and the spec names no transport, so a binary frame carries no event."),
    rule!("UAE-ENV-006", Should, "Design goals",
        "Event ids are unique within a session (typed envelopes that are easy to log, replay and audit)."),
    rule!("UAE-ENV-007", Info, "Event protocol (conceptual)",
        "Events of a type the spec does not define are recorded."),
    rule!("UAE-SES-001", Must, "Common envelope",
        "Everything a target sends carries the session_id of the session it serves: the one the other party's events name, never another."),
    rule!("UAE-DIR-001", Must, "UI → Agent: user input",
        "Only the Web UI sends ui.* events: an agent or an executor never does."),
    // Agent → UI.
    rule!("UAE-MSG-001", Must, "`assistant.message`",
        "assistant.message carries payload.text, a string."),
    rule!("UAE-VIEW-001", Must, "`assistant.view`",
        "assistant.view carries payload.view: an object with a string kind, a string view_id and an object tree."),
    rule!("UAE-VIEW-002", Should, "`assistant.view`",
        "view.kind is a2ui.v1 and view_id starts with view_, as the example shows."),
    rule!("UAE-ACT-001", Info, "`ui.action`",
        "What the agent sends after a ui.action on one of its views is recorded (the spec names no acknowledgement)."),
    // Agent → API Executor.
    rule!("UAE-CALL-001", Must, "Agent → API Executor: tool call request",
        "tool.call names its tool (payload.tool, a non-empty string) and carries payload.args (\"Tools are requested by name with JSON args\")."),
    rule!("UAE-CALL-002", Should, "Agent → API Executor: tool call request",
        "tool.call's args are a JSON object, as the example shows."),
    rule!("UAE-CALL-003", Info, "API Executor → Agent: tool result",
        "How the agent tells the UI about a failed tool call is recorded (the spec does not say)."),
    rule!("UAE-TRC-001", Info, "Design goals",
        "Whether the agent's output after a tool result carries the call's trace_id is recorded (\"Correlation IDs everywhere\"; no example shows it)."),
    // API Executor → Agent.
    rule!("UAE-RES-001", Must, "API Executor → Agent: tool result",
        "Each tool.call is answered by exactly one tool.result: none goes unanswered, none is answered twice."),
    rule!("UAE-RES-002", Must, "API Executor → Agent: tool result",
        "A tool.result carries the trace_id, the session_id and the tool of the call it answers."),
    rule!("UAE-RES-003", Must, "API Executor → Agent: tool result",
        "A tool.result's payload.ok is a boolean; with ok true, result is present (null for a tool that returns nothing) and error is null (or absent)."),
    rule!("UAE-RES-004", Must, "API Executor → Agent: tool result",
        "With ok false, result is null (or absent) and error is an object with a string code and a string message (details, when present, an object)."),
    rule!("UAE-EXE-001", Should, "API Executor → Agent: tool result",
        "A call naming a tool the executor does not have is answered with ok false and an error code."),
    rule!("UAE-EXE-002", Should, "API Executor → Agent: tool result",
        "A call whose args the tool rejects (the example: weight_lbs must be > 0) is answered with ok false and an error code, and never carried out."),
    // UI → Agent (judged in recorded traffic: live, wireprobe is the UI).
    rule!("UAE-UI-001", Must, "`ui.message`",
        "ui.message carries payload.text, a string."),
    rule!("UAE-UI-002", Must, "`ui.action`",
        "ui.action carries payload.view_id, a string, and payload.action, an object with a string kind."),
    rule!("UAE-UI-003", Should, "`ui.action`",
        "A ui.action names a view_id that an assistant.view of the session carried (\"User interacted with rendered A2UI\")."),
    // Robustness.
    rule!("UAE-ROB-001", Should, "Event protocol (conceptual)",
        "After input it cannot use (not JSON, not an envelope, an unknown type, a call it cannot run) the target keeps serving: the next valid event is answered."),
];
