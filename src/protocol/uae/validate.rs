//! One UAE event on its own: its envelope and the payload its type defines. Which event may
//! come when, and what answers what, is the checker's business.

use crate::protocol::json::{is_rfc3339, json_kind};
use crate::rules::ids::{
    UAE_CALL_001, UAE_CALL_002, UAE_ENV_001, UAE_ENV_002, UAE_ENV_003, UAE_ENV_004, UAE_ENV_005,
    UAE_ENV_007, UAE_ENV_008, UAE_MSG_001, UAE_RES_002, UAE_RES_003, UAE_RES_004, UAE_UI_001,
    UAE_UI_002, UAE_UI_005, UAE_VIEW_001, UAE_VIEW_002,
};
use crate::rules::{Exercised, Violation};
use serde_json::{Map, Value};

/// The six types the spec defines, by who sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    UiMessage,
    UiAction,
    AssistantMessage,
    AssistantView,
    ToolCall,
    ToolResult,
    /// A type the spec does not define.
    Other(&'a str),
}

impl Kind<'_> {
    /// The kind of a `type` string.
    pub fn of(ty: &str) -> Kind<'_> {
        match ty {
            "ui.message" => Kind::UiMessage,
            "ui.action" => Kind::UiAction,
            "assistant.message" => Kind::AssistantMessage,
            "assistant.view" => Kind::AssistantView,
            "tool.call" => Kind::ToolCall,
            "tool.result" => Kind::ToolResult,
            other => Kind::Other(other),
        }
    }

    /// True for the events only the Web UI sends.
    pub fn from_ui(self) -> bool {
        matches!(self, Kind::UiMessage | Kind::UiAction)
    }

    /// True for the Agent's output to the UI.
    pub fn to_ui(self) -> bool {
        matches!(self, Kind::AssistantMessage | Kind::AssistantView)
    }

    /// True for the tool traffic between Agent and Executor, whose examples carry trace_id.
    pub fn is_tool(self) -> bool {
        matches!(self, Kind::ToolCall | Kind::ToolResult)
    }
}

/// The kind of `event` and every violation of its envelope and payload. `None` when it is not
/// an object with a string type (UAE-ENV-001, pushed here).
pub fn check_event<'a>(event: &'a Value, out: &mut Vec<Violation>) -> Option<Kind<'a>> {
    // The fuzzer and the session want the verdict only, not which rules were evaluated.
    check_event_noting(event, out, &mut Exercised::default())
}

/// [`check_event`], noting in `ex` each rule it evaluated on the event (one the event's type
/// and fields make applicable), whatever the outcome: the checker's coverage.
pub fn check_event_noting<'a>(
    event: &'a Value,
    out: &mut Vec<Violation>,
    ex: &mut Exercised,
) -> Option<Kind<'a>> {
    // Every event is held to the common envelope, starting with being an object.
    ex.hit(UAE_ENV_001);
    let Some(obj) = event.as_object() else {
        out.push(Violation::new(
            UAE_ENV_001,
            format!("a JSON {}, not an event object", json_kind(event)),
        ));
        return None;
    };
    let Some(ty) = obj.get("type").and_then(Value::as_str) else {
        out.push(Violation::new(
            UAE_ENV_001,
            "an object without a string type".to_owned(),
        ));
        return None;
    };
    let kind = Kind::of(ty);
    envelope(ty, kind, obj, out, ex);
    if let Some(payload) = obj.get("payload").and_then(Value::as_object) {
        payload_shape(kind, payload, &mut Needs { ty, out, ex });
    }
    Some(kind)
}

