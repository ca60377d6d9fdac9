//! Writes cases back as suite TOML, so a case built in code (a fuzz finding) replays with
//! `wireprobe run --suite FILE`. What a case writes is its serde serialization (the same
//! definition the loader reads); this file only lays it out: one line per key, one line per
//! step, JSON `null` (which TOML lacks) as `"$null"`.

use super::model::Case;
use serde_json::Value;

use super::vocabulary::values::NULL;

/// `case` as a `[[case]]` table.
pub fn case_to_toml(case: &Case) -> Result<String, serde_json::Error> {
    let mut out = String::from("[[case]]\n");
    let Value::Object(table) = serde_json::to_value(case)? else {
        return Ok(out);
    };
    for (name, value) in &table {
        match (name.as_str(), value) {
            ("steps" | "fallback", Value::Array(steps)) => {
                out.push_str(&format!("{} = [\n", key(name)));
                for step in steps {
                    out.push_str(&format!("  {},\n", inline(step)));
                }
                out.push_str("]\n");
            }
            _ => out.push_str(&format!("{} = {}\n", key(name), inline(value))),
        }
    }
    Ok(out)
}

/// A JSON value as TOML inline syntax (`null` as `"$null"`).
pub fn inline(v: &Value) -> String {
    match v {
        Value::Null => quote(NULL),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.1}"),
            (None, Some(f)) => format!("{f:e}"),
            (None, None) => quote(&n.to_string()),
        },
        Value::String(s) => quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => {
            let fields: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), inline(v)))
                .collect();
            if fields.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", fields.join(", "))
            }
        }
    }
}

/// A key bare when TOML allows it, else quoted.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match bare {
        true => k.to_owned(),
        false => quote(k),
    }
}

/// `s` as a TOML basic string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}
