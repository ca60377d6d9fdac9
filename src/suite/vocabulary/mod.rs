//! The step vocabulary: every kind of step a suite may write, defined once. Each kind is a
//! struct whose serde and JSON Schema derivations are the file format (its key, the table under
//! it, the keys allowed beside it); [`StepKind`] gives what else the engine asks of a kind: the
//! checks that span its fields, the line a report shows, and how long it may take. Only
//! executing a step lives elsewhere (`steps.rs`), since it needs the running case.
//!
//! Adding a kind: its struct and `StepKind` impl in one of the files below, one line in
//! [`actions!`], one arm where steps run.

mod expecting;
mod sending;
mod session;
pub mod values;

pub use expecting::*;
pub use sending::*;
pub use session::*;
pub use values::{HandshakeMode, Patterns, RawFrame, Refusal, Times, MAX_TIMES};

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What the engine asks of every kind of step besides reading and writing it.
pub trait StepKind {
    /// The checks that span several of the kind's fields (each field's own are in its type).
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// The step as one line a report reader understands (`send {...} ×3`).
    fn describe(&self) -> String;

    /// The longest the step may take when a waiting step is given `step_ms`.
    fn budget_ms(&self, step_ms: u64) -> u64;
}

/// What an unmet expectation (`expect`, `expect_silence`, `check`) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// The target broke the case's rule.
    Fails,
    /// `scenario = true`: the target did not obey a scenario directive; skip.
    ScenarioNotReached,
    /// `probe = true`: a liveness probe another case judges went unanswered, so this case
    /// cannot observe what it needs; skip.
    ProbeUnanswered,
}

impl Unanswered {
    /// What `scenario = true` or `probe = true` beside a step says (the loader refuses both).
    pub fn of(scenario: bool, probe: bool) -> Unanswered {
        match (scenario, probe) {
            (true, _) => Unanswered::ScenarioNotReached,
            (false, true) => Unanswered::ProbeUnanswered,
            (false, false) => Unanswered::Fails,
        }
    }

    /// The check that spans `scenario` and `probe`.
    fn validate(scenario: bool, probe: bool) -> Result<(), String> {
        match scenario && probe {
            true => Err("an expectation is a scenario or a probe, not both".into()),
            false => Ok(()),
        }
    }
}

/// One step of a case: what it does, and the rule a failure of it breaks (default: the case's
/// strictest rule).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub action: Action,
    pub rule: Option<String>,
}

impl Step {
    /// The step as one line, with the rule a failure of it breaks when it names one.
    pub fn describe(&self) -> String {
        let line = self.action.describe();
        match &self.rule {
            Some(rule) => format!("{line} [{rule}]"),
            None => line,
        }
    }

    /// A step that breaks the case's rule when it fails.
    pub fn new(action: impl Into<Action>) -> Step {
        Step {
            action: action.into(),
            rule: None,
        }
    }
}

