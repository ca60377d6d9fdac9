//! A message's envelope read in one pass: its fields borrowed from the input, and its payload
//! read straight as its type's struct when `type` came before it (as senders write it). A
//! payload that came first is skipped (`P`) and read once the type is known: from the tree
//! that still holds it, or by reading the text again ([`OfType`]).

use super::payloads::{Typed, TypedSeed};
use super::read::AnyStr;
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::marker::PhantomData;

/// The envelope's fields but the payload; an optional one is `None` when absent (a `null` is
/// refused, as the schema refuses it).
pub(super) struct Head<'a> {
    pub(super) id: &'a str,
    pub(super) session: &'a str,
    pub(super) seq: &'a str,
    pub(super) ack: Option<&'a str>,
    pub(super) ts: &'a str,
    pub(super) channel: &'a str,
    pub(super) ty: &'a str,
    pub(super) pv: Option<u64>,
    pub(super) crit: Option<bool>,
    pub(super) bin_len: Option<u64>,
    pub(super) bin_mime: Option<AnyStr<'a>>,
    pub(super) run_id: Option<&'a str>,
    pub(super) thread_id: Option<AnyStr<'a>>,
}

/// The payload as read with the envelope.
pub(super) enum Body<'a, P> {
    /// Read as the struct of the type named before it.
    Typed(Typed<'a>),
    /// It came before `type`: to be read again from `P`.
    Later(P),
}

/// A whole message: an object with exactly the envelope's fields, each at most once.
pub(super) struct Message<'a, P> {
    pub(super) head: Head<'a>,
    pub(super) body: Body<'a, P>,
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

impl<'de, P: Deserialize<'de>> Deserialize<'de> for Message<'de, P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A map only: an array of the fields' values is no message.
        d.deserialize_map(Fields {
            known: None,
            later: PhantomData,
        })
    }
}

/// A message read again once its type is known (its payload came before `type` the first
/// time): the payload is read as that type's struct wherever it stands. The type read this
/// time must be the one given.
pub(super) struct OfType<'a>(pub(super) &'a str);

impl<'de> DeserializeSeed<'de> for OfType<'de> {
    type Value = Message<'de, IgnoredAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(Fields {
            known: Some(self.0),
            later: PhantomData,
        })
    }
}

struct Fields<'a, P> {
    /// The message's type, when it is known before reading it.
    known: Option<&'a str>,
    later: PhantomData<P>,
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

impl<'de, P: Deserialize<'de>> Visitor<'de> for Fields<'de, P> {
    type Value = Message<'de, P>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a HAIP message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut id, mut session, mut seq, mut ack, mut ts) = (None, None, None, None, None);
        let (mut channel, mut ty, mut pv, mut crit, mut bin_len) = (None, None, None, None, None);
        let (mut bin_mime, mut run_id, mut thread_id, mut body) = (None, None, None, None);
        // A key is borrowed: one written with an escape is an error, and the schema judges
        // that message.
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "id" => once(&mut id, map.next_value()?, "id")?,
                "session" => once(&mut session, map.next_value()?, "session")?,
                "seq" => once(&mut seq, map.next_value()?, "seq")?,
                "ack" => once(&mut ack, map.next_value()?, "ack")?,
                "ts" => once(&mut ts, map.next_value()?, "ts")?,
                "channel" => once(&mut channel, map.next_value()?, "channel")?,
                "type" => once(&mut ty, map.next_value()?, "type")?,
                "pv" => once(&mut pv, map.next_value()?, "pv")?,
                "crit" => once(&mut crit, map.next_value()?, "crit")?,
                "bin_len" => once(&mut bin_len, map.next_value()?, "bin_len")?,
                "bin_mime" => once(&mut bin_mime, map.next_value()?, "bin_mime")?,
                "run_id" => once(&mut run_id, map.next_value()?, "run_id")?,
                "thread_id" => once(&mut thread_id, map.next_value()?, "thread_id")?,
                "payload" => {
                    let read = match ty.or(self.known) {
                        Some(t) => Body::Typed(map.next_value_seed(TypedSeed(t))?),
                        None => Body::Later(map.next_value()?),
                    };
                    once(&mut body, read, "payload")?;
                }
                other => return Err(A::Error::unknown_field(other, FIELDS)),
            }
        }
        if self.known.is_some_and(|known| ty != Some(known)) {
            return Err(A::Error::custom("the type is not the one read before"));
        }
        let head = Head {
            id: id.ok_or_else(|| A::Error::missing_field("id"))?,
            session: session.ok_or_else(|| A::Error::missing_field("session"))?,
            seq: seq.ok_or_else(|| A::Error::missing_field("seq"))?,
            ack,
            ts: ts.ok_or_else(|| A::Error::missing_field("ts"))?,
            channel: channel.ok_or_else(|| A::Error::missing_field("channel"))?,
            ty: ty.ok_or_else(|| A::Error::missing_field("type"))?,
            pv,
            crit,
            bin_len,
            bin_mime,
            run_id,
            thread_id,
        };
        let body = body.ok_or_else(|| A::Error::missing_field("payload"))?;
        Ok(Message { head, body })
    }
}
