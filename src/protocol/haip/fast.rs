//! The fast path of the checker: accepts the common shapes of valid HAIP messages straight
//! from their JSON text (`check`), or from the tree a live run already parsed them into, with
//! typed borrowed deserialisation and the schema's patterns checked by hand, and yields their
//! [`Facts`].
//!
//! It only ever *accepts*. Anything it is not sure of — an unknown or duplicate field, a
//! `null`, an escaped string it needs, a number in an unusual form, a HAI — returns `None`, and
//! the caller validates the message with the full schema instead. `tests/it/fast_path.rs` checks
//! that everything accepted here is valid under `envelope.schema.json` with the same facts.

use super::facts::{Data, Facts};
use super::model::{self, is_channel, is_uint64_str, is_uuid};
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// A field that may be absent; when present it must deserialise as `T` (`null` is refused,
/// as the schema refuses it).
#[derive(Debug, Default)]
enum Opt<T> {
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
    fn get(self) -> Option<T> {
        match self {
            Opt::Absent => None,
            Opt::Present(t) => Some(t),
        }
    }

    fn is_present(&self) -> bool {
        matches!(self, Opt::Present(_))
    }
}

/// A string whose value is seldom needed (escapes allowed), borrowed from the input when it
/// holds no escape. (serde's own `Cow` is always copied, so every message's text was copied
/// just to be checked for presence.)
#[derive(Debug)]
struct AnyStr<'a>(Cow<'a, str>);

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
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Object)
    }
}

/// A deserializer that reads a map whatever it is asked for.
struct MapOnly<D>(D);

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
struct Shape {
    object: bool,
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

/// Where a message's payload is read from once its type is known.
trait Payload<'a>: Copy {
    fn is_object(self) -> bool;
    /// The payload as `T`; the caller has seen that it is an object.
    fn parse<T: Deserialize<'a>>(self) -> Option<T>;
}

/// Its JSON text, kept while the envelope was read.
impl<'a> Payload<'a> for &'a RawValue {
    fn is_object(self) -> bool {
        self.get().starts_with('{')
    }
    fn parse<T: Deserialize<'a>>(self) -> Option<T> {
        serde_json::from_str(self.get()).ok()
    }
}

/// The tree a live run parsed the message into.
impl<'a> Payload<'a> for &'a Value {
    fn is_object(self) -> bool {
        Value::is_object(self)
    }
    fn parse<T: Deserialize<'a>>(self) -> Option<T> {
        T::deserialize(self).ok()
    }
}

// Some fields are only ever validated (by deserialising them), never read afterwards.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Envelope<'a, P> {
    id: &'a str,
    session: &'a str,
    seq: &'a str,
    #[serde(default, borrow)]
    ack: Opt<&'a str>,
    ts: &'a str,
    channel: &'a str,
    #[serde(rename = "type")]
    ty: &'a str,
    /// The payload's text (`&RawValue`), or from a tree only its shape (the tree has it).
    payload: P,
    #[serde(default)]
    pv: Opt<u64>,
    #[serde(default)]
    crit: Opt<bool>,
    #[serde(default)]
    bin_len: Opt<u64>,
    #[serde(default, borrow)]
    bin_mime: Opt<AnyStr<'a>>,
    #[serde(default, borrow)]
    run_id: Opt<&'a str>,
    #[serde(default, borrow)]
    thread_id: Opt<AnyStr<'a>>,
}

macro_rules! payload {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, bound(deserialize = "'de: 'a"))]
        #[allow(dead_code)]
        struct $name<'a> {
            $(#[serde(default)] $field: $ty,)*
            #[serde(skip)]
            _life: std::marker::PhantomData<&'a ()>,
        }
    };
}