fn envelope(
    ty: &str,
    kind: Kind<'_>,
    obj: &Map<String, Value>,
    out: &mut Vec<Violation>,
    ex: &mut Exercised,
) {
    for field in ["id", "ts", "session_id"] {
        match obj.get(field) {
            Some(Value::String(_)) => {}
            None => out.push(Violation::new(UAE_ENV_001, format!("{ty} has no {field}"))),
            Some(other) => out.push(Violation::new(
                UAE_ENV_001,
                format!(
                    "{ty}'s {field} is a JSON {}, not a string",
                    json_kind(other)
                ),
            )),
        }
    }
    match obj.get("payload") {
        Some(Value::Object(_)) => {}
        None => out.push(Violation::new(UAE_ENV_001, format!("{ty} has no payload"))),
        Some(other) => out.push(Violation::new(
            UAE_ENV_001,
            format!(
                "{ty}'s payload is a JSON {}, not an object",
                json_kind(other)
            ),
        )),
    }
    if let Some(id) = obj.get("id").and_then(Value::as_str) {
        ex.hit(UAE_ENV_004);
        if !id.starts_with("evt_") {
            out.push(Violation::new(
                UAE_ENV_004,
                format!("{ty}'s id {id:?} does not start with evt_"),
            ));
        }
    }
    if let Some(ts) = obj.get("ts").and_then(Value::as_str) {
        ex.hit(UAE_ENV_005);
        let problem = timestamp_problem(ts);
        // UTC and milliseconds are looked at only in an RFC 3339 timestamp.
        if problem.map(|(rule, _)| rule) != Some(UAE_ENV_005) {
            ex.hit(UAE_ENV_008);
        }
        if let Some((rule, why)) = problem {
            out.push(Violation::new(rule, format!("{ty}'s ts {ts:?} {why}")));
        }
    }
    // Whether trace_id is owed (tool traffic) or only recorded (ui.*, assistant.*) is asked
    // of the types it is about, present or not.
    if kind.is_tool() {
        ex.hit(UAE_ENV_002);
    } else if kind.from_ui() || kind.to_ui() {
        ex.hit(UAE_ENV_003);
    }
    match obj.get("trace_id") {
        Some(Value::String(trace)) if !trace.starts_with("tr_") => out.push(Violation::new(
            UAE_ENV_004,
            format!("{ty}'s trace_id {trace:?} does not start with tr_"),
        )),
        // A tr_ trace_id: UAE-ENV-004 held (a broken one counts by its violation).
        Some(Value::String(_)) => ex.hit(UAE_ENV_004),
        Some(other) => out.push(Violation::new(
            UAE_ENV_001,
            format!(
                "{ty}'s trace_id is a JSON {}, not a string",
                json_kind(other)
            ),
        )),
        None if kind.is_tool() => {
            out.push(Violation::new(UAE_ENV_002, format!("{ty} has no trace_id")))
        }
        None if kind.from_ui() || kind.to_ui() => out.push(Violation::new(
            UAE_ENV_003,
            format!("{ty} has no trace_id (as the spec's example of it shows)"),
        )),
        None => {}
    }
    // Every typed event's type is looked up among the six.
    ex.hit(UAE_ENV_007);
    if let Kind::Other(other) = kind {
        out.push(Violation::new(
            UAE_ENV_007,
            format!("type {other:?}, which the spec does not define"),
        ));
    }
}

/// Why `ts` is not the envelope's form, if it is not, and the rule that says so: RFC 3339
/// (UAE-ENV-005); in UTC with at least milliseconds, as the example's `.789Z` is, only
/// recorded (UAE-ENV-008: the spec's own `measured_at` carries an offset, so the one example
/// is no rule). `+00:00` and finer fractions say the same as `Z` and `.fff`.
fn timestamp_problem(ts: &str) -> Option<(&'static str, &'static str)> {
    if !is_rfc3339(ts) {
        return Some((UAE_ENV_005, "is not an RFC 3339 timestamp"));
    }
    let (rest, offset) = match ts.strip_suffix(['Z', 'z']) {
        Some(rest) => (rest, "Z"),
        None => ts.split_at(ts.len() - 6),
    };
    if !matches!(offset, "Z" | "+00:00" | "-00:00") {
        return Some((UAE_ENV_008, "is not in UTC (Z)"));
    }
    // `...:SS.fff`: the fraction starts after the seconds (index 19).
    match rest.get(19..).map(str::len) {
        Some(n) if n >= 4 => None,
        _ => Some((UAE_ENV_008, "does not give milliseconds (.fff)")),
    }
}

/// Where a payload's checks go: each notes its rule as exercised (it runs only on a payload
/// the rule is about), and one that fails is a violation.
struct Needs<'a> {
    ty: &'a str,
    out: &'a mut Vec<Violation>,
    ex: &'a mut Exercised,
}

impl Needs<'_> {
    fn need(&mut self, rule: &'static str, ok: bool, what: &str) {
        self.ex.hit(rule);
        if !ok {
            let ty = self.ty;
            self.out.push(Violation::new(rule, format!("{ty}: {what}")));
        }
    }

    /// A check that passed on a branch that has nothing to report.
    fn held(&mut self, rule: &'static str) {
        self.ex.hit(rule);
    }
}

