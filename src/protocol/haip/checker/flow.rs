//! Flow control: credit a sender has on a channel, from what its peer's HAI announced plus
//! each FLOW_UPDATE, spent by every message that consumes it (HAIP-FLOW-001); nothing on a
//! channel the peer paused (HAIP-FLOW-003).

use super::{side, HaipChecker};
use crate::protocol::haip::facts::{Facts, HaiFacts};
use crate::protocol::haip::model;
use crate::rules::ids::{HAIP_FLOW_001, HAIP_FLOW_003};
use crate::rules::Violation;
use crate::transcript::Direction;
use foldhash::HashMap;

/// How long after a PAUSE_CHANNEL an in-flight message from the peer is still forgiven, when
/// the peer's `ack` does not prove it had seen the pause.
const PAUSE_GRACE_MS: u64 = 250;

/// Channels whose credit and pauses are followed per sender, at most. HAIP lets a channel be
/// any identifier; an implementation uses a handful. A target naming ever new channels must
/// not grow the checker without bound: a channel past this many is not followed (its credit
/// and pauses go unjudged), which no real session comes near.
pub(super) const MAX_CHANNELS: usize = 1024;

/// Credit one side still has on one channel (signed: a violation drives it below zero).
#[derive(Debug, Clone, Copy)]
pub(super) struct Credit {
    messages: Option<i64>,
    bytes: Option<i64>,
}

/// Messages and media bytes one side sent on one channel, whatever they were, and what its
/// peer's well-formed FLOW_UPDATEs granted there: the strictest reading of its credit.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Spent {
    messages: u64,
    bytes: u64,
    granted_messages: u64,
    granted_bytes: u64,
}

/// `channel`'s entry in `map`, made with `fresh` when it has none; `None` for a new channel past
/// [`MAX_CHANNELS`]. Looked up before inserting: most messages find their channel, and `entry`
/// would allocate its name for every one.
fn channel_entry<'m, V>(
    map: &'m mut HashMap<String, V>,
    channel: &str,
    fresh: impl FnOnce() -> V,
) -> Option<&'m mut V> {
    if !map.contains_key(channel) {
        if map.len() >= MAX_CHANNELS {
            return None;
        }
        map.insert(channel.to_owned(), fresh());
    }
    map.get_mut(channel)
}

/// A count a HAI announced, as credit.
fn as_credit(announced: Option<u64>) -> Option<i64> {
    announced.map(|v| v.min(i64::MAX as u64) as i64)
}

impl HaipChecker {
    pub(super) fn check_flow(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let me = side(from);
        let peer = 1 - me;
        let ty = f.ty;
        match (ty, f.payload_channel) {
            ("FLOW_UPDATE", Some(ch)) => {
                if self.well_formed {
                    self.strictest_grant(peer, ch, f);
                }
                let Some(credit) = self.credit_entry(peer, ch) else {
                    return;
                };
                if let (Some(m), Some(add)) = (credit.messages.as_mut(), f.add_messages) {
                    *m = m.saturating_add(add);
                }
                if let (Some(b), Some(add)) = (credit.bytes.as_mut(), f.add_bytes) {
                    *b = b.saturating_add(add);
                }
                return;
            }
            ("PAUSE_CHANNEL" | "RESUME_CHANNEL", _) if !self.well_formed => return,
            ("PAUSE_CHANNEL", Some(ch)) => {
                let pause = (f.seq.unwrap_or(u64::MAX), self.now_ms);
                if let Some(slot) = channel_entry(&mut self.senders[peer].paused, ch, || pause) {
                    *slot = pause;
                }
                return;
            }
            ("RESUME_CHANNEL", Some(ch)) => {
                self.senders[peer].paused.remove(ch);
                return;
            }
            _ => {}
        }
        if !model::consumes_credit(ty) {
            return;
        }
        let Some(channel) = f.channel else {
            return;
        };
        // A pause in force towards this sender: its message is held to it.
        if !self.senders[me].paused.is_empty() {
            self.exercised.hit(HAIP_FLOW_003);
        }
        if let Some(&(pause_seq, paused_at)) = self.senders[me].paused.get(channel) {
            let saw_pause = match f.ack {
                Some(ack) => ack >= pause_seq,
                None => self.now_ms >= paused_at + PAUSE_GRACE_MS,
            };
            if saw_pause {
                out.push(Violation::new(
                    HAIP_FLOW_003,
                    format!("sent {ty} on channel {channel:?} while the peer had it paused"),
                ));
            }
        }
        let bytes = if ty == "AUDIO_CHUNK" {
            f.media_bytes().unwrap_or(0)
        } else {
            0
        };
        let Some(credit) = self.credit_entry(me, channel) else {
            return;
        };
        // Credit the peer announced is spent by this message: the check runs.
        let counted = credit.messages.is_some() || (bytes > 0 && credit.bytes.is_some());
        // Every message past the credit breaks the rule, not only the first: each is one an
        // ERROR FLOW_CONTROL_VIOLATION may answer (HAIP-ERR-004 holds valid messages only).
        if let Some(m) = credit.messages.as_mut() {
            *m -= 1;
            if *m < 0 {
                out.push(Violation::new(
                    HAIP_FLOW_001,
                    format!("sent {ty} on channel {channel:?} with no message credit left"),
                ));
            }
        }
        if let Some(b) = credit.bytes.as_mut() {
            *b -= bytes as i64;
            if bytes > 0 && *b < 0 {
                out.push(Violation::new(
                    HAIP_FLOW_001,
                    format!(
                        "sent {bytes} media bytes on channel {channel:?} beyond the byte credit"
                    ),
                ));
            }
        }
        if counted {
            self.exercised.hit(HAIP_FLOW_001);
        }
    }

