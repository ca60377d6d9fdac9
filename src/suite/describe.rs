//! A step as one line a report reader understands (`send {...} ×3`, `expect error
//! VERSION_INCOMPATIBLE within 2000 ms`): the case's script, shown beside what happened.

use super::model::{Action, RawFrame, Step, Times};
use crate::show;
use serde_json::Value;

/// `step` as one line, with the rule a failure of it breaks when it names one.
pub fn step(step: &Step) -> String {
    let line = action(&step.action);
    match &step.rule {
        Some(rule) => format!("{line} [{rule}]"),
        None => line,
    }
}

fn times(t: &Times) -> String {
    match t {
        Times::Fixed(1) => String::new(),
        Times::Fixed(n) => format!(" ×{n}"),
        Times::FromVar { name, delta: 0 } => format!(" ×${{{name}}}"),
        Times::FromVar { name, delta } => format!(" ×(${{{name}}}{delta:+})"),
    }
}

fn within(ms: &Option<u64>) -> String {
    ms.map(|ms| format!(" within {ms} ms")).unwrap_or_default()
}

fn patterns(values: &[Value]) -> String {
    values
        .iter()
        .map(show::event)
        .collect::<Vec<_>>()
        .join(" or ")
}

fn action(a: &Action) -> String {
    match a {
        Action::Send { event, times: t } => format!("send {}{}", show::event(event), times(t)),
        Action::SendRaw { frame, times: t } => {
            let what = match frame {
                RawFrame::Text(text) => {
                    format!("raw text {:?}", text.chars().take(80).collect::<String>())
                }
                RawFrame::Binary(bytes) => format!("a binary frame of {} bytes", bytes.len()),
                RawFrame::TextBytes(bytes) => {
                    format!("a text frame of {} bytes (not UTF-8)", bytes.len())
                }
            };
            format!("send {what}{}", times(t))
        }
        Action::Expect {
            patterns: p,
            count,
            within_ms,
            ..
        } => format!(
            "expect {}{}{}",
            patterns(p),
            times(count),
            within(within_ms)
        ),
        Action::ExpectError {
            code, within_ms, ..
        } => format!(
            "expect error {}{}",
            code.as_deref().unwrap_or("(any code)"),
            within(within_ms)
        ),
        Action::ExpectClose { code, within_ms } => format!(
            "expect the connection closed{}{}",
            code.map(|c| format!(" with code {c}")).unwrap_or_default(),
            within(within_ms)
        ),
        Action::ExpectSilence { ms, matching, .. } if matching.is_empty() => {
            format!("expect silence for {ms} ms")
        }
        Action::ExpectSilence { ms, matching, .. } => {
            format!("expect no {} for {ms} ms", patterns(matching))
        }
        Action::ExpectRefused { within_ms } => {
            format!("expect the connection refused{}", within(within_ms))
        }
        Action::Wait { ms } => format!("wait {ms} ms"),
        Action::Discard => "forget unread arrivals".into(),
        Action::Check { value, pattern, .. } => format!(
            "check {} matches {}",
            show::event(value),
            show::event(pattern)
        ),
        Action::PickTool { default, .. } => match default {
            Some(name) => format!("pick a tool (default {name})"),
            None => "pick a tool the target offers".into(),
        },
        Action::Reconnect { new_session, .. } => if *new_session {
            "reconnect with a new session"
        } else {
            "reconnect and resume"
        }
        .into(),
        Action::Restart => "restart the target process".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_read_as_one_line_each() {
        let send = Step {
            action: Action::Send {
                event: json!({"type": "PING"}),
                times: Times::Fixed(3),
            },
            rule: Some("HAIP-PING-001".into()),
        };
        assert_eq!(step(&send), r#"send {"type":"PING"} ×3 [HAIP-PING-001]"#);
        let close = Step {
            action: Action::ExpectClose {
                code: Some(1007),
                within_ms: Some(500),
            },
            rule: None,
        };
        assert_eq!(
            step(&close),
            "expect the connection closed with code 1007 within 500 ms"
        );
    }
}
