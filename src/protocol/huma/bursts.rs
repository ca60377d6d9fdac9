//! Messaging bursts (HUMA-LC-001): typing_start, then message_sent with messageIndex 0, 1, …
//! in order, then typing_end — followed per toolCallId.
//!
//! §messaging types `toolCallId` as `string?` (suites/huma/ERRATA.md item 15): events without
//! one cannot say which burst they belong to. While a single such burst is open its order is
//! judged as any other's; once a second opens before the first ended, which burst a
//! message_sent or typing_end belongs to is anyone's guess, so only what no pairing explains is
//! judged (an end, or a message, with no id-less burst open) until all have ended.

use super::validate;
use crate::rules::ids::HUMA_LC_001;
use crate::rules::{Exercised, Violation};
use serde_json::Value;
use std::collections::HashMap;

/// Bursts remembered at most (a hostile flood cannot grow memory without bound).
const MAX_TRACKED: usize = 4096;

/// Where a burst named by its toolCallId is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Burst {
    Typing { next_index: u64 },
    Ended,
}

/// The bursts whose events carry no toolCallId.
#[derive(Debug, Default)]
struct Unnamed {
    open: usize,
    /// The next messageIndex of the one open burst; `None` once several overlapped.
    next_index: Option<u64>,
}

/// Every burst the server ran, by toolCallId.
#[derive(Debug, Default)]
pub(super) struct Bursts {
    named: HashMap<String, Burst>,
    unnamed: Unnamed,
    /// HUMA-LC-001 each time an event's place in a burst was judged.
    exercised: Exercised,
}

impl Bursts {
    /// Follows one `messaging` event of the server's.
    pub(super) fn on_messaging(&mut self, event: &Value, out: &mut Vec<Violation>) {
        let kind = event.get("event").and_then(Value::as_str).unwrap_or("");
        let index = || validate::message_index(event.get("messageIndex"));
        // A typing_start opens a burst wherever it comes; a message_sent or typing_end is
        // judged against the burst it belongs to, in or out of order.
        if matches!(kind, "message_sent" | "typing_end") {
            self.exercised.hit(HUMA_LC_001);
        }
        let why = match event.get("toolCallId").and_then(Value::as_str) {
            Some(id) => self.named(id, kind, index),
            None => self.unnamed(kind, index),
        };
        if let Some(why) = why {
            out.push(Violation::new(HUMA_LC_001, why));
        }
    }

    /// Moves the rules judged since last asked into `into`.
    pub(super) fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
    }

    fn named(&mut self, id: &str, kind: &str, index: impl Fn() -> Option<u64>) -> Option<String> {
        let state = self.named.get(id).copied();
        match (kind, state) {
            ("typing_start", _) if self.named.len() < MAX_TRACKED || state.is_some() => {
                self.named
                    .insert(id.to_owned(), Burst::Typing { next_index: 0 });
                None
            }
            ("message_sent", Some(Burst::Typing { next_index })) => {
                self.named.insert(
                    id.to_owned(),
                    Burst::Typing {
                        next_index: next_index + 1,
                    },
                );
                out_of_order(index(), next_index)
            }
            ("message_sent", _) => Some(OUTSIDE.into()),
            ("typing_end", Some(Burst::Typing { .. })) => {
                self.named.insert(id.to_owned(), Burst::Ended);
                None
            }
            ("typing_end", _) => Some(NO_START.into()),
            _ => None,
        }
    }

    fn unnamed(&mut self, kind: &str, index: impl Fn() -> Option<u64>) -> Option<String> {
        let u = &mut self.unnamed;
        match kind {
            "typing_start" => {
                u.next_index = (u.open == 0).then_some(0);
                u.open = u.open.saturating_add(1);
                None
            }
            "message_sent" if u.open == 0 => Some(OUTSIDE.into()),
            "message_sent" => {
                let next = u.next_index?;
                u.next_index = Some(next + 1);
                out_of_order(index(), next)
            }
            "typing_end" if u.open == 0 => Some(NO_START.into()),
            "typing_end" => {
                u.open -= 1;
                None
            }
            _ => None,
        }
    }
}

const OUTSIDE: &str = "message_sent outside a burst: no typing_start before it";
const NO_START: &str = "typing_end with no typing_start before it";

/// Why a message_sent with `index` is out of order when `next` was due.
fn out_of_order(index: Option<u64>, next: u64) -> Option<String> {
    (index != Some(next)).then(|| {
        format!(
            "message_sent has messageIndex {}; {next} was next",
            index.map_or("none".to_owned(), |i| i.to_string())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn judge(events: &[Value]) -> Vec<String> {
        let mut bursts = Bursts::default();
        let mut out = Vec::new();
        for e in events {
            bursts.on_messaging(e, &mut out);
        }
        out.into_iter().map(|v| v.message).collect()
    }

    fn start() -> Value {
        json!({"type": "messaging", "event": "typing_start"})
    }
    fn sent(i: u64) -> Value {
        json!({"type": "messaging", "event": "message_sent", "messageIndex": i})
    }
    fn end() -> Value {
        json!({"type": "messaging", "event": "typing_end", "reason": "canceled"})
    }
    fn named(mut e: Value, id: &str) -> Value {
        e["toolCallId"] = json!(id);
        e
    }

    #[test]
    fn a_burst_runs_start_messages_in_order_end() {
        assert!(judge(&[start(), sent(0), sent(1), end()]).is_empty());
        assert_eq!(
            judge(&[start(), sent(1)]),
            ["message_sent has messageIndex 1; 0 was next"]
        );
        assert_eq!(judge(&[end()]), [NO_START]);
        assert_eq!(judge(&[sent(0)]), [OUTSIDE]);
        assert_eq!(judge(&[start(), end(), end()]), [NO_START]);
    }

    /// Two bursts without a toolCallId that overlap (a new triggering event started one before
    /// the last was cancelled: found by the fuzzer against the `messaging-without-call-id`
    /// variant) end twice; neither end is out of place.
    #[test]
    fn overlapping_unnamed_bursts_end_once_each() {
        let events = [start(), sent(0), start(), sent(0), end(), end()];
        assert!(judge(&events).is_empty());
        // Once both ended, a third end has nothing to end.
        let mut more = events.to_vec();
        more.push(end());
        assert_eq!(judge(&more), [NO_START]);
        // And a burst alone after them is judged in full again.
        let mut alone = events.to_vec();
        alone.extend([start(), sent(1)]);
        assert_eq!(
            judge(&alone),
            ["message_sent has messageIndex 1; 0 was next"]
        );
    }

    #[test]
    fn named_bursts_are_followed_each_on_its_own() {
        let events = [
            named(start(), "a"),
            named(sent(0), "a"),
            named(start(), "b"),
            named(sent(0), "b"),
            named(end(), "a"),
            named(sent(1), "b"),
            named(end(), "b"),
        ];
        assert!(judge(&events).is_empty());
        assert_eq!(judge(&[named(start(), "a"), named(end(), "b")]), [NO_START]);
    }
}
