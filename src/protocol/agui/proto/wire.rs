//! Protobuf's wire format, as much as AG-UI's messages need: a message read into its fields
//! (varints, length-delimited bytes; fixed-width values kept as they are), fields written back,
//! and `google.protobuf.Value` / `Struct` turned into JSON and back (with `prost-types`).

use prost::Message;
use serde_json::{Map, Number, Value};

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("the bytes end inside a field")]
    Truncated,
    #[error("field {0} has wire type {1}, which protobuf does not define")]
    BadWireType(u64, u64),
    #[error("field number 0")]
    FieldZero,
    #[error("{0}")]
    Value(String),
}

/// One field's payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed64(u64),
    Fixed32(u32),
}

/// The fields of a message, in wire order (a repeated field appears once per element).
pub fn fields(mut bytes: &[u8]) -> Result<Vec<(u32, Payload<'_>)>, WireError> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let number = key >> 3;
        if number == 0 {
            return Err(WireError::FieldZero);
        }
        let number = u32::try_from(number).map_err(|_| WireError::BadWireType(number, key & 7))?;
        let payload = match key & 7 {
            0 => Payload::Varint(varint(&mut bytes)?),
            1 => Payload::Fixed64(u64::from_le_bytes(
                take(&mut bytes, 8)?
                    .try_into()
                    .map_err(|_| WireError::Truncated)?,
            )),
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).map_err(|_| WireError::Truncated)?;
                Payload::Bytes(take(&mut bytes, len)?)
            }
            5 => Payload::Fixed32(u32::from_le_bytes(
                take(&mut bytes, 4)?
                    .try_into()
                    .map_err(|_| WireError::Truncated)?,
            )),
            other => return Err(WireError::BadWireType(number.into(), other)),
        };
        out.push((number, payload));
    }
    Ok(out)
}

fn varint(bytes: &mut &[u8]) -> Result<u64, WireError> {
    prost::encoding::decode_varint(bytes).map_err(|_| WireError::Truncated)
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], WireError> {
    if bytes.len() < n {
        return Err(WireError::Truncated);
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

/// Appends a varint field.
pub fn put_varint(out: &mut Vec<u8>, number: u32, value: u64) {
    prost::encoding::encode_key(number, prost::encoding::WireType::Varint, out);
    prost::encoding::encode_varint(value, out);
}

/// Appends a length-delimited field.
pub fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, out);
    prost::encoding::encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A `google.protobuf.Value` as JSON.
pub fn value_from_wire(bytes: &[u8]) -> Result<Value, WireError> {
    let value = prost_types::Value::decode(bytes).map_err(|e| WireError::Value(e.to_string()))?;
    Ok(json_of(&value))
}

/// A `google.protobuf.Struct` as a JSON object.
pub fn struct_from_wire(bytes: &[u8]) -> Result<Value, WireError> {
    let s = prost_types::Struct::decode(bytes).map_err(|e| WireError::Value(e.to_string()))?;
    Ok(object_of(&s))
}

fn object_of(s: &prost_types::Struct) -> Value {
    Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), json_of(v)))
            .collect(),
    )
}

fn json_of(value: &prost_types::Value) -> Value {
    use prost_types::value::Kind;
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::NumberValue(n)) => json_number(*n),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StructValue(s)) => object_of(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.iter().map(json_of).collect()),
    }
}

/// A double as JSON: an integer when it is one (JSON has one number type; protobuf's Value
/// carries every number as a double).
fn json_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// JSON as a `google.protobuf.Value`'s bytes.
pub fn value_to_wire(value: &Value) -> Vec<u8> {
    wire_of(value).encode_to_vec()
}

/// A JSON object as a `google.protobuf.Struct`'s bytes (anything else: an empty one).
pub fn struct_to_wire(value: &Value) -> Vec<u8> {
    struct_of(value.as_object().unwrap_or(&Map::new())).encode_to_vec()
}

fn struct_of(m: &Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: m.iter().map(|(k, v)| (k.clone(), wire_of(v))).collect(),
    }
}

fn wire_of(value: &Value) -> prost_types::Value {
    use prost_types::value::Kind;
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(wire_of).collect(),
        }),
        Value::Object(m) => Kind::StructValue(struct_of(m)),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_read_back_what_was_written() {
        let mut out = Vec::new();
        put_varint(&mut out, 1, 300);
        put_bytes(&mut out, 2, b"abc");
        assert_eq!(
            fields(&out).expect("reads"),
            [(1, Payload::Varint(300)), (2, Payload::Bytes(b"abc"))]
        );
        assert_eq!(fields(&out[..out.len() - 1]), Err(WireError::Truncated));
        assert!(fields(&[0x0f]).is_err());
    }

    #[test]
    fn json_values_survive_the_google_types() {
        let v = json!({"a": [1, 2.5, "x", null, true], "b": {"c": {}}});
        assert_eq!(value_from_wire(&value_to_wire(&v)).expect("decodes"), v);
        assert_eq!(struct_from_wire(&struct_to_wire(&v)).expect("decodes"), v);
    }
}
