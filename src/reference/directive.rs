//! Scenario directives: `wireprobe: VERB ARGS` in a user's text asks a reference agent for one
//! behaviour the suite cannot otherwise cause (ARCHITECTURE.md, "Scenario directives"). One
//! grammar for every reference agent, every number bounded so no input can make a turn run
//! away; each agent acts on the verbs it knows and answers the rest as ordinary text.

use serde_json::{Map, Value};

/// Longest `slow` turn, in ms (ten minutes).
pub const MAX_SLOW_MS: u64 = 600_000;
/// Most agent iterations `continue` asks for.
pub const MAX_ITERATIONS: u32 = 20;
/// Latest `alarm`, in seconds (a year).
pub const MAX_ALARM_SECONDS: u64 = 365 * 24 * 3600;
/// Largest `audio` chunk, in bytes.
pub const MAX_AUDIO_BYTES: usize = 1 << 20;

/// What a user's text asks of a reference agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// `say TEXT`: answer with TEXT.
    Say(String),
    /// `reason TEXT`: think TEXT aloud, then answer.
    Reason(String),
    /// `tool NAME [JSON]`: call NAME with the JSON object (`{}` when none is given).
    Tool { name: String, args: Value },
    /// `permission NAME`: ask permission to call NAME.
    Permission(String),
    /// `clarify [QUESTION]`: ask the user a question.
    Clarify(Option<String>),
    /// `continue N`: N iterations, then ask to go on (1 to [`MAX_ITERATIONS`]).
    Continue(u32),
    /// `slow MS`: a turn that lasts MS ms (at most [`MAX_SLOW_MS`]).
    Slow(u64),
    /// `slow-tool MS`: a tool call whose result comes MS ms later (at most [`MAX_SLOW_MS`]),
    /// then more output: a message sent meanwhile has a next model call to be injected before.
    SlowTool(u64),
    /// `fail`: the turn fails.
    Fail,
    /// `task research TEXT`: a background research task.
    Research(String),
    /// `alarm SECONDS [TEXT]`: an alarm SECONDS from now (at most [`MAX_ALARM_SECONDS`]).
    Alarm { seconds: u64, description: String },
    /// `audio N`: N bytes of audio (at most [`MAX_AUDIO_BYTES`]).
    Audio(usize),
    /// `view [ARGS]`: a view for the user to act on.
    View,
    /// `frontend NAME [JSON]`: call the client's own tool NAME and leave it for the client.
    Frontend { name: String, args: Value },
    /// `state PATCH`: a snapshot of the state, then the JSON Patch PATCH (an array) as a delta.
    State(Value),
    /// `step NAME`: a step named NAME around the answer.
    Step(String),
    /// `interrupt [REASON]`: stop to ask, for REASON.
    Interrupt(Option<String>),
    /// `chunks TEXT`: answer with TEXT in the chunked form.
    Chunks(String),
    /// Ordinary text: no directive, a verb this grammar does not know, or arguments it cannot
    /// read.
    Chat(String),
}

impl Directive {
    /// Reads `text`; see the variants for the grammar.
    pub fn parse(text: &str) -> Directive {
        Self::read(text).unwrap_or_else(|| Directive::Chat(text.to_owned()))
    }

