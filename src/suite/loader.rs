//! Loads `suites/PROTOCOL/*.toml` into a [`Suite`], with errors that name the file, the case
//! and the step.

use super::model::*;
use crate::protocol::Protocol;
use crate::rules;
use base64::Engine;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// A suite file that cannot be used, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}{}: {message}",
    case.as_ref().map(|c| format!(": case `{c}`")).unwrap_or_default(),
    step.map(|s| format!(" step {}", s + 1)).unwrap_or_default())]
pub struct SuiteError {
    pub origin: String,
    pub case: Option<String>,
    pub step: Option<usize>,
    pub message: String,
}

/// Upper bound on `times`: a typo must not send a billion frames.
pub const MAX_TIMES: u64 = 100_000;

/// The suite compiled into the binary for `protocol`.
pub fn load_bundled(protocol: &dyn Protocol) -> Result<Suite, SuiteError> {
    let files: Vec<(String, String)> = protocol
        .bundled_suite()
        .iter()
        .map(|(name, text)| {
            (
                format!("suites/{}/{name}", protocol.id()),
                (*text).to_owned(),
            )
        })
        .collect();
    load_texts(protocol, &files)
}

/// A suite from a `.toml` file or a directory of them (sorted by name).
pub fn load_path(protocol: &dyn Protocol, path: &Path) -> Result<Suite, SuiteError> {
    let io_err = |e: std::io::Error| SuiteError {
        origin: path.display().to_string(),
        case: None,
        step: None,
        message: e.to_string(),
    };
    let mut paths = Vec::new();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).map_err(io_err)? {
            let p = entry.map_err(io_err)?.path();
            if p.extension().is_some_and(|e| e == "toml") {
                paths.push(p);
            }
        }
        paths.sort();
    } else {
        paths.push(path.to_path_buf());
    }
    let mut files = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| SuiteError {
            origin: p.display().to_string(),
            case: None,
            step: None,
            message: e.to_string(),
        })?;
        files.push((p.display().to_string(), text));
    }
    load_texts(protocol, &files)
}

/// Parses suite texts `(origin, toml)`; case ids must be unique across all of them.
pub fn load_texts(
    protocol: &dyn Protocol,
    files: &[(String, String)],
) -> Result<Suite, SuiteError> {
    let mut suite = Suite::default();
    let mut seen = HashSet::new();
    for (origin, text) in files {
        for case in parse_file(protocol, origin, text)? {
            if !seen.insert(case.id.clone()) {
                return Err(SuiteError {
                    origin: origin.clone(),
                    case: Some(case.id),
                    step: None,
                    message: "duplicate case id".into(),
                });
            }
            suite.cases.push(case);
        }
    }
    Ok(suite)
}

fn parse_file(protocol: &dyn Protocol, origin: &str, text: &str) -> Result<Vec<Case>, SuiteError> {
    let fail = |case: Option<String>, step: Option<usize>, message: String| SuiteError {
        origin: origin.to_owned(),
        case,
        step,
        message,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| fail(None, None, e.to_string()))?;
    let doc = serde_json::to_value(table).map_err(|e| fail(None, None, e.to_string()))?;
    let Value::Object(mut doc) = doc else {
        return Err(fail(None, None, "a suite file is a table".into()));
    };
    let cases = doc.remove("case").unwrap_or(Value::Array(Vec::new()));
    if let Some(key) = doc.keys().next() {
        return Err(fail(
            None,
            None,
            format!("unknown top-level key `{key}` (only [[case]] tables)"),
        ));
    }
    let Value::Array(cases) = cases else {
        return Err(fail(
            None,
            None,
            "`case` must be an array of tables ([[case]])".into(),
        ));
    };
    cases
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let Value::Object(raw) = raw else {
                return Err(fail(None, None, format!("case #{} is not a table", i + 1)));
            };
            let id = raw
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| fail(None, None, format!("case #{} has no string `id`", i + 1)))?;
            parse_case(protocol, origin, &id, raw)
                .map_err(|(step, message)| fail(Some(id.clone()), step, message))
        })
        .collect()
}

