//! The specification's JSON Schema (`suites/agui/spec/1.1/schema.json`, verbatim), compiled
//! once: one validator per event type and one for `RunAgentInput`, and each schema error
//! sorted into what it is — a value the schema rejects, a `null` standing for an absent field,
//! or a property the schema does not describe.

use super::closed_sets;
use serde_json::{json, Value};
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
    /// Each union member's definition (a message of a role, a part, a source, an outcome, a
    /// patch operation), by name: a union rejects a member as a whole, so what is wrong inside
    /// one is found by validating it against its own definition.
    members: HashMap<&'static str, (jsonschema::Validator, Vec<String>)>,
}

/// The schema's unions: a discriminator, a value of it, and the member definitions that value
/// names (a `success` outcome is a run's or a subagent's).
const MEMBERS: &[(&str, &str, &[&str])] = &[
    ("role", "developer", &["DeveloperMessage"]),
    ("role", "system", &["SystemMessage"]),
    ("role", "assistant", &["AssistantMessage"]),
    ("role", "user", &["UserMessage"]),
    ("role", "tool", &["ToolMessage"]),
    ("role", "activity", &["ActivityMessage"]),
    ("role", "reasoning", &["ReasoningMessage"]),
    ("type", "text", &["TextPart"]),
    ("type", "image", &["ImagePart"]),
    ("type", "audio", &["AudioPart"]),
    ("type", "video", &["VideoPart"]),
    ("type", "document", &["DocumentPart"]),
    ("type", "data", &["DataSource"]),
    ("type", "url", &["UrlSource"]),
    ("type", "file", &["FileSource"]),
    (
        "type",
        "success",
        &[
            "RunFinishedSuccessOutcome",
            "SubagentFinishedSuccessOutcome",
        ],
    ),
    ("type", "interrupt", &["RunFinishedInterruptOutcome"]),
    ("type", "cancelled", &["RunFinishedCancelledOutcome"]),
    ("type", "suspended", &["SubagentFinishedSuspendedOutcome"]),
    ("op", "add", &["AddOperation"]),
    ("op", "remove", &["RemoveOperation"]),
    ("op", "replace", &["ReplaceOperation"]),
    ("op", "move", &["MoveOperation"]),
    ("op", "copy", &["CopyOperation"]),
    ("op", "test", &["TestOperation"]),
];

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
        let mut members = HashMap::new();
        for (_, _, defs) in MEMBERS {
            for def in *defs {
                members.insert(*def, entered(def)?);
            }
        }
        Ok(Schema {
            events,
            input: entered("RunAgentInput")?,
            members,
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
        Some(self.flaws(validator, required, event))
    }

    /// Every way `input` breaks `RunAgentInput`.
    pub fn input_flaws(&self, input: &Value) -> Vec<Flaw> {
        self.flaws(&self.input.0, &self.input.1, input)
    }

    /// What is wrong inside a union member that its union rejected as a whole: its flaws by
    /// the definition its discriminator names (the one with the fewest, when it names two),
    /// their paths under `at`; `None` when the value names no member this version has.
    fn member_flaws(&self, value: &Value, at: &str) -> Option<Vec<Flaw>> {
        // A union of a string and a list of members (a tool result's content): the members.
        if let Value::Array(items) = value {
            let inner: Vec<Flaw> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| self.member_flaws(item, &format!("{at}/{i}")))
                .flatten()
                .collect();
            return Some(inner);
        }
        let m = value.as_object()?;
        let Some((_, _, defs)) = MEMBERS
            .iter()
            .find(|(key, said, _)| m.get(*key).and_then(Value::as_str) == Some(*said))
        else {
            // A member this version does not name: unrecognised as a whole.
            let wrapped = json!({ "v": value });
            return unrecognised(&wrapped, "/v").map(|said| {
                vec![Flaw::Unrecognised {
                    path: at.to_owned(),
                    value: said,
                }]
            });
        };
        let judged = defs.iter().filter_map(|def| {
            let (validator, required) = self.members.get(def)?;
            Some(self.flaws(validator, required, value))
        });
        let best = judged.min_by_key(|f| {
            f.iter()
                .filter(|f| matches!(f, Flaw::Malformed { .. }))
                .count()
        })?;
        Some(best.into_iter().map(|f| f.under(at)).collect())
    }

    /// The flaws `validator` finds in `value`, sorted (at most one per path and kind).
    fn flaws(
        &self,
        validator: &jsonschema::Validator,
        required: &[String],
        value: &Value,
    ) -> Vec<Flaw> {
        flaws(self, validator, required, value)
    }
}

