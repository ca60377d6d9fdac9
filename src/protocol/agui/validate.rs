//! One event's shape against the specification's schema: a malformed known value (must), a
//! `null` standing for an absent field (must), a property or an event type the schema does
//! not describe (should, and only from a producer that does not declare a newer version).

use super::schema::{schema, Flaw};
use crate::rules::ids::{
    AGUI_RUN_006, AGUI_SUB_005, AGUI_VAL_001, AGUI_VAL_002, AGUI_VAL_003, AGUI_VAL_004,
};
use crate::rules::{Exercised, Violation};
use serde_json::Value;

/// The event's type when it is one to judge further (a described type, its shape aside);
/// `None` after reporting an event that is no object, has no string type, or names a type the
/// protocol does not describe. The rules it checked go to `exercised`.
pub fn shape<'e>(
    event: &'e Value,
    speaks_newer: bool,
    exercised: &mut Exercised,
    out: &mut Vec<Violation>,
) -> Option<&'e str> {
    // Every event is held to being one JSON object of a described type.
    exercised.hit(AGUI_VAL_001);
    let Some(ty) = event.get("type").and_then(Value::as_str) else {
        let what = if event.is_object() {
            "an event without a string type"
        } else {
            "an SSE data payload that is not a JSON object"
        };
        out.push(Violation::new(
            AGUI_VAL_001,
            format!("{what}: {}", crate::show::event(event)),
        ));
        return None;
    };
    // Its type against the described ones, unless the producer speaks a newer version.
    if !speaks_newer {
        exercised.hit(AGUI_VAL_004);
    }
    let Some(flaws) = schema().event_flaws(ty, event) else {
        if !speaks_newer {
            out.push(Violation::new(
                AGUI_VAL_004,
                format!("{ty:?} is not an event type the protocol describes (CUSTOM and RAW carry a producer's own events)"),
            ));
        }
        return None;
    };
    // An outcome the schema does not describe is its own must, for a run and for a subagent
    // invocation — unless the producer speaks a newer version, whose outcomes 1.1 cannot know.
    let outcome_rule = match ty {
        "RUN_FINISHED" => Some(AGUI_RUN_006),
        "SUBAGENT_FINISHED" => Some(AGUI_SUB_005),
        _ => None,
    };
    // A described type's fields: nulls always; undescribed members unless the producer speaks
    // a newer version; the outcome, when the event carries one.
    exercised.hit(AGUI_VAL_002);
    if !speaks_newer {
        exercised.hit(AGUI_VAL_003);
    }
    if let Some(rule) = outcome_rule.filter(|_| event.get("outcome").is_some()) {
        exercised.hit(rule);
    }
    for flaw in flaws {
        let in_outcome = flaw.path().starts_with("/outcome");
        match (flaw, outcome_rule) {
            (Flaw::Null { path }, _) => out.push(Violation::new(
                AGUI_VAL_002,
                format!("{ty} sends {path} as null: an optional field with no value is omitted"),
            )),
            (Flaw::Unrecognised { value, .. }, Some(rule)) if in_outcome => {
                if !speaks_newer {
                    out.push(Violation::new(
                        rule,
                        format!("{ty}'s outcome has {value}, which the schema does not describe"),
                    ));
                }
            }
            (Flaw::Unknown { names, .. }, Some(rule)) if in_outcome => {
                if !speaks_newer {
                    out.push(Violation::new(
                        rule,
                        format!(
                            "{ty}'s outcome carries {}, which its kind does not describe",
                            quoted(&names)
                        ),
                    ));
                }
            }
            (Flaw::Unknown { .. } | Flaw::Unrecognised { .. }, _) if speaks_newer => {}
            (Flaw::Unknown { path, names }, _) => out.push(Violation::new(
                AGUI_VAL_003,
                format!(
                    "{ty} carries {} the schema does not describe{}",
                    quoted(&names),
                    if path.is_empty() {
                        String::new()
                    } else {
                        format!(" at {path}")
                    }
                ),
            )),
            (Flaw::Unrecognised { path, value }, _) => out.push(Violation::new(
                AGUI_VAL_003,
                format!("{ty} has {value} at {path}, which this version does not name"),
            )),
            (Flaw::Malformed { path, message }, rule) => {
                let rule = match rule {
                    Some(rule) if in_outcome => rule,
                    _ => AGUI_VAL_001,
                };
                let at = if path.is_empty() { "" } else { " at " };
                out.push(Violation::new(rule, format!("{ty}{at}{path}: {message}")));
            }
        }
    }
    Some(ty)
}

/// Names as a list for messages: `"a", "b"`.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(event: Value, newer: bool) -> Vec<&'static str> {
        let mut out = Vec::new();
        shape(&event, newer, &mut Exercised::default(), &mut out);
        out.into_iter().map(|v| v.rule).collect()
    }

    #[test]
    fn each_flaw_finds_its_rule() {
        assert!(rules(json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}), false).is_empty());
        assert_eq!(rules(json!([1]), false), ["AGUI-VAL-001"]);
        assert_eq!(
            rules(json!({"type": "TEXT_MESSAGE_END", "messageId": 7}), false),
            ["AGUI-VAL-001"]
        );
        assert_eq!(
            rules(
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": null}),
                false
            ),
            ["AGUI-VAL-002"]
        );
        assert_eq!(
            rules(
                json!({"type": "TEXT_MESSAGE_END", "messageId": "m", "x": 1}),
                false
            ),
            ["AGUI-VAL-003"]
        );
        assert_eq!(
            rules(json!({"type": "THINKING_START"}), false),
            ["AGUI-VAL-004"]
        );
        assert!(rules(json!({"type": "THINKING_START"}), true).is_empty());
        // A closed set's value: one this version does not name is newer material (should);
        // one it names, where the field does not take it, is malformed (must).
        let reasoning =
            |role: &str| json!({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": role});
        assert_eq!(rules(reasoning("assistant"), false), ["AGUI-VAL-001"]);
        assert_eq!(rules(reasoning("assistant"), true), ["AGUI-VAL-001"]);
        assert_eq!(rules(reasoning("muse"), false), ["AGUI-VAL-003"]);
        let text =
            |role: &str| json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": role});
        assert_eq!(rules(text("tool"), false), ["AGUI-VAL-001"]);
        assert_eq!(rules(text("robot"), false), ["AGUI-VAL-003"]);
        let result = json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "x", "role": "user"});
        assert_eq!(rules(result, false), ["AGUI-VAL-001"]);
        let sealed = |subtype: &str| json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": subtype, "entityId": "e", "encryptedValue": "x"});
        assert_eq!(rules(sealed("image"), false), ["AGUI-VAL-003"]);
        // A tool call's type is its own set: a content part's type is no tool call type.
        let call = |ty: &str| {
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a", "role": "assistant",
            "toolCalls": [{"id": "c", "type": ty, "function": {"name": "f", "arguments": "{}"}}]}]})
        };
        assert_eq!(rules(call("image"), false), ["AGUI-VAL-003"]);
        assert!(rules(call("function"), false).is_empty());
        assert_eq!(
            rules(
                json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "paused"}}),
                false
            ),
            ["AGUI-RUN-006"]
        );
    }
}