type CaseErr = (Option<usize>, String);

fn parse_case(
    protocol: &dyn Protocol,
    origin: &str,
    id: &str,
    mut raw: Map<String, Value>,
) -> Result<Case, CaseErr> {
    let whole = |m: String| (None, m);
    raw.remove("id");
    let title = take_str(&mut raw, "title")
        .map_err(whole)?
        .ok_or_else(|| whole("missing `title`".into()))?;
    let rules: Vec<String> = match raw.remove("rules") {
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| whole("`rules` must list strings".into()))
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(whole("missing `rules` (a list of rule ids)".into())),
    };
    if rules.is_empty() {
        return Err(whole(
            "`rules` is empty: a case must exercise at least one rule".into(),
        ));
    }
    for r in &rules {
        if rules::find(protocol.rules(), r).is_none() {
            return Err(whole(format!(
                "unknown rule `{r}` (see `wireprobe list {} --rules`)",
                protocol.id()
            )));
        }
    }
    let requires = match raw.remove("requires") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| {
                v.as_str()
                    .and_then(Requirement::from_name)
                    .ok_or_else(|| whole("`requires` lists strings".into()))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(whole("`requires` must be a list".into())),
    };
    let handshake = parse_handshake(raw.remove("handshake")).map_err(whole)?;
    let handshake_with = take_object(&mut raw, "handshake_with").map_err(whole)?;
    let connect = parse_connect(raw.remove("connect")).map_err(whole)?;
    let timeout_ms = take_u64(&mut raw, "timeout_ms").map_err(whole)?;
    let auto_answer = match raw.remove("auto_answer") {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(whole("`auto_answer` is true or false".into())),
    };
    let steps = match raw.remove("steps") {
        Some(Value::Array(steps)) => steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| parse_step(protocol, s).map_err(|m| (Some(i), m)))
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(whole("missing `steps` (a list of steps)".into())),
    };
    // Fallback steps are numbered after the main ones in error messages.
    let fallback = match raw.remove("fallback") {
        None => Vec::new(),
        Some(Value::Array(more)) => more
            .into_iter()
            .enumerate()
            .map(|(i, s)| parse_step(protocol, s).map_err(|m| (Some(steps.len() + i), m)))
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(whole("`fallback` must be a list of steps".into())),
    };
    if let Some(key) = raw.keys().next() {
        return Err(whole(format!("unknown key `{key}`")));
    }
    Ok(Case {
        id: id.to_owned(),
        title,
        rules,
        requires,
        handshake,
        handshake_with,
        connect,
        timeout_ms,
        auto_answer,
        steps,
        fallback,
        origin: origin.to_owned(),
    })
}

fn parse_handshake(v: Option<Value>) -> Result<HandshakeMode, String> {
    match v {
        None | Some(Value::Bool(true)) => Ok(HandshakeMode::Full),
        Some(Value::Bool(false)) => Ok(HandshakeMode::None),
        Some(Value::String(s)) => match s.as_str() {
            "full" => Ok(HandshakeMode::Full),
            "send" => Ok(HandshakeMode::SendOnly),
            "none" => Ok(HandshakeMode::None),
            other => Err(format!("`handshake` is full, send or none, not {other:?}")),
        },
        Some(other) => Err(format!("`handshake` is full, send or none, not {other}")),
    }
}

/// The value `name` stands for in `table`, or an error listing the names `key` takes.
fn named<T: Copy>(table: &[(&str, T)], name: &str, key: &str) -> Result<T, String> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            format!("`{key}` {name:?} is not one of {}", names.join(", "))
        })
}

