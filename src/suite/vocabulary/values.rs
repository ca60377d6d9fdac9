//! The values a suite file writes inside its steps and cases, each read, written and described
//! (JSON Schema) by one definition: repeat counts, pattern lists, raw frames, and the names a
//! suite gives to handshakes, tokens, token placements and refusals.

use crate::auth::TokenKind;
use crate::protocol::TokenPlacement;
use base64::Engine as _;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Upper bound on `times`: a typo must not send a billion frames.
pub const MAX_TIMES: u64 = 100_000;

/// Upper bound on a frame `send_raw.repeat` builds.
const MAX_REPEATED_BYTES: u64 = 64 * 1024 * 1024;

/// The string that stands for JSON `null` in a `send` (TOML has no null).
pub const NULL: &str = "$null";

/// How many times a step repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Times {
    Fixed(u64),
    /// `"${NAME}"` plus a constant, resolved when the step runs.
    FromVar {
        name: String,
        delta: i64,
    },
}

impl Default for Times {
    fn default() -> Self {
        Times::Fixed(1)
    }
}

impl Times {
    /// Once, what a step without `times` does (the writer leaves it out).
    pub fn is_once(&self) -> bool {
        *self == Times::Fixed(1)
    }

    fn parse_expr(s: &str) -> Option<Times> {
        let rest = s.strip_prefix("${")?;
        let end = rest.find('}')?;
        let name = rest[..end].to_owned();
        let tail = rest[end + 1..].trim();
        let delta = if tail.is_empty() {
            0
        } else if let Some(n) = tail.strip_prefix('+') {
            n.trim().parse().ok()?
        } else if let Some(n) = tail.strip_prefix('-') {
            -n.trim().parse::<i64>().ok()?
        } else {
            return None;
        };
        (!name.is_empty()).then_some(Times::FromVar { name, delta })
    }
}

impl<'de> Deserialize<'de> for Times {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => match n.as_u64() {
                Some(t) if t <= MAX_TIMES => Ok(Times::Fixed(t)),
                _ => Err(D::Error::custom(format!(
                    "`times` must be an integer from 0 to {MAX_TIMES}, not {n}"
                ))),
            },
            Value::String(s) => Times::parse_expr(&s).ok_or_else(|| {
                D::Error::custom(format!(
                    "`times` {s:?} is not an integer or \"${{NAME}}\", \"${{NAME}}+K\", \"${{NAME}}-K\""
                ))
            }),
            other => Err(D::Error::custom(format!(
                "`times` must be an integer, not {other}"
            ))),
        }
    }
}

impl Serialize for Times {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Times::Fixed(n) => s.serialize_u64(*n),
            Times::FromVar { name, delta } => s.serialize_str(&format!("${{{name}}}{delta:+}")),
        }
    }
}

impl JsonSchema for Times {
    fn schema_name() -> Cow<'static, str> {
        "Times".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "How many times: an integer, or a captured number plus a constant (\"${NAME}\", \"${NAME}+K\", \"${NAME}-K\").",
            "anyOf": [
                { "type": "integer", "minimum": 0, "maximum": MAX_TIMES },
                { "type": "string", "pattern": "^\\$\\{[^}]+\\}\\s*([+-]\\s*[0-9]+)?$" }
            ]
        })
    }
}

/// Event patterns: a table, or a list of tables any of which matches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Patterns(pub Vec<Value>);

impl Patterns {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Deref for Patterns {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Patterns {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            v @ Value::Object(_) => Ok(Patterns(vec![v])),
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                Ok(Patterns(items))
            }
            other => Err(D::Error::custom(format!(
                "takes a pattern table or a list of them, not {other}"
            ))),
        }
    }
}

impl Serialize for Patterns {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl JsonSchema for Patterns {
    fn schema_name() -> Cow<'static, str> {
        "Patterns".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An event pattern (a table of the fields to match; \"$capture:NAME\", \"$any\", \"$absent\" and the other pattern words the README lists), or a list of patterns any of which matches.",
            "anyOf": [
                { "type": "object" },
                { "type": "array", "items": { "type": "object" }, "minItems": 1 }
            ]
        })
    }
}

