//! Sends built from what the target sent. A case that copies a target's value into a message
//! (a `seq` into `last_rx_seq`, a channel into FLOW_UPDATE, a toolCallId into its result) can
//! only judge the target's answer if the message it builds is valid. When the copied value
//! makes it break one of the protocol's musts, the case's precondition does not hold: it
//! skips, saying why, rather than failing the target for refusing a broken probe.

use crate::fuzz_profile::Input;
use crate::protocol::Protocol;
use crate::rules;
use crate::transport::{Body, Frame, Outgoing};
use serde_json::Value;
use std::collections::BTreeSet;

/// The variables `template` names (`${NAME}`, `${NAME.field}`) that hold values the target
/// sent, in order, each once.
pub(super) fn target_values(template: &Value, from_target: &BTreeSet<String>) -> Vec<String> {
    let mut names = Vec::new();
    collect(template, from_target, &mut names);
    names
}

fn collect(v: &Value, from_target: &BTreeSet<String>, names: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${") {
                let escaped = rest[..at].ends_with('$');
                let after = &rest[at + 2..];
                let end = after.find('}').unwrap_or(after.len());
                let name = &after[..end];
                let root = name.split(['.', ':']).next().unwrap_or(name);
                if !escaped && from_target.contains(root) && !names.iter().any(|n| n == root) {
                    names.push(root.to_owned());
                }
                rest = &after[end..];
            }
        }
        Value::Array(items) => items.iter().for_each(|x| collect(x, from_target, names)),
        Value::Object(map) => map.values().for_each(|x| collect(x, from_target, names)),
        _ => {}
    }
}

/// Why the message `out` (built from `event`, which copies the target's `names`) cannot serve
/// as a probe, if it cannot: the musts it breaks by the protocol's own input validator.
pub(super) fn broken_probe(
    protocol: &dyn Protocol,
    role: Option<&str>,
    names: &[String],
    event: &Value,
    out: &Outgoing,
) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    let profile = protocol.fuzzing_as(role)?;
    // The message as it goes out (with the envelope the session filled in), when it is JSON;
    // a text frame that is not (a Socket.IO packet) is judged as the event it carries. A
    // stream reopened from a copied id is no message: nothing to judge.
    let sent = match out {
        Outgoing::Frame(Frame::Text(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| event.clone())
        }
        Outgoing::Post {
            body: Body::Json(body),
            ..
        } => body.clone(),
        _ => return None,
    };
    let ty = sent
        .get("type")
        .or_else(|| event.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("message")
        .to_owned();
    let input = Input::Event(sent);
    let broken: Vec<&str> = profile
        .input_violations(&input)
        .into_iter()
        .filter(|id| rules::is_must(protocol.rules(), id))
        .collect();
    if broken.is_empty() {
        return None;
    }
    Some(format!(
        "precondition not met: the {ty} this case builds from what the target sent ({}) would break {}, so the answer to it could not be judged",
        names
            .iter()
            .map(|n| format!("${{{n}}}"))
            .collect::<Vec<_>>()
            .join(", "),
        broken.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_target_values_a_template_copies() {
        let from_target: BTreeSet<String> = ["s0".into(), "handshake".into()].into();
        let template = json!({"type": "HAI", "payload": {"last_rx_seq": "${s0}",
            "x": "${uuid:c}", "y": "$${s0}", "z": ["${handshake.session_id}", "${s0}"]}});
        assert_eq!(target_values(&template, &from_target), ["s0", "handshake"]);
    }
}