fn parse_connect(v: Option<Value>) -> Result<ConnectSpec, String> {
    let Some(v) = v else {
        return Ok(ConnectSpec::default());
    };
    let Value::Object(mut m) = v else {
        return Err("`connect` must be a table".into());
    };
    let token = match take_str(&mut m, "token")? {
        None => TokenKind::Valid,
        Some(name) => named(&TokenKind::NAMES, &name, "connect.token")?,
    };
    let token_in = match take_str(&mut m, "token_in")? {
        None => None,
        Some(name) => Some(named(&TOKEN_PLACEMENTS, &name, "connect.token_in")?),
    };
    let refusal_fails = match take_str(&mut m, "refusal")?.as_deref() {
        None | Some("error") => false,
        Some("fail") => true,
        Some(other) => return Err(format!("`connect.refusal` is error or fail, not {other:?}")),
    };
    if let Some(key) = m.keys().next() {
        return Err(format!("unknown key `connect.{key}`"));
    }
    Ok(ConnectSpec {
        token,
        token_in,
        refusal_fails,
    })
}

/// The step's action names; exactly one must appear in each step table.
const ACTIONS: [&str; 13] = [
    "send",
    "send_raw",
    "expect",
    "expect_error",
    "expect_close",
    "expect_silence",
    "expect_refused",
    "wait",
    "discard",
    "check",
    "reconnect",
    "restart",
    "pick_tool",
];

