//! Steps that act on the case itself: waiting, forgetting arrivals, choosing a tool,
//! reconnecting and restarting the target.

use super::values::{is_false, object, some_object, HandshakeMode, Patterns};
use super::StepKind;
use crate::auth::TokenKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A step that takes no settings (`discard = {}`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// `wait = { ms = 100 }`: lets time pass; with `until`, ends as soon as an event matching it
/// arrives, with `settled`, as soon as the target owes nothing more by the protocol's structure,
/// and with either, when the connection ends (nothing is judged either way).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    #[serde(rename = "wait")]
    pub pause: Pause,
}

/// How long a `wait` waits.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    /// Milliseconds. A wait with `until` or `settled` waits for the target's answers: it lasts
    /// at most this plus the round trip the connection measured as it opened (its WebSocket
    /// upgrade, its event stream's GET), so a distant target's answers have time to arrive.
    /// A `settled` wait the protocol cannot end by its structure (HUMA, UAE) first asks the
    /// target for a pong over a WebSocket, which comes behind everything the target sent before
    /// reading it, and lasts this long after the pong at least: a target that answers later
    /// than its opening said (its machine got busy) is waited for too.
    pub ms: u64,
    /// Events (a table, or a list of tables) whose arrival ends the wait early: the answer to
    /// a message sent just before, by which the target shows it has taken in what came first.
    #[serde(default, skip_serializing_if = "Patterns::is_empty")]
    pub until: Patterns,
    /// End as soon as the target owes nothing more for what it took in, as far as the
    /// protocol's structure shows (HPD: each input it accepted has had its turn, and each turn
    /// has ended). A protocol that cannot tell waits the whole time.
    #[serde(default, skip_serializing_if = "is_false")]
    pub settled: bool,
}

impl Wait {
    pub fn ms(ms: u64) -> Wait {
        Wait {
            pause: Pause {
                ms,
                until: Patterns::default(),
                settled: false,
            },
        }
    }

    /// At most `ms` (and the connection's round trip, see [`Pause::ms`]), ending when the
    /// target has settled (see [`Pause::settled`]) or the connection ends.
    pub fn settled(ms: u64) -> Wait {
        Wait {
            pause: Pause {
                ms,
                until: Patterns::default(),
                settled: true,
            },
        }
    }

    /// At most `ms` (and the connection's round trip, see [`Pause::ms`]), ending when an event
    /// matching one of `patterns` arrives or the connection ends.
    pub fn until(ms: u64, patterns: Vec<Value>) -> Wait {
        Wait {
            pause: Pause {
                ms,
                until: Patterns(patterns),
                settled: false,
            },
        }
    }
}

/// `discard = {}`: forgets every arrival no step consumed (they stay in the transcript).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Discard {
    #[serde(rename = "discard")]
    pub settings: Nothing,
}

/// `unblock = {}`: sends what frees the target to go on sending, as far as the traffic so far
/// shows what holds it back (HAIP: credit on the channels it has used and on those we paused,
/// which are resumed); nothing for a protocol without flow control.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unblock {
    #[serde(rename = "unblock")]
    pub settings: Nothing,
}

/// `restart = {}`: restarts the target process (stdio protocols).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Restart {
    #[serde(rename = "restart")]
    pub settings: Nothing,
}

/// `reconnect = { ... }`: closes the connection and opens another. Judging a client, the
/// connection drops without a close frame and the client's next one is taken; a client that
/// does not come back skips the case.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reconnect {
    #[serde(rename = "reconnect")]
    pub how: Reconnection,
}

/// How a `reconnect` connects again.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reconnection {
    /// Present this token instead of the case's (a refusal is then for the next
    /// `expect_refused` to judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<TokenKind>,
    #[serde(default, skip_serializing_if = "HandshakeMode::is_full")]
    pub handshake: HandshakeMode,
    /// Deep-merged into the protocol's default handshake event.
    #[serde(
        default,
        deserialize_with = "some_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub handshake_with: Option<Value>,
    /// Start a new session instead of resuming the old one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub new_session: bool,
}

/// `pick_tool = { ... }`: chooses a tool the target offers (one given with `--tool`, else one
/// it advertises) and binds it as `${tool.name}` and `${tool.params}`; none offered skips the
/// case.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PickTool {
    #[serde(rename = "pick_tool")]
    pub choice: ToolChoice,
}

/// Which tool a `pick_tool` prefers.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolChoice {
    /// Globs of names to prefer, in order (a case that needs a slow tool prefers names that
    /// say so); without a match the first offered tool is taken.
    #[serde(default)]
    pub prefer: Vec<String>,
    /// Params for a tool the user gave without any.
    #[serde(default = "empty_object", deserialize_with = "object")]
    #[schemars(with = "Map<String, Value>")]
    pub params: Value,
    /// The tool to call when none was given with `--tool`, for a protocol whose targets
    /// advertise none (a directive deployment's tool): taken at once, without waiting for
    /// an advertisement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Judging a client: the case needs a tool that runs long enough to be cancelled, one
    /// named with `--slow-tool` (a client advertises no tools: without the flag, a skip).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slow: bool,
    /// Overrides the step timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl StepKind for Wait {
    fn describe(&self) -> String {
        let Pause { ms, until, settled } = &self.pause;
        let mut ends = Vec::new();
        if !until.is_empty() {
            ends.push(super::expecting::patterns(until));
        }
        if *settled {
            ends.push("the target settles".to_owned());
        }
        match ends.is_empty() {
            true => format!("wait {ms} ms"),
            false => format!("wait {ms} ms or until {}", ends.join(" or ")),
        }
    }

    fn budget_ms(&self, _: u64) -> u64 {
        self.pause.ms
    }
}

impl StepKind for Unblock {
    fn describe(&self) -> String {
        "unblock the target's output".into()
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}

impl StepKind for Discard {
    fn describe(&self) -> String {
        "forget unread arrivals".into()
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}

impl StepKind for Restart {
    fn describe(&self) -> String {
        "restart the target process".into()
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}

impl StepKind for Reconnect {
    fn describe(&self) -> String {
        match self.how.new_session {
            true => "reconnect with a new session",
            false => "reconnect and resume",
        }
        .into()
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}

impl StepKind for PickTool {
    fn validate(&self) -> Result<(), String> {
        for glob in &self.choice.prefer {
            globset::Glob::new(glob).map_err(|e| format!("`prefer` glob {glob}: {e}"))?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match &self.choice.default {
            Some(name) => format!("pick a tool (default {name})"),
            None => "pick a tool the target offers".into(),
        }
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}