fn payload_shape(kind: Kind<'_>, p: &Map<String, Value>, n: &mut Needs<'_>) {
    match kind {
        Kind::UiMessage => n.need(
            UAE_UI_001,
            is_str(p, "text"),
            "payload.text is not a string",
        ),
        Kind::UiAction => {
            n.need(
                UAE_UI_002,
                is_str(p, "view_id"),
                "payload.view_id is not a string",
            );
            let action = p.get("action").and_then(Value::as_object);
            n.need(
                UAE_UI_002,
                action.is_some_and(|a| is_str(a, "kind")),
                "payload.action is not an object with a string kind",
            );
            // The one example, a form.submit, names its form and gives its values as an
            // object of field names: what a form submission carries (should: only the
            // example shows it). Other kinds are held to the fields they carry; one with
            // neither has nothing UAE-UI-005 is about (not exercised).
            let submits =
                action.and_then(|a| a.get("kind")).and_then(Value::as_str) == Some("form.submit");
            if let Some(a) =
                action.filter(|a| submits || a.contains_key("form_id") || a.contains_key("values"))
            {
                let form_ok = match a.get("form_id") {
                    Some(id) => id.is_string(),
                    None => !submits,
                };
                let values_ok = match a.get("values") {
                    Some(values) => values.is_object(),
                    None => !submits,
                };
                n.need(
                    UAE_UI_005,
                    form_ok,
                    "payload.action.form_id is not a string naming the submitted form",
                );
                n.need(
                    UAE_UI_005,
                    values_ok,
                    "payload.action.values is not an object of the form's fields",
                );
            }
        }
        Kind::AssistantMessage => n.need(
            UAE_MSG_001,
            is_str(p, "text"),
            "payload.text is not a string",
        ),
        Kind::AssistantView => view_shape(p.get("view"), n),
        Kind::ToolCall => {
            let tool = p.get("tool").and_then(Value::as_str);
            n.need(
                UAE_CALL_001,
                tool.is_some_and(|t| !t.is_empty()),
                "payload.tool is not a non-empty string",
            );
            match p.get("args") {
                None => n.need(UAE_CALL_001, false, "payload.args is missing"),
                Some(Value::Object(_)) => n.held(UAE_CALL_002),
                Some(other) => n.need(
                    UAE_CALL_002,
                    false,
                    &format!("payload.args is a JSON {}, not an object", json_kind(other)),
                ),
            }
        }
        Kind::ToolResult => result_shape(p, n),
        Kind::Other(_) => {}
    }
}

fn view_shape(view: Option<&Value>, n: &mut Needs<'_>) {
    let Some(view) = view.and_then(Value::as_object) else {
        return n.need(UAE_VIEW_001, false, "payload.view is not an object");
    };
    n.need(
        UAE_VIEW_001,
        is_str(view, "kind"),
        "view.kind is not a string",
    );
    n.need(
        UAE_VIEW_001,
        is_str(view, "view_id"),
        "view.view_id is not a string",
    );
    n.need(
        UAE_VIEW_001,
        view.get("tree").is_some_and(Value::is_object),
        "view.tree is not an object",
    );
    if let Some(kind) = view.get("kind").and_then(Value::as_str) {
        n.need(
            UAE_VIEW_002,
            kind == "a2ui.v1",
            &format!("view.kind is {kind:?}, not a2ui.v1"),
        );
    }
    if let Some(id) = view.get("view_id").and_then(Value::as_str) {
        n.need(
            UAE_VIEW_002,
            id.starts_with("view_"),
            &format!("view.view_id {id:?} does not start with view_"),
        );
    }
}

fn result_shape(p: &Map<String, Value>, n: &mut Needs<'_>) {
    n.need(
        UAE_RES_002,
        is_str(p, "tool"),
        "payload.tool (the tool of the call it answers) is not a string",
    );
    let present = |key: &str| p.get(key).is_some_and(|v| !v.is_null());
    match p.get("ok") {
        Some(Value::Bool(true)) => {
            // A tool with nothing to return may say so with null: the key is what is owed.
            n.need(
                UAE_RES_003,
                p.contains_key("result"),
                "ok is true but there is no result",
            );
            n.need(
                UAE_RES_003,
                !present("error"),
                "ok is true but error is not null",
            );
        }
        Some(Value::Bool(false)) => {
            // ok is a boolean: that much of UAE-RES-003 holds.
            n.held(UAE_RES_003);
            n.need(
                UAE_RES_004,
                !present("result"),
                "ok is false but result is not null",
            );
            let error = p.get("error").and_then(Value::as_object);
            let Some(error) = error else {
                return n.need(UAE_RES_004, false, "ok is false but error is not an object");
            };
            n.need(
                UAE_RES_004,
                is_str(error, "code"),
                "error.code is not a string",
            );
            n.need(
                UAE_RES_004,
                is_str(error, "message"),
                "error.message is not a string",
            );
            n.need(
                UAE_RES_004,
                error
                    .get("details")
                    .is_none_or(|d| d.is_object() || d.is_null()),
                "error.details is not an object",
            );
        }
        Some(other) => n.need(
            UAE_RES_003,
            false,
            &format!("payload.ok is a JSON {}, not a boolean", json_kind(other)),
        ),
        None => n.need(UAE_RES_003, false, "payload.ok is missing"),
    }
}

