//! What the user's text asks of the scripted agent: `wireprobe: VERB ARGS`, anything else is
//! chat. Every number is bounded so no input can make a turn run away.

use serde_json::{Map, Value};

/// Longest `slow` turn (ten minutes).
const MAX_SLOW_MS: u64 = 600_000;
/// Most agent turns `continue` runs before asking, and most it adds after.
pub const MAX_ITERATIONS: u32 = 20;

/// See the module doc.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    Say(String),
    Reason(String),
    /// A tool call with these arguments (an object; `{}` when the JSON was bad or missing).
    Tool {
        name: String,
        args: Value,
    },
    Permission(String),
    Clarify(String),
    Continue(u32),
    Slow(u64),
    Fail,
    /// Ordinary text: the agent echoes it.
    Chat(String),
}

impl Directive {
    /// Parses `wireprobe: VERB ARGS`; anything else (or a malformed directive) is chat.
    pub fn parse(text: &str) -> Directive {
        let chat = || Directive::Chat(text.to_owned());
        let Some((verb, args)) = crate::reference::directive_words(text) else {
            return chat();
        };
        match verb {
            "say" => Directive::Say(args.to_owned()),
            "reason" => Directive::Reason(args.to_owned()),
            "tool" if !args.is_empty() => {
                let (name, json) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
                let args = match serde_json::from_str::<Value>(json.trim()) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => Value::Object(Map::new()),
                };
                Directive::Tool {
                    name: name.to_owned(),
                    args,
                }
            }
            "permission" if !args.is_empty() => Directive::Permission(args.to_owned()),
            "clarify" => Directive::Clarify(if args.is_empty() {
                "What do you mean?".to_owned()
            } else {
                args.to_owned()
            }),
            "continue" => match args.parse::<u32>() {
                Ok(n) => Directive::Continue(n.clamp(1, MAX_ITERATIONS)),
                Err(_) => chat(),
            },
            "slow" => match args.parse::<u64>() {
                Ok(ms) => Directive::Slow(ms.min(MAX_SLOW_MS)),
                Err(_) => chat(),
            },
            "fail" => Directive::Fail,
            _ => chat(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_directives() {
        assert_eq!(
            Directive::parse("wireprobe: say hello there"),
            Directive::Say("hello there".into())
        );
        assert_eq!(
            Directive::parse("wireprobe: tool add {\"a\":1}"),
            Directive::Tool {
                name: "add".into(),
                args: json!({"a": 1})
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: tool add {oops"),
            Directive::Tool {
                name: "add".into(),
                args: json!({})
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: continue 99"),
            Directive::Continue(20)
        );
        assert_eq!(
            Directive::parse("wireprobe: slow x"),
            Directive::Chat("wireprobe: slow x".into())
        );
        assert_eq!(Directive::parse("hello"), Directive::Chat("hello".into()));
    }
}