/// A JSON object given as a TOML table, with `"$null"` standing for JSON `null` (an event a
/// step sends).
pub fn event_table<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let mut event = Value::Object(Map::deserialize(d)?);
    restore_nulls(&mut event);
    Ok(event)
}

/// A TOML table, kept as the JSON object it stands for.
pub fn object<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    Map::deserialize(d).map(Value::Object)
}

/// [`object`], when given.
pub fn some_object<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    object(d).map(Some)
}

/// Replaces every `"$null"` string in a `send` body with JSON `null`.
pub fn restore_nulls(v: &mut Value) {
    match v {
        Value::String(s) if s == NULL => *v = Value::Null,
        Value::Array(items) => items.iter_mut().for_each(restore_nulls),
        Value::Object(m) => m.values_mut().for_each(restore_nulls),
        _ => {}
    }
}

/// A frame given byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawFrame {
    Text(String),
    Binary(Vec<u8>),
    /// A text frame whose bytes need not be UTF-8.
    TextBytes(Vec<u8>),
}

/// How a suite file writes a [`RawFrame`]: exactly one of the three forms.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawFrameFile {
    /// A text frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// `text` this many times over (large frames without large suite files; at most 64 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    repeat: Option<u64>,
    /// A binary frame, Base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    binary_base64: Option<String>,
    /// A text frame of these bytes, Base64 (they need not be UTF-8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text_bytes_base64: Option<String>,
}

impl TryFrom<RawFrameFile> for RawFrame {
    type Error = String;

    fn try_from(file: RawFrameFile) -> Result<Self, String> {
        let b64 = |s: &str| {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("not Base64: {e}"))
        };
        match (
            file.text,
            file.repeat,
            file.binary_base64,
            file.text_bytes_base64,
        ) {
            (Some(text), None, None, None) => Ok(RawFrame::Text(text)),
            (Some(text), Some(n), None, None) => {
                match n.saturating_mul(text.len() as u64) > MAX_REPEATED_BYTES {
                    true => Err("`send_raw.repeat` would build a frame over 64 MiB".into()),
                    false => Ok(RawFrame::Text(text.repeat(n as usize))),
                }
            }
            (None, Some(_), _, _) => Err("`repeat` repeats a `text`".into()),
            (None, None, Some(data), None) => Ok(RawFrame::Binary(b64(&data)?)),
            (None, None, None, Some(data)) => Ok(RawFrame::TextBytes(b64(&data)?)),
            _ => Err("`send_raw` takes one of text, binary_base64, text_bytes_base64".into()),
        }
    }
}

impl From<&RawFrame> for RawFrameFile {
    fn from(frame: &RawFrame) -> Self {
        let b64 = |b: &[u8]| Some(base64::engine::general_purpose::STANDARD.encode(b));
        match frame {
            RawFrame::Text(text) => RawFrameFile {
                text: Some(text.clone()),
                ..RawFrameFile::default()
            },
            RawFrame::Binary(b) => RawFrameFile {
                binary_base64: b64(b),
                ..RawFrameFile::default()
            },
            // Readable when it can be: a text frame of UTF-8 that does not end a line.
            RawFrame::TextBytes(b) => match std::str::from_utf8(b) {
                Ok(text) if !text.ends_with('\n') => RawFrameFile {
                    text: Some(text.to_owned()),
                    ..RawFrameFile::default()
                },
                _ => RawFrameFile {
                    text_bytes_base64: b64(b),
                    ..RawFrameFile::default()
                },
            },
        }
    }
}

impl<'de> Deserialize<'de> for RawFrame {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawFrame::try_from(RawFrameFile::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl Serialize for RawFrame {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawFrameFile::from(self).serialize(s)
    }
}

impl JsonSchema for RawFrame {
    fn schema_name() -> Cow<'static, str> {
        "RawFrame".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        RawFrameFile::json_schema(generator)
    }
}