fn parse_step(protocol: &dyn Protocol, v: Value) -> Result<Step, String> {
    let Value::Object(mut m) = v else {
        return Err("a step is a table such as { send = {...} }".into());
    };
    let present: Vec<&str> = ACTIONS
        .iter()
        .copied()
        .filter(|a| m.contains_key(*a))
        .collect();
    let name = match present.as_slice() {
        [one] => *one,
        [] => {
            let keys: Vec<&String> = m.keys().collect();
            return Err(format!(
                "no action in step (keys {keys:?}); expected one of {}",
                ACTIONS.join(", ")
            ));
        }
        many => {
            return Err(format!(
                "a step has one action, this one has {}",
                many.join(" and ")
            ))
        }
    };
    let body = m.remove(name).unwrap_or(Value::Null);
    let rule = take_str(&mut m, "rule")?;
    if let Some(r) = &rule {
        if rules::find(protocol.rules(), r).is_none() {
            return Err(format!("unknown rule `{r}`"));
        }
    }
    let action = match name {
        "send" => {
            if !body.is_object() {
                return Err("`send` takes an event table".into());
            }
            let mut event = body;
            super::writer::restore_nulls(&mut event);
            Action::Send {
                event,
                times: parse_times(m.remove("times"))?,
            }
        }
        "send_raw" => Action::SendRaw {
            frame: parse_raw(body)?,
            times: parse_times(m.remove("times"))?,
        },
        "expect" => {
            let wanted = patterns(body, "expect")?;
            if wanted.is_empty() {
                return Err("`expect` takes a pattern table or a list of them".into());
            }
            let within_ms = take_u64(&mut m, "within_ms")?;
            let unanswered = parse_unanswered(&mut m)?;
            let count = match parse_times(m.remove("times"))? {
                Times::Fixed(0) => return Err("`times` on an expect is at least 1".into()),
                times => times,
            };
            let otherwise = Otherwise {
                patterns: match m.remove("otherwise") {
                    None => Vec::new(),
                    Some(v) => patterns(v, "otherwise")?,
                },
                means: match (
                    take_bool(&mut m, "otherwise_skips")?.unwrap_or(false),
                    take_bool(&mut m, "otherwise_fails")?.unwrap_or(false),
                ) {
                    (true, true) => {
                        return Err(
                            "`otherwise_skips` and `otherwise_fails` exclude each other".into()
                        )
                    }
                    (true, false) => Some(Unanswered::ScenarioNotReached),
                    (false, true) => Some(Unanswered::Fails),
                    (false, false) => None,
                },
            };
            if otherwise.means.is_some() && otherwise.patterns.is_empty() {
                return Err(
                    "`otherwise_skips` and `otherwise_fails` need `otherwise` patterns".into(),
                );
            }
            Action::Expect {
                patterns: wanted,
                count,
                within_ms,
                unanswered,
                otherwise,
            }
        }
        "expect_error" => {
            let mut b = as_table(body, name)?;
            let code = take_str(&mut b, "code")?;
            let code_rule = take_str(&mut b, "code_rule")?;
            if code_rule.is_some() && code.is_none() {
                return Err("`code_rule` needs a `code` to judge".into());
            }
            let unless = take_object(&mut b, "unless")?;
            let within_ms = take_u64(&mut b, "within_ms")?;
            no_more(&b, name)?;
            Action::ExpectError {
                code,
                code_rule,
                unless,
                within_ms,
            }
        }
        "expect_close" => {
            let mut b = as_table(body, name)?;
            let code = take_u64(&mut b, "code")?
                .map(|c| u16::try_from(c).map_err(|_| format!("close code {c} is not a u16")))
                .transpose()?;
            let within_ms = take_u64(&mut b, "within_ms")?;
            no_more(&b, name)?;
            Action::ExpectClose { code, within_ms }
        }
        "expect_silence" => {
            let mut b = as_table(body, name)?;
            let ms = take_u64(&mut b, "ms")?.ok_or("`expect_silence` needs `ms`")?;
            let matching = match b.remove("matching") {
                None => Vec::new(),
                Some(v) => patterns(v, "expect_silence.matching")?,
            };
            no_more(&b, name)?;
            Action::ExpectSilence {
                ms,
                matching,
                unanswered: parse_unanswered(&mut m)?,
            }
        }
        "expect_refused" => {
            let mut b = as_table(body, name)?;
            let within_ms = take_u64(&mut b, "within_ms")?;
            no_more(&b, name)?;
            Action::ExpectRefused { within_ms }
        }
        "pick_tool" => {
            let mut b = as_table(body, name)?;
            let prefer = match b.remove("prefer") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .into_iter()
                    .map(|v| match v {
                        Value::String(g) => globset::Glob::new(&g)
                            .map(|_| g.clone())
                            .map_err(|e| format!("`prefer` glob {g}: {e}")),
                        other => Err(format!("`prefer` takes name globs, not {other}")),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(format!("`prefer` takes a list of globs, not {other}")),
            };
            let params =
                take_object(&mut b, "params")?.unwrap_or_else(|| Value::Object(Map::new()));
            let default = take_str(&mut b, "default")?;
            let within_ms = take_u64(&mut b, "within_ms")?;
            no_more(&b, name)?;
            Action::PickTool {
                prefer,
                params,
                default,
                within_ms,
            }
        }
        "wait" => {
            let mut b = as_table(body, name)?;
            let ms = take_u64(&mut b, "ms")?.ok_or("`wait` needs `ms`")?;
            no_more(&b, name)?;
            Action::Wait { ms }
        }
        "check" => {
            let mut b = as_table(body, name)?;
            let value = b
                .remove("value")
                .ok_or("`check` needs `value` (a \"${NAME}\" template)")?;
            let pattern = b.remove("pattern").ok_or("`check` needs `pattern`")?;
            no_more(&b, name)?;
            Action::Check {
                value,
                pattern,
                unanswered: parse_unanswered(&mut m)?,
            }
        }
        "discard" => {
            no_more(&as_table(body, name)?, name)?;
            Action::Discard
        }
        "reconnect" => {
            let mut b = as_table(body, name)?;
            let handshake = parse_handshake(b.remove("handshake"))?;
            let handshake_with = take_object(&mut b, "handshake_with")?;
            let new_session = take_bool(&mut b, "new_session")?.unwrap_or(false);
            let token = take_str(&mut b, "token")?
                .map(|t| named(&TokenKind::NAMES, &t, "reconnect.token"))
                .transpose()?;
            no_more(&b, name)?;
            Action::Reconnect {
                token,
                handshake,
                handshake_with,
                new_session,
            }
        }
        _ => {
            no_more(&as_table(body, name)?, name)?;
            Action::Restart
        }
    };
    if let Some(key) = m.keys().next() {
        return Err(format!("unknown key `{key}` beside `{name}`"));
    }
    Ok(Step { action, rule })
}

fn parse_times(v: Option<Value>) -> Result<Times, String> {
    match v {
        None => Ok(Times::Fixed(1)),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(t) if t <= MAX_TIMES => Ok(Times::Fixed(t)),
            _ => Err(format!("`times` must be an integer from 0 to {MAX_TIMES}")),
        },
        Some(Value::String(s)) => parse_times_expr(&s)
            .ok_or_else(|| format!("`times` {s:?} is not an integer or \"${{NAME}}\", \"${{NAME}}+K\", \"${{NAME}}-K\"")),
        Some(other) => Err(format!("`times` must be an integer, not {other}")),
    }
}

