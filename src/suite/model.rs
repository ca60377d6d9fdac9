//! What a suite says: cases made of steps.

use crate::protocol::TokenPlacement;
use serde_json::Value;

/// All cases of one protocol's suite, in file order.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    pub cases: Vec<Case>,
}

/// One case: connect, optionally shake hands, run steps.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub title: String,
    /// Rule ids this case exercises; its verdict speaks for them.
    pub rules: Vec<String>,
    pub requires: Vec<Requirement>,
    pub handshake: HandshakeMode,
    /// Deep-merged into the protocol's default handshake event.
    pub handshake_with: Option<Value>,
    pub connect: ConnectSpec,
    /// Overrides `--timeout-ms` for this case's steps.
    pub timeout_ms: Option<u64>,
    /// The protocol's automatic answers (see [`crate::protocol::Session::answer`]) go out;
    /// `auto_answer = false` leaves answering to the steps.
    pub auto_answer: bool,
    pub steps: Vec<Step>,
    /// Steps tried on a fresh connection when `steps` skip because the target does not do
    /// what they need (another way to reach the same scenario); empty: none.
    pub fallback: Vec<Step>,
    /// The file the case came from, for error messages.
    pub origin: String,
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
    Transport(crate::protocol::TransportKind),
    /// The case is written for one role the target plays (`role:executor`): it runs only
    /// when the target plays it.
    Role(String),
}

/// What happens when a connection opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeMode {
    /// Send the handshake and wait for the target's answer.
    Full,
    /// Send the handshake; the steps judge the answer.
    SendOnly,
    /// Send nothing.
    None,
}

/// How the case presents credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectSpec {
    pub token: TokenKind,
    /// Where the token goes (default: the protocol's placement).
    pub token_in: Option<TokenPlacement>,
    /// A refused connection fails the case (`refusal = "fail"`) instead of being an error:
    /// for cases whose point is that the connection is accepted.
    pub refusal_fails: bool,
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

impl Case {
    /// True unless the case is written for another transport.
    pub fn runs_over(&self, kind: crate::protocol::TransportKind) -> bool {
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

/// Each token placement by the name a suite gives it (`connect.token_in`).
pub const TOKEN_PLACEMENTS: [(&str, TokenPlacement); 3] = [
    ("query", TokenPlacement::Query),
    ("subprotocol", TokenPlacement::Subprotocol),
    ("header", TokenPlacement::Header),
];

/// How many times a send step repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Times {
    Fixed(u64),
    /// `"${NAME}"` plus a constant, resolved when the step runs.
    FromVar {
        name: String,
        delta: i64,
    },
}

/// A frame given byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawFrame {
    Text(String),
    Binary(Vec<u8>),
    /// A text frame whose bytes need not be UTF-8.
    TextBytes(Vec<u8>),
}

/// What an unmet expectation (`expect`, `expect_silence`) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// The target broke the case's rule.
    Fails,
    /// `scenario = true`: the target did not obey a scenario directive; skip.
    ScenarioNotReached,
    /// `probe = true`: a liveness probe another case judges went unanswered, so this case
    /// cannot observe what it needs; skip.
    ProbeUnanswered,
}

/// Events that answer an `expect` in another form than the one it waits for (a status
/// request answered with another subtype, a turn that ended before it could be
/// interrupted): when one arrives first, the wait ends at once with `means`, instead of
/// running out the timeout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Otherwise {
    pub patterns: Vec<Value>,
    /// What such an answer means: by default, what no answer at all means;
    /// `otherwise_skips = true`: the scenario was not reached; `otherwise_fails = true`: the
    /// rule is broken even where no answer only skips the case (a probe that wants the answer
    /// to one call: another answer to it is the violation, silence is another case's).
    pub means: Option<Unanswered>,
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub action: Action,
    /// The rule a failure of this step breaks (default: the case's strictest rule).
    pub rule: Option<String>,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Send {
        event: Value,
        times: Times,
    },
    SendRaw {
        frame: RawFrame,
        times: Times,
    },
    /// Waits for an event matching any of `patterns`.
    Expect {
        patterns: Vec<Value>,
        /// How many matching events to consume, in arrival order.
        count: Times,
        within_ms: Option<u64>,
        /// Without an answer the case is skipped, not failed (see [`Unanswered`]).
        unanswered: Unanswered,
        /// The target's answer in another form: the wait ends as soon as one arrives.
        otherwise: Otherwise,
    },
    ExpectError {
        code: Option<String>,
        /// The rule an error with another code breaks, when it is not the step's (HUMA: a
        /// missing error breaks the validation rule, a wrong code only HUMA-ERR-002).
        code_rule: Option<String>,
        unless: Option<Value>,
        within_ms: Option<u64>,
    },
    ExpectClose {
        code: Option<u16>,
        within_ms: Option<u64>,
    },
    /// Nothing (or nothing matching any of `matching`) arrives for `ms`.
    ExpectSilence {
        ms: u64,
        matching: Vec<Value>,
        unanswered: Unanswered,
    },
    ExpectRefused {
        within_ms: Option<u64>,
    },
    Wait {
        ms: u64,
    },
    /// Forgets every arrival no step consumed (they stay in the transcript).
    Discard,
    /// Matches a captured value (a `${NAME}` template) against a pattern.
    Check {
        value: Value,
        pattern: Value,
        /// `scenario = true`: a value that is not there or does not match is a precondition
        /// the target did not meet, so the case skips.
        unanswered: Unanswered,
    },
    /// Chooses a tool the target offers (one given with `--tool`, else one it advertises)
    /// and binds it as `${tool.name}` and `${tool.params}`; none offered skips the case.
    PickTool {
        /// Globs of names to prefer, in order (a case that needs a slow tool prefers names
        /// that say so); without a match the first offered tool is taken.
        prefer: Vec<String>,
        /// Params for a tool the user gave without any.
        params: Value,
        /// The tool to call when none was given with `--tool`, for a protocol whose targets
        /// advertise none (a directive deployment's tool): taken at once, without waiting for
        /// an advertisement.
        default: Option<String>,
        within_ms: Option<u64>,
    },
    Reconnect {
        handshake: HandshakeMode,
        handshake_with: Option<Value>,
        /// Start a new session instead of resuming the old one.
        new_session: bool,
        /// Present this token instead of the case's (a refusal is then for the next
        /// `expect_refused` to judge).
        token: Option<TokenKind>,
    },
    Restart,
}
