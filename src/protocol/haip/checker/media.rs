//! Media framing: an envelope announcing `bin_len` is followed by exactly that binary frame and
//! carries no `payload.data` (HAIP-MEDIA-001), Base64 mode carries valid Base64 and no
//! `bin_mime` (HAIP-MEDIA-002), and binary mode goes only to a peer that advertised
//! `binary_frames` (HAIP-MEDIA-003).

use super::{side, HaipChecker};
use crate::protocol::haip::facts::{Data, Facts};
use crate::rules::ids::{HAIP_MEDIA_001, HAIP_MEDIA_002, HAIP_MEDIA_003};
use crate::rules::Violation;
use crate::transcript::Direction;

impl HaipChecker {
    /// A message where the binary frame an envelope announced was owed.
    pub(super) fn binary_not_sent(
        &mut self,
        from: Direction,
        f: &Facts<'_>,
        out: &mut Vec<Violation>,
    ) {
        if let Some(owed) = self.senders[side(from)].owed_binary.take() {
            out.push(Violation::new(
                HAIP_MEDIA_001,
                format!(
                    "an envelope announced bin_len {owed} but a {} event followed instead of a binary frame",
                    f.ty
                ),
            ));
        }
    }

    /// A binary frame: the one an envelope announced, of its length, or broken.
    pub(super) fn on_binary(&mut self, from: Direction, len: usize, out: &mut Vec<Violation>) {
        let announced = self.senders[side(from)].owed_binary.take();
        self.exercised.hit(HAIP_MEDIA_001);
        let fits = announced == Some(len as u64);
        // An announced frame of the wrong length, or one nothing announced, is broken input
        // an ERROR may answer; the frame an envelope announced is not.
        if from == Direction::Client {
            match fits {
                true => self.client_broken = false,
                false => self.client_broke(),
            }
        }
        match announced {
            Some(_) if fits => {}
            Some(owed) => out.push(Violation::new(
                HAIP_MEDIA_001,
                format!("binary frame of {len} bytes after an envelope announcing bin_len {owed}"),
            )),
            None => out.push(Violation::new(
                HAIP_MEDIA_001,
                format!("binary frame of {len} bytes with no envelope announcing it"),
            )),
        }
    }

    /// The media modes of a message.
    pub(super) fn check_media(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        if let Some(len) = f.bin_len {
            self.exercised.hit(HAIP_MEDIA_001);
            self.exercised.hit(HAIP_MEDIA_003);
            if f.data != Data::Absent {
                out.push(Violation::new(
                    HAIP_MEDIA_001,
                    "a binary-mode envelope (bin_len) contains payload.data",
                ));
            }
            let peer_binary = self.senders[1 - side(from)]
                .announced
                .as_ref()
                .is_some_and(|a| a.binary_frames);
            if !peer_binary {
                out.push(Violation::new(
                    HAIP_MEDIA_003,
                    "used the two-frame binary mode towards a peer that did not advertise binary_frames",
                ));
            }
            self.senders[side(from)].owed_binary = Some(len);
        } else if f.data != Data::Absent {
            self.exercised.hit(HAIP_MEDIA_002);
            if f.has_bin_mime {
                out.push(Violation::new(
                    HAIP_MEDIA_002,
                    "a Base64-mode message (payload.data) carries bin_mime",
                ));
            }
            if matches!(f.data, Data::Text(_)) && f.media_bytes().is_none() {
                out.push(Violation::new(
                    HAIP_MEDIA_002,
                    "payload.data is not valid Base64",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::{json, Value};

    fn chunk(data: Option<&str>) -> Value {
        let mut payload = json!({"message_id": uuid(), "mime": "audio/pcm"});
        if let Some(data) = data {
            payload["data"] = json!(data);
        }
        payload
    }

    fn binary_peer() -> Talk {
        Talk::open_with(json!({"capabilities": {"binary_frames": true}}), json!({}))
    }

    #[test]
    fn an_announced_frame_follows_its_envelope() {
        let mut talk = binary_peer();
        let envelope = json!({"bin_len": 4, "bin_mime": "audio/pcm"});
        assert_eq!(
            talk.send_with(Server, "AUDIO_CHUNK", chunk(None), envelope.clone()),
            NONE
        );
        assert_eq!(talk.binary(Server, 4), NONE);
        talk.send_with(Server, "AUDIO_CHUNK", chunk(None), envelope.clone());
        assert_eq!(talk.binary(Server, 3), ["HAIP-MEDIA-001"]);
        talk.send_with(Server, "AUDIO_CHUNK", chunk(None), envelope);
        assert_eq!(
            talk.send(Server, "PING", json!({"nonce": "x"})),
            ["HAIP-MEDIA-001"]
        );
        assert_eq!(talk.binary(Server, 4), ["HAIP-MEDIA-001"]);
    }

    #[test]
    fn binary_mode_only_to_a_peer_that_takes_it() {
        let mut talk = Talk::open();
        let envelope = json!({"bin_len": 2, "bin_mime": "audio/pcm"});
        assert_eq!(
            talk.send_with(Server, "AUDIO_CHUNK", chunk(None), envelope),
            ["HAIP-MEDIA-003"]
        );
    }

    #[test]
    fn base64_mode_carries_base64_and_no_bin_mime() {
        let mut talk = Talk::open();
        assert_eq!(talk.send(Server, "AUDIO_CHUNK", chunk(Some("AAEC"))), NONE);
        // The schema's contentEncoding (HAIP-MEDIA-004) finds it too.
        assert_eq!(
            talk.send(Server, "AUDIO_CHUNK", chunk(Some("not base64!"))),
            ["HAIP-MEDIA-004", "HAIP-MEDIA-002"]
        );
        let found = talk.send_with(
            Server,
            "AUDIO_CHUNK",
            chunk(Some("AAEC")),
            json!({"bin_mime": "audio/pcm"}),
        );
        assert_eq!(found, ["HAIP-MEDIA-002"]);
    }

    #[test]
    fn a_broken_binary_frame_of_the_client_is_broken_input() {
        let mut talk = Talk::open();
        talk.binary(Client, 9);
        assert!(talk.client_input_broken());
    }
}
