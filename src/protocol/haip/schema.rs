//! The spec's draft-07 envelope schema, compiled once, and the mapping from a schema error to
//! the rule it breaks.

use super::model;
use crate::protocol::json;
use crate::rules::ids::{
    HAIP_ENV_001, HAIP_ENV_002, HAIP_ENV_003, HAIP_ENV_004, HAIP_ENV_005, HAIP_ENV_006,
    HAIP_ENV_007, HAIP_ENV_009, HAIP_ERR_002, HAIP_FLOW_005, HAIP_HS_002, HAIP_MEDIA_004,
    HAIP_RUN_007, HAIP_TEXT_002, HAIP_TOOL_004,
};
use crate::rules::Violation;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// The schema as the spec gives it, with its `/* */` comments removed.
pub const SCHEMA_TEXT: &str = include_str!("envelope.schema.json");

/// Error messages longer than this are cut: a hostile frame must not bloat a report.
const MAX_MESSAGE: usize = 300;

/// The compiled schema plus the field lists derived from it.
pub struct Schema {
    validator: jsonschema::Validator,
    envelope_fields: HashSet<String>,
    /// Per event type: the payload's known fields, `None` when any field is allowed.
    payload_fields: HashMap<String, Option<HashSet<String>>>,
    /// Known fields of each TOOL_LIST entry.
    tool_entry_fields: HashSet<String>,
}

/// The compiled schema (the bundled file is checked by a unit test, so it always compiles).
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| Schema::compile(SCHEMA_TEXT).expect("bundled HAIP schema is valid"))
}

impl Schema {
    fn compile(text: &str) -> Result<Schema, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let validator = jsonschema::draft7::new(&doc).map_err(|e| e.to_string())?;
        let defs = &doc["definitions"];
        // Follows local `$ref`s (RunError -> ErrorEvt, Pong -> Ping, ...).
        fn resolve<'a>(defs: &'a Value, mut def: &'a Value) -> &'a Value {
            while let Some(r) = def.get("$ref").and_then(Value::as_str) {
                def = &defs[r.trim_start_matches("#/definitions/")];
            }
            def
        }
        let keys = |def: &Value| -> HashSet<String> {
            def.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        let envelope_fields = keys(&doc);
        let mut payload_fields = HashMap::new();
        for branch in doc["allOf"].as_array().into_iter().flatten() {
            let Some(ty) = branch
                .pointer("/if/properties/type/const")
                .and_then(Value::as_str)
            else {
                continue;
            };
            let def = resolve(defs, &branch["then"]["properties"]["payload"]);
            let closed = def.get("additionalProperties") == Some(&Value::Bool(false));
            payload_fields.insert(ty.to_owned(), closed.then(|| keys(def)));
        }
        let tool_entry_fields = keys(&defs["ToolList"]["properties"]["tools"]["items"]);
        Ok(Schema {
            validator,
            envelope_fields,
            payload_fields,
            tool_entry_fields,
        })
    }

    /// Adds a violation for every way `event` breaks the schema.
    pub fn check(&self, event: &Value, out: &mut Vec<Violation>) {
        if self.validator.is_valid(event) {
            return;
        }
        let ty = model::event_type(event).unwrap_or("");
        let first = out.len();
        for error in self.validator.iter_errors(event) {
            out.push(violation(&error, ty));
        }
        // The envelope's type check and an allOf branch can report the same fault twice.
        let mut seen = std::collections::HashSet::new();
        let fresh: Vec<Violation> = out
            .drain(first..)
            .filter(|v| seen.insert(v.clone()))
            .collect();
        out.extend(fresh);
    }

    /// The first way `event` breaks the schema that its receiver answers with ERROR: a field
    /// the schema does not define is not one, since without `crit` the receiver may ignore
    /// it (§Versioning and Extensibility, HAIP-ENV-005).
    pub fn rejection(&self, event: &Value) -> Option<Violation> {
        // What the fast path accepts, the schema does (tests/it/fast_path.rs).
        if super::fast::accept_value(event).is_some() {
            return None;
        }
        // The validator's first error is the first [`Schema::check`] lists; only when that
        // one is an unknown field are the others needed. Collecting and wording every error
        // of every broken input was a reference target's largest cost after parsing.
        match self.validator.validate(event) {
            Ok(()) => None,
            Err(error) if error.kind().keyword() != "additionalProperties" => {
                Some(violation(&error, model::event_type(event).unwrap_or("")))
            }
            Err(_) => {
                let mut problems = Vec::new();
                self.check(event, &mut problems);
                problems.into_iter().find(|v| v.rule != HAIP_ENV_005)
            }
        }
    }

    /// Fields of `event` the schema does not define, as `field` or `payload.field`.
    pub fn unknown_fields(&self, event: &Value) -> Vec<String> {
        let mut unknown = Vec::new();
        let Some(obj) = event.as_object() else {
            return unknown;
        };
        for key in obj.keys() {
            if !self.envelope_fields.contains(key) {
                unknown.push(key.clone());
            }
        }
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
        if let (Some(Some(known)), Some(Value::Object(payload))) =
            (self.payload_fields.get(ty), obj.get("payload"))
        {
            for key in payload.keys() {
                if !known.contains(key) {
                    unknown.push(format!("payload.{key}"));
                }
            }
            if ty == "TOOL_LIST" {
                for (i, tool) in payload
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    for key in tool.as_object().into_iter().flat_map(|t| t.keys()) {
                        if !self.tool_entry_fields.contains(key) {
                            unknown.push(format!("payload.tools.{i}.{key}"));
                        }
                    }
                }
            }
        }
        unknown
    }

    /// True when `ty` is an event type of the catalogue.
    pub fn is_event_type(&self, ty: &str) -> bool {
        self.payload_fields.contains_key(ty)
    }
}