    /// A HAI resuming a session announces credit again. Whether that resets the credit left,
    /// and whether channels paused on the old connection stay paused, is open
    /// (suites/haip/ERRATA.md): the peer may use whichever credit is larger, and no pause binds.
    pub(super) fn readvertised(&mut self, advertiser: usize, hai: &HaiFacts) {
        self.senders[1 - advertiser].paused.clear();
        let widen = |left: &mut Option<i64>, announced: Option<u64>| {
            if let (Some(l), Some(a)) = (left.as_mut(), as_credit(announced)) {
                *l = (*l).max(a);
            }
        };
        for credit in self.senders[1 - advertiser].credit.values_mut() {
            widen(&mut credit.messages, hai.credit_messages);
            widen(&mut credit.bytes, hai.credit_bytes);
        }
    }

    /// Whether `sender`'s message (any message, valid or not) leaves it within its credit
    /// however its receiver counts. What consumes credit is open (suites/haip/ERRATA.md item
    /// 9), so under the strictest reading every message naming the channel takes one and its
    /// media bytes take byte credit, against what the peer announced first in the session
    /// (a resume's new announcement resets nothing) plus what its well-formed FLOW_UPDATEs
    /// granted. Credit the peer never announced, or a channel past [`MAX_CHANNELS`], is open.
    pub(super) fn within_strictest_credit(&mut self, sender: usize, f: &Facts<'_>) -> bool {
        let Some(channel) = f.channel else {
            return true;
        };
        let bytes = f.media_bytes().unwrap_or(0);
        let first = self.senders[1 - sender].first_announced;
        let Some(spent) = self.strictest_entry(sender, channel) else {
            return false;
        };
        spent.messages = spent.messages.saturating_add(1);
        spent.bytes = spent.bytes.saturating_add(bytes);
        let within = |announced: Option<u64>, granted: u64, spent: u64| {
            announced.is_some_and(|a| spent <= a.saturating_add(granted))
        };
        within(first.0, spent.granted_messages, spent.messages)
            && (bytes == 0 || within(first.1, spent.granted_bytes, spent.bytes))
    }

    /// A well-formed FLOW_UPDATE's grant, in the strictest reading.
    fn strictest_grant(&mut self, grantee: usize, channel: &str, f: &Facts<'_>) {
        let Some(spent) = self.strictest_entry(grantee, channel) else {
            return;
        };
        let positive = |add: Option<i64>| add.map_or(0, |a| a.max(0) as u64);
        spent.granted_messages = spent
            .granted_messages
            .saturating_add(positive(f.add_messages));
        spent.granted_bytes = spent.granted_bytes.saturating_add(positive(f.add_bytes));
    }

