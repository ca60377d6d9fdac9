//! Sequence numbers and acknowledgements: `seq` starts at "1" and goes up by one per message
//! in a session (HAIP-SEQ-001), `ack` never passes what the peer sent nor goes back
//! (HAIP-SEQ-002). A resent message is told apart from a new one here.

use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::rules::ids::{HAIP_SEQ_001, HAIP_SEQ_002, HAIP_SEQ_011};
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

impl super::Sender {
    /// The side's ack may stop below `seq` for good (see [`HaipChecker::ack_keeps_up`]).
    fn unclean_from(&mut self, seq: u64) {
        self.first_unclean = Some(self.first_unclean.map_or(seq, |u| u.min(seq)));
    }
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
                HAIP_SEQ_001,
                "seq is not a decimal string, so it cannot start at \"1\" and go up by one",
            ));
        }
        let Some(seq) = f.seq else {
            return Numbered::New;
        };
        self.exercised.hit(HAIP_SEQ_001);
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
                HAIP_SEQ_001,
                format!("the session's first seq is \"{seq}\", not \"1\""),
            )),
            Some(max) if seq > max + 1 => {
                // A server answering a resume sends its HAI, a new message, before it
                // replays what the client missed: the HAI's number is past the gap.
                let resumed_hai = from == Direction::Server && resuming && f.hai.is_some();
                if !resumed_hai {
                    out.push(Violation::new(
                        HAIP_SEQ_001,
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
        let skipped = sender.missing.first().copied();
        let malformed = (!self.well_formed).then_some(seq);
        for unclean in [skipped, malformed].into_iter().flatten() {
            sender.unclean_from(unclean);
        }
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

    /// Side `from` sent an ERROR: it may have refused any message the peer sent so far, and
    /// whether a refused message counts toward its ack is left open, so the ack is no longer
    /// held to keeping up past what the peer had sent.
    pub(super) fn peer_refused_something(&mut self, from: Direction) {
        let peer = &mut self.senders[1 - side(from)];
        if let Some(max) = peer.max_seq {
            peer.unclean_from(max);
        }
    }

    /// Judges the ack of side `me`'s message answering the peer's message `answered`
    /// (HAIP-SEQ-011). The answer proves everything before `answered` arrived, when the peer
    /// skipped and broke nothing up to it and the connection is the session's first (after a
    /// drop, what reached the peer is unknown); whether `answered` itself is counted yet is
    /// left open, so the ack owes `answered - 1`.
    pub(super) fn ack_keeps_up(
        &mut self,
        me: usize,
        answered: Option<u64>,
        ack: Option<u64>,
        out: &mut Vec<Violation>,
    ) {
        let (Some(answered), Some(ack)) = (answered, ack) else {
            return;
        };
        let peer = &self.senders[1 - me];
        let clean = peer.first_unclean.is_none_or(|u| u > answered);
        let judged = clean && self.connections <= 1;
        if judged {
            self.exercised.hit(HAIP_SEQ_011);
        }
        if judged && ack + 1 < answered {
            out.push(Violation::new(
                HAIP_SEQ_011,
                format!(
                    "ack \"{ack}\" answers the peer's message seq \"{answered}\", received in order: a cumulative ack would be at least \"{}\"",
                    answered - 1
                ),
            ));
        }
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
        self.exercised.hit(HAIP_SEQ_002);
        if ack > peer_max {
            out.push(Violation::new(
                HAIP_SEQ_002,
                format!("ack \"{ack}\" is beyond the highest seq the peer sent (\"{peer_max}\")"),
            ));
        }
        let sender = &mut self.senders[me];
        if let Some(last) = sender.last_ack {
            if ack < last {
                out.push(Violation::new(
                    HAIP_SEQ_002,
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
    fn an_answer_acknowledges_what_came_before_the_message_it_answers() {
        let mut talk = Talk::open();
        let ping = |n: &str| json!({"nonce": n});
        // Client seq 2, 3, 4: PINGs. The PONG to seq 2 may ack 1 (2 not counted yet) or 2.
        talk.send(Client, "PING", ping("a"));
        talk.send(Client, "PING", ping("b"));
        talk.send(Client, "PING", ping("c"));
        let pong = |ack: &str| json!({"ack": ack});
        assert_eq!(talk.send_with(Server, "PONG", ping("a"), pong("1")), NONE);
        assert_eq!(talk.send_with(Server, "PONG", ping("b"), pong("3")), NONE);
        // An ack stuck where it was while seq 4 is answered: everything before 4 arrived.
        assert_eq!(
            talk.send_with(Server, "PONG", ping("c"), pong("3")),
            NONE,
            "acking N-1 leaves open whether N is counted yet"
        );
        talk.send(Client, "PING", ping("d"));
        talk.send(Client, "PING", ping("e"));
        assert_eq!(talk.send_with(Server, "PONG", ping("d"), pong("4")), NONE);
        assert_eq!(
            talk.send_with(Server, "PONG", ping("e"), pong("4")),
            ["HAIP-SEQ-011"]
        );
        // Without ack there is nothing to judge.
        talk.send(Client, "PING", ping("f"));
        let no_ack = json!({"ack": "$omit"});
        assert_eq!(talk.send_with(Server, "PONG", ping("f"), no_ack), NONE);
    }

    #[test]
    fn an_ack_may_stop_below_a_skipped_or_malformed_message_and_after_a_reconnection() {
        let ping = |n: &str| json!({"nonce": n});
        let pong = |ack: &str| json!({"ack": ack});
        // Client skips seq 2: its PING seq 3 may be answered with ack 1 for good.
        let mut talk = Talk::open();
        talk.send_with(Client, "PING", ping("x"), json!({"seq": "3"}));
        talk.send(Client, "PING", ping("y"));
        assert_eq!(talk.send_with(Server, "PONG", ping("x"), pong("1")), NONE);
        assert_eq!(talk.send_with(Server, "PONG", ping("y"), pong("1")), NONE);
        // A malformed message (seq 2) the receiver rejected need not be counted.
        let mut talk = Talk::open();
        talk.send_with(Client, "PING", ping("bad"), json!({"crit": true}));
        talk.send(Client, "PING", ping("z"));
        talk.send(Client, "PING", ping("w"));
        assert_eq!(talk.send_with(Server, "PONG", ping("w"), pong("1")), NONE);
        // A message the receiver refused with ERROR need not be counted either.
        let mut talk = Talk::open();
        talk.send(Client, "PING", ping("r"));
        let refused = json!({"code": "FLOW_CONTROL_VIOLATION", "message": "no credit"});
        talk.send(Server, "ERROR", refused);
        talk.send(Client, "PING", ping("s"));
        talk.send(Client, "PING", ping("t"));
        let found = talk.send_with(Server, "PONG", ping("t"), pong("1"));
        assert!(!found.contains(&"HAIP-SEQ-011"), "{found:?}");
        // After a reconnection, what reached the peer before the drop is unknown.
        let mut talk = Talk::open();
        talk.reconnect();
        talk.send(Client, "HAI", super::super::talk::hai_payload());
        talk.send(Client, "PING", ping("p"));
        talk.send(Client, "PING", ping("q"));
        let found = talk.send_with(Server, "PONG", ping("q"), pong("1"));
        assert!(!found.contains(&"HAIP-SEQ-011"), "{found:?}");
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