/// The violation a schema error of an event of type `ty` stands for.
fn violation(error: &jsonschema::ValidationError<'_>, ty: &str) -> Violation {
    let path = error.instance_path().as_str();
    let keyword = error.kind().keyword();
    let rule = if keyword == "additionalProperties" {
        HAIP_ENV_005
    } else {
        rule_for_path(path, keyword, ty)
    };
    let shown = if path.is_empty() { "/" } else { path };
    Violation::new(
        rule,
        json::bounded(format_args!("{shown}: {error}"), MAX_MESSAGE),
    )
}

/// The rule a schema error (`keyword` failing at JSON pointer `path`) breaks, for an event of
/// type `ty`. A payload that is not an object is an envelope error; a payload missing one of
/// its type's fields breaks that type's rule.
fn rule_for_path(path: &str, keyword: &str, ty: &str) -> &'static str {
    let top = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match top {
        "" => HAIP_ENV_001,
        "id" | "session" | "run_id" => HAIP_ENV_002,
        "seq" | "ack" | "ts" => HAIP_ENV_003,
        "channel" | "thread_id" => HAIP_ENV_004,
        "type" => HAIP_ENV_006,
        "pv" | "crit" | "bin_len" | "bin_mime" => HAIP_ENV_007,
        "payload" if path == "/payload" && keyword == "type" => HAIP_ENV_001,
        "payload" => payload_rule(ty),
        _ => HAIP_ENV_005,
    }
}

/// The rule that owns the payload schema of each event type.
pub fn payload_rule(ty: &str) -> &'static str {
    match ty {
        "HAI" => HAIP_HS_002,
        "RUN_STARTED" | "RUN_FINISHED" | "RUN_CANCEL" => HAIP_RUN_007,
        "RUN_ERROR" | "ERROR" => HAIP_ERR_002,
        "TEXT_MESSAGE_START" | "TEXT_MESSAGE_PART" | "TEXT_MESSAGE_END" => HAIP_TEXT_002,
        "AUDIO_CHUNK" => HAIP_MEDIA_004,
        "TOOL_CALL" | "TOOL_UPDATE" | "TOOL_DONE" | "TOOL_CANCEL" | "TOOL_LIST" | "TOOL_SCHEMA" => {
            HAIP_TOOL_004
        }
        "FLOW_UPDATE" | "PAUSE_CHANNEL" | "RESUME_CHANNEL" => HAIP_FLOW_005,
        _ => HAIP_ENV_009,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ping() -> Value {
        json!({"id": "123e4567-e89b-42d3-a456-426614174000", "session": "223e4567-e89b-42d3-a456-426614174001",
               "seq": "1", "ts": "1690000000000", "channel": "SYSTEM", "type": "PING", "payload": {"nonce": "x"}})
    }

    fn rules_of(event: &Value) -> Vec<&'static str> {
        let mut out = Vec::new();
        schema().check(event, &mut out);
        out.into_iter().map(|v| v.rule).collect()
    }

    #[test]
    fn bundled_schema_compiles_and_knows_every_type() {
        let s = schema();
        assert_eq!(s.payload_fields.len(), 22);
        assert!(s.payload_fields["RUN_STARTED"].is_none());
        assert!(s.payload_fields["PONG"].as_ref().unwrap().contains("nonce"));
        assert!(s.envelope_fields.contains("thread_id"));
    }

    #[test]
    fn errors_map_to_rules() {
        assert!(rules_of(&ping()).is_empty());
        let mut e = ping();
        e["seq"] = json!("01x");
        assert_eq!(rules_of(&e), ["HAIP-ENV-003"]);
        let mut e = ping();
        e["id"] = json!("not-a-uuid");
        assert_eq!(rules_of(&e), ["HAIP-ENV-002"]);
        let mut e = ping();
        e["extra"] = json!(1);
        assert_eq!(rules_of(&e), ["HAIP-ENV-005"]);
        assert_eq!(schema().unknown_fields(&e), ["extra"]);
        let mut e = ping();
        e["payload"]["nonce"] = json!(5);
        assert_eq!(rules_of(&e), ["HAIP-ENV-009"]);
        let mut e = ping();
        e.as_object_mut().unwrap().remove("ts");
        assert_eq!(rules_of(&e), ["HAIP-ENV-001"]);
        let mut e = ping();
        e["type"] = json!("ERROR");
        e["payload"] = json!({"code": "X"});
        assert_eq!(rules_of(&e), ["HAIP-ERR-002"]);
        let mut e = ping();
        e["payload"] = json!([]);
        assert_eq!(rules_of(&e), ["HAIP-ENV-001"]);
        let mut e = ping();
        e["type"] = json!("PINGG");
        assert!(rules_of(&e).contains(&"HAIP-ENV-006"));
    }
}