    /// What `sender` spent and was granted on `channel` in the strictest reading; `None` for a
    /// new channel past [`MAX_CHANNELS`].
    fn strictest_entry(&mut self, sender: usize, channel: &str) -> Option<&mut Spent> {
        channel_entry(
            &mut self.senders[sender].strictest_credit,
            channel,
            Spent::default,
        )
    }

    /// The credit `sender` has on `channel`, starting from what its peer announced; `None`
    /// for a new channel past [`MAX_CHANNELS`].
    fn credit_entry(&mut self, sender: usize, channel: &str) -> Option<&mut Credit> {
        let peer = 1 - sender;
        let (m, b) = self.senders[peer]
            .announced
            .as_ref()
            .map_or((None, None), |a| (a.credit_messages, a.credit_bytes));
        channel_entry(&mut self.senders[sender].credit, channel, || Credit {
            messages: as_credit(m),
            bytes: as_credit(b),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::{json, Value};

    fn credit(messages: u64) -> Value {
        json!({"capabilities": {"flow_control": {"initial_credit_messages": messages}}})
    }

    fn text() -> Value {
        json!({"message_id": uuid(), "author": "agent", "text": "hi"})
    }

    #[test]
    fn no_message_past_the_credit_until_more_is_granted() {
        let mut talk = Talk::open_with(credit(1), json!({}));
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", text()), NONE);
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_START", text()),
            ["HAIP-FLOW-001"]
        );
        let grant = json!({"channel": "AGENT", "add_messages": 2});
        assert_eq!(talk.send(Client, "FLOW_UPDATE", grant), NONE);
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", text()), NONE);
    }

    /// Each message past the credit breaks the rule, not only the first: an ERROR
    /// FLOW_CONTROL_VIOLATION may answer any of them.
    #[test]
    fn every_message_past_the_credit_breaks_it() {
        let mut talk = Talk::open_with(credit(1), json!({}));
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", text()), NONE);
        for _ in 0..3 {
            assert_eq!(
                talk.send(Server, "TEXT_MESSAGE_START", text()),
                ["HAIP-FLOW-001"]
            );
        }
    }

    /// A target naming a new channel in every message grows nothing past the bound.
    #[test]
    fn channels_followed_are_bounded() {
        let mut talk = Talk::open_with(credit(1_000_000), credit(1_000_000));
        for n in 0..super::MAX_CHANNELS + 50 {
            let channel = format!("C{n}");
            talk.send(Client, "PAUSE_CHANNEL", json!({"channel": channel}));
            talk.send(
                Client,
                "FLOW_UPDATE",
                json!({"channel": channel, "add_messages": 1}),
            );
            talk.send_with(
                Server,
                "TEXT_MESSAGE_START",
                text(),
                json!({"channel": channel}),
            );
        }
        let senders = &talk.checker().senders;
        // The server's maps reached the bound and stopped there.
        let most = |len: fn(&super::super::Sender) -> usize| senders.iter().map(len).max();
        assert_eq!(most(|s| s.credit.len()), Some(super::MAX_CHANNELS));
        assert_eq!(most(|s| s.paused.len()), Some(super::MAX_CHANNELS));
    }

    #[test]
    fn liveness_and_control_spend_no_credit() {
        let mut talk = Talk::open_with(credit(0), json!({}));
        assert_eq!(talk.send(Server, "PING", json!({"nonce": "a"})), NONE);
    }

    #[test]
    fn nothing_on_a_paused_channel_once_the_pause_was_seen() {
        let mut talk = Talk::open();
        assert_eq!(
            talk.send(Client, "PAUSE_CHANNEL", json!({"channel": "AGENT"})),
            NONE
        );
        // In flight: the server had not seen the pause yet.
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", text()), NONE);
        // Its ack shows it had.
        assert_eq!(
            talk.send_with(Server, "TEXT_MESSAGE_START", text(), json!({"ack": "2"})),
            ["HAIP-FLOW-003"]
        );
        talk.wait(1000);
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_START", text()),
            ["HAIP-FLOW-003"]
        );
        assert_eq!(
            talk.send(Client, "RESUME_CHANNEL", json!({"channel": "AGENT"})),
            NONE
        );
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", text()), NONE);
    }
}
