//! AG-UI's protobuf binding (HTTP + Protobuf): one `ag_ui.Event` per frame, decoded to the
//! JSON event the SSE binding carries, so one checker judges both; and encoded from one (the
//! reference agent's answers). The messages are the facts in [`tables`]; the mappings the
//! wire makes between them and the JSON shapes (an outcome spelled as a string beside its
//! lists, content as a string or parts, a message's merged fields) are undone here.

pub mod tables;
pub mod wire;

use serde_json::{json, Map, Value};
use tables::{Arm, Field, Kind, BASE_FIELD, PART_ARMS, PATCH_OPS, SOURCE_ARMS};
use wire::{Payload, WireError};

/// Why a frame did not decode as an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a protobuf message: {0}")]
    Wire(#[from] WireError),
    #[error("the envelope carries {0} event arms, not one")]
    Arms(usize),
    #[error("the envelope names event arm {0}, which ag_ui.Event 1.0 does not have")]
    UnknownArm(u32),
    #[error("the {ty} arm's base event declares type {declared}")]
    TypeMismatch { ty: &'static str, declared: u64 },
    #[error("field {field} holds a {found} payload")]
    WrongPayload {
        field: &'static str,
        found: &'static str,
    },
}

/// The event a frame's bytes encode.
pub fn decode(bytes: &[u8]) -> Result<Value, DecodeError> {
    let envelope = wire::fields(bytes)?;
    let arms: Vec<_> = envelope
        .iter()
        .filter(|(n, _)| tables::arm_numbered(*n).is_some())
        .collect();
    let [(num, payload)] = arms.as_slice() else {
        if arms.is_empty() {
            if let Some((n, _)) = envelope.first() {
                return Err(DecodeError::UnknownArm(*n));
            }
        }
        return Err(DecodeError::Arms(arms.len()));
    };
    let arm = tables::arm_numbered(*num).ok_or(DecodeError::Arms(0))?;
    let inner = wire::fields(bytes_of(payload, arm.ty)?)?;
    let mut event = Map::new();
    event.insert("type".into(), json!(arm.ty));
    if let Some((_, base)) = inner.iter().rfind(|(n, _)| *n == BASE_FIELD) {
        base_event(arm, bytes_of(base, "baseEvent")?, &mut event)?;
    } else if arm.enum_value != 0 {
        return Err(DecodeError::TypeMismatch {
            ty: arm.ty,
            declared: 0,
        });
    }
    let mut fields = message(&inner, arm.fields)?;
    event.append(&mut fields);
    let mut event = Value::Object(event);
    unmap(arm.ty, &mut event);
    Ok(event)
}

/// Field 1 as a varint (an enum: the base event's type, a patch op), the last value winning;
/// 0 when absent, as protobuf reads an enum it was not sent.
fn first_varint(fields: &[(u32, Payload<'_>)]) -> u64 {
    fields
        .iter()
        .rev()
        .find_map(|(n, p)| match (n, p) {
            (1, Payload::Varint(v)) => Some(*v),
            _ => None,
        })
        .unwrap_or(0)
}

fn bytes_of<'a>(payload: &Payload<'a>, field: &'static str) -> Result<&'a [u8], DecodeError> {
    match payload {
        Payload::Bytes(b) => Ok(b),
        _ => Err(DecodeError::WrongPayload {
            field,
            found: "numeric",
        }),
    }
}

/// The base event: its type must be the arm's; timestamp, rawEvent and metadata join the event.
fn base_event(arm: &Arm, bytes: &[u8], event: &mut Map<String, Value>) -> Result<(), DecodeError> {
    let fields = wire::fields(bytes)?;
    let declared = first_varint(&fields);
    if declared != arm.enum_value {
        return Err(DecodeError::TypeMismatch {
            ty: arm.ty,
            declared,
        });
    }
    const BASE: &[Field] = &[
        tables_field(2, "timestamp", Kind::Int),
        tables_field(3, "rawEvent", Kind::Value),
        tables_field(4, "metadata", Kind::Struct),
    ];
    event.append(&mut message(&fields, BASE)?);
    Ok(())
}

const fn tables_field(num: u32, name: &'static str, kind: Kind) -> Field {
    Field {
        num,
        name,
        kind,
        required: false,
    }
}

/// A message's fields as JSON, by `table` (fields it does not list are skipped, as protobuf
/// decoding skips what a build predates).
fn message(
    fields: &[(u32, Payload<'_>)],
    table: &[Field],
) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    for field in table {
        let mut values = fields
            .iter()
            .filter(|(n, _)| *n == field.num)
            .map(|(_, p)| p);
        let last = || {
            fields
                .iter()
                .rev()
                .find(|(n, _)| *n == field.num)
                .map(|(_, p)| p)
        };
        let value = match field.kind {
            Kind::Str => Some(Value::String(
                last()
                    .map(|p| text(p, field))
                    .transpose()?
                    .unwrap_or_default(),
            )),
            Kind::OptStr => last()
                .map(|p| text(p, field).map(Value::String))
                .transpose()?,
            Kind::Bool => last()
                .map(|p| varint(p, field).map(|v| Value::Bool(v != 0)))
                .transpose()?,
            Kind::Int => last()
                .map(|p| varint(p, field).map(|v| json!(v as i64)))
                .transpose()?,
            Kind::Value => last()
                .map(|p| Ok::<_, DecodeError>(wire::value_from_wire(bytes_of(p, field.name)?)?))
                .transpose()?,
            Kind::Struct => last()
                .map(|p| Ok::<_, DecodeError>(wire::struct_from_wire(bytes_of(p, field.name)?)?))
                .transpose()?,
            Kind::Msg(t) => last().map(|p| sub_message(p, field, t)).transpose()?,
            Kind::Source => last().map(|p| one_of(p, field, SOURCE_ARMS)).transpose()?,
            Kind::RepStr => Some(Value::Array(
                values
                    .by_ref()
                    .map(|p| text(p, field).map(Value::String))
                    .collect::<Result<_, _>>()?,
            )),
            Kind::RepMsg(t) => Some(Value::Array(
                values
                    .by_ref()
                    .map(|p| sub_message(p, field, t))
                    .collect::<Result<_, _>>()?,
            )),
            Kind::Parts => Some(Value::Array(
                values
                    .by_ref()
                    .map(|p| one_of(p, field, PART_ARMS))
                    .collect::<Result<_, _>>()?,
            )),
            Kind::Patch => Some(Value::Array(
                values
                    .by_ref()
                    .map(|p| patch_op(p, field))
                    .collect::<Result<_, _>>()?,
            )),
            Kind::Messages => Some(Value::Array(
                values
                    .by_ref()
                    .map(|p| {
                        let mut m = sub_message(p, field, tables::MESSAGE)?;
                        unmap_message(&mut m);
                        Ok::<_, DecodeError>(m)
                    })
                    .collect::<Result<_, _>>()?,
            )),
        };
        match value {
            Some(Value::Array(items)) if items.is_empty() && !field.required => {}
            Some(v) => {
                out.insert(field.name.to_owned(), v);
            }
            None => {}
        }
    }
    Ok(out)
}

fn text(p: &Payload<'_>, field: &Field) -> Result<String, DecodeError> {
    Ok(String::from_utf8_lossy(bytes_of(p, field.name)?).into_owned())
}

fn varint(p: &Payload<'_>, field: &Field) -> Result<u64, DecodeError> {
    match p {
        Payload::Varint(v) => Ok(*v),
        _ => Err(DecodeError::WrongPayload {
            field: field.name,
            found: "non-varint",
        }),
    }
}

fn sub_message(p: &Payload<'_>, field: &Field, table: &[Field]) -> Result<Value, DecodeError> {
    let fields = wire::fields(bytes_of(p, field.name)?)?;
    Ok(Value::Object(message(&fields, table)?))
}

/// A oneof message (a content part, a part's source) as `{"type": ARM, ...its fields}`; an arm
/// this build does not know reads as `{}` (unrecognised material, for the checker to name).
fn one_of(
    p: &Payload<'_>,
    field: &Field,
    arms: &[(u32, &str, &[Field])],
) -> Result<Value, DecodeError> {
    let fields = wire::fields(bytes_of(p, field.name)?)?;
    let Some((num, ty, table)) = arms
        .iter()
        .find(|(n, _, _)| fields.iter().any(|(f, _)| f == n))
    else {
        return Ok(json!({}));
    };
    let (_, payload) = fields
        .iter()
        .rev()
        .find(|(f, _)| f == num)
        .ok_or(DecodeError::Arms(0))?;
    let inner = wire::fields(bytes_of(payload, field.name)?)?;
    let mut m = message(&inner, table)?;
    m.insert("type".into(), json!(ty));
    Ok(Value::Object(m))
}

/// A JSON Patch operation: its `op` enum as the RFC's name (an unknown value as its number,
/// which the schema then reads as unrecognised).
fn patch_op(p: &Payload<'_>, field: &Field) -> Result<Value, DecodeError> {
    let fields = wire::fields(bytes_of(p, field.name)?)?;
    const OP: &[Field] = &[
        tables_field(2, "path", Kind::Str),
        tables_field(3, "from", Kind::OptStr),
        tables_field(4, "value", Kind::Value),
    ];
    let op = first_varint(&fields);
    let mut m = Map::new();
    let name = PATCH_OPS
        .get(op as usize)
        .map_or_else(|| op.to_string(), |s| (*s).to_owned());
    m.insert("op".into(), json!(name));
    m.append(&mut message(&fields, OP)?);
    Ok(Value::Object(m))
}

/// Undoes what the wire does to an event's JSON shape.
fn unmap(ty: &str, event: &mut Value) {
    let Value::Object(m) = event else {
        return;
    };
    match ty {
        "RUN_FINISHED" => {
            let kind = m
                .remove("outcome")
                .and_then(|o| o.as_str().map(str::to_owned));
            let pending = m.remove("pendingToolCallIds");
            let interrupts = m.remove("interrupts");
            if let Some(kind) = kind.filter(|k| !k.is_empty()) {
                let mut outcome = json!({"type": kind});
                if let Some(p) = pending {
                    outcome["pendingToolCallIds"] = p;
                }
                match interrupts {
                    Some(i) => outcome["interrupts"] = i,
                    None if kind == "interrupt" => outcome["interrupts"] = json!([]),
                    None => {}
                }
                m.insert("outcome".into(), outcome);
            }
        }
        "SUBAGENT_FINISHED" => {
            let kind = m
                .remove("outcome")
                .and_then(|o| o.as_str().map(str::to_owned));
            let ids = m.remove("interruptIds");
            if let Some(kind) = kind.filter(|k| !k.is_empty()) {
                let mut outcome = json!({"type": kind});
                if let Some(ids) = ids {
                    outcome["interruptIds"] = ids;
                }
                m.insert("outcome".into(), outcome);
            }
        }
        "TOOL_CALL_RESULT" => {
            if let Some(parts) = m.remove("contentParts") {
                m.entry("content").or_insert(parts);
            }
            m.entry("content").or_insert(json!([]));
        }
        _ => {}
    }
}

/// A wire message as its role's JSON shape: parts or an activity's object as `content`.
fn unmap_message(message: &mut Value) {
    let Value::Object(m) = message else {
        return;
    };
    if let Some(parts) = m.remove("contentParts") {
        m.insert("content".into(), parts);
    }
    if let Some(content) = m.remove("activityContent") {
        m.insert("content".into(), content);
    }
}

/// Why an event could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("an event without a type the wire knows: {0}")]
    UnknownType(String),
    /// A patch operation whose `op` the wire's enum does not name: it has no wire form (sent
    /// as the enum's zero it would read back as `add`).
    #[error("a patch operation the wire's enum does not name: {0}")]
    UnknownOp(String),
}

/// The frame body (no length header) of `event`.
pub fn encode(event: &Value) -> Result<Vec<u8>, EncodeError> {
    let ty = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arm = tables::arm_of(ty).ok_or_else(|| EncodeError::UnknownType(ty.to_owned()))?;
    let patches = arm.fields.iter().filter(|f| matches!(f.kind, Kind::Patch));
    for field in patches {
        let ops = event.get(field.name).and_then(Value::as_array);
        for op in ops.into_iter().flatten() {
            let name = op.get("op").and_then(Value::as_str).unwrap_or("");
            if !PATCH_OPS.contains(&name) {
                return Err(EncodeError::UnknownOp(name.to_owned()));
            }
        }
    }
    let mut mapped = event.clone();
    remap(ty, &mut mapped);
    let mut base = Vec::new();
    if arm.enum_value != 0 {
        wire::put_varint(&mut base, 1, arm.enum_value);
    }
    if let Some(t) = mapped.get("timestamp").and_then(Value::as_i64) {
        wire::put_varint(&mut base, 2, t as u64);
    }
    if let Some(raw) = mapped.get("rawEvent") {
        wire::put_bytes(&mut base, 3, &wire::value_to_wire(raw));
    }
    if let Some(meta) = mapped.get("metadata") {
        wire::put_bytes(&mut base, 4, &wire::struct_to_wire(meta));
    }
    let mut inner = Vec::new();
    wire::put_bytes(&mut inner, BASE_FIELD, &base);
    put_message(&mut inner, &mapped, arm.fields);
    let mut out = Vec::new();
    wire::put_bytes(&mut out, arm.num, &inner);
    Ok(out)
}

/// What the wire does to an event's JSON shape (the inverse of [`unmap`]).
fn remap(ty: &str, event: &mut Value) {
    let Value::Object(m) = event else {
        return;
    };
    if ty == "RUN_FINISHED" || ty == "SUBAGENT_FINISHED" {
        if let Some(Value::Object(outcome)) = m.remove("outcome") {
            for (k, v) in outcome {
                let key = if k == "type" { "outcome".to_owned() } else { k };
                m.insert(key, v);
            }
        }
    }
    // Parts ride `contentParts`; a string stays the `content` it is.
    if ty == "TOOL_CALL_RESULT" && m.get("content").is_some_and(Value::is_array) {
        if let Some(parts) = m.remove("content") {
            m.insert("contentParts".into(), parts);
        }
    }
}

/// Appends `value`'s fields by `table`.
fn put_message(out: &mut Vec<u8>, value: &Value, table: &[Field]) {
    for field in table {
        let Some(v) = value.get(field.name) else {
            continue;
        };
        let n = field.num;
        match (field.kind, v) {
            (Kind::Str | Kind::OptStr, Value::String(s)) => wire::put_bytes(out, n, s.as_bytes()),
            (Kind::Bool, Value::Bool(b)) => wire::put_varint(out, n, u64::from(*b)),
            (Kind::Int, Value::Number(x)) => {
                wire::put_varint(out, n, x.as_i64().unwrap_or(0) as u64)
            }
            (Kind::Value, v) => wire::put_bytes(out, n, &wire::value_to_wire(v)),
            (Kind::Struct, v) => wire::put_bytes(out, n, &wire::struct_to_wire(v)),
            (Kind::Msg(t), v) => {
                let mut inner = Vec::new();
                put_message(&mut inner, v, t);
                wire::put_bytes(out, n, &inner);
            }
            (Kind::RepStr, Value::Array(items)) => {
                for s in items.iter().filter_map(Value::as_str) {
                    wire::put_bytes(out, n, s.as_bytes());
                }
            }
            (Kind::RepMsg(t), Value::Array(items)) => {
                for item in items {
                    let mut inner = Vec::new();
                    put_message(&mut inner, item, t);
                    wire::put_bytes(out, n, &inner);
                }
            }
            (Kind::Messages, Value::Array(items)) => {
                for item in items {
                    let mut inner = Vec::new();
                    put_message(&mut inner, &wire_message(item), tables::MESSAGE);
                    wire::put_bytes(out, n, &inner);
                }
            }
            (Kind::Parts, Value::Array(items)) => {
                for item in items {
                    wire::put_bytes(out, n, &put_one_of(item, PART_ARMS));
                }
            }
            (Kind::Source, v) => wire::put_bytes(out, n, &put_one_of(v, SOURCE_ARMS)),
            (Kind::Patch, Value::Array(ops)) => {
                for op in ops {
                    let mut inner = Vec::new();
                    let name = op.get("op").and_then(Value::as_str).unwrap_or("");
                    let index = PATCH_OPS.iter().position(|o| *o == name).unwrap_or(0);
                    if index != 0 {
                        wire::put_varint(&mut inner, 1, index as u64);
                    }
                    const OP: &[Field] = &[
                        tables_field(2, "path", Kind::Str),
                        tables_field(3, "from", Kind::OptStr),
                        tables_field(4, "value", Kind::Value),
                    ];
                    put_message(&mut inner, op, OP);
                    wire::put_bytes(out, n, &inner);
                }
            }
            _ => {}
        }
    }
}

/// A JSON message in its wire shape: parts as `contentParts`, an activity's object as
/// `activityContent` (the inverse of [`unmap_message`]).
fn wire_message(value: &Value) -> Value {
    let mut m = value.clone();
    let content = m.get("content").cloned();
    match content {
        Some(parts @ Value::Array(_)) => {
            m["contentParts"] = parts;
        }
        Some(object @ Value::Object(_)) => {
            m["activityContent"] = object;
        }
        _ => {}
    }
    m
}

/// A oneof message (a part, a source) from `{"type": ARM, ...}`.
fn put_one_of(value: &Value, arms: &[(u32, &str, &[Field])]) -> Vec<u8> {
    let ty = value.get("type").and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    if let Some((num, _, table)) = arms.iter().find(|(_, t, _)| *t == ty) {
        let mut inner = Vec::new();
        put_message(&mut inner, value, table);
        wire::put_bytes(&mut out, *num, &inner);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(event: Value) {
        let bytes = encode(&event).expect("encodes");
        assert_eq!(decode(&bytes).expect("decodes"), event, "{event}");
    }

    #[test]
    fn the_events_a_run_streams_survive_the_wire() {
        round_trip(
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"}),
        );
        round_trip(json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}));
        round_trip(
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi", "timestamp": 1_767_225_600_000i64}),
        );
        round_trip(json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}));
        round_trip(
            json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/a", "value": [1, {"b": null}]}, {"op": "add", "path": "/c", "value": 2}]}),
        );
        round_trip(
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "success", "pendingToolCallIds": ["c1"]}}),
        );
        round_trip(
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "why"}]}}),
        );
        round_trip(json!({"type": "RUN_ERROR", "message": "no", "code": "x"}));
        round_trip(
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "content": "hi"}, {"id": "a", "role": "activity", "activityType": "p", "content": {"n": 1}}]}),
        );
        round_trip(
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": [{"type": "text", "text": "x"}, {"type": "image", "source": {"type": "url", "value": "https://x/y.png"}}]}),
        );
        round_trip(json!({"type": "CUSTOM", "name": "n", "value": null, "metadata": {"k": "v"}}));
    }

    #[test]
    fn an_operation_the_wire_enum_does_not_name_is_not_sent_as_another() {
        let unknown = json!({"type": "STATE_DELTA", "delta": [{"op": "frobnicate", "path": "/a"}]});
        assert_eq!(
            encode(&unknown),
            Err(EncodeError::UnknownOp("frobnicate".into()))
        );
    }

    #[test]
    fn what_is_not_one_known_event_does_not_decode() {
        assert!(decode(b"\xff\xff").is_err());
        let mut two = encode(&json!({"type": "STEP_STARTED", "stepName": "a"})).expect("encodes");
        two.extend(encode(&json!({"type": "STEP_FINISHED", "stepName": "a"})).expect("encodes"));
        assert_eq!(decode(&two), Err(DecodeError::Arms(2)));
        let mut future = Vec::new();
        wire::put_bytes(&mut future, 40, b"");
        assert_eq!(decode(&future), Err(DecodeError::UnknownArm(40)));
        // The arm and the base event's type must agree.
        let mut base = Vec::new();
        wire::put_varint(&mut base, 1, 5);
        let mut inner = Vec::new();
        wire::put_bytes(&mut inner, 1, &base);
        let mut lying = Vec::new();
        wire::put_bytes(&mut lying, 1, &inner);
        assert!(matches!(
            decode(&lying),
            Err(DecodeError::TypeMismatch { .. })
        ));
    }
}