/// The value `name` stands for in `table`.
fn by_name<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The name `table` gives `value`.
fn name_of<T: PartialEq>(table: &[(&'static str, T)], value: &T) -> Option<&'static str> {
    table.iter().find(|(_, v)| v == value).map(|(n, _)| *n)
}

/// A type a suite names with a word from a fixed table: read, written and described (an enum
/// of the words) from that table alone.
macro_rules! named_by {
    ($type:ty, $table:expr, $what:literal) => {
        impl<'de> Deserialize<'de> for $type {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                by_name(&$table, &name).ok_or_else(|| {
                    let names: Vec<&str> = $table.iter().map(|(n, _)| *n).collect();
                    D::Error::custom(format!(
                        "`{}` {name:?} is not one of {}",
                        $what,
                        names.join(", ")
                    ))
                })
            }
        }

        impl Serialize for $type {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match name_of(&$table, self) {
                    Some(name) => s.serialize_str(name),
                    None => Err(serde::ser::Error::custom(format!("no name for {self:?}"))),
                }
            }
        }

        impl JsonSchema for $type {
            fn schema_name() -> Cow<'static, str> {
                stringify!($type).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let names: Vec<&str> = $table.iter().map(|(n, _)| *n).collect();
                json_schema!({ "type": "string", "enum": names })
            }
        }
    };
}

named_by!(TokenKind, TokenKind::NAMES, "token");

/// Each token placement by the name a suite gives it (`connect.token_in`).
pub const TOKEN_PLACEMENTS: [(&str, TokenPlacement); 3] = [
    ("query", TokenPlacement::Query),
    ("subprotocol", TokenPlacement::Subprotocol),
    ("header", TokenPlacement::Header),
];

named_by!(TokenPlacement, TOKEN_PLACEMENTS, "connect.token_in");

/// What a refused connection means for a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refusal {
    /// The case cannot run: an error.
    #[default]
    Error,
    /// The case's point is that the connection is accepted: a failure.
    Fail,
}

const REFUSALS: [(&str, Refusal); 2] = [("error", Refusal::Error), ("fail", Refusal::Fail)];

named_by!(Refusal, REFUSALS, "connect.refusal");

/// What happens when a connection opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HandshakeMode {
    /// Send the handshake and wait for the target's answer.
    #[default]
    Full,
    /// Send the handshake; the steps judge the answer.
    SendOnly,
    /// Send nothing.
    None,
}

impl HandshakeMode {
    /// The handshake a suite gets by not naming one (the writer leaves it out).
    pub fn is_full(&self) -> bool {
        *self == HandshakeMode::Full
    }
}

const HANDSHAKES: [(&str, HandshakeMode); 3] = [
    ("full", HandshakeMode::Full),
    ("send", HandshakeMode::SendOnly),
    ("none", HandshakeMode::None),
];

impl<'de> Deserialize<'de> for HandshakeMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(HandshakeMode::Full),
            Value::Bool(false) => Ok(HandshakeMode::None),
            Value::String(s) => by_name(&HANDSHAKES, &s).ok_or_else(|| {
                D::Error::custom(format!("`handshake` is full, send or none, not {s:?}"))
            }),
            other => Err(D::Error::custom(format!(
                "`handshake` is full, send or none, not {other}"
            ))),
        }
    }
}

impl Serialize for HandshakeMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(name_of(&HANDSHAKES, self).unwrap_or("full"))
    }
}

impl JsonSchema for HandshakeMode {
    fn schema_name() -> Cow<'static, str> {
        "HandshakeMode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "full (send the handshake, wait for the answer; true), send (send it; the steps judge the answer), none (send nothing; false).",
            "anyOf": [
                { "type": "string", "enum": ["full", "send", "none"] },
                { "type": "boolean" }
            ]
        })
    }
}

/// `false`, for `skip_serializing_if`.
pub fn is_false(b: &bool) -> bool {
    !*b
}