impl Flaw {
    /// The flaw with its path under `at` (a member's flaws, placed in the value holding it).
    fn under(self, at: &str) -> Flaw {
        let place = |p: String| format!("{at}{p}");
        match self {
            Flaw::Malformed { path, message } => Flaw::Malformed {
                path: place(path),
                message,
            },
            Flaw::Null { path } => Flaw::Null { path: place(path) },
            Flaw::Unknown { path, names } => Flaw::Unknown {
                path: place(path),
                names,
            },
            Flaw::Unrecognised { path, value } => Flaw::Unrecognised {
                path: place(path),
                value,
            },
        }
    }
}

/// The flaws `validator` finds in `value`, sorted (at most one per path and kind).
fn flaws(
    schema: &Schema,
    validator: &jsonschema::Validator,
    required: &[String],
    value: &Value,
) -> Vec<Flaw> {
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut out: Vec<Flaw> = Vec::new();
    // Flaws found inside union members, already sorted at the member's own level.
    let mut inner: Vec<Flaw> = Vec::new();
    for error in validator.iter_errors(value) {
        use jsonschema::error::ValidationErrorKind as E;
        let path = error.instance_path().as_str().to_owned();
        // A union rejects a member whole: what is wrong is inside it.
        if matches!(error.kind(), E::OneOfNotValid { .. } | E::AnyOf { .. }) {
            let member = value
                .pointer(&path)
                .and_then(|m| schema.member_flaws(m, &path))
                .filter(|f| !f.is_empty());
            if let Some(found) = member {
                for flaw in found {
                    if !inner.contains(&flaw) {
                        inner.push(flaw);
                    }
                }
                continue;
            }
        }
        let flaw = match error.kind() {
            jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected }
            | jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                Flaw::Unknown {
                    path,
                    names: unexpected.clone(),
                }
            }
            _ if is_null_optional(validator, value, &path, required) => Flaw::Null { path },
            _ if unrecognised(value, &path).is_some() => Flaw::Unrecognised {
                value: unrecognised(value, &path).unwrap_or_default(),
                path,
            },
            // A string outside what a field allows (a role, a subtype, a status): one this
            // version does not name is unrecognised, not malformed (Processing Model › The
            // rule, and its Note on closed sets); one it names, in a field that does not allow
            // it, is malformed (see `closed_sets.rs`). Anything else is malformed.
            kind => outside_closed_set(value, &path, kind).unwrap_or_else(|| {
                let message = crate::protocol::json::bounded(format_args!("{error}"), MAX_MESSAGE);
                Flaw::Malformed { path, message }
            }),
        };
        if !out.contains(&flaw) {
            out.push(flaw);
        }
    }
    // A part of the schema that failed evaluates none of its properties, so
    // `unevaluatedProperties` names them all (a null `name` makes a message's `id` unknown).
    // What is unknown is what stays unknown with the failing values taken out.
    let failing: Vec<String> = out
        .iter()
        .chain(&inner)
        .filter(|f| !matches!(f, Flaw::Unknown { .. }))
        .map(|f| f.path().to_owned())
        .collect();
    if !failing.is_empty() && out.iter().any(|f| matches!(f, Flaw::Unknown { .. })) {
        let mut pruned = value.clone();
        for path in &failing {
            if let Some((parent, key)) = path.rsplit_once('/') {
                match pruned.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.remove(&key.replace("~1", "/").replace("~0", "~"));
                    }
                    Some(Value::Array(items)) => {
                        if let Ok(i) = key.parse::<usize>() {
                            if i < items.len() {
                                items[i] = Value::Object(Default::default());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let still: Vec<Flaw> = validator
            .iter_errors(&pruned)
            .filter_map(|e| match e.kind() {
                jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected }
                | jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    Some(Flaw::Unknown {
                        path: e.instance_path().as_str().to_owned(),
                        names: unexpected.clone(),
                    })
                }
                _ => None,
            })
            .collect();
        out.retain(|f| !matches!(f, Flaw::Unknown { .. }));
        for flaw in still {
            if !out.contains(&flaw) {
                out.push(flaw);
            }
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
    for flaw in inner {
        if !out.contains(&flaw) {
            out.push(flaw);
        }
    }
    out
}

/// The discriminators of the schema's unions: a message's `role`, a patch operation's `op`,
/// and the `type` of content parts, part sources and outcomes.
const UNION_KEYS: &[&str] = &["role", "op", "type"];

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
        return UNION_KEYS.iter().find_map(|key| {
            let said = m.get(*key)?.as_str()?;
            (!closed_sets::names(key, said)).then(|| format!("{key} {said:?}"))
        });
    }
    let said = at.as_str()?;
    let (_, name) = path.rsplit_once('/')?;
    let union = UNION_KEYS.contains(&name);
    (union && !closed_sets::names(name, said)).then(|| format!("{name} {said:?}"))
}

/// How a string at `path` outside the values a field allows (`kind`, an `enum` or `const`
/// error) is sorted: unrecognised when the closed set the field draws from does not hold it,
/// malformed when it does (see `closed_sets.rs`); `None` for any other error, at the event
/// itself, or when the value is no string.
fn outside_closed_set(
    value: &Value,
    path: &str,
    kind: &jsonschema::error::ValidationErrorKind,
) -> Option<Flaw> {
    use jsonschema::error::ValidationErrorKind as E;
    if path.is_empty() || !matches!(kind, E::Enum { .. } | E::Constant { .. }) {
        return None;
    }
    let said = value.pointer(path)?.as_str()?;
    let name = path.rsplit('/').next().unwrap_or_default();
    let allowed: Vec<&str> = match kind {
        E::Enum { options } => options
            .as_array()
            .map(|o| o.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
        E::Constant { expected_value } => expected_value.as_str().into_iter().collect(),
        _ => Vec::new(),
    };
    let set = closed_sets::set_of(name, allowed.iter().copied());
    let recognised = match set {
        Some(set) => set.names.contains(&said),
        None => closed_sets::names(name, said),
    };
    if !recognised {
        return Some(Flaw::Unrecognised {
            value: format!("{name} {said:?}"),
            path: path.to_owned(),
        });
    }
    let takes: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    Some(Flaw::Malformed {
        message: format!(
            "{name} {said:?} is a {} this version names, but not one this field takes (it takes {})",
            set.map_or("value", |s| s.what),
            takes.join(", ")
        ),
        path: path.to_owned(),
    })
}

/// True when the value at `path` is a `null` standing for an optional field: a property of an
/// object that the schema does not require there (a required field sent as `null` is
/// malformed). The value's own required fields are listed; a nested object's are found by
/// leaving the property out and asking the schema whether it is then missing.
fn is_null_optional(
    validator: &jsonschema::Validator,
    value: &Value,
    path: &str,
    required: &[String],
) -> bool {
    if value.pointer(path) != Some(&Value::Null) {
        return false;
    }
    let Some((parent, name)) = path.rsplit_once('/') else {
        return false;
    };
    if !value.pointer(parent).is_some_and(Value::is_object) {
        return false;
    }
    if parent.is_empty() {
        return !required.iter().any(|r| r == name);
    }
    let mut without = value.clone();
    if let Some(Value::Object(m)) = without.pointer_mut(parent) {
        m.remove(&name.replace("~1", "/").replace("~0", "~"));
    }
    let missing = validator.iter_errors(&without).any(|e| {
        e.instance_path().as_str() == parent
            && matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::Required { .. }
            )
            && e.to_string().contains(&format!("{name:?}"))
    });
    !missing
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
    fn what_is_wrong_inside_a_union_member_is_sorted_like_anything_else() {
        let s = schema();
        let kinds = |flaws: Option<Vec<Flaw>>| -> Vec<&'static str> {
            flaws
                .unwrap_or_default()
                .iter()
                .map(|f| match f {
                    Flaw::Malformed { .. } => "malformed",
                    Flaw::Null { .. } => "null",
                    Flaw::Unknown { .. } => "unknown",
                    Flaw::Unrecognised { .. } => "unrecognised",
                })
                .collect()
        };
        let hologram = json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": [{"type": "hologram"}]});
        assert_eq!(
            kinds(s.event_flaws("TOOL_CALL_RESULT", &hologram)),
            ["unrecognised"]
        );
        let extra = json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a", "role": "assistant", "content": "x", "parts": []}]});
        assert_eq!(
            kinds(s.event_flaws("MESSAGES_SNAPSHOT", &extra)),
            ["unknown"]
        );
        let no_content =
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user"}]});
        assert_eq!(
            kinds(s.event_flaws("MESSAGES_SNAPSHOT", &no_content)),
            ["malformed"]
        );
        let subtype = json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "file", "entityId": "e", "encryptedValue": "v"});
        assert_eq!(
            kinds(s.event_flaws("REASONING_ENCRYPTED_VALUE", &subtype)),
            ["unrecognised"]
        );
        let part_extra = json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}]});
        assert_eq!(kinds(Some(s.input_flaws(&part_extra))), ["unknown"]);
        let null_name = json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "x", "name": null}]});
        assert_eq!(kinds(Some(s.input_flaws(&null_name))), ["null"]);
        // A nested field the schema requires, sent as null, is malformed, not an absent one.
        let null_tool = json!({"threadId": "t", "runId": "r", "messages": [], "tools": [{"name": null, "description": "d"}]});
        assert_eq!(kinds(Some(s.input_flaws(&null_tool))), ["malformed"]);
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
