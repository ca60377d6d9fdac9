//! Readers the fast path deserialises fields with: each refuses what the schema refuses for
//! the field (a `null` where a value must be, an array where an object must be) and borrows
//! from the input where it can.

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;

/// A field that may be absent; when present it must deserialise as `T` (`null` is refused,
/// as the schema refuses it).
#[derive(Debug, Default)]
pub(super) enum Opt<T> {
    #[default]
    Absent,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Opt<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Opt::Present)
    }
}

impl<T> Opt<T> {
    pub(super) fn get(self) -> Option<T> {
        match self {
            Opt::Absent => None,
            Opt::Present(t) => Some(t),
        }
    }

    pub(super) fn is_present(&self) -> bool {
        matches!(self, Opt::Present(_))
    }
}

/// A string whose value is seldom needed (escapes allowed), borrowed from the input when it
/// holds no escape. (serde's own `Cow` is always copied, so every message's text was copied
/// just to be checked for presence.)
#[derive(Debug)]
pub(super) struct AnyStr<'a>(Cow<'a, str>);

impl std::ops::Deref for AnyStr<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for AnyStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(s))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(s))
            }
        }
        d.deserialize_str(Text).map(AnyStr)
    }
}

/// Reads `T` from a JSON object only: serde's derived structs also take an array of their
/// fields' values in order, which the schema refuses (`["<id>", …, {}]` is no message).
pub(super) struct Object<T>(pub(super) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Object)
    }
}

/// A deserializer that reads a map whatever it is asked for.
pub(super) struct MapOnly<D>(pub(super) D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// Whether a JSON value is an object, its contents skipped (a field only the schema's `type`
/// constrains, whatever the source).
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) object: bool,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Kind;
        impl<'de> Visitor<'de> for Kind {
            type Value = bool;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(true)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(false)
            }
            fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_str<E>(self, _: &str) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_unit<E>(self) -> Result<bool, E> {
                Ok(false)
            }
        }
        d.deserialize_any(Kind).map(|object| Shape { object })
    }
}
