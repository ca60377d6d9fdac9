//! Sequence numbers and acknowledgements: `seq` starts at "1" and goes up by one per message
//! in a session (HAIP-SEQ-001), `ack` never passes what the peer sent nor goes back
//! (HAIP-SEQ-002). A resent message is told apart from a new one here.

use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::rules::Violation;
use crate::transcript::Direction;

/// Most skipped seqs remembered per side (a jump wider than this is not tracked).
const MAX_TRACKED_GAP: u64 = 4096;

/// Most recent numbers remembered of messages the peer rejected, and of PINGs resent under a
/// number already used.
const MAX_REMEMBERED: usize = 64;

/// What a message's number makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Numbered {
    /// A message sent for the first time (or one with no readable number).
    New,
    /// A message filling a gap a jump left: new, but first sent before the ones after it,
    /// with the ack it had then, so its ack is not held against the later ones.
    FillsGap,
    /// A message at or below the highest seq already sent: a resend, exempt from the
    /// lifecycle checks, which saw it the first time.
    Resent,
}

impl HaipChecker {
    /// Judges the message's `seq` and says what it makes of the message.
    pub(super) fn sequence(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) -> Numbered {
        if f.seq_unreadable {
            out.push(Violation::new(
                "HAIP-SEQ-001",
                "seq is not a decimal string, so it cannot start at \"1\" and go up by one",
            ));
        }
        let Some(seq) = f.seq else {
            return Numbered::New;
        };
        let me = side(from);
        let resuming = self.resuming;
        let sender = &mut self.senders[me];
        let mut numbered = Numbered::New;
        match sender.max_seq {
            None if seq != 1 && from == Direction::Server && resuming => {
                // A server answering a resume continues numbering we never saw; only a
                // fresh session must start at 1, which the client's HAI tells us.
                sender.max_seq = Some(seq);
            }
            None if seq != 1 => out.push(Violation::new(
                "HAIP-SEQ-001",
                format!("the session's first seq is \"{seq}\", not \"1\""),
            )),
            Some(max) if seq > max + 1 => {
                // A server answering a resume sends its HAI, a new message, before it
                // replays what the client missed: the HAI's number is past the gap.
                let resumed_hai = from == Direction::Server && resuming && f.hai.is_some();
                if !resumed_hai {
                    out.push(Violation::new(
                        "HAIP-SEQ-001",
                        format!("seq jumped from \"{max}\" to \"{seq}\""),
                    ));
                }
                if seq - max <= MAX_TRACKED_GAP {
                    sender.missing.extend(max + 1..seq);
                }
                while sender.missing.len() as u64 > MAX_TRACKED_GAP {
                    sender.missing.pop_first();
                }
            }
            Some(max) if seq <= max && sender.missing.remove(&seq) => numbered = Numbered::FillsGap,
            Some(max) if seq <= max && sender.rejected.remove(&seq) => {}
            Some(max) if seq <= max => {
                self.resent(me, f);
                return Numbered::Resent;
            }
            _ => {}
        }
        sender.max_seq = Some(sender.max_seq.map_or(seq, |m| m.max(seq)));
        // Only the target's rejections are seen (its ERROR); ours are not judged here.
        if !self.well_formed && from == Direction::Client {
            if sender.rejected.len() >= MAX_REMEMBERED {
                sender.rejected.pop_first();
            }
            sender.rejected.insert(seq);
        }
        numbered
    }

    /// A resend owes what its first sending owed: a media envelope its binary frame again; a
    /// PING resent under a number already used may be dropped as a duplicate, or taken if
    /// the first message with that number was rejected (suites/haip/ERRATA.md item 19), so
    /// its PONG is neither owed nor wrong.
    fn resent(&mut self, me: usize, f: &Facts<'_>) {
        if let Some(len) = f.bin_len {
            self.senders[me].owed_binary = Some(len);
        }
        if f.ty == "PING" {
            self.ping_may_be_answered(me, f.nonce);
        }
    }

    /// A PING of side `me`'s whose PONG the peer neither owes nor gets wrong: dropped as a
    /// duplicate or taken, or broken on purpose (answered, it is judged by the rules about
    /// broken input alone).
    pub(super) fn ping_may_be_answered(&mut self, me: usize, nonce: Option<&str>) {
        let maybe = &mut self.senders[1 - me].pings_maybe_dropped;
        crate::protocol::recent::push_bounded(maybe, nonce.map(str::to_owned), MAX_REMEMBERED);
    }

