//! Steps that wait for the target: an event, an error, a close, a refusal, silence; and the
//! check of a value already captured.

use super::sending::times;
use super::values::{is_false, some_object, Patterns, Times};
use super::{StepKind, Unanswered};
use crate::show;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `expect = { type = "..." }`: waits for an event matching any of the patterns.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(rename = "expect")]
    pub patterns: Patterns,
    /// How many matching events to consume, in arrival order (at least 1).
    #[serde(rename = "times", default, skip_serializing_if = "Times::is_once")]
    pub count: Times,
    /// Overrides the step timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
    /// Without an answer the target did not obey a scenario directive: skip, not fail.
    #[serde(default, skip_serializing_if = "is_false")]
    pub scenario: bool,
    /// Without an answer a liveness probe another case judges went unanswered: skip.
    #[serde(default, skip_serializing_if = "is_false")]
    pub probe: bool,
    /// The target's answer in another form: the wait ends as soon as one arrives.
    #[serde(default, skip_serializing_if = "Patterns::is_empty")]
    pub otherwise: Patterns,
    /// An `otherwise` answer means the scenario was not reached: skip.
    #[serde(default, skip_serializing_if = "is_false")]
    pub otherwise_skips: bool,
    /// An `otherwise` answer breaks the rule even where no answer only skips.
    #[serde(default, skip_serializing_if = "is_false")]
    pub otherwise_fails: bool,
}

/// Events that answer an `expect` in another form than the one it waits for (a status
/// request answered with another subtype, a turn that ended before it could be
/// interrupted): when one arrives first, the wait ends at once with `means`, instead of
/// running out the timeout.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Otherwise<'a> {
    pub patterns: &'a [Value],
    /// What such an answer means: by default, what no answer at all means.
    pub means: Option<Unanswered>,
}

impl Expect {
    /// `count` events matching any of `patterns`, failing the case's rule when unmet.
    pub fn new(patterns: Vec<Value>, count: Times, within_ms: Option<u64>) -> Expect {
        Expect {
            patterns: Patterns(patterns),
            count,
            within_ms,
            scenario: false,
            probe: false,
            otherwise: Patterns::default(),
            otherwise_skips: false,
            otherwise_fails: false,
        }
    }

    /// What no answer means.
    pub fn unanswered(&self) -> Unanswered {
        Unanswered::of(self.scenario, self.probe)
    }

    /// The answers in another form, and what they mean.
    pub fn otherwise(&self) -> Otherwise<'_> {
        Otherwise {
            patterns: &self.otherwise,
            means: match (self.otherwise_skips, self.otherwise_fails) {
                (true, _) => Some(Unanswered::ScenarioNotReached),
                (false, true) => Some(Unanswered::Fails),
                (false, false) => None,
            },
        }
    }
}

/// `expect_error = { code = "..." }`: waits for the protocol's error event.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectError {
    #[serde(rename = "expect_error")]
    pub wanted: ErrorWanted,
}

/// The error an `expect_error` waits for.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorWanted {
    /// The error code wanted (default: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The rule an error with another code breaks, when it is not the step's (HUMA: a
    /// missing error breaks the validation rule, a wrong code only HUMA-ERR-002).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_rule: Option<String>,
    /// An event that, arriving first, shows the target took another legal path: no error due.
    #[serde(
        default,
        deserialize_with = "some_object",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub unless: Option<Value>,
    /// Overrides the step timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
}

/// `expect_close = { code = 1000 }`: waits for the target to close the connection.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectClose {
    #[serde(rename = "expect_close")]
    pub wanted: CloseWanted,
}

/// The close an `expect_close` waits for.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseWanted {
    /// The close code wanted (default: any close).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// Overrides the step timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
}

/// `expect_silence = { ms = 500 }`: nothing (or nothing matching) arrives for a while.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSilence {
    #[serde(rename = "expect_silence")]
    pub silence: Silence,
    /// Something arriving means the scenario was not reached: skip, not fail.
    #[serde(default, skip_serializing_if = "is_false")]
    pub scenario: bool,
    /// Something arriving means a probe another case judges misfired: skip.
    #[serde(default, skip_serializing_if = "is_false")]
    pub probe: bool,
}

/// The silence an `expect_silence` waits out.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Silence {
    /// How long, in milliseconds.
    pub ms: u64,
    /// Only events matching these break the silence (default: any event).
    #[serde(default, skip_serializing_if = "Patterns::is_empty")]
    pub matching: Patterns,
    /// The silence is the target's answer to what the step before sent (no error for a valid
    /// event): it starts once the send reaches the target, and what the target says then takes
    /// as long again to come back, so the window is `ms` plus the longest round trip the case
    /// measured (as its connections opened, or a pong a wait asked for). What arrived before
    /// that send (a late answer to something sent earlier) cannot answer it and does not break
    /// the silence. Leave it out for a silence a timer ends (nothing before a spec's timeout
    /// fires): a round trip measured on a busy machine can be long, and would stretch the
    /// window past the timer.
    #[serde(default, skip_serializing_if = "is_false")]
    pub answer: bool,
}

