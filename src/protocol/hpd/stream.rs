//! The SSE stream's ids: strictly increasing along one stream (HPD-SSE-001), and a resumed
//! stream that delivers exactly what came after the id it resumed from (HPD-SSE-002).

use crate::protocol::EventRef;
use crate::rules::ids::{HPD_SSE_001, HPD_SSE_002};
use crate::rules::{Exercised, Violation};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;

/// Events remembered for comparing a replay with what was first received.
const REMEMBERED: usize = 2048;

/// What the resumed stream must deliver before anything new.
#[derive(Debug)]
struct Replay {
    after: u64,
    /// The events seen earlier with ids after `after`, in order.
    expected: VecDeque<(u64, Arc<Value>)>,
    /// The highest id seen before the resume: an id above it is a new event.
    seen_up_to: u64,
}

/// Id bookkeeping over every stream of a transcript.
#[derive(Debug, Default)]
pub struct StreamIds {
    /// The last numeric id on the current stream.
    last: Option<u64>,
    /// The transcript's own events, shared: a copy of each was 3% of fuzzing HPD.
    seen: VecDeque<(u64, Arc<Value>)>,
    max_seen: Option<u64>,
    replay: Option<Replay>,
    /// The rules the ids were held to since the checker last asked.
    pub exercised: Exercised,
}

impl StreamIds {
    /// A new stream from the live end (a new connection, or a stream reopened without a
    /// resume point).
    pub fn live(&mut self) {
        self.last = None;
        self.replay = None;
    }

    /// A new stream resumed after `after`.
    pub fn resumed(&mut self, after: &str) {
        self.live();
        let Ok(after) = after.trim().parse::<u64>() else {
            return;
        };
        let expected = self
            .seen
            .iter()
            .filter(|(id, _)| *id > after)
            .cloned()
            .collect();
        self.replay = Some(Replay {
            after,
            expected,
            seen_up_to: self.max_seen.unwrap_or(0),
        });
    }

    /// Checks one event's id (`event` is the envelope as the target sent it: its SSE fields
    /// are not part of it); true when the event is one already judged (a replay or a repeat),
    /// so the lifecycle must not see it a second time.
    pub fn observe(&mut self, id: &str, event: EventRef<'_>, out: &mut Vec<Violation>) -> bool {
        let Ok(id) = id.trim().parse::<u64>() else {
            return false;
        };
        // An id is held to increasing where an earlier one on this stream is there to compare.
        if self.last.is_some() {
            self.exercised.hit(HPD_SSE_001);
        }
        if let Some(last) = self.last.filter(|last| id <= *last) {
            out.push(Violation::new(
                HPD_SSE_001,
                format!("SSE id {id} follows id {last} on the same stream"),
            ));
        }
        self.last = Some(id);
        if let Some(replay) = &mut self.replay {
            // Each id of a resumed stream is judged against what the resume owes, until
            // something new arrives.
            self.exercised.hit(HPD_SSE_002);
            if id <= replay.after {
                out.push(Violation::new(
                    HPD_SSE_002,
                    format!(
                        "the stream resumed after id {} delivers id {id} again",
                        replay.after
                    ),
                ));
                return true;
            }
            if id <= replay.seen_up_to {
                let mut missed = Vec::new();
                while replay.expected.front().is_some_and(|(e, _)| *e < id) {
                    if let Some((e, _)) = replay.expected.pop_front() {
                        missed.push(e);
                    }
                }
                report_missed(replay.after, &missed, out);
                if let Some((_, first)) = replay.expected.front().filter(|(e, _)| *e == id) {
                    if **first != *event.value() {
                        out.push(Violation::new(
                            HPD_SSE_002,
                            format!("the resumed stream's event {id} differs from the one first delivered"),
                        ));
                    }
                    replay.expected.pop_front();
                }
                return true;
            }
            let missed: Vec<u64> = replay.expected.drain(..).map(|(e, _)| e).collect();
            report_missed(replay.after, &missed, out);
            self.replay = None;
        } else if self.max_seen.is_some_and(|m| id <= m) {
            // A stream that starts again from old events unasked: an event seen before is
            // not judged twice (an id out of order, with an event not seen, is judged).
            if self
                .seen
                .iter()
                .any(|(e, v)| *e == id && **v == *event.value())
            {
                return true;
            }
        }
        crate::protocol::recent::push_bounded(&mut self.seen, (id, event.kept()), REMEMBERED);
        self.max_seen = Some(self.max_seen.map_or(id, |m| m.max(id)));
        false
    }
}

fn report_missed(after: u64, missed: &[u64], out: &mut Vec<Violation>) {
    if let Some(first) = missed.first() {
        out.push(Violation::new(
            HPD_SSE_002,
            format!(
                "the stream resumed after id {after} skips {} event(s) it had delivered, from id {first}",
                missed.len()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(n: u64) -> Arc<Value> {
        Arc::new(json!({"type": "TEXT_DELTA", "n": n}))
    }

    fn run(ids: &[u64], resume_after: u64, replayed: &[u64]) -> Vec<&'static str> {
        let mut s = StreamIds::default();
        let mut out = Vec::new();
        for id in ids {
            s.observe(&id.to_string(), (&ev(*id)).into(), &mut out);
        }
        s.resumed(&resume_after.to_string());
        for id in replayed {
            s.observe(&id.to_string(), (&ev(*id)).into(), &mut out);
        }
        out.iter().map(|v| v.rule).collect()
    }

    #[test]
    fn an_exact_resume_breaks_nothing() {
        assert!(run(&[1, 2, 3, 4], 2, &[3, 4, 5]).is_empty());
        assert!(run(&[10, 17, 24], 10, &[17, 24]).is_empty());
    }

    #[test]
    fn repeats_gaps_and_reordering_are_seen() {
        assert_eq!(
            run(&[1, 2, 3], 2, &[1, 2, 3]),
            ["HPD-SSE-002", "HPD-SSE-002"]
        );
        assert_eq!(run(&[1, 2, 3, 4], 1, &[3, 4]), ["HPD-SSE-002"]);
        assert_eq!(run(&[1, 2, 2], 9, &[]), ["HPD-SSE-001"]);
    }
}
