//! The specification's JSON Schema (`suites/agui/spec/1.1/schema.json`, verbatim), compiled
//! once: one validator per event type and one for `RunAgentInput`, and each schema error
//! sorted into what it is — a value the schema rejects, a `null` standing for an absent field,
//! or a property the schema does not describe.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The schema as the specification publishes it.
pub const SCHEMA_TEXT: &str = include_str!("../../../suites/agui/spec/1.1/schema.json");

/// Error messages longer than this are cut: a hostile event must not bloat a report.
const MAX_MESSAGE: usize = 240;

/// What one schema error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flaw {
    /// A described field carries a value the schema rejects (or a required one is missing).
    Malformed { path: String, message: String },
    /// An optional field sent as `null` instead of being left out.
    Null { path: String },
    /// Properties the schema does not describe, at `path`.
    Unknown { path: String, names: Vec<String> },
    /// A member of a union (a message role, a part or outcome type, a patch op) or a value of
    /// a closed set that this version does not name: newer material, stripped by a consumer
    /// rather than fatal (Processing Model › The rule).
    Unrecognised { path: String, value: String },
}

impl Flaw {
    /// Where in the event the flaw is (a JSON pointer; empty for the event itself).
    pub fn path(&self) -> &str {
        match self {
            Flaw::Malformed { path, .. }
            | Flaw::Null { path }
            | Flaw::Unknown { path, .. }
            | Flaw::Unrecognised { path, .. } => path,
        }
    }
}

/// The compiled validators.
pub struct Schema {
    /// Per event type (`RUN_STARTED`): its definition's validator and its required fields.
    events: HashMap<String, (jsonschema::Validator, Vec<String>)>,
    input: (jsonschema::Validator, Vec<String>),
}

/// The compiled schema (a unit test holds the bundled file to compiling).
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| Schema::compile(SCHEMA_TEXT).expect("the bundled AG-UI schema compiles"))
}

impl Schema {
    fn compile(text: &str) -> Result<Schema, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let defs = doc
            .get("$defs")
            .and_then(Value::as_object)
            .ok_or("the schema has no $defs")?;
        // A validator for one definition: the whole document, entered at that definition, so
        // its `$ref`s resolve as the specification wrote them.
        let entered = |name: &str| -> Result<(jsonschema::Validator, Vec<String>), String> {
            let mut whole = doc.clone();
            whole["$ref"] = Value::String(format!("#/$defs/{name}"));
            let validator = jsonschema::draft202012::new(&whole).map_err(|e| e.to_string())?;
            let required = defs[name]
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Ok((validator, required))
        };
        let mut events = HashMap::new();
        for (name, def) in defs {
            if let Some(ty) = def
                .pointer("/properties/type/const")
                .and_then(Value::as_str)
            {
                if name.ends_with("Event") {
                    events.insert(ty.to_owned(), entered(name)?);
                }
            }
        }
        Ok(Schema {
            events,
            input: entered("RunAgentInput")?,
        })
    }

    /// True when `ty` is an event type the schema describes.
    pub fn knows(&self, ty: &str) -> bool {
        self.events.contains_key(ty)
    }

    /// Every way `event`, of the described type `ty`, breaks its definition; `None` when `ty`
    /// is not a described type.
    pub fn event_flaws(&self, ty: &str, event: &Value) -> Option<Vec<Flaw>> {
        let (validator, required) = self.events.get(ty)?;
        Some(flaws(validator, required, event))
    }

    /// Every way `input` breaks `RunAgentInput`.
    pub fn input_flaws(&self, input: &Value) -> Vec<Flaw> {
        flaws(&self.input.0, &self.input.1, input)
    }
}

/// The flaws `validator` finds in `value`, sorted (at most one per path and kind).
fn flaws(validator: &jsonschema::Validator, required: &[String], value: &Value) -> Vec<Flaw> {
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut out: Vec<Flaw> = Vec::new();
    for error in validator.iter_errors(value) {
        let path = error.instance_path().as_str().to_owned();
        let flaw = match error.kind() {
            jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected }
            | jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                Flaw::Unknown {
                    path,
                    names: unexpected.clone(),
                }
            }
            _ if is_null_optional(value, &path, required) => Flaw::Null { path },
            _ if unrecognised(value, &path).is_some() => Flaw::Unrecognised {
                value: unrecognised(value, &path).unwrap_or_default(),
                path,
            },
            _ => {
                let mut message = error.to_string();
                if message.len() > MAX_MESSAGE {
                    let cut = (0..=MAX_MESSAGE)
                        .rev()
                        .find(|i| message.is_char_boundary(*i))
                        .unwrap_or(0);
                    message.truncate(cut);
                    message.push('…');
                }
                Flaw::Malformed { path, message }
            }
        };
        if !out.contains(&flaw) {
            out.push(flaw);
        }
    }
    // A described property whose value failed is not evaluated either, so
    // `unevaluatedProperties` names it too: it is malformed (or a null), not unknown.
    let judged: Vec<String> = out
        .iter()
        .filter(|f| !matches!(f, Flaw::Unknown { .. }))
        .map(|f| f.path().to_owned())
        .collect();
    for flaw in &mut out {
        if let Flaw::Unknown { path, names } = flaw {
            names.retain(|n| {
                let at = format!("{path}/{n}");
                !judged
                    .iter()
                    .any(|j| *j == at || j.starts_with(&format!("{at}/")))
            });
        }
    }
    out.retain(|f| !matches!(f, Flaw::Unknown { names, .. } if names.is_empty()));
    out
}