/// Declares the kinds of step: the [`Action`] enum over their structs, the key that names each
/// in a step table, and reading, writing and describing a step by that key.
macro_rules! actions {
    ($($(#[$doc:meta])* $variant:ident = $key:literal,)*) => {
        /// What a step does: one of the kinds of step.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Action {
            $($(#[$doc])* $variant($variant),)*
        }

        /// The key that names each kind of step, one per step table.
        pub const ACTION_KEYS: &[&str] = &[$($key),*];

        $(impl From<$variant> for Action {
            fn from(step: $variant) -> Action {
                Action::$variant(step)
            }
        })*

        impl Action {
            fn kind(&self) -> &dyn StepKind {
                match self {
                    $(Action::$variant(step) => step,)*
                }
            }

            /// The step of kind `key` a step table (without `rule`) holds.
            fn read(key: &str, table: Map<String, Value>) -> Result<Action, String> {
                let table = Value::Object(table);
                match key {
                    $($key => serde_json::from_value::<$variant>(table)
                        .map(Action::$variant)
                        .map_err(|e| allowed_beside(e.to_string())),)*
                    other => Err(format!("no step kind `{other}`")),
                }
            }

            fn write(&self) -> Result<Value, serde_json::Error> {
                match self {
                    $(Action::$variant(step) => serde_json::to_value(step),)*
                }
            }

            /// Each kind's table, with `rule` allowed beside its keys.
            fn schemas(generator: &mut SchemaGenerator) -> Vec<Schema> {
                vec![$(with_rule(<$variant as JsonSchema>::json_schema(generator)),)*]
            }
        }
    };
}

actions! {
    /// Sends an event (`send = { ... }`).
    Send = "send",
    /// Sends a frame byte for byte.
    SendRaw = "send_raw",
    /// Waits for an event matching any of the patterns.
    Expect = "expect",
    ExpectError = "expect_error",
    ExpectClose = "expect_close",
    /// Nothing (or nothing matching) arrives for a while.
    ExpectSilence = "expect_silence",
    ExpectRefused = "expect_refused",
    Wait = "wait",
    /// Forgets every arrival no step consumed (they stay in the transcript).
    Discard = "discard",
    /// Frees the target's output held back by flow control.
    Unblock = "unblock",
    /// Matches a captured value against a pattern.
    Check = "check",
    /// Reconnects (resuming the session unless told otherwise).
    Reconnect = "reconnect",
    /// Restarts the target process (stdio protocols).
    Restart = "restart",
    /// Chooses a tool the target offers.
    PickTool = "pick_tool",
}

impl StepKind for Action {
    fn validate(&self) -> Result<(), String> {
        self.kind().validate()
    }

    fn describe(&self) -> String {
        self.kind().describe()
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        self.kind().budget_ms(step_ms)
    }
}

/// serde names the fields a kind allows; `rule` is allowed beside every kind.
fn allowed_beside(message: String) -> String {
    match message.starts_with("unknown field") {
        true => format!("{message}, or `rule`"),
        false => message,
    }
}

/// A kind's table schema with the `rule` key every step may carry.
fn with_rule(mut schema: Schema) -> Schema {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "rule".into(),
            serde_json::json!({
                "type": "string",
                "description": "The rule a failure of this step breaks (default: the case's strictest rule)."
            }),
        );
    }
    schema
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Read inside the table's own visit, so a format's error carries the table's place
        // (TOML: the line of the step, not of the list it is in).
        d.deserialize_map(StepVisitor)
    }
}

struct StepVisitor;

impl<'de> serde::de::Visitor<'de> for StepVisitor {
    type Value = Step;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a step table such as { send = {...} }")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Step, A::Error> {
        let table =
            Map::<String, Value>::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Step::from_table(table).map_err(A::Error::custom)
    }
}

impl Step {
    /// The step a table (its kind's key, the keys beside it, and `rule`) writes.
    fn from_table(mut table: Map<String, Value>) -> Result<Step, String> {
        let rule = match table.remove("rule") {
            None => None,
            Some(Value::String(rule)) => Some(rule),
            Some(other) => return Err(format!("`rule` must be a string, not {other}")),
        };
        let present: Vec<&str> = ACTION_KEYS
            .iter()
            .copied()
            .filter(|key| table.contains_key(*key))
            .collect();
        let key = match present.as_slice() {
            [one] => *one,
            [] => {
                let keys: Vec<&String> = table.keys().collect();
                return Err(format!(
                    "no action in step (keys {keys:?}); expected one of {}",
                    ACTION_KEYS.join(", ")
                ));
            }
            many => {
                return Err(format!(
                    "a step has one action, this one has {}",
                    many.join(" and ")
                ))
            }
        };
        let action = Action::read(key, table)?;
        action.validate()?;
        Ok(Step { action, rule })
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut table = match self.action.write().map_err(serde::ser::Error::custom)? {
            Value::Object(table) => table,
            other => return Err(serde::ser::Error::custom(format!("a step wrote {other}"))),
        };
        if let Some(rule) = &self.rule {
            table.insert("rule".into(), Value::String(rule.clone()));
        }
        table.serialize(s)
    }
}

impl JsonSchema for Step {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let kinds = Action::schemas(generator);
        json_schema!({
            "description": "One step: exactly one of the step kinds' keys, with the keys that kind allows beside it.",
            "oneOf": kinds
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_read_as_one_line_each() {
        let send = Step {
            action: Send {
                event: json!({"type": "PING"}),
                times: Times::Fixed(3),
            }
            .into(),
            rule: Some("HAIP-PING-001".into()),
        };
        assert_eq!(
            send.describe(),
            r#"send {"type":"PING"} ×3 [HAIP-PING-001]"#
        );
        let close = Step::new(ExpectClose {
            wanted: CloseWanted {
                code: Some(1007),
                within_ms: Some(500),
            },
        });
        assert_eq!(
            close.describe(),
            "expect the connection closed with code 1007 within 500 ms"
        );
    }
}