fn parse_times_expr(s: &str) -> Option<Times> {
    let rest = s.strip_prefix("${")?;
    let end = rest.find('}')?;
    let name = rest[..end].to_owned();
    let tail = rest[end + 1..].trim();
    let delta = if tail.is_empty() {
        0
    } else if let Some(n) = tail.strip_prefix('+') {
        n.trim().parse().ok()?
    } else if let Some(n) = tail.strip_prefix('-') {
        -n.trim().parse::<i64>().ok()?
    } else {
        return None;
    };
    (!name.is_empty()).then_some(Times::FromVar { name, delta })
}

fn parse_raw(body: Value) -> Result<RawFrame, String> {
    let mut b = as_table(body, "send_raw")?;
    let b64 = |s: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| format!("not Base64: {e}"))
    };
    let frame = if let Some(text) = take_str(&mut b, "text")? {
        // `repeat` builds large frames without large suite files.
        match take_u64(&mut b, "repeat")? {
            Some(n) if n as usize * text.len() > 64 * 1024 * 1024 => {
                return Err("`send_raw.repeat` would build a frame over 64 MiB".into())
            }
            Some(n) => RawFrame::Text(text.repeat(n as usize)),
            None => RawFrame::Text(text),
        }
    } else if let Some(data) = take_str(&mut b, "binary_base64")? {
        RawFrame::Binary(b64(&data)?)
    } else if let Some(data) = take_str(&mut b, "text_bytes_base64")? {
        RawFrame::TextBytes(b64(&data)?)
    } else {
        return Err("`send_raw` takes one of text, binary_base64, text_bytes_base64".into());
    };
    no_more(&b, "send_raw")?;
    Ok(frame)
}

/// `scenario = true` or `probe = true` beside an expectation: unmet means skip, not fail.
fn parse_unanswered(m: &mut Map<String, Value>) -> Result<Unanswered, String> {
    let scenario = take_bool(m, "scenario")?.unwrap_or(false);
    let probe = take_bool(m, "probe")?.unwrap_or(false);
    match (scenario, probe) {
        (true, true) => Err("an expectation is a scenario or a probe, not both".into()),
        (true, false) => Ok(Unanswered::ScenarioNotReached),
        (false, true) => Ok(Unanswered::ProbeUnanswered),
        (false, false) => Ok(Unanswered::Fails),
    }
}

/// A pattern table, or a list of them (alternatives).
fn patterns(v: Value, name: &str) -> Result<Vec<Value>, String> {
    match v {
        Value::Object(_) => Ok(vec![v]),
        Value::Array(items) if items.iter().all(Value::is_object) => Ok(items),
        other => Err(format!(
            "`{name}` takes a pattern table or a list of them, not {other}"
        )),
    }
}

fn as_table(v: Value, name: &str) -> Result<Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(format!("`{name}` takes a table, not {other}")),
    }
}

fn no_more(m: &Map<String, Value>, name: &str) -> Result<(), String> {
    match m.keys().next() {
        Some(key) => Err(format!("unknown key `{key}` in `{name}`")),
        None => Ok(()),
    }
}

fn take_str(m: &mut Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match m.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

fn take_u64(m: &mut Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match m.remove(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer, not {v}")),
    }
}

fn take_bool(m: &mut Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match m.remove(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(format!("`{key}` must be true or false, not {other}")),
    }
}

fn take_object(m: &mut Map<String, Value>, key: &str) -> Result<Option<Value>, String> {
    match m.remove(key) {
        None => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v)),
        Some(other) => Err(format!("`{key}` must be a table, not {other}")),
    }
}