    fn read(text: &str) -> Option<Directive> {
        let rest = text.trim().strip_prefix("wireprobe:")?.trim();
        let (verb, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let args = args.trim();
        let (first, more) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        let more = more.trim();
        let named = || (!args.is_empty()).then(|| args.to_owned());
        Some(match verb {
            "say" => Directive::Say(args.to_owned()),
            "reason" => Directive::Reason(args.to_owned()),
            "tool" if !first.is_empty() => Directive::Tool {
                name: first.to_owned(),
                args: object_arg(more)?,
            },
            "permission" => Directive::Permission(named()?),
            "clarify" => Directive::Clarify(named()),
            "continue" => Directive::Continue(args.parse::<u32>().ok()?.clamp(1, MAX_ITERATIONS)),
            "slow" => Directive::Slow(args.parse::<u64>().ok()?.min(MAX_SLOW_MS)),
            "slow-tool" => Directive::SlowTool(args.parse::<u64>().ok()?.min(MAX_SLOW_MS)),
            "fail" => Directive::Fail,
            "task" if first == "research" => Directive::Research(more.to_owned()),
            "alarm" => Directive::Alarm {
                seconds: first.parse::<u64>().ok()?.min(MAX_ALARM_SECONDS),
                description: more.to_owned(),
            },
            "audio" => Directive::Audio(args.parse::<usize>().ok()?.min(MAX_AUDIO_BYTES)),
            "view" => Directive::View,
            "frontend" if !first.is_empty() => Directive::Frontend {
                name: first.to_owned(),
                args: object_arg(more)?,
            },
            "state" => match serde_json::from_str(args).ok()? {
                patch @ Value::Array(_) => Directive::State(patch),
                _ => return None,
            },
            "step" => Directive::Step(named()?),
            "interrupt" => Directive::Interrupt(named()),
            "chunks" => Directive::Chunks(args.to_owned()),
            _ => return None,
        })
    }
}

/// A directive's optional JSON object argument: `{}` when none is given, `None` when what is
/// given is not an object.
fn object_arg(json: &str) -> Option<Value> {
    match json {
        "" => Some(Value::Object(Map::new())),
        json => match serde_json::from_str(json).ok()? {
            object @ Value::Object(_) => Some(object),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(text: &str) -> Directive {
        Directive::Chat(text.into())
    }

    #[test]
    fn reads_each_verb() {
        assert_eq!(
            Directive::parse("  wireprobe:  say hello there "),
            Directive::Say("hello there".into())
        );
        assert_eq!(
            Directive::parse(r#"wireprobe: tool add {"a":1}"#),
            Directive::Tool {
                name: "add".into(),
                args: json!({"a": 1})
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: tool add"),
            Directive::Tool {
                name: "add".into(),
                args: json!({})
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: alarm 2 Check deployment"),
            Directive::Alarm {
                seconds: 2,
                description: "Check deployment".into()
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: task research rust async"),
            Directive::Research("rust async".into())
        );
        assert_eq!(
            Directive::parse("wireprobe: clarify"),
            Directive::Clarify(None)
        );
        assert_eq!(Directive::parse("wireprobe: view form"), Directive::View);
        assert_eq!(Directive::parse("wireprobe: fail"), Directive::Fail);
        assert_eq!(
            Directive::parse(r#"wireprobe: state [{"op":"add","path":"/a","value":1}]"#),
            Directive::State(json!([{"op": "add", "path": "/a", "value": 1}]))
        );
        assert_eq!(
            Directive::parse("wireprobe: frontend pick"),
            Directive::Frontend {
                name: "pick".into(),
                args: json!({})
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: interrupt approve"),
            Directive::Interrupt(Some("approve".into()))
        );
        assert_eq!(
            Directive::parse("wireprobe:say"),
            Directive::Say(String::new())
        );
    }

    #[test]
    fn every_number_is_bounded() {
        assert_eq!(
            Directive::parse("wireprobe: slow 18446744073709551615"),
            Directive::Slow(MAX_SLOW_MS)
        );
        assert_eq!(
            Directive::parse("wireprobe: slow-tool 18446744073709551615"),
            Directive::SlowTool(MAX_SLOW_MS)
        );
        assert_eq!(
            Directive::parse("wireprobe: continue 99"),
            Directive::Continue(MAX_ITERATIONS)
        );
        assert_eq!(
            Directive::parse("wireprobe: continue 0"),
            Directive::Continue(1)
        );
        assert_eq!(
            Directive::parse("wireprobe: alarm 18446744073709551615 x"),
            Directive::Alarm {
                seconds: MAX_ALARM_SECONDS,
                description: "x".into()
            }
        );
        assert_eq!(
            Directive::parse("wireprobe: audio 99999999999"),
            Directive::Audio(MAX_AUDIO_BYTES)
        );
    }

    #[test]
    fn what_does_not_parse_is_ordinary_text() {
        for text in [
            "hello",
            "wireprobe: slow soon",
            "wireprobe: slow",
            "wireprobe: tool add {oops",
            "wireprobe: tool add [1]",
            "wireprobe: tool",
            "wireprobe: permission",
            "wireprobe: task",
            "wireprobe: alarm soon",
            "wireprobe: dance",
            "wireprobe: state {}",
            "wireprobe: step",
        ] {
            assert_eq!(Directive::parse(text), chat(text), "{text}");
        }
    }
}