/// The discriminators of the schema's unions and the values this version names for them:
/// a message's `role`, a patch operation's `op`, and the `type` of content parts, part
/// sources and outcomes.
const UNIONS: &[(&str, &[&str])] = &[
    (
        "role",
        &[
            "developer",
            "system",
            "assistant",
            "user",
            "tool",
            "activity",
            "reasoning",
        ],
    ),
    ("op", &["add", "remove", "replace", "move", "copy", "test"]),
    (
        "type",
        &[
            "text",
            "image",
            "audio",
            "video",
            "document",
            "data",
            "url",
            "file",
            "success",
            "interrupt",
            "cancelled",
            "suspended",
        ],
    ),
];

/// The value this version does not name, when the schema error at `path` is about one: a
/// union member whose discriminator is a string no member has, or a string outside a closed
/// set (an event's `role`).
fn unrecognised(value: &Value, path: &str) -> Option<String> {
    // The event (or input) itself is no union member: its type is the event's own business.
    if path.is_empty() {
        return None;
    }
    let at = value.pointer(path)?;
    if let Value::Object(m) = at {
        return UNIONS.iter().find_map(|(key, known)| {
            let said = m.get(*key)?.as_str()?;
            (!known.contains(&said)).then(|| format!("{key} {said:?}"))
        });
    }
    let said = at.as_str()?;
    let (_, name) = path.rsplit_once('/')?;
    let known = UNIONS.iter().find(|(key, _)| *key == name)?.1;
    (!known.contains(&said)).then(|| format!("{name} {said:?}"))
}

/// True when the value at `path` is a `null` standing for an optional field: a property of an
/// object, and not one of the event's own required fields (a required field sent as `null` is
/// malformed; a nested object's optional fields are judged optional).
fn is_null_optional(value: &Value, path: &str, required: &[String]) -> bool {
    if value.pointer(path) != Some(&Value::Null) {
        return false;
    }
    let Some((parent, name)) = path.rsplit_once('/') else {
        return false;
    };
    if !value.pointer(parent).is_some_and(Value::is_object) {
        return false;
    }
    !(parent.is_empty() && required.iter().any(|r| r == name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_bundled_schema_compiles_and_knows_every_event_type() {
        let s = Schema::compile(SCHEMA_TEXT).expect("compiles");
        assert_eq!(s.events.len(), 31);
        assert!(s.knows("RUN_STARTED") && s.knows("REASONING_ENCRYPTED_VALUE"));
    }

    #[test]
    fn schema_errors_are_sorted_into_malformed_null_and_unknown() {
        let s = schema();
        let ok = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"});
        assert_eq!(s.event_flaws("RUN_STARTED", &ok), Some(vec![]));
        let null =
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "parentRunId": null});
        assert_eq!(
            s.event_flaws("RUN_STARTED", &null),
            Some(vec![Flaw::Null {
                path: "/parentRunId".into()
            }])
        );
        let missing = json!({"type": "RUN_STARTED", "runId": "r"});
        assert!(matches!(
            s.event_flaws("RUN_STARTED", &missing).as_deref(),
            Some([Flaw::Malformed { .. }])
        ));
        let missing = json!({"type": "RUN_STARTED", "threadId": null, "runId": "r"});
        assert!(matches!(
            s.event_flaws("RUN_STARTED", &missing).as_deref(),
            Some([Flaw::Malformed { .. }])
        ));
        let extra = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "x": 1});
        assert_eq!(
            s.event_flaws("RUN_STARTED", &extra),
            Some(vec![Flaw::Unknown {
                path: "".into(),
                names: vec!["x".into()]
            }])
        );
        let float = json!({"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 1.5});
        assert!(matches!(
            s.event_flaws("TEXT_MESSAGE_END", &float).as_deref(),
            Some([Flaw::Malformed { .. }])
        ));
        assert_eq!(s.event_flaws("NOT_A_TYPE", &ok), None);
    }

    #[test]
    fn a_member_this_version_does_not_name_is_unrecognised_not_malformed() {
        let s = schema();
        let robot = json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "robot", "content": "x"}]});
        assert!(
            matches!(
                s.input_flaws(&robot).as_slice(),
                [Flaw::Unrecognised { .. }]
            ),
            "{:?}",
            s.input_flaws(&robot)
        );
        let paused = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "paused"}});
        assert!(matches!(
            s.event_flaws("RUN_FINISHED", &paused).as_deref(),
            Some([Flaw::Unrecognised { .. }])
        ));
        let role = json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "robot"});
        assert!(
            matches!(
                s.event_flaws("TEXT_MESSAGE_START", &role).as_deref(),
                Some([Flaw::Unrecognised { .. }])
            ),
            "{:?}",
            s.event_flaws("TEXT_MESSAGE_START", &role)
        );
        let wrong = json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": 5}]});
        assert!(
            matches!(s.input_flaws(&wrong).as_slice(), [Flaw::Malformed { .. }]),
            "{:?}",
            s.input_flaws(&wrong)
        );
    }

    #[test]
    fn an_input_is_judged_by_run_agent_input() {
        let s = schema();
        assert!(s
            .input_flaws(&json!({"threadId": "t", "runId": "r", "messages": []}))
            .is_empty());
        assert!(!s
            .input_flaws(&json!({"runId": "r", "messages": []}))
            .is_empty());
        assert!(matches!(
            s.input_flaws(&json!({"threadId": "t", "runId": "r", "messages": [], "novel": 1}))
                .as_slice(),
            [Flaw::Unknown { .. }]
        ));
    }
}
