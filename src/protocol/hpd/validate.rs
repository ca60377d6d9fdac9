//! One live envelope on its own: version, type, property names, nulls and the types of the
//! fields the framework gives known events.

use super::events::{self, FieldKind, KnownType};
use crate::rules::ids::{
    HPD_ENV_001, HPD_ENV_002, HPD_ENV_003, HPD_ENV_004, HPD_ENV_005, HPD_ENV_006, HPD_ENV_007,
    HPD_ENV_008, HPD_TOOL_002,
};
use crate::rules::{Exercised, Violation};
use serde_json::{Map, Value};

/// Checks one envelope the agent sent; returns its object and built-in type (when it is
/// one) for the lifecycle checker. The fuzzer's validator and `classify` use it as it is:
/// what it evaluated is noted by [`envelope_noting`], the checker's path.
pub fn envelope<'a>(
    event: &'a Value,
    out: &mut Vec<Violation>,
) -> Option<(&'a Map<String, Value>, Option<KnownType>)> {
    checked(event, HPD_ENV_001, |_| {}, out)
}

/// [`envelope`], noting in `exercised` each rule it evaluated on the event.
pub fn envelope_noting<'a>(
    event: &'a Value,
    exercised: &mut Exercised,
    out: &mut Vec<Violation>,
) -> Option<(&'a Map<String, Value>, Option<KnownType>)> {
    checked(event, HPD_ENV_001, |rule| exercised.hit(rule), out)
}

/// Checks one envelope a client sent, noting in `exercised` each rule it evaluated. The spec
/// says the serializer injects `version` into live envelopes; whether input must carry it is
/// not said, so a client's missing version is a should (HPD-ENV-002; suites/hpd/ERRATA.md).
pub fn client_envelope<'a>(
    event: &'a Value,
    exercised: &mut Exercised,
    out: &mut Vec<Violation>,
) -> Option<(&'a Map<String, Value>, Option<KnownType>)> {
    checked(event, HPD_ENV_002, |rule| exercised.hit(rule), out)
}

/// The envelope rules on `event`; `hit` hears each rule evaluated on it (whatever the
/// outcome): only the rules whose subject the event has (a field's type where it has it).
fn checked<'a>(
    event: &'a Value,
    no_version: &'static str,
    mut hit: impl FnMut(&'static str),
    out: &mut Vec<Violation>,
) -> Option<(&'a Map<String, Value>, Option<KnownType>)> {
    // Every live event is held to being one object with a string type.
    hit(HPD_ENV_001);
    let Value::Object(m) = event else {
        out.push(Violation::new(
            HPD_ENV_001,
            format!(
                "a live event is not a JSON object: {}",
                crate::show::event(event)
            ),
        ));
        return None;
    };
    // A version present is held to "1.0"; a missing one to the rule it breaks for this side.
    hit(if m.contains_key("version") {
        HPD_ENV_002
    } else {
        no_version
    });
    match m.get("version") {
        Some(Value::String(v)) if v == "1.0" => {}
        Some(Value::String(v)) => out.push(Violation::new(
            HPD_ENV_002,
            format!("version is {v:?}, not \"1.0\""),
        )),
        // Only the spec's example shows version as a string: as `"1.0"` itself, a should.
        Some(other) => out.push(Violation::new(
            HPD_ENV_002,
            format!("version is {other}, not the string \"1.0\""),
        )),
        None => out.push(Violation::new(
            no_version,
            format!("an envelope has no version: {}", crate::show::event(event)),
        )),
    }
    let kind = match m.get("type") {
        Some(Value::String(t)) => t.as_str(),
        other => {
            out.push(Violation::new(
                HPD_ENV_001,
                match other {
                    None => format!("an envelope has no type: {}", crate::show::event(event)),
                    Some(t) => format!("type is {t}, not a string"),
                },
            ));
            return Some((m, None));
        }
    };
    let known = events::known(kind);
    // Whether the type is one the profile knows is decided for every typed event; the
    // letter case of a name only for a built-in one.
    hit(HPD_ENV_006);
    if known.is_some() {
        hit(HPD_ENV_003);
    }
    match known {
        Some(k) if k.name != kind => out.push(Violation::new(
            HPD_ENV_003,
            format!(
                "type {kind:?} is the built-in {} in another letter case",
                k.name
            ),
        )),
        Some(_) => {}
        None => out.push(Violation::new(
            HPD_ENV_006,
            format!("an event of a type this profile does not know: {kind:?}"),
        )),
    }
    // The object has at least its type: each property's name and value are judged.
    hit(HPD_ENV_004);
    hit(HPD_ENV_005);
    for (name, value) in m {
        if !is_camel_case(name) {
            out.push(Violation::new(
                HPD_ENV_004,
                format!("{kind}: property {name:?} is not camelCase"),
            ));
        }
        if value.is_null() {
            out.push(Violation::new(
                HPD_ENV_005,
                format!("{kind}: property {name:?} is null (nulls are omitted)"),
            ));
        }
    }
    if let Some(k) = known {
        fields(kind, m, k.fields, &mut hit, out);
    }
    if let (Some(k), Some(Value::String(args))) = (known, m.get("argsJson")) {
        if k.name == "TOOL_CALL_ARGS" {
            hit(HPD_TOOL_002);
            if serde_json::from_str::<Value>(args).is_err() {
                out.push(Violation::new(
                    HPD_TOOL_002,
                    format!("TOOL_CALL_ARGS.argsJson is not JSON: {args:?}"),
                ));
            }
        }
    }
    Some((m, known))
}

