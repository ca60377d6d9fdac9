//! Writes cases back as suite TOML, so a case built in code (a fuzz finding) replays with
//! `wireprobe run --suite FILE`. JSON `null`, which TOML lacks, is written as `"$null"`.

use super::model::{
    Action, Case, ConnectSpec, HandshakeMode, RawFrame, Step, Times, Unanswered, TOKEN_PLACEMENTS,
};
use base64::Engine as _;
use serde_json::Value;

/// The string that stands for JSON `null` in a `send` (TOML has no null).
pub const NULL: &str = "$null";

/// `case` as a `[[case]]` table.
pub fn case_to_toml(case: &Case) -> String {
    let mut out = String::from("[[case]]\n");
    out.push_str(&format!("id = {}\n", quote(&case.id)));
    out.push_str(&format!("title = {}\n", quote(&case.title)));
    let rules: Vec<String> = case.rules.iter().map(|r| quote(r)).collect();
    out.push_str(&format!("rules = [{}]\n", rules.join(", ")));
    if !case.requires.is_empty() {
        let names: Vec<String> = case.requires.iter().map(|r| quote(&r.name())).collect();
        out.push_str(&format!("requires = [{}]\n", names.join(", ")));
    }
    match case.handshake {
        HandshakeMode::Full => {}
        HandshakeMode::SendOnly => out.push_str("handshake = \"send\"\n"),
        HandshakeMode::None => out.push_str("handshake = \"none\"\n"),
    }
    if let Some(with) = &case.handshake_with {
        out.push_str(&format!("handshake_with = {}\n", inline(with)));
    }
    if case.connect != ConnectSpec::default() {
        out.push_str(&format!("connect = {}\n", connect_to_toml(&case.connect)));
    }
    if let Some(ms) = case.timeout_ms {
        out.push_str(&format!("timeout_ms = {ms}\n"));
    }
    if !case.auto_answer {
        out.push_str("auto_answer = false\n");
    }
    out.push_str("steps = [\n");
    for step in &case.steps {
        out.push_str(&format!("  {},\n", step_to_toml(step)));
    }
    out.push_str("]\n");
    if !case.fallback.is_empty() {
        out.push_str("fallback = [\n");
        for step in &case.fallback {
            out.push_str(&format!("  {},\n", step_to_toml(step)));
        }
        out.push_str("]\n");
    }
    out
}

fn connect_to_toml(connect: &ConnectSpec) -> String {
    let mut fields = vec![format!("token = {}", quote(connect.token.name()))];
    if let Some((name, _)) = TOKEN_PLACEMENTS
        .iter()
        .find(|(_, p)| Some(*p) == connect.token_in)
    {
        fields.push(format!("token_in = {}", quote(name)));
    }
    if connect.refusal_fails {
        fields.push("refusal = \"fail\"".into());
    }
    format!("{{ {} }}", fields.join(", "))
}

fn step_to_toml(step: &Step) -> String {
    let mut parts = vec![action_to_toml(&step.action)];
    if let Some(rule) = &step.rule {
        parts.push(format!("rule = {}", quote(rule)));
    }
    format!("{{ {} }}", parts.join(", "))
}

fn times(t: &Times) -> String {
    match t {
        Times::Fixed(1) => String::new(),
        Times::Fixed(n) => format!(", times = {n}"),
        Times::FromVar { name, delta } => {
            format!(", times = {}", quote(&format!("${{{name}}}{delta:+}")))
        }
    }
}

fn unanswered(u: Unanswered) -> &'static str {
    match u {
        Unanswered::Fails => "",
        Unanswered::ScenarioNotReached => ", scenario = true",
        Unanswered::ProbeUnanswered => ", probe = true",
    }
}