impl ExpectSilence {
    /// What something arriving means.
    pub fn unanswered(&self) -> Unanswered {
        Unanswered::of(self.scenario, self.probe)
    }
}

/// `expect_refused = {}`: the connection (re)opened by the step before is refused.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectRefused {
    #[serde(rename = "expect_refused")]
    pub wanted: RefusalWanted,
}

/// How long an `expect_refused` waits.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusalWanted {
    /// Overrides the step timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
}

/// `check = { value = "${NAME}", pattern = ... }`: matches a captured value.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    #[serde(rename = "check")]
    pub comparison: Comparison,
    /// A value that is not there or does not match is a precondition the target did not
    /// meet: skip, not fail.
    #[serde(default, skip_serializing_if = "is_false")]
    pub scenario: bool,
    /// A value missing because a probe another case judges went unanswered: skip.
    #[serde(default, skip_serializing_if = "is_false")]
    pub probe: bool,
}

/// What a `check` compares.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// A `"${NAME}"` template.
    pub value: Value,
    /// The pattern it must match.
    pub pattern: Value,
}

impl Check {
    /// What a missing or unmatched value means.
    pub fn unanswered(&self) -> Unanswered {
        Unanswered::of(self.scenario, self.probe)
    }
}

fn within(ms: &Option<u64>) -> String {
    ms.map(|ms| format!(" within {ms} ms")).unwrap_or_default()
}

/// Patterns as a report line shows them.
pub(super) fn patterns(values: &[Value]) -> String {
    values
        .iter()
        .map(show::event)
        .collect::<Vec<_>>()
        .join(" or ")
}

impl StepKind for Expect {
    fn validate(&self) -> Result<(), String> {
        if self.count == Times::Fixed(0) {
            return Err("`times` on an expect is at least 1".into());
        }
        Unanswered::validate(self.scenario, self.probe)?;
        if self.otherwise_skips && self.otherwise_fails {
            return Err("`otherwise_skips` and `otherwise_fails` exclude each other".into());
        }
        if (self.otherwise_skips || self.otherwise_fails) && self.otherwise.is_empty() {
            return Err("`otherwise_skips` and `otherwise_fails` need `otherwise` patterns".into());
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "expect {}{}{}",
            patterns(&self.patterns),
            times(&self.count),
            within(&self.within_ms)
        )
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        self.within_ms.unwrap_or(step_ms)
            * match self.count {
                Times::Fixed(n) => n,
                Times::FromVar { .. } => 10,
            }
    }
}

impl StepKind for ExpectError {
    fn validate(&self) -> Result<(), String> {
        match (&self.wanted.code_rule, &self.wanted.code) {
            (Some(_), None) => Err("`code_rule` needs a `code` to judge".into()),
            _ => Ok(()),
        }
    }

    fn describe(&self) -> String {
        format!(
            "expect error {}{}",
            self.wanted.code.as_deref().unwrap_or("(any code)"),
            within(&self.wanted.within_ms)
        )
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        self.wanted.within_ms.unwrap_or(step_ms)
    }
}

impl StepKind for ExpectClose {
    fn describe(&self) -> String {
        format!(
            "expect the connection closed{}{}",
            self.wanted
                .code
                .map(|c| format!(" with code {c}"))
                .unwrap_or_default(),
            within(&self.wanted.within_ms)
        )
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        self.wanted.within_ms.unwrap_or(step_ms)
    }
}

impl StepKind for ExpectSilence {
    fn validate(&self) -> Result<(), String> {
        Unanswered::validate(self.scenario, self.probe)
    }

    fn describe(&self) -> String {
        let Silence { ms, matching, .. } = &self.silence;
        match matching.is_empty() {
            true => format!("expect silence for {ms} ms"),
            false => format!("expect no {} for {ms} ms", patterns(matching)),
        }
    }

    fn budget_ms(&self, _: u64) -> u64 {
        self.silence.ms
    }
}

impl StepKind for ExpectRefused {
    fn describe(&self) -> String {
        format!(
            "expect the connection refused{}",
            within(&self.wanted.within_ms)
        )
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        self.wanted.within_ms.unwrap_or(step_ms)
    }
}

impl StepKind for Check {
    fn validate(&self) -> Result<(), String> {
        Unanswered::validate(self.scenario, self.probe)
    }

    fn describe(&self) -> String {
        format!(
            "check {} matches {}",
            show::event(&self.comparison.value),
            show::event(&self.comparison.pattern)
        )
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }
}