fn is_str(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).is_some_and(Value::is_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(event: Value) -> Vec<&'static str> {
        let mut out = Vec::new();
        check_event(&event, &mut out);
        out.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn the_spec_examples_hold() {
        let call = json!({"type":"tool.call","id":"evt_1","ts":"2026-01-08T12:34:56.789Z",
            "trace_id":"tr_1","session_id":"sess_1","payload":{"tool":"weight_entry_save_batch",
            "args":{"rows":[{"measured_at":"2026-01-08T12:00:00-05:00","weight_lbs":187.6,"notes":""}]}}});
        assert_eq!(rules(call), Vec::<&str>::new());
        let failed = json!({"type":"tool.result","id":"evt_2","ts":"2026-01-08T12:34:56.789Z",
            "trace_id":"tr_1","session_id":"sess_1","payload":{"tool":"weight_entry_save_batch",
            "ok":false,"result":null,"error":{"code":"VALIDATION_ERROR","message":"weight_lbs must be > 0",
            "details":{"path":["rows",0,"weight_lbs"]}}}});
        assert_eq!(rules(failed), Vec::<&str>::new());
        // The UI and assistant examples leave trace_id out: recorded, not judged.
        let view = json!({"type":"assistant.view","id":"evt_3","ts":"2026-01-08T12:34:56.789Z",
            "session_id":"sess_1","payload":{"view":{"kind":"a2ui.v1","view_id":"view_1","tree":{}}}});
        assert_eq!(rules(view), ["UAE-ENV-003"]);
    }

    #[test]
    fn envelope_breaks_are_named() {
        assert_eq!(rules(json!("x")), ["UAE-ENV-001"]);
        let epoch = json!({"type":"assistant.message","id":"e1","ts":1736339696789u64,
            "trace_id":"tr_1","session_id":"s","payload":{"text":"hi"}});
        assert_eq!(rules(epoch), ["UAE-ENV-001", "UAE-ENV-004"]);
        let seconds = json!({"type":"assistant.message","id":"evt_1","ts":"2026-01-08T12:34:56Z",
            "trace_id":"tr_1","session_id":"s","payload":"hi"});
        assert_eq!(rules(seconds), ["UAE-ENV-001", "UAE-ENV-008"]);
        assert_eq!(
            timestamp_problem("2026-01-08T12:34:56.789+01:00"),
            Some(("UAE-ENV-008", "is not in UTC (Z)"))
        );
        assert_eq!(
            timestamp_problem("Jan 8 2026 12:34:56"),
            Some(("UAE-ENV-005", "is not an RFC 3339 timestamp"))
        );
    }

    #[test]
    fn result_shapes() {
        let result = |payload: Value| {
            rules(
                json!({"type":"tool.result","id":"evt_1","ts":"2026-01-08T12:34:56.789Z",
                "trace_id":"tr_1","session_id":"s","payload":payload}),
            )
        };
        assert_eq!(
            result(json!({"tool":"t","ok":true,"result":{},"error":null})),
            Vec::<&str>::new()
        );
        assert_eq!(result(json!({"tool":"t","ok":true})), ["UAE-RES-003"]);
        // A tool with nothing to return.
        assert_eq!(
            result(json!({"tool":"t","ok":true,"result":null})),
            Vec::<&str>::new()
        );
        assert_eq!(
            result(json!({"tool":"t","ok":false,"result":1,"error":{"message":"m"}})),
            ["UAE-RES-004", "UAE-RES-004"]
        );
        assert_eq!(result(json!({"ok":"true"})), ["UAE-RES-002", "UAE-RES-003"]);
    }
}
