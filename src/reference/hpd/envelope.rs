//! The HPD live envelope both ways: rendering the agent's events (where the envelope-level
//! faults apply) and reading what clients send (inputs, responses, interruptions).

use crate::protocol::hpd::events;
use crate::reference::Faults;
use serde_json::{Map, Value};

/// Why a client envelope was refused (HTTP 400, WebSocket close 1007).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("body is not JSON: {0}")]
    NotJson(String),
    #[error("envelope is not a JSON object")]
    NotObject,
    #[error("envelope has no string type")]
    MissingType,
    #[error("unknown event type {0:?}")]
    UnknownType(String),
    #[error("{kind} needs a {field}")]
    MissingField {
        kind: &'static str,
        field: &'static str,
    },
    #[error("{0} is not accepted on this route")]
    WrongRoute(&'static str),
}

/// Which interactive request a response answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AskKind {
    Permission,
    Continuation,
    Clarification,
    ClientTool,
}

impl AskKind {
    /// The request a response type (in SCREAMING_SNAKE_CASE) answers, and the type's name.
    fn answered_by(response: &str) -> Option<(AskKind, &'static str)> {
        [
            (AskKind::Permission, "PERMISSION_RESPONSE"),
            (AskKind::Continuation, "CONTINUATION_RESPONSE"),
            (AskKind::Clarification, "CLARIFICATION_RESPONSE"),
            (AskKind::ClientTool, "CLIENT_TOOL_INVOKE_RESPONSE"),
        ]
        .into_iter()
        .find(|(_, name)| *name == response)
    }
}

/// A client event, read from its envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// USER_TEXT_INPUT / USER_MESSAGES_INPUT: the text the turn runs on.
    Input(String),
    /// A response to an interactive request: its kind, id and whole envelope.
    Response {
        kind: AskKind,
        id: String,
        body: Map<String, Value>,
    },
    /// INTERRUPTION_REQUEST.
    Interrupt,
}

impl ClientEvent {
    /// The type name, for refusing an event on a route that does not take it.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientEvent::Input(_) => "an input event",
            ClientEvent::Response { .. } => "a response event",
            ClientEvent::Interrupt => "INTERRUPTION_REQUEST",
        }
    }
}

/// True when `bytes` is a USER_MESSAGES_INPUT envelope (for `rejects-messages-input`).
pub fn is_messages_input(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes).is_ok_and(|v| {
        v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("USER_MESSAGES_INPUT"))
    })
}

/// Reads one client envelope. `type` is matched case-insensitively, as the framework's
/// deserializer does.
pub fn parse(bytes: &[u8]) -> Result<ClientEvent, EnvelopeError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| EnvelopeError::NotJson(e.to_string()))?;
    let Value::Object(body) = value else {
        return Err(EnvelopeError::NotObject);
    };
    let ty = body
        .get("type")
        .and_then(Value::as_str)
        .ok_or(EnvelopeError::MissingType)?
        .to_ascii_uppercase();
    // A response names the request it answers by the field the protocol gives its type.
    let answers = AskKind::answered_by(&ty);
    if let (Some((kind, name)), Some(field)) = (answers, events::response_id_field(&ty)) {
        let id = body
            .get(field)
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or(EnvelopeError::MissingField { kind: name, field })?;
        return Ok(ClientEvent::Response {
            kind,
            id: id.to_owned(),
            body: body.clone(),
        });
    }
    match ty.as_str() {
        "USER_TEXT_INPUT" => match body.get("text") {
            Some(Value::String(text)) => Ok(ClientEvent::Input(text.clone())),
            _ => Err(EnvelopeError::MissingField {
                kind: "USER_TEXT_INPUT",
                field: "string text",
            }),
        },
        "USER_MESSAGES_INPUT" => {
            last_user_text(&body)
                .map(ClientEvent::Input)
                .ok_or(EnvelopeError::MissingField {
                    kind: "USER_MESSAGES_INPUT",
                    field: "user message with text content",
                })
        }
        "INTERRUPTION_REQUEST" => Ok(ClientEvent::Interrupt),
        _ => Err(EnvelopeError::UnknownType(ty)),
    }
}

