//! JSON subset patterns: what `expect` steps match received events against.
//!
//! A pattern matches a value when every key of a pattern object is present and matches,
//! arrays match element by element (same length), and scalars are equal (numbers by value).
//! Special strings: `"$any"` (present, any value), `"$absent"` (the key must be missing),
//! `"$capture:NAME"` (matches anything and binds it), `"$capture?:NAME"` (the same for a field
//! the spec makes optional: a missing key binds `""`). An object `{"$contains": P}` matches an
//! array with at least one element matching `P`. `"${NAME}"` (or `"${NAME.path.0}"`) is
//! substituted before matching; a whole-string reference keeps the captured JSON type.
//! `"${uuid}"` is a fresh UUID at every use; `"${uuid:NAME}"` is one UUID per NAME per case;
//! `"${repeat:N:TEXT}"` is TEXT repeated N times.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Captured values, by name.
pub type Vars = BTreeMap<String, Value>;

/// A `${NAME}` reference to a variable that was never captured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown variable ${{{0}}} (captured nowhere before this step)")]
pub struct UnknownVariable(pub String);

/// Replaces every `${NAME}` in `pattern` with its value from `vars`.
pub fn substitute(pattern: &Value, vars: &Vars) -> Result<Value, UnknownVariable> {
    Ok(match pattern {
        Value::String(s) => substitute_str(s, vars)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                out.insert(k.clone(), substitute(v, vars)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn substitute_str(s: &str, vars: &Vars) -> Result<Value, UnknownVariable> {
    if !s.contains("${") {
        return Ok(Value::String(s.to_owned()));
    }
    // A string that is exactly one reference keeps the value's JSON type.
    if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        if !name.contains("${") && !name.contains('}') {
            return lookup(name, vars);
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        // `$${` is a literal `${` (see [`make_literal`]).
        if rest[..start].ends_with('$') {
            out.push_str(&rest[..start - 1]);
            out.push_str("${");
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match lookup(&after[..end], vars)? {
            Value::String(v) => out.push_str(&v),
            other => out.push_str(&other.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

/// Writes every `${` in `v`'s strings as `$${`, so [`substitute`] gives back exactly the `v`
/// it was: how generated data that happens to look like a template goes out as it is. Only the
/// strings that hold `${` change.
pub fn make_literal(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("${") => *s = s.replace("${", "$${"),
        Value::Array(items) => items.iter_mut().for_each(make_literal),
        Value::Object(map) => map.values_mut().for_each(make_literal),
        _ => {}
    }
}

/// True when `a` and `b` are the same JSON value, numbers compared by value as patterns
/// compare them: JSON has one number type, and a peer that parsed `2.0` writes it back as `2`.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// True when two JSON numbers have the same value (`2` is `2.0`).
fn same_number(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => x == y,
    }
}

/// `v` with `f` applied to every string value in it (object keys stay as they are).
pub fn map_strings(v: &Value, f: &impl Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| (k.clone(), map_strings(x, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// True when a string in `v` holds `${` (a template to fill in, or an escaped `$${`); object
/// keys are never filled in.
pub fn mentions_template(v: &Value) -> bool {
    mentions(v, "${")
}

/// True when a string in `v` (not an object key) holds `needle`: whether [`map_strings`]
/// would change anything replacing it.
pub fn mentions(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => holds(s, needle),
        Value::Array(items) => items.iter().any(|x| mentions(x, needle)),
        Value::Object(map) => map.values().any(|x| mentions(x, needle)),
        _ => false,
    }
}

/// True when `s` holds `needle`. Every event sent is searched so, string by string, and most
/// strings are short: `str::contains` prepares a substring search for each one (1% of live
/// fuzzing's CPU), where the needles here start with a `$` that few strings hold at all.
fn holds(s: &str, needle: &str) -> bool {
    let (haystack, needle) = (s.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    memchr::memchr_iter(first, haystack).any(|at| {
        haystack
            .get(at + 1..)
            .is_some_and(|after| after.starts_with(rest))
    })
}

/// `v` with every `${i}` replaced by `i` first, so a repeated send can name things per
/// repetition (`"${uuid:m${i}}"` is one UUID per repetition). `$${i}` stays literal.
pub fn with_index(v: &Value, i: u64) -> Value {
    map_strings(v, &|s| {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(at) = rest.find("${i}") {
            let escaped = rest[..at].ends_with('$');
            out.push_str(&rest[..at]);
            if escaped {
                out.push_str("${i}");
            } else {
                out.push_str(&i.to_string());
            }
            rest = &rest[at + 4..];
        }
        out.push_str(rest);
        out
    })
}

/// Binds a fresh UUID to every `${uuid:NAME}` in `v` that has none yet.
pub fn bind_uuids(v: &Value, vars: &mut Vars) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${uuid:") {
                let after = &rest[start + 2..];
                if rest[..start].ends_with('$') {
                    rest = after;
                    continue;
                }
                let Some(end) = after.find('}') else { break };
                vars.entry(after[..end].to_owned())
                    .or_insert_with(|| Value::String(uuid::Uuid::new_v4().to_string()));
                rest = &after[end..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| bind_uuids(i, vars)),
        Value::Object(map) => map.values().for_each(|i| bind_uuids(i, vars)),
        _ => {}
    }
}

/// Looks up `name` or `name.path.to.field` (array indices as numbers).
pub fn lookup(path: &str, vars: &Vars) -> Result<Value, UnknownVariable> {
    if path == "uuid" {
        return Ok(Value::String(uuid::Uuid::new_v4().to_string()));
    }
    if let Some(spec) = path.strip_prefix("repeat:") {
        // `${repeat:N:TEXT}`: TEXT N times, for boundary cases (at most 64 MiB).
        if let Some((n, text)) = spec.split_once(':') {
            if let Ok(n) = n.parse::<usize>() {
                if n.saturating_mul(text.len()) <= 64 * 1024 * 1024 {
                    return Ok(Value::String(text.repeat(n)));
                }
            }
        }
    }
    let mut parts = path.split('.');
    let head = parts.next().unwrap_or_default();
    let mut current = vars
        .get(head)
        .ok_or_else(|| UnknownVariable(path.to_owned()))?;
    for part in parts {
        current = match current {
            Value::Object(map) => map.get(part),
            Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(|| UnknownVariable(path.to_owned()))?;
    }
    Ok(current.clone())
}

/// True when `actual` matches `pattern`; captures are added to `captures` only on success.
pub fn matches(pattern: &Value, actual: &Value, captures: &mut Vars) -> bool {
    let mut found = Vars::new();
    if match_into(pattern, Some(actual), &mut found) {
        captures.extend(found);
        true
    } else {
        false
    }
}

fn match_into(pattern: &Value, actual: Option<&Value>, found: &mut Vars) -> bool {
    if let Value::String(p) = pattern {
        if p == "$absent" {
            return actual.is_none();
        }
        if p == "$any" {
            return actual.is_some();
        }
        // An optional field: what the target sent, or "" (a HUMA confirmation names the
        // burst's toolCallId, or '' as the spec's own examples do, when it had none).
        if let Some(name) = p.strip_prefix("$capture?:") {
            let value = actual
                .cloned()
                .unwrap_or_else(|| Value::String(String::new()));
            found.insert(name.to_owned(), value);
            return true;
        }
        if let Some(name) = p.strip_prefix("$capture:") {
            return match actual {
                Some(v) => {
                    found.insert(name.to_owned(), v.clone());
                    true
                }
                None => false,
            };
        }
    }
    let Some(actual) = actual else {
        return false;
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Array(items)) if p.len() == 1 && p.contains_key("$contains") => {
            let want = &p["$contains"];
            items.iter().any(|item| {
                let mut trial = found.clone();
                let ok = match_into(want, Some(item), &mut trial);
                if ok {
                    *found = trial;
                }
                ok
            })
        }
        (Value::Object(p), Value::Object(a)) => {
            p.iter().all(|(k, pv)| match_into(pv, a.get(k), found))
        }
        (Value::Array(p), Value::Array(a)) => {
            p.len() == a.len()
                && p.iter()
                    .zip(a)
                    .all(|(pv, av)| match_into(pv, Some(av), found))
        }
        (Value::Number(p), Value::Number(a)) => same_number(p, a),
        (p, a) => p == a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_string_holds_a_needle_as_contains_finds_it() {
        let needles = ["${", "${uuid:probe}", "$", ""];
        let strings = [
            "",
            "$",
            "{",
            "${",
            "$${x}",
            "a$b${c",
            "é$€{",
            "$€{",
            "ends with $",
            "$$$$",
            "${uuid:probe",
            "x${uuid:probe}y",
            "${uuid:probe1}",
            "no dollar at all, quite long",
        ];
        for s in strings {
            for needle in needles {
                assert_eq!(holds(s, needle), s.contains(needle), "{s:?} {needle:?}");
            }
        }
        assert!(mentions(&json!({"a": [1, {"b": "x${y}"}]}), "${"));
        assert!(!mentions(&json!({"${": ["$", "{"]}), "${"));
    }

    #[test]
    fn an_optional_capture_binds_an_empty_string_for_a_missing_key() {
        let mut vars = Vars::new();
        let pattern = json!({"type": "messaging", "toolCallId": "$capture?:burst"});
        assert!(matches(&pattern, &json!({"type": "messaging"}), &mut vars));
        assert_eq!(vars["burst"], json!(""));
        assert!(matches(
            &pattern,
            &json!({"type": "messaging", "toolCallId": "t1"}),
            &mut vars
        ));
        assert_eq!(vars["burst"], json!("t1"));
    }

    fn literal(v: &Value) -> Value {
        let mut v = v.clone();
        make_literal(&mut v);
        v
    }

    #[test]
    fn literal_values_survive_substitution() {
        let vars = Vars::new();
        for text in ["${x}", "a${uuid:y}b", "$${", "$$${z}", "${", "plain", "$"] {
            let v = json!({"k": [text, {"n": text}]});
            assert_eq!(
                substitute(&literal(&v), &vars).ok(),
                Some(v.clone()),
                "{text}"
            );
            let mut bound = Vars::new();
            bind_uuids(&literal(&v), &mut bound);
            assert!(bound.is_empty(), "{text}");
        }
    }

    #[test]
    fn subset_capture_and_substitute() {
        let mut vars = Vars::new();
        let event = json!({"type": "PONG", "seq": "3", "payload": {"nonce": "n1", "x": 1}});
        assert!(matches(
            &json!({"type": "PONG", "seq": "$capture:s"}),
            &event,
            &mut vars
        ));
        assert_eq!(vars["s"], json!("3"));
        assert!(!matches(&json!({"type": "PING"}), &event, &mut vars));
        assert!(matches(
            &json!({"payload": {"y": "$absent", "x": 1.0}}),
            &event,
            &mut vars
        ));
        assert!(!matches(
            &json!({"payload": {"x": "$absent"}}),
            &event,
            &mut vars
        ));
        let p = substitute(
            &json!({"seq": "${s}", "n": "a-${s}-b", "deep": "${e.payload.nonce}"}),
            &{
                let mut v = vars.clone();
                v.insert("e".into(), event.clone());
                v
            },
        )
        .unwrap();
        assert_eq!(p, json!({"seq": "3", "n": "a-3-b", "deep": "n1"}));
        assert!(substitute(&json!("${nope}"), &vars).is_err());
    }

    #[test]
    fn contains_and_uuids() {
        let mut vars = Vars::new();
        let tools = json!({"tools": [{"name": "a"}, {"name": "b", "x": 1}]});
        assert!(matches(
            &json!({"tools": {"$contains": {"name": "b"}}}),
            &tools,
            &mut vars
        ));
        assert!(!matches(
            &json!({"tools": {"$contains": {"name": "c"}}}),
            &tools,
            &mut vars
        ));
        let p = json!({"a": "${uuid:m}", "b": "${uuid:m}", "c": "${uuid}"});
        bind_uuids(&p, &mut vars);
        let v = substitute(&p, &vars).unwrap();
        assert_eq!(v["a"], v["b"]);
        assert_ne!(v["a"], v["c"]);
        assert_eq!(v["c"].as_str().map(str::len), Some(36));
    }

    #[test]
    fn an_index_names_one_uuid_per_repetition() {
        let mut vars = Vars::new();
        let p = json!({"a": "${uuid:m${i}}", "n": "w${i}", "keep": "$${i}"});
        let first = with_index(&p, 0);
        let second = with_index(&p, 1);
        bind_uuids(&first, &mut vars);
        bind_uuids(&second, &mut vars);
        let (a, b) = (
            substitute(&first, &vars).unwrap(),
            substitute(&second, &vars).unwrap(),
        );
        assert_ne!(a["a"], b["a"]);
        assert_eq!(a["n"], "w0");
        assert_eq!(b["keep"], "${i}");
    }

    #[test]
    fn failed_match_captures_nothing() {
        let mut vars = Vars::new();
        assert!(!matches(
            &json!({"a": "$capture:x", "b": 2}),
            &json!({"a": 1, "b": 3}),
            &mut vars
        ));
        assert!(vars.is_empty());
    }
}
