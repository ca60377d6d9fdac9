//! What a suite says: cases made of steps. The types are the suite file's format: serde
//! reads and writes them, and the JSON Schema `wireprobe list --suite-schema` prints is
//! derived from them.

use super::vocabulary::values::some_object;
pub use super::vocabulary::*;
use crate::protocol::TokenPlacement;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// All cases of one protocol's suite, in file order.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    pub cases: Vec<Case>,
}

/// A suite file: `[[case]]` tables and nothing else.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "wireprobe suite file")]
pub struct SuiteFile {
    /// The cases, in the order they run.
    #[serde(default)]
    pub case: Vec<Case>,
}

/// One case: connect, optionally shake hands, run steps.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique across the suite: `PROTOCOL.AREA.NAME`.
    pub id: String,
    /// What the case shows, as a sentence.
    pub title: String,
    /// Rule ids this case exercises (at least one); its verdict speaks for them.
    #[schemars(length(min = 1))]
    pub rules: Vec<String>,
    /// What the case needs from the run or the target; without it the case is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    /// What happens when the connection opens (default: full).
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
    /// How the case presents credentials.
    #[serde(default, skip_serializing_if = "ConnectSpec::is_default")]
    pub connect: ConnectSpec,
    /// Overrides `--timeout-ms` for this case's steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The protocol's automatic answers (a PONG to a PING, say) go out; `auto_answer = false`
    /// leaves answering to the steps.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub auto_answer: bool,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Steps tried on a fresh connection when `steps` skip because the target does not do
    /// what they need (another way to reach the same scenario); empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<Step>,
    /// The file the case came from, for error messages.
    #[serde(skip)]
    pub origin: String,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Something a case needs from the run or the target; without it the case is skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `--token` or `--jwt-secret` was given (the target requires authentication).
    Credentials,
    /// `--jwt-secret` was given (wireprobe can mint tokens).
    JwtSecret,
    /// A capability the target declares in its handshake reply.
    Capability(String),
    /// The case is written for one transport (`transport:sse`): it runs only over it.
    Transport(crate::transport::TransportKind),
    /// The case is written for one role the target plays (`role:executor`): it runs only
    /// when the target plays it.
    Role(String),
}

/// How the case presents credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectSpec {
    /// The token presented (default: the valid one).
    #[serde(default)]
    pub token: TokenKind,
    /// Where the token goes (default: the protocol's placement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_in: Option<TokenPlacement>,
    /// What a refused connection means: an error (default), or, for cases whose point is
    /// that the connection is accepted, a failure (`refusal = "fail"`).
    #[serde(default)]
    pub refusal: Refusal,
}

impl ConnectSpec {
    fn is_default(&self) -> bool {
        *self == ConnectSpec::default()
    }
}

impl Requirement {
    /// The requirement a suite names in `requires` (any other name is a capability).
    pub fn from_name(name: &str) -> Option<Requirement> {
        match name {
            "" => None,
            "credentials" => Some(Requirement::Credentials),
            "jwt-secret" => Some(Requirement::JwtSecret),
            name if name.starts_with("transport:") => name["transport:".len()..]
                .parse()
                .ok()
                .map(Requirement::Transport),
            name if name.starts_with("role:") => {
                Some(Requirement::Role(name["role:".len()..].to_owned()))
            }
            cap => Some(Requirement::Capability(cap.to_owned())),
        }
    }

    /// The name a suite gives it in `requires`.
    pub fn name(&self) -> String {
        match self {
            Requirement::Role(role) => format!("role:{role}"),
            Requirement::Credentials => "credentials".into(),
            Requirement::JwtSecret => "jwt-secret".into(),
            Requirement::Capability(cap) => cap.clone(),
            Requirement::Transport(kind) => format!("transport:{}", kind.name()),
        }
    }
}

impl<'de> Deserialize<'de> for Requirement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Requirement::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom("`requires` lists non-empty names"))
    }
}

impl Serialize for Requirement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl JsonSchema for Requirement {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Requirement".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "credentials (--token or --jwt-secret given), jwt-secret, transport:NAME, role:NAME, or a capability the target declares in its handshake reply.",
            "type": "string",
            "minLength": 1
        })
    }
}

impl Case {
    /// True unless the case is written for another transport.
    pub fn runs_over(&self, kind: crate::transport::TransportKind) -> bool {
        self.requires.iter().all(|r| match r {
            Requirement::Transport(k) => *k == kind,
            _ => true,
        })
    }

    /// True unless the case is written for a role other than `role`, the one the target
    /// plays (`None`: the protocol has no roles).
    pub fn runs_as(&self, role: Option<&str>) -> bool {
        self.requires.iter().all(|r| match r {
            Requirement::Role(wanted) => role == Some(wanted.as_str()),
            _ => true,
        })
    }
}

pub use crate::auth::TokenKind;
