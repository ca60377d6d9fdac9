//! Mutations every protocol shares. Each takes a valid event and returns an input that is
//! broken in one way; the protocol decides where it applies and which rule it breaks.

use super::{Input, Rng};
use serde_json::{Map, Value};

/// `event` with the value at JSON pointer `path` replaced by `with`; `None` when the path's
/// parent does not exist.
pub fn set(event: &Value, path: &str, with: Value) -> Option<Value> {
    let mut out = event.clone();
    let (parent, key) = path.rsplit_once('/')?;
    match out.pointer_mut(parent)? {
        Value::Object(m) => {
            m.insert(unescape(key), with);
        }
        Value::Array(a) => {
            let i: usize = key.parse().ok()?;
            *a.get_mut(i)? = with;
        }
        _ => return None,
    }
    Some(out)
}

/// `event` without the field at `path`; `None` when it has none there.
pub fn remove(event: &Value, path: &str) -> Option<Value> {
    let mut out = event.clone();
    let (parent, key) = path.rsplit_once('/')?;
    out.pointer_mut(parent)?
        .as_object_mut()?
        .remove(&unescape(key))?;
    Some(out)
}

/// A value of another JSON type than `value`'s.
pub fn wrong_type(value: &Value, rng: &mut Rng) -> Value {
    let choices: [Value; 5] = [
        Value::Null,
        Value::Bool(true),
        Value::from(7),
        Value::from("text"),
        Value::Array(vec![Value::from(1)]),
    ];
    let same = |v: &Value| std::mem::discriminant(v) == std::mem::discriminant(value);
    loop {
        let pick = rng.pick(&choices);
        if !same(pick) {
            return pick.clone();
        }
    }
}

/// `event` with `key` (a prototype-pollution key such as `__proto__`) added to the object at
/// `path`, `depth` levels down (inside an array when `in_array`).
pub fn pollute(
    event: &Value,
    path: &str,
    key: &str,
    depth: usize,
    in_array: bool,
) -> Option<Value> {
    let mut poison = Value::Object(Map::from_iter([(
        key.to_owned(),
        serde_json::json!({"polluted": true}),
    )]));
    for _ in 0..depth {
        poison = Value::Object(Map::from_iter([("nested".to_owned(), poison)]));
    }
    if in_array {
        poison = Value::Object(Map::from_iter([(
            "items".to_owned(),
            Value::Array(vec![Value::from(1), poison]),
        )]));
    }
    let mut out = event.clone();
    let target = out.pointer_mut(path)?.as_object_mut()?;
    match poison {
        Value::Object(m) => target.extend(m),
        _ => return None,
    }
    Some(out)
}

/// A string of exactly `chars` characters.
pub fn string_of(chars: usize) -> Value {
    Value::String("x".repeat(chars))
}

/// The event's JSON text with the value at `path` written as the raw token `raw` (something a
/// `serde_json::Value` cannot hold: `1e400`, a lone surrogate escape).
pub fn raw_token(event: &Value, path: &str, raw: &str) -> Option<Input> {
    const MARK: &str = "\u{1}wireprobe-raw\u{1}";
    let marked = set(event, path, Value::String(MARK.into()))?;
    let text = marked.to_string();
    let quoted = Value::String(MARK.into()).to_string();
    Some(Input::Raw(text.replacen(&quoted, raw, 1).into_bytes()))
}

/// `e` as JSON that is not an object: an array holding it, a string, or a number.
pub fn not_an_object(e: &Value, rng: &mut Rng) -> Input {
    Input::Event(match rng.below(3) {
        0 => serde_json::json!([e]),
        1 => Value::from("hello"),
        _ => Value::from(42),
    })
}

/// The event's JSON text cut short: not JSON.
pub fn truncated(event: &Value, rng: &mut Rng) -> Input {
    let text = event.to_string();
    let mut cut = (1 + rng.below(text.len().saturating_sub(1).max(1))).min(text.len() - 1);
    // Cut between characters: invalid UTF-8 is a mutation of its own, which transports
    // answer differently (a WebSocket text frame must carry UTF-8).
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Input::Raw(text.as_bytes()[..cut].to_vec())
}

/// The event's JSON text with a byte that is not UTF-8 inside its first string.
pub fn invalid_utf8(event: &Value) -> Input {
    let mut bytes = event.to_string().into_bytes();
    let at = bytes.iter().position(|&b| b == b'"').map_or(0, |i| i + 1);
    bytes.splice(at..at, [0xff, 0xfe]);
    Input::Raw(bytes)
}

/// The event's JSON text with its first key repeated with another value (duplicate keys).
pub fn duplicate_key(event: &Value, key: &str, other: &Value) -> Option<Input> {
    let text = event.to_string();
    let body = text.strip_prefix('{')?;
    let dup = format!("{}:{},", Value::String(key.into()), other);
    Some(Input::Raw(format!("{{{dup}{body}").into_bytes()))
}

/// JSON nested `depth` arrays deep inside the field at `path`.
pub fn deep_nesting(event: &Value, path: &str, depth: usize) -> Option<Input> {
    let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    raw_token(event, path, &raw)
}

/// The event's JSON text split by a line break outside any string (NDJSON framing attack).
pub fn line_break(event: &Value, crlf: bool) -> Input {
    let text = event.to_string();
    // After the first `,` between members: outside strings in our serialiser's output unless a
    // key or value before it holds one, which the first member (`"type":"…"`) does not.
    let at = text.find("\",\"").map_or(text.len() / 2, |i| i + 2);
    let brk = if crlf { "\r\n" } else { "\n" };
    Input::Raw(format!("{}{brk}{}", &text[..at], &text[at..]).into_bytes())
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn primitives() {
        let e = json!({"type": "t", "a": {"b": 1}});
        assert_eq!(
            set(&e, "/a/b", json!(2)).unwrap(),
            json!({"type": "t", "a": {"b": 2}})
        );
        assert_eq!(remove(&e, "/a/b").unwrap(), json!({"type": "t", "a": {}}));
        assert!(remove(&e, "/a/c").is_none());
        let Some(Input::Raw(raw)) = raw_token(&e, "/a/b", "1e400") else {
            panic!()
        };
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            r#"{"type":"t","a":{"b":1e400}}"#
        );
        let Some(Input::Raw(raw)) = duplicate_key(&e, "type", &json!("u")) else {
            panic!()
        };
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            r#"{"type":"u","type":"t","a":{"b":1}}"#
        );
        let Input::Raw(raw) = line_break(&e, false) else {
            panic!()
        };
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            "{\"type\":\"t\",\n\"a\":{\"b\":1}}"
        );
        let p = pollute(&e, "/a", "__proto__", 2, true).unwrap();
        assert!(
            p.to_string()
                .contains(r#""items":[1,{"nested":{"nested":{"__proto__""#),
            "{p}"
        );
        assert!(std::str::from_utf8(match &invalid_utf8(&e) {
            Input::Raw(r) => r,
            _ => panic!(),
        })
        .is_err());
    }
}
