//! AG-UI's closed sets of names — a message's role, a content part's, a source's and an
//! outcome's type, a patch operation, a tool call's type, an encrypted value's subtype, a
//! resume entry's status — and how a value outside what a field allows is sorted
//! (suites/agui/ERRATA.md reading 1):
//!
//! - a value no set of its kind holds is *unrecognised*: newer material a consumer strips with
//!   a warning (Processing Model › The rule), `should` for the producer;
//! - a value the set holds, in a field that does not allow it (`role: "assistant"` on a
//!   REASONING_MESSAGE_START, whose role the schema fixes to `"reasoning"`) is *recognised
//!   but invalid here*: malformed, and fatal (`must`).
//!
//! A test holds every string `enum` and `const` of the schema to a set listed here.

/// Every message role this version names (the schema's `Role`; a text message's
/// `TextMessageRole` is a part of it, a tool result's and a reasoning message's one of it).
pub const ROLES: &[&str] = &[
    "developer",
    "system",
    "assistant",
    "user",
    "tool",
    "activity",
    "reasoning",
];

/// One closed set: the field that carries it and the names this version gives it.
pub struct ClosedSet {
    pub field: &'static str,
    /// What the set is, for ERRATA and messages.
    pub what: &'static str,
    pub names: &'static [&'static str],
}

/// The closed sets, by the field that carries each (several sets share `type`).
pub const CLOSED_SETS: &[ClosedSet] = &[
    ClosedSet {
        field: "role",
        what: "message role",
        names: ROLES,
    },
    ClosedSet {
        field: "type",
        what: "content part type",
        names: &["text", "image", "audio", "video", "document"],
    },
    ClosedSet {
        field: "type",
        what: "content source type",
        names: &["data", "url", "file"],
    },
    ClosedSet {
        field: "type",
        what: "outcome type",
        names: &["success", "interrupt", "cancelled", "suspended"],
    },
    ClosedSet {
        field: "type",
        what: "tool call type",
        names: &["function"],
    },
    ClosedSet {
        field: "op",
        what: "patch operation",
        names: &["add", "remove", "replace", "move", "copy", "test"],
    },
    ClosedSet {
        field: "subtype",
        what: "encrypted value subtype",
        names: &["tool-call", "message"],
    },
    ClosedSet {
        field: "status",
        what: "resume entry status",
        names: &["resolved", "cancelled"],
    },
];

/// True when some closed set carried by `field` names `said`: a value this version knows,
/// wherever it turns up.
pub fn names(field: &str, said: &str) -> bool {
    CLOSED_SETS
        .iter()
        .any(|set| set.field == field && set.names.contains(&said))
}

/// The closed set a field allowing `allowed` draws from: the one (carried by `field`) holding
/// every allowed value.
pub fn set_of<'a>(
    field: &str,
    allowed: impl IntoIterator<Item = &'a str>,
) -> Option<&'static ClosedSet> {
    let allowed: Vec<&str> = allowed.into_iter().collect();
    CLOSED_SETS.iter().find(|set| {
        set.field == field && !allowed.is_empty() && allowed.iter().all(|a| set.names.contains(a))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every string `enum` and `const` the schema states, each with the property that
    /// carries it when the schema names one there (a `$defs` enum such as `Role` is named by
    /// the properties that refer to it).
    fn stated(node: &Value, field: Option<&str>, out: &mut Vec<(Option<String>, Vec<String>)>) {
        match node {
            Value::Object(m) => {
                let said: Vec<String> = match (m.get("enum"), m.get("const")) {
                    (Some(Value::Array(values)), _) => values
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                    (_, Some(Value::String(s))) => vec![s.clone()],
                    _ => Vec::new(),
                };
                if !said.is_empty() {
                    out.push((field.map(str::to_owned), said));
                }
                for (key, value) in m {
                    match (key.as_str(), value) {
                        ("properties", Value::Object(props)) => {
                            for (name, child) in props {
                                stated(child, Some(name), out);
                            }
                        }
                        ("$defs", Value::Object(defs)) => {
                            defs.values().for_each(|d| stated(d, None, out));
                        }
                        _ => stated(value, field, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| stated(i, field, out)),
            _ => {}
        }
    }

    #[test]
    fn every_closed_set_the_schema_states_is_listed() {
        let schema: Value = serde_json::from_str(super::super::schema::SCHEMA_TEXT).expect("JSON");
        let roles = schema.pointer("/$defs/Role/enum").and_then(Value::as_array);
        let listed: Vec<&str> = roles
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(listed, ROLES, "the schema's Role");
        let mut found = Vec::new();
        stated(&schema, None, &mut found);
        let mut checked = 0;
        for (field, said) in found {
            // Event types (the catalogue, and each event's own `type`) are no set of this kind.
            if said
                .iter()
                .all(|s| s.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            {
                continue;
            }
            let listed = CLOSED_SETS.iter().any(|set| {
                field.as_deref().is_none_or(|f| f == set.field)
                    && said.iter().all(|s| set.names.contains(&s.as_str()))
            });
            assert!(
                listed,
                "{field:?} {said:?}: a closed set of the schema's that closed_sets.rs does not list"
            );
            checked += 1;
        }
        assert!(
            checked > 20,
            "only {checked} closed fields found: the walk is broken"
        );
    }

    #[test]
    fn a_known_name_is_told_from_a_new_one() {
        assert!(names("role", "assistant"));
        assert!(!names("role", "wizard"));
        assert!(names("type", "success") && names("type", "function"));
        let reasoning = set_of("role", ["reasoning"]).map(|s| s.what);
        assert_eq!(reasoning, Some("message role"));
        assert!(set_of("role", ["wizard"]).is_none());
    }
}
