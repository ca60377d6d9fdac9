//! How values read in messages people see: no Rust `Debug` text, and long events cut after
//! what identifies them.

use serde_json::Value;
use std::fmt::Display;

/// Longest event shown in full in a message.
const MAX_SHOWN: usize = 160;

/// `"text"` quoted, or `none` when absent (never `Some("text")`).
pub fn quoted_or_none(value: Option<impl Display>) -> String {
    match value {
        Some(v) => format!("\"{v}\""),
        None => "none".into(),
    }
}

/// An event as one line. A long one is cut, but its `type` (and `subtype`) come first, so
/// the reader still sees what it was.
pub fn event(e: &Value) -> String {
    let text = e.to_string();
    if text.len() <= MAX_SHOWN {
        return text;
    }
    let kind = named(e, &["type", "subtype"]);
    let cut = text
        .char_indices()
        .nth(MAX_SHOWN)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    if kind.is_empty() {
        format!("{head}… ({} bytes)", text.len())
    } else {
        format!("{kind} {head}… ({} bytes)", text.len())
    }
}

/// The string values `e` has under `keys`, joined by `/` (empty when it has none).
pub(crate) fn named(e: &Value, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| e.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_read_as_words() {
        assert_eq!(quoted_or_none(Some("a")), "\"a\"");
        assert_eq!(quoted_or_none(None::<&str>), "none");
    }

    #[test]
    fn a_long_event_shows_its_type_first() {
        let long = json!({"payload": {"text": "x".repeat(500)}, "type": "TEXT_MESSAGE_PART"});
        let shown = event(&long);
        assert!(shown.starts_with("TEXT_MESSAGE_PART {"), "{shown}");
        assert!(shown.len() < 260, "{shown}");
        let short = json!({"type": "PONG"});
        assert_eq!(event(&short), r#"{"type":"PONG"}"#);
    }
}