    /// Judges the message's `ack` (a message filling a gap is not held to it).
    pub(super) fn acknowledge(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        numbered: Numbered,
        out: &mut Vec<Violation>,
    ) {
        let Some(ack) = f.ack.filter(|_| numbered != Numbered::FillsGap) else {
            return;
        };
        let me = side(from);
        let peer_max = self.senders[1 - me].max_seq.unwrap_or(0);
        if ack > peer_max {
            out.push(Violation::new(
                "HAIP-SEQ-002",
                format!("ack \"{ack}\" is beyond the highest seq the peer sent (\"{peer_max}\")"),
            ));
        }
        let sender = &mut self.senders[me];
        if let Some(last) = sender.last_ack {
            if ack < last {
                out.push(Violation::new(
                    "HAIP-SEQ-002",
                    format!("ack went back from \"{last}\" to \"{ack}\""),
                ));
            }
        }
        sender.last_ack = Some(sender.last_ack.map_or(ack, |l| l.max(ack)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    fn ping() -> serde_json::Value {
        json!({"nonce": "n"})
    }

    #[test]
    fn numbering_starts_at_one_and_goes_up_by_one() {
        let mut talk = Talk::connected();
        let hai = json!({"haip_version": "1.1.2", "accept_major": [1], "accept_events": ["HAI"]});
        assert_eq!(
            talk.send_with(Client, "HAI", hai, json!({"seq": "2"})),
            ["HAIP-SEQ-001"]
        );
        let mut talk = Talk::open();
        assert_eq!(
            talk.send_with(Server, "PONG", ping(), json!({"seq": "5"})),
            ["HAIP-SEQ-001"]
        );
        // A seq that is no decimal string cannot keep the numbering (the schema says more).
        let found = talk.send_with(Server, "PONG", ping(), json!({"seq": "x6"}));
        assert!(found.contains(&"HAIP-SEQ-001"), "{found:?}");
    }

    #[test]
    fn a_resend_is_not_judged_again_and_a_gap_filled_late_is_new() {
        let mut talk = Talk::open();
        let run = json!({"run_id": uuid()});
        assert_eq!(
            talk.send_with(Server, "RUN_STARTED", json!({}), run.clone()),
            NONE
        );
        // The same message under the same seq: a resend, not a second start of the run.
        let resent = json!({"run_id": run["run_id"], "seq": "2"});
        assert_eq!(
            talk.send_with(Server, "RUN_STARTED", json!({}), resent),
            NONE
        );
        // The server skips 3 and 4, then fills 3: a new message, judged as one.
        assert_eq!(
            talk.send_with(Server, "PING", ping(), json!({"seq": "5"})),
            ["HAIP-SEQ-001"]
        );
        let unknown = json!({"message_id": uuid()});
        assert_eq!(
            talk.send_with(Server, "TEXT_MESSAGE_END", unknown, json!({"seq": "3"})),
            ["HAIP-TEXT-001"]
        );
    }

    #[test]
    fn an_ack_never_passes_what_the_peer_sent_nor_goes_back() {
        let mut talk = Talk::open();
        assert_eq!(
            talk.send_with(Server, "PING", ping(), json!({"ack": "1"})),
            NONE
        );
        assert_eq!(
            talk.send_with(Server, "PING", ping(), json!({"ack": "9"})),
            ["HAIP-SEQ-002"]
        );
        assert_eq!(
            talk.send_with(Server, "PING", ping(), json!({"ack": "0"})),
            ["HAIP-SEQ-002"]
        );
    }

    #[test]
    fn a_resuming_server_continues_its_numbering() {
        let mut talk = Talk::connected();
        let resume = json!({
            "haip_version": "1.1.2",
            "accept_major": [1],
            "accept_events": crate::protocol::haip::model::EVENT_TYPES,
            "last_rx_seq": "7",
        });
        assert_eq!(talk.send(Client, "HAI", resume.clone()), NONE);
        let mut hai = resume;
        hai.as_object_mut().map(|m| m.remove("last_rx_seq"));
        assert_eq!(
            talk.send_with(Server, "HAI", hai, json!({"seq": "8"})),
            NONE
        );
    }
}