/// One pattern inline, or a list of them.
fn inline_all(patterns: &[Value]) -> String {
    match patterns {
        [one] => inline(one),
        many => format!(
            "[{}]",
            many.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn action_to_toml(action: &Action) -> String {
    let within = |ms: &Option<u64>| ms.map_or(String::new(), |ms| format!(", within_ms = {ms}"));
    match action {
        Action::Send { event, times: t } => format!("send = {}{}", inline(event), times(t)),
        Action::SendRaw { frame, times: t } => {
            let body = match frame {
                RawFrame::Text(text) => format!("text = {}", quote(text)),
                RawFrame::Binary(b) => format!("binary_base64 = {}", quote(&b64(b))),
                RawFrame::TextBytes(b) => match std::str::from_utf8(b) {
                    Ok(text) if !text.ends_with('\n') => format!("text = {}", quote(text)),
                    _ => format!("text_bytes_base64 = {}", quote(&b64(b))),
                },
            };
            format!("send_raw = {{ {body} }}{}", times(t))
        }
        Action::Expect {
            patterns,
            count,
            within_ms,
            unanswered: u,
            otherwise,
        } => {
            let count = times(count);
            let otherwise = match (otherwise.patterns.as_slice(), otherwise.means) {
                ([], _) => String::new(),
                (some, None | Some(Unanswered::ProbeUnanswered)) => {
                    format!(", otherwise = {}", inline_all(some))
                }
                (some, Some(Unanswered::ScenarioNotReached)) => {
                    format!(", otherwise = {}, otherwise_skips = true", inline_all(some))
                }
                (some, Some(Unanswered::Fails)) => {
                    format!(", otherwise = {}, otherwise_fails = true", inline_all(some))
                }
            };
            format!(
                "expect = {}{count}{}{}{otherwise}",
                inline_all(patterns),
                within(within_ms),
                unanswered(*u)
            )
        }
        Action::ExpectError {
            code,
            code_rule,
            unless,
            within_ms,
        } => {
            let mut fields = Vec::new();
            if let Some(code) = code {
                fields.push(format!("code = {}", quote(code)));
            }
            if let Some(rule) = code_rule {
                fields.push(format!("code_rule = {}", quote(rule)));
            }
            if let Some(u) = unless {
                fields.push(format!("unless = {}", inline(u)));
            }
            if let Some(ms) = within_ms {
                fields.push(format!("within_ms = {ms}"));
            }
            format!("expect_error = {{ {} }}", fields.join(", "))
        }
        Action::ExpectClose { code, within_ms } => {
            let code = code.map_or(String::new(), |c| format!("code = {c}"));
            format!("expect_close = {{ {code} }}{}", within(within_ms))
        }
        Action::ExpectSilence {
            ms,
            matching,
            unanswered: u,
        } => {
            let matching = match matching.as_slice() {
                [] => String::new(),
                many => format!(
                    ", matching = [{}]",
                    many.iter().map(inline).collect::<Vec<_>>().join(", ")
                ),
            };
            format!(
                "expect_silence = {{ ms = {ms}{matching} }}{}",
                unanswered(*u)
            )
        }
        Action::ExpectRefused { within_ms } => {
            format!("expect_refused = {{}}{}", within(within_ms))
        }
        Action::Wait { ms } => format!("wait = {{ ms = {ms} }}"),
        Action::Discard => "discard = {}".into(),
        Action::Check {
            value,
            pattern,
            unanswered: u,
        } => {
            format!(
                "check = {{ value = {}, pattern = {} }}{}",
                inline(value),
                inline(pattern),
                unanswered(*u)
            )
        }
        Action::Reconnect {
            handshake,
            handshake_with,
            new_session,
            token,
        } => {
            let mut fields = Vec::new();
            if let Some(kind) = token {
                fields.push(format!("token = {}", quote(kind.name())));
            }
            match handshake {
                HandshakeMode::Full => {}
                HandshakeMode::SendOnly => fields.push("handshake = \"send\"".to_owned()),
                HandshakeMode::None => fields.push("handshake = \"none\"".to_owned()),
            }
            if let Some(w) = handshake_with {
                fields.push(format!("handshake_with = {}", inline(w)));
            }
            if *new_session {
                fields.push("new_session = true".to_owned());
            }
            format!("reconnect = {{ {} }}", fields.join(", "))
        }
        Action::Restart => "restart = {}".into(),
        Action::PickTool {
            prefer,
            params,
            default,
            within_ms,
        } => {
            let prefer = prefer
                .iter()
                .map(|g| Value::String(g.clone()).to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let default = default
                .as_ref()
                .map(|d| format!(", default = {}", quote(d)))
                .unwrap_or_default();
            format!(
                "pick_tool = {{ prefer = [{prefer}], params = {}{default}{} }}",
                inline(params),
                within(within_ms)
            )
        }
    }
}

/// A JSON value as TOML inline syntax (`null` as `"$null"`).
pub fn inline(v: &Value) -> String {
    match v {
        Value::Null => quote(NULL),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.1}"),
            (None, Some(f)) => format!("{f:e}"),
            (None, None) => quote(&n.to_string()),
        },
        Value::String(s) => quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => {
            let fields: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{} = {}", quote(k), inline(v)))
                .collect();
            if fields.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", fields.join(", "))
            }
        }
    }
}

/// `s` as a TOML basic string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Replaces every `"$null"` string in a `send` body with JSON `null`.
pub fn restore_nulls(v: &mut Value) {
    match v {
        Value::String(s) if s == NULL => *v = Value::Null,
        Value::Array(items) => items.iter_mut().for_each(restore_nulls),
        Value::Object(m) => m.values_mut().for_each(restore_nulls),
        _ => {}
    }
}
