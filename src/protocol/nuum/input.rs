//! What a Nuum process reads on stdin: one parser for the reference agent and the validator,
//! so "bad input" means the same thing to both (`suites/nuum/ERRATA.md` item 7).

use serde_json::Value;

/// A control action the spec lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Interrupt,
    Status,
    Heartbeat,
}

/// One valid input line.
#[derive(Debug, Clone, PartialEq)]
pub enum HostLine {
    /// A user message: its text (content blocks' texts joined by newlines), and whether it came
    /// as content blocks.
    User {
        text: String,
        blocks: bool,
    },
    Control(Action),
}

/// Parses one stdin line (without its newline); `Err` says why it is bad input. Blank lines
/// are `Ok(None)`: nothing to do, nothing wrong.
pub fn parse(bytes: &[u8]) -> Result<Option<HostLine>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "Parse error: the line is not UTF-8")?;
    let msg: Value =
        serde_json::from_str(text).map_err(|_| "Parse error: invalid JSON".to_owned())?;
    line_of(&msg).map(Some)
}

/// What a parsed stdin line asks; `Err` says why it is bad input.
pub fn line_of(msg: &Value) -> Result<HostLine, String> {
    match msg.get("type").and_then(Value::as_str) {
        Some("user") => user(msg),
        Some("control") => match msg.get("action").and_then(Value::as_str) {
            Some("interrupt") => Ok(HostLine::Control(Action::Interrupt)),
            Some("status") => Ok(HostLine::Control(Action::Status)),
            Some("heartbeat") => Ok(HostLine::Control(Action::Heartbeat)),
            other => Err(format!("unknown control action {other:?}")),
        },
        Some(other) => Err(format!("unknown message type {other:?}")),
        None if msg.is_object() => Err("a message without a string type".into()),
        None => Err("a message must be a JSON object".into()),
    }
}

fn user(msg: &Value) -> Result<HostLine, String> {
    let message = msg
        .get("message")
        .ok_or("a user message without `message`")?;
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {}
        other => {
            return Err(format!(
                "a user message must have role \"user\", not {other:?}"
            ))
        }
    }
    match message.get("content") {
        Some(Value::String(s)) => Ok(HostLine::User {
            text: s.clone(),
            blocks: false,
        }),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for block in blocks {
                match (
                    block.get("type").and_then(Value::as_str),
                    block.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(text)) => texts.push(text),
                    (Some("text"), None) => return Err("a text block without a string text".into()),
                    (Some(_), _) => {}
                    (None, _) => return Err("a content block without a type".into()),
                }
            }
            Ok(HostLine::User {
                text: texts.join("\n"),
                blocks: true,
            })
        }
        _ => Err("message.content must be a string or an array of content blocks".into()),
    }
}
