//! A message's envelope read in one pass: its fields borrowed from the input, and its payload
//! read straight as its type's struct when `type` came before it (as senders write it). A
//! payload that came first is skipped (`P`) and read once the type is known: from the tree
//! that still holds it, or by reading the text again ([`Reading`] with the type known).

use super::payloads::{Typed, TypedSeed};
use super::read::AnyStr;
use serde::de::{DeserializeSeed, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A message as read: each envelope field, `None` while absent (a `null` is refused, as the
/// schema refuses it), and the payload. Read in place ([`Reading`]): the struct is a few
/// hundred bytes, and handing it back by value through the reader's layers copied it four times
/// (7% of `check haip`).
pub(super) struct Message<'a, P> {
    pub(super) id: Option<&'a str>,
    pub(super) session: Option<&'a str>,
    pub(super) seq: Option<&'a str>,
    pub(super) ack: Option<&'a str>,
    pub(super) ts: Option<&'a str>,
    pub(super) channel: Option<&'a str>,
    pub(super) ty: Option<&'a str>,
    pub(super) pv: Option<u64>,
    pub(super) crit: Option<bool>,
    pub(super) bin_len: Option<u64>,
    pub(super) bin_mime: Option<AnyStr<'a>>,
    pub(super) run_id: Option<&'a str>,
    pub(super) thread_id: Option<AnyStr<'a>>,
    pub(super) body: Option<Body<'a, P>>,
}

impl<P> Default for Message<'_, P> {
    fn default() -> Self {
        Message {
            id: None,
            session: None,
            seq: None,
            ack: None,
            ts: None,
            channel: None,
            ty: None,
            pv: None,
            crit: None,
            bin_len: None,
            bin_mime: None,
            run_id: None,
            thread_id: None,
            body: None,
        }
    }
}

/// The payload as read with the envelope.
pub(super) enum Body<'a, P> {
    /// Read as the struct of the type named before it.
    Typed(Typed<'a>),
    /// It came before `type`: to be read again from `P`.
    Later(P),
}

const FIELDS: &[&str] = &[
    "id",
    "session",
    "seq",
    "ack",
    "ts",
    "channel",
    "type",
    "payload",
    "pv",
    "crit",
    "bin_len",
    "bin_mime",
    "run_id",
    "thread_id",
];

/// Reads a whole message into `out`: an object (an array of the fields' values is no message)
/// with only the envelope's fields, each at most once. Which fields are required is not
/// checked here: a field absent stays `None`, and `judge` refuses a message missing one. With `known`, the message is read again
/// once its type is known (its payload came before `type` the first time): the payload is read
/// as that type's struct wherever it stands, and the type read this time must be the one given.
pub(super) struct Reading<'m, 'a, P> {
    pub(super) known: Option<&'a str>,
    pub(super) out: &'m mut Message<'a, P>,
}

impl<'de, P: Deserialize<'de>> DeserializeSeed<'de> for Reading<'_, 'de, P> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// Puts the first value of a field; a second is an error (the schema would see only one).
fn once<T, E: serde::de::Error>(
    slot: &mut Option<T>,
    value: T,
    name: &'static str,
) -> Result<(), E> {
    match slot.replace(value) {
        Some(_) => Err(E::duplicate_field(name)),
        None => Ok(()),
    }
}

impl<'de, P: Deserialize<'de>> Visitor<'de> for Reading<'_, 'de, P> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a HAIP message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let m = self.out;
        // A key is borrowed: one written with an escape is an error, and the schema judges
        // that message.
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "id" => once(&mut m.id, map.next_value()?, "id")?,
                "session" => once(&mut m.session, map.next_value()?, "session")?,
                "seq" => once(&mut m.seq, map.next_value()?, "seq")?,
                "ack" => once(&mut m.ack, map.next_value()?, "ack")?,
                "ts" => once(&mut m.ts, map.next_value()?, "ts")?,
                "channel" => once(&mut m.channel, map.next_value()?, "channel")?,
                "type" => once(&mut m.ty, map.next_value()?, "type")?,
                "pv" => once(&mut m.pv, map.next_value()?, "pv")?,
                "crit" => once(&mut m.crit, map.next_value()?, "crit")?,
                "bin_len" => once(&mut m.bin_len, map.next_value()?, "bin_len")?,
                "bin_mime" => once(&mut m.bin_mime, map.next_value()?, "bin_mime")?,
                "run_id" => once(&mut m.run_id, map.next_value()?, "run_id")?,
                "thread_id" => once(&mut m.thread_id, map.next_value()?, "thread_id")?,
                "payload" => {
                    let read = match m.ty.or(self.known) {
                        Some(t) => Body::Typed(map.next_value_seed(TypedSeed(t))?),
                        None => Body::Later(map.next_value()?),
                    };
                    once(&mut m.body, read, "payload")?;
                }
                other => return Err(A::Error::unknown_field(other, FIELDS)),
            }
        }
        if self.known.is_some_and(|known| m.ty != Some(known)) {
            return Err(A::Error::custom("the type is not the one read before"));
        }
        Ok(())
    }
}
