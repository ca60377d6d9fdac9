//! Text streams: a TEXT_MESSAGE_PART or TEXT_MESSAGE_END names a message its sender began with
//! a TEXT_MESSAGE_START and has not ended (HAIP-TEXT-001). One naming a message the peer began
//! with a start broken on purpose relays it (`echoes.rs`) and is not judged here.

use super::echoes::Begun;
use super::{side, HaipChecker};
use crate::protocol::haip::facts::Facts;
use crate::rules::ids::HAIP_TEXT_001;
use crate::rules::Violation;
use crate::transcript::Direction;

impl HaipChecker {
    pub(super) fn check_texts(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
        let Some(id) = f.message_id else {
            return;
        };
        let open_texts = &mut self.senders[side(from)].open_texts;
        let open = match ty {
            "TEXT_MESSAGE_START" => {
                open_texts.insert(id.to_owned());
                return;
            }
            "TEXT_MESSAGE_PART" => open_texts.contains(id),
            "TEXT_MESSAGE_END" => open_texts.remove(id),
            _ => return,
        };
        self.exercised.hit(HAIP_TEXT_001);
        if !open && !self.continues_broken(from, Begun::Text, id) {
            out.push(Violation::new(
                HAIP_TEXT_001,
                format!("{ty} names message {id}, which no open TEXT_MESSAGE_START began"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    #[test]
    fn parts_and_end_follow_their_start() {
        let mut talk = Talk::open();
        let id = uuid();
        let start = json!({"message_id": id, "author": "agent", "text": ""});
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_START", start), NONE);
        let part = json!({"message_id": id, "text": "hel"});
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_PART", part.clone()), NONE);
        let end = json!({"message_id": id});
        assert_eq!(talk.send(Server, "TEXT_MESSAGE_END", end.clone()), NONE);
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_PART", part),
            ["HAIP-TEXT-001"]
        );
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_END", end),
            ["HAIP-TEXT-001"]
        );
    }

    #[test]
    fn each_side_ends_only_its_own_messages() {
        let mut talk = Talk::open();
        let id = uuid();
        let start = json!({"message_id": id, "author": "user", "text": "hi"});
        assert_eq!(talk.send(Client, "TEXT_MESSAGE_START", start), NONE);
        assert_eq!(
            talk.send(Server, "TEXT_MESSAGE_END", json!({"message_id": id})),
            ["HAIP-TEXT-001"]
        );
    }
}
