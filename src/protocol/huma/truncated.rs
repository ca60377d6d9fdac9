//! What can still be judged of a client frame the transcript kept only the start of.
//!
//! Every tool-result whose result is over the 65,536-character limit makes a frame longer
//! than the transcript keeps, so the limit could never be seen whole. The start is enough for
//! a lower bound: the result's JSON runs at least from its key to the end of what was kept.
//! Whitespace is not counted, so a serialiser that pads its JSON cannot be blamed for the
//! padding.

use serde::de::IgnoredAny;
use serde_json::Deserializer;

/// The emit's event name and the start of its event object, for `42["NAME",{…` (with an
/// optional namespace and ack id, as Socket.IO writes them).
fn event_object(prefix: &str) -> Option<(String, &str)> {
    let rest = prefix.strip_prefix("42")?;
    let rest = match rest.strip_prefix('/') {
        Some(ns) => &ns[ns.find(',')? + 1..],
        None => rest,
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix('[')?;
    let mut names = Deserializer::from_str(rest).into_iter::<String>();
    let name = names.next()?.ok()?;
    let rest = rest[names.byte_offset()..].trim_start().strip_prefix(',')?;
    Some((name, rest.trim_start().strip_prefix('{')?))
}

/// For a kept start of a client frame emitting a tool-result on `message` whose `result`
/// runs past the end of what was kept: how many characters of it were kept (a lower bound on
/// its serialised length). `None` when the start says nothing of the kind.
pub fn result_chars_at_least(prefix: &str) -> Option<usize> {
    let (name, mut rest) = event_object(prefix)?;
    if name != "message" {
        return None;
    }
    let mut is_tool_result = false;
    loop {
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        let mut keys = Deserializer::from_str(rest).into_iter::<String>();
        let key = keys.next()?.ok()?;
        rest = rest[keys.byte_offset()..].trim_start().strip_prefix(':')?;
        let mut values = Deserializer::from_str(rest).into_iter::<IgnoredAny>();
        match values.next() {
            Some(Ok(_)) => {
                let taken = &rest[..values.byte_offset()];
                if key == "type" {
                    is_tool_result = taken.trim() == "\"tool-result\"";
                }
                rest = &rest[values.byte_offset()..];
            }
            // The value runs past the end of what was kept.
            // The value runs past the end of what was kept. A type named after the result
            // cannot be read: only a frame that said tool-result first is measured.
            Some(Err(e)) if e.is_eof() && key == "result" && is_tool_result => {
                return Some(rest.chars().filter(|c| !c.is_whitespace()).count());
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(frame: &str, keep: usize) -> &str {
        &frame[..keep]
    }

    #[test]
    fn a_result_past_the_cut_is_measured_from_its_start() {
        let frame = format!(
            "42[\"message\",{{\"type\":\"tool-result\",\"triggering\":true,\"toolCallId\":\"a\",\"toolName\":\"t\",\"outcome\":\"success\",\"result\":{{\"plot\":\"{}\"}}}}]",
            "x".repeat(100_000)
        );
        let kept = result_chars_at_least(cut(&frame, 80_000)).expect("measured");
        assert!(kept > 65_536 && kept < 80_000, "{kept}");
        // Padded JSON: the padding does not count.
        let padded = frame.replace("\"result\":", "\"result\" :      ");
        let padded_kept = result_chars_at_least(cut(&padded, 80_000)).expect("measured");
        assert!(padded_kept <= kept, "{padded_kept} {kept}");
    }

    #[test]
    fn other_long_frames_say_nothing() {
        let long = "y".repeat(100_000);
        // A long error, a long context, another channel: no bound on a result.
        for frame in [
            format!("42[\"message\",{{\"type\":\"tool-result\",\"outcome\":\"failure\",\"error\":\"{long}\"}}]"),
            format!("42[\"message\",{{\"type\":\"context-update\",\"context\":{{\"h\":\"{long}\"}}}}]"),
            format!("42[\"event\",{{\"type\":\"tool-result\",\"result\":\"{long}\"}}]"),
            format!("42[\"message\",{{\"type\":\"addon-tool-event\",\"result\":\"{long}\"}}]"),
        ] {
            assert_eq!(result_chars_at_least(cut(&frame, 70_000)), None, "{}", &frame[..60]);
        }
        assert_eq!(result_chars_at_least("not a packet"), None);
        assert_eq!(
            result_chars_at_least("42/ns,7[\"message\",{\"type\":\"tool-result\",\"result\":\"abc"),
            Some(4)
        );
    }
}