/// `camelCase`: a lower-case letter first, then letters and digits only.
pub fn is_camel_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// The types of the fields a known event has (absent fields are not judged: the spec says
/// not to require every field, so `hit` hears a field's rule only where the field is).
fn fields(
    kind: &str,
    m: &Map<String, Value>,
    expected: &[(&str, FieldKind)],
    mut hit: impl FnMut(&'static str),
    out: &mut Vec<Violation>,
) {
    for (name, field) in expected {
        let Some(value) = m.get(*name).filter(|v| !v.is_null()) else {
            continue;
        };
        let rule = match field {
            FieldKind::ExampleStr => HPD_ENV_008,
            _ => HPD_ENV_007,
        };
        hit(rule);
        let ok = match field {
            FieldKind::Id => value.as_str().is_some_and(|s| !s.is_empty()),
            FieldKind::Integer => value.as_i64().is_some() || value.as_u64().is_some(),
            FieldKind::Bool => value.is_boolean(),
            FieldKind::Str | FieldKind::ExampleStr => value.is_string(),
            FieldKind::Duration => value.is_number() || value.as_str().is_some_and(is_timespan),
        };
        if !ok {
            let wanted = match field {
                FieldKind::Id => "a non-empty string",
                FieldKind::Integer => "an integer",
                FieldKind::Bool => "a boolean",
                FieldKind::Str | FieldKind::ExampleStr => "a string",
                FieldKind::Duration => "a number or a TimeSpan string",
            };
            out.push(Violation::new(
                rule,
                format!("{kind}.{name} is {value}, not {wanted}"),
            ));
        }
    }
}

/// A .NET TimeSpan as the framework's serializer writes it: `[-][d.]hh:mm:ss[.fffffff]`.
fn is_timespan(s: &str) -> bool {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let s = s.strip_prefix('-').unwrap_or(s);
    let [hours, minutes, seconds] = s.split(':').collect::<Vec<_>>()[..] else {
        return false;
    };
    let hours = match hours.split_once('.') {
        Some((days, hours)) if digits(days) => hours,
        Some(_) => return false,
        None => hours,
    };
    let (seconds, fraction) = seconds
        .split_once('.')
        .map_or((seconds, None), |(s, f)| (s, Some(f)));
    [hours, minutes, seconds]
        .iter()
        .all(|p| p.len() == 2 && digits(p))
        && fraction.is_none_or(|f| f.len() <= 7 && digits(f))
}

/// The snake_case or kebab-case name's camelCase form (`message_id` → `messageId`), when it
/// differs: a lenient client still finds the field.
pub fn camel_form(name: &str) -> Option<String> {
    if !name.contains(['_', '-']) {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        match c {
            '_' | '-' => upper = !out.is_empty(),
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.extend(c.to_lowercase()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules_of(event: Value) -> Vec<&'static str> {
        let mut out = Vec::new();
        envelope(&event, &mut out);
        out.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn a_good_envelope_breaks_nothing() {
        let e = json!({"version": "1.0", "type": "TEXT_DELTA", "text": "hi", "messageId": "m"});
        assert!(rules_of(e).is_empty());
    }

    #[test]
    fn each_envelope_rule_is_seen() {
        assert_eq!(rules_of(json!({"type": "TEXT_DELTA"})), ["HPD-ENV-001"]);
        assert_eq!(
            rules_of(json!({"version": "2", "type": "TEXT_DELTA"})),
            ["HPD-ENV-002"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "text_delta"})),
            ["HPD-ENV-003"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "TEXT_DELTA", "message_id": "m"})),
            ["HPD-ENV-004"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "TEXT_DELTA", "usage": null})),
            ["HPD-ENV-005"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "MY_EVENT"})),
            ["HPD-ENV-006"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "AGENT_TURN_STARTED", "iteration": "1"})),
            ["HPD-ENV-007"]
        );
        assert_eq!(
            rules_of(json!({"version": "1.0", "type": "TEXT_DELTA", "messageId": 7, "text": "a"})),
            ["HPD-ENV-008"]
        );
        assert_eq!(
            rules_of(json!({"version": 1, "type": "AGENT_TURN_STARTED"})),
            ["HPD-ENV-002"]
        );
        for duration in [
            json!(3),
            json!(2.5),
            json!("00:00:00.0030000"),
            json!("1.02:03:04"),
            json!("-00:00:01"),
        ] {
            let finished =
                json!({"version": "1.0", "type": "MESSAGE_TURN_FINISHED", "duration": duration});
            assert_eq!(rules_of(finished), Vec::<&str>::new(), "{duration}");
        }
        for duration in [
            json!("3 ms"),
            json!("00:00"),
            json!(true),
            json!("00:00:00.12345678"),
        ] {
            let finished =
                json!({"version": "1.0", "type": "MESSAGE_TURN_FINISHED", "duration": duration});
            assert_eq!(rules_of(finished), ["HPD-ENV-007"], "{duration}");
        }
        assert_eq!(
            rules_of(
                json!({"version": "1.0", "type": "TOOL_CALL_ARGS", "callId": "c", "argsJson": "{x"})
            ),
            ["HPD-TOOL-002"]
        );
    }

    #[test]
    fn camel_forms() {
        assert_eq!(
            camel_form("message_turn_id").as_deref(),
            Some("messageTurnId")
        );
        assert_eq!(camel_form("messageId"), None);
        assert!(is_camel_case("argsJson") && !is_camel_case("ArgsJson") && !is_camel_case("a_b"));
    }
}
