//! Steps that send: an event, or a frame byte for byte.

use super::values::{event_table, RawFrame, Times};
use super::StepKind;
use crate::show;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `send = { type = "...", ... }`: sends an event (`"$null"` stands for JSON `null`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Send {
    /// The event, as the protocol writes it; `${NAME}` templates are filled in when it goes out.
    #[serde(rename = "send", deserialize_with = "event_table")]
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub event: Value,
    /// How many times it goes out.
    #[serde(default, skip_serializing_if = "Times::is_once")]
    pub times: Times,
}

/// `send_raw = { text = "..." }`: sends a frame byte for byte.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendRaw {
    #[serde(rename = "send_raw")]
    pub frame: RawFrame,
    /// How many times it goes out.
    #[serde(default, skip_serializing_if = "Times::is_once")]
    pub times: Times,
}

/// ` ×N` after a step that repeats.
pub(super) fn times(t: &Times) -> String {
    match t {
        Times::Fixed(1) => String::new(),
        Times::Fixed(n) => format!(" ×{n}"),
        Times::FromVar { name, delta: 0 } => format!(" ×${{{name}}}"),
        Times::FromVar { name, delta } => format!(" ×(${{{name}}}{delta:+})"),
    }
}

/// A repeated send's budget: sends are bounded per frame, one budget per 100 frames.
fn send_budget(times: &Times, step_ms: u64) -> u64 {
    match times {
        Times::Fixed(n) => step_ms * (1 + n / 100),
        Times::FromVar { .. } => step_ms * 10,
    }
}

impl StepKind for Send {
    fn describe(&self) -> String {
        format!("send {}{}", show::event(&self.event), times(&self.times))
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        send_budget(&self.times, step_ms)
    }
}

impl StepKind for SendRaw {
    fn describe(&self) -> String {
        let what = match &self.frame {
            RawFrame::Text(text) => {
                format!("raw text {:?}", text.chars().take(80).collect::<String>())
            }
            RawFrame::Binary(bytes) => format!("a binary frame of {} bytes", bytes.len()),
            RawFrame::TextBytes(bytes) => {
                format!("a text frame of {} bytes (not UTF-8)", bytes.len())
            }
        };
        format!("send {what}{}", times(&self.times))
    }

    fn budget_ms(&self, step_ms: u64) -> u64 {
        send_budget(&self.times, step_ms)
    }
}