payload!(PingP { nonce: Opt<&'a str> });
payload!(ReplayP { from_seq: Opt<&'a str>, to_seq: Opt<&'a str> });
payload!(TextStartP { message_id: Opt<&'a str>, author: Opt<AnyStr<'a>>, text: Opt<AnyStr<'a>> });
payload!(TextPartP { message_id: Opt<&'a str>, text: Opt<AnyStr<'a>> });
payload!(TextEndP { message_id: Opt<&'a str>, tokens: Opt<&'a str> });
payload!(AudioP { message_id: Opt<&'a str>, mime: Opt<AnyStr<'a>>, data: Opt<&'a str>, duration_ms: Opt<&'a str> });
payload!(ToolCallP { call_id: Opt<&'a str>, tool: Opt<AnyStr<'a>>, params: Opt<Shape> });
payload!(ToolUpdateP { call_id: Opt<&'a str>, status: Opt<&'a str>, progress: Opt<f64>, partial: Opt<Shape> });
payload!(ToolDoneP { call_id: Opt<&'a str>, status: Opt<&'a str>, result: Opt<Shape> });
payload!(ToolCancelP { call_id: Opt<&'a str>, reason: Opt<AnyStr<'a>> });
payload!(ToolSchemaP { tool: Opt<AnyStr<'a>>, schema: Opt<Shape> });
payload!(ErrorP { code: Opt<&'a str>, message: Opt<AnyStr<'a>>, related_id: Opt<&'a str>, detail: Opt<Shape> });
payload!(FlowP { channel: Opt<&'a str>, add_messages: Opt<u64>, add_bytes: Opt<u64> });
payload!(ChannelP { channel: Opt<&'a str> });
payload!(RunFinishedP { status: Opt<&'a str>, summary: Opt<AnyStr<'a>> });
payload!(RunCancelP { run_id: Opt<&'a str> });

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ToolListP<'a> {
    #[serde(borrow)]
    tools: Vec<Object<ToolEntry<'a>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ToolEntry<'a> {
    #[serde(borrow)]
    name: AnyStr<'a>,
    #[serde(default, borrow)]
    description: Opt<AnyStr<'a>>,
}

/// `Some(())` when the optional value satisfies `ok`.
fn opt_ok<T>(v: &Opt<T>, ok: impl Fn(&T) -> bool) -> Option<()> {
    match v {
        Opt::Absent => Some(()),
        Opt::Present(t) => ok(t).then_some(()),
    }
}

/// Required and satisfying `ok`.
fn req<T: Copy>(v: &Opt<T>, ok: impl Fn(T) -> bool) -> Option<T> {
    match v {
        Opt::Present(t) if ok(*t) => Some(*t),
        _ => None,
    }
}

/// The facts of `raw` and the session it names, when it is certainly a valid HAIP message;
/// `None` when unsure.
pub fn accept(raw: &str) -> Option<(Facts<'_>, &str)> {
    let Object::<Envelope<'_, &RawValue>>(env) = serde_json::from_str(raw).ok()?;
    let payload = env.payload;
    accept_envelope(env, payload)
}

/// [`accept`] for a message a live run has already parsed: the same checks, read off the tree.
pub fn accept_value(event: &Value) -> Option<(Facts<'_>, &str)> {
    let Object::<Envelope<'_, Shape>>(env) = Object::deserialize(event).ok()?;
    accept_envelope(env, event.get("payload")?)
}

fn accept_envelope<'a, P>(env: Envelope<'a, impl Sized>, p: P) -> Option<(Facts<'a>, &'a str)>
where
    P: Payload<'a>,
{
    if !(is_uuid(env.id)
        && is_uuid(env.session)
        && is_uint64_str(env.seq)
        && is_uint64_str(env.ts)
        && is_channel(env.channel)
        && p.is_object())
    {
        return None;
    }
    // A critical message is one its receiver must reject: the slow path judges it.
    if env.crit.get() == Some(true) {
        return None;
    }
    opt_ok(&env.ack, |a| is_uint64_str(a))?;
    opt_ok(&env.pv, |pv| *pv <= 255)?;
    opt_ok(&env.run_id, |r| is_uuid(r))?;
    opt_ok(&env.thread_id, |t| t.chars().count() <= 128)?;
    let mut f = Facts::bare(env.ty);
    f.id = Some(env.id);
    f.seq = model::parse_seq_str(env.seq);
    f.ack = env.ack.get().and_then(model::parse_seq_str);
    f.channel = Some(env.channel);
    f.run_id = env.run_id.get();
    f.bin_len = env.bin_len.get();
    f.has_bin_mime = env.bin_mime.is_present();
    match env.ty {
        "PING" | "PONG" => f.nonce = p.parse::<PingP>()?.nonce.get(),
        "REPLAY_REQUEST" => {
            let r: ReplayP = p.parse()?;
            req(&r.from_seq, is_uint64_str)?;
            opt_ok(&r.to_seq, |s| is_uint64_str(s))?;
        }
        "TEXT_MESSAGE_START" => {
            let t: TextStartP = p.parse()?;
            f.message_id = Some(req(&t.message_id, is_uuid)?);
        }
        "TEXT_MESSAGE_PART" => {
            let t: TextPartP = p.parse()?;
            f.message_id = Some(req(&t.message_id, is_uuid)?);
            t.text.is_present().then_some(())?;
        }
        "TEXT_MESSAGE_END" => {
            let t: TextEndP = p.parse()?;
            f.message_id = Some(req(&t.message_id, is_uuid)?);
            opt_ok(&t.tokens, |s| is_uint64_str(s))?;
        }
        "AUDIO_CHUNK" => {
            let a: AudioP = p.parse()?;
            f.message_id = Some(req(&a.message_id, is_uuid)?);
            a.mime.is_present().then_some(())?;
            opt_ok(&a.duration_ms, |s| is_uint64_str(s))?;
            // The schema's contentEncoding: base64 is enforced under draft-07.
            opt_ok(&a.data, |d| model::base64_len(d).is_some())?;
            f.data = a.data.get().map_or(Data::Absent, Data::Text);
        }
        "TOOL_CALL" => {
            let t: ToolCallP = p.parse()?;
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            t.tool.is_present().then_some(())?;
            opt_ok(&t.params, |r| r.object)?;
        }
        "TOOL_UPDATE" => {
            let t: ToolUpdateP = p.parse()?;
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            req(&t.status, |s| {
                matches!(s, "QUEUED" | "RUNNING" | "CANCELLING")
            })?;
            opt_ok(&t.progress, |v| (0.0..=100.0).contains(v))?;
        }
        "TOOL_DONE" => {
            let t: ToolDoneP = p.parse()?;
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            opt_ok(&t.status, |s| matches!(*s, "OK" | "CANCELLED" | "ERROR"))?;
        }
        "TOOL_CANCEL" => {
            let t: ToolCancelP = p.parse()?;
            f.call_id = Some(req(&t.call_id, is_uuid)?);
        }
        "TOOL_LIST" => {
            p.parse::<ToolListP>()?;
        }
        "TOOL_SCHEMA" => {
            let t: ToolSchemaP = p.parse()?;
            t.tool.is_present().then_some(())?;
            req(&t.schema, |s| s.object)?;
        }
        "ERROR" | "RUN_ERROR" => {
            let e: ErrorP = p.parse()?;
            f.code = Some(req(&e.code, |_| true)?);
            e.message.is_present().then_some(())?;
            opt_ok(&e.related_id, |r| is_uuid(r))?;
            f.related_id = e.related_id.get();
            opt_ok(&e.detail, |d| d.object)?;
        }
        "FLOW_UPDATE" => {
            let fl: FlowP = p.parse()?;
            f.payload_channel = Some(req(&fl.channel, |_| true)?);
            opt_ok(&fl.add_messages, |n| (1..=i64::MAX as u64).contains(n))?;
            opt_ok(&fl.add_bytes, |n| (1..=i64::MAX as u64).contains(n))?;
            f.add_messages = fl.add_messages.get().map(|n| n as i64);
            f.add_bytes = fl.add_bytes.get().map(|n| n as i64);
        }
        "PAUSE_CHANNEL" | "RESUME_CHANNEL" => {
            f.payload_channel = Some(req(&p.parse::<ChannelP>()?.channel, |_| true)?);
        }
        "RUN_STARTED" => {}
        "RUN_FINISHED" => {
            let r: RunFinishedP = p.parse()?;
            opt_ok(&r.status, |s| matches!(*s, "OK" | "CANCELLED" | "ERROR"))?;
        }
        "RUN_CANCEL" => {
            req(&p.parse::<RunCancelP>()?.run_id, is_uuid)?;
            f.payload_run_id = true;
        }
        // HAI is rare and intricate: the schema judges it. Unknown types are invalid.
        _ => return None,
    }
    Some((f, env.session))
}