/// The content of the last user message: a string, or the text parts of a parts array.
fn last_user_text(body: &Map<String, Value>) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    match last.get("content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// Renders one event as its envelope JSON: `version` and `type` first, then the payload with
/// nulls omitted. The envelope faults (version, type case, field case, nulls) apply here so
/// the turn logic never sees them.
pub fn render(faults: &Faults, ty: &str, fields: Map<String, Value>) -> (String, String) {
    let version = match (faults.has("missing-version"), faults.has("wrong-version")) {
        (true, _) => None,
        (false, true) => Some("2.0"),
        (false, false) => Some("1.0"),
    };
    let ty = if faults.has("lower-case-types") {
        ty.to_ascii_lowercase()
    } else {
        ty.to_owned()
    };
    let snake = faults.has("snake-case-fields");
    let number_ids = faults.has("number-message-ids");
    // Written straight from the fields when no key is renamed, added or met twice: building
    // the object first was an eighth of an HPD fuzz campaign's instructions.
    let plain = !snake
        && !faults.has("null-fields")
        && !fields.contains_key("version")
        && !fields.contains_key("type");
    if plain {
        let rendered = Rendered {
            version,
            ty: &ty,
            fields: &fields,
            number_ids,
        };
        let json = serde_json::to_string(&rendered).unwrap_or_default();
        return (ty, json);
    }
    let mut out = Map::new();
    if let Some(version) = version {
        out.insert("version".into(), version.into());
    }
    out.insert("type".into(), Value::String(ty.clone()));
    for (key, mut value) in fields {
        if value.is_null() {
            continue;
        }
        if let (true, "messageId", Value::String(id)) = (number_ids, key.as_str(), &value) {
            value = Value::from(message_number(id));
        }
        let key = if snake { to_snake(&key) } else { key };
        out.insert(key, value);
    }
    if faults.has("null-fields") {
        // Fields the framework has but this agent never fills, so the default omits them.
        match ty.to_ascii_uppercase().as_str() {
            "TOOL_CALL_START" | "TOOL_CALL_RESULT" => {
                out.insert("toolkitName".into(), Value::Null);
            }
            "MESSAGE_TURN_FINISHED" => {
                out.insert("usage".into(), Value::Null);
            }
            _ => {}
        }
    }
    (ty, Value::Object(out).to_string())
}

/// The number the `number-message-ids` fault writes for a message id: the same number for the
/// same id, so a block still reads as one.
fn message_number(id: &str) -> u64 {
    let n = id
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    n % 1_000_000_007
}

/// An event as [`render`] writes it when no fault renames, adds or repeats a key: `version`
/// and `type` first, then the fields without their nulls, in their order.
struct Rendered<'a> {
    version: Option<&'static str>,
    ty: &'a str,
    fields: &'a Map<String, Value>,
    number_ids: bool,
}

impl serde::Serialize for Rendered<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        if let Some(version) = self.version {
            map.serialize_entry("version", version)?;
        }
        map.serialize_entry("type", self.ty)?;
        for (key, value) in self.fields {
            match (self.number_ids, key.as_str(), value) {
                (_, _, Value::Null) => {}
                (true, "messageId", Value::String(id)) => {
                    map.serialize_entry(key, &message_number(id))?
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// `messageTurnId` -> `message_turn_id`.
fn to_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_inputs_case_insensitively() {
        let ev = parse(br#"{"version":"1.0","type":"user_text_input","text":"hi"}"#);
        assert_eq!(ev, Ok(ClientEvent::Input("hi".into())));
        let ev = parse(
            br#"{"type":"USER_MESSAGES_INPUT","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#,
        );
        assert_eq!(ev, Ok(ClientEvent::Input("a".into())));
    }

    #[test]
    fn refuses_bad_envelopes() {
        assert!(matches!(parse(b"nope"), Err(EnvelopeError::NotJson(_))));
        assert_eq!(parse(b"[1]"), Err(EnvelopeError::NotObject));
        assert_eq!(parse(b"{}"), Err(EnvelopeError::MissingType));
        assert!(matches!(
            parse(br#"{"type":"NOPE"}"#),
            Err(EnvelopeError::UnknownType(_))
        ));
        assert!(parse(br#"{"type":"USER_TEXT_INPUT","text":3}"#).is_err());
        assert!(parse(br#"{"type":"PERMISSION_RESPONSE","approved":true}"#).is_err());
    }

    #[test]
    fn renders_with_and_without_faults() {
        let fields = json!({"messageId": "m", "role": null})
            .as_object()
            .cloned()
            .unwrap();
        let (_, json) = render(&Faults::default(), "TEXT_MESSAGE_START", fields.clone());
        assert_eq!(
            json,
            r#"{"version":"1.0","type":"TEXT_MESSAGE_START","messageId":"m"}"#
        );
        let faults = Faults::parse(
            super::super::faults::FAULTS,
            &["snake-case-fields".into(), "lower-case-types".into()],
        )
        .unwrap();
        let (ty, json) = render(&faults, "TEXT_MESSAGE_START", fields);
        assert_eq!(ty, "text_message_start");
        assert_eq!(
            json,
            r#"{"version":"1.0","type":"text_message_start","message_id":"m"}"#
        );
    }

    /// Written straight from the fields, an event reads as the object built first would.
    #[test]
    fn writing_from_the_fields_is_writing_the_object() {
        let fields = json!({"messageId": "m-1", "text": "a \"b\" é", "role": null, "n": [1, 2.5]})
            .as_object()
            .cloned()
            .unwrap();
        let faults = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
            Faults::parse(super::super::faults::FAULTS, &names).unwrap()
        };
        for set in [
            vec![],
            vec!["number-message-ids"],
            vec!["missing-version", "lower-case-types"],
            vec!["wrong-version"],
        ] {
            let (_, json) = render(&faults(&set), "TEXT_MESSAGE_START", fields.clone());
            let mut object = serde_json::Map::new();
            match (
                set.contains(&"missing-version"),
                set.contains(&"wrong-version"),
            ) {
                (true, _) => {}
                (false, wrong) => {
                    object.insert("version".into(), json!(if wrong { "2.0" } else { "1.0" }));
                }
            }
            let ty = match set.contains(&"lower-case-types") {
                true => "text_message_start",
                false => "TEXT_MESSAGE_START",
            };
            object.insert("type".into(), json!(ty));
            for (k, v) in &fields {
                match (set.contains(&"number-message-ids"), k.as_str(), v) {
                    (_, _, Value::Null) => {}
                    (true, "messageId", Value::String(id)) => {
                        object.insert(k.clone(), json!(message_number(id)));
                    }
                    _ => {
                        object.insert(k.clone(), v.clone());
                    }
                }
            }
            assert_eq!(json, Value::Object(object).to_string(), "faults {set:?}");
        }
    }
}
