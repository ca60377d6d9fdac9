//! The fast path of the checker: accepts the common shapes of valid HAIP messages straight
//! from their JSON text (`check`), or from the tree a live run already parsed them into, with
//! typed borrowed deserialisation and the schema's patterns checked by hand, and yields their
//! [`Facts`].
//!
//! It only ever *accepts*. Anything it is not sure of — an unknown or duplicate field, a
//! `null`, an escaped string it needs or an escaped key, a number in an unusual form, a HAI —
//! returns `None`, and the caller validates the message with the full schema instead.
//! `tests/it/fast_path.rs` checks that everything accepted here is valid under
//! `envelope.schema.json` with the same facts.

mod envelope;
mod payloads;
mod read;

use super::facts::{Data, Facts};
use super::model::{self, is_channel, is_uint64_str, is_uuid};
use envelope::{Body, Message, Reading};
use payloads::{Typed, TypedSeed};
use read::Opt;
use serde::de::{DeserializeSeed, IgnoredAny};
use serde_json::Value;

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
    let mut message = Message::<IgnoredAny>::default();
    read(raw, None, &mut message)?;
    if let Some(Body::Later(_)) = message.body {
        // The payload came before the type (rarely: senders write the type first).
        let ty = message.ty?;
        message = Message::default();
        read(raw, Some(ty), &mut message)?;
    }
    let Some(Body::Typed(payload)) = message.body.take() else {
        return None;
    };
    judge(&message, payload)
}

/// Reads the whole of `raw` as one message into `out`.
fn read<'a>(raw: &'a str, known: Option<&'a str>, out: &mut Message<'a, IgnoredAny>) -> Option<()> {
    let mut d = serde_json::Deserializer::from_str(raw);
    Reading { known, out }.deserialize(&mut d).ok()?;
    d.end().ok()
}

/// [`accept`] for a message a live run has already parsed: the same checks, read off the tree.
pub fn accept_value(event: &Value) -> Option<(Facts<'_>, &str)> {
    let mut message = Message::<IgnoredAny>::default();
    Reading {
        known: None,
        out: &mut message,
    }
    .deserialize(event)
    .ok()?;
    let payload = match message.body.take()? {
        Body::Typed(typed) => typed,
        Body::Later(_) => TypedSeed(message.ty?)
            .deserialize(event.get("payload")?)
            .ok()?,
    };
    judge(&message, payload)
}

/// The facts of a message read in full, when every field holds what the schema demands.
fn judge<'a>(env: &Message<'a, IgnoredAny>, payload: Typed<'a>) -> Option<(Facts<'a>, &'a str)> {
    let (id, session, seq, ts) = (env.id?, env.session?, env.seq?, env.ts?);
    let (channel, ty) = (env.channel?, env.ty?);
    if !(is_uuid(id)
        && is_uuid(session)
        && is_uint64_str(seq)
        && is_uint64_str(ts)
        && is_channel(channel))
    {
        return None;
    }
    // A critical message is one its receiver must reject: the slow path judges it.
    if env.crit == Some(true) {
        return None;
    }
    env.ack.is_none_or(is_uint64_str).then_some(())?;
    env.pv.is_none_or(|pv| pv <= 255).then_some(())?;
    env.run_id.is_none_or(is_uuid).then_some(())?;
    env.thread_id
        .as_ref()
        .is_none_or(|t| t.chars().count() <= 128)
        .then_some(())?;
    // Filled where it is returned: the facts are a few hundred bytes, and building them here to
    // move them out was a copy per message.
    let mut accepted = Some((Facts::bare(ty), session));
    // Never `None`: `accepted` was set just above.
    let (f, _) = accepted.as_mut()?;
    f.id = Some(id);
    f.seq = model::parse_seq_str(seq);
    f.ack = env.ack.and_then(model::parse_seq_str);
    f.channel = Some(channel);
    f.run_id = env.run_id;
    f.bin_len = env.bin_len;
    f.has_bin_mime = env.bin_mime.is_some();
    payload_facts(payload, f)?;
    accepted
}

/// The facts a payload adds, when its fields hold what the schema demands.
fn payload_facts<'a>(payload: Typed<'a>, f: &mut Facts<'a>) -> Option<()> {
    match payload {
        Typed::Ping(p) => f.nonce = p.nonce.get(),
        Typed::Replay(r) => {
            req(&r.from_seq, is_uint64_str)?;
            opt_ok(&r.to_seq, |s| is_uint64_str(s))?;
        }
        Typed::TextStart(t) => f.message_id = Some(req(&t.message_id, is_uuid)?),
        Typed::TextPart(t) => {
            f.message_id = Some(req(&t.message_id, is_uuid)?);
            t.text.is_present().then_some(())?;
        }
        Typed::TextEnd(t) => {
            f.message_id = Some(req(&t.message_id, is_uuid)?);
            opt_ok(&t.tokens, |s| is_uint64_str(s))?;
        }
        Typed::Audio(a) => {
            f.message_id = Some(req(&a.message_id, is_uuid)?);
            a.mime.is_present().then_some(())?;
            opt_ok(&a.duration_ms, |s| is_uint64_str(s))?;
            // The schema's contentEncoding: base64 is enforced under draft-07.
            opt_ok(&a.data, |d| model::base64_len(d).is_some())?;
            f.data = a.data.get().map_or(Data::Absent, Data::Text);
        }
        Typed::ToolCall(t) => {
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            t.tool.is_present().then_some(())?;
            opt_ok(&t.params, |r| r.object)?;
        }
        Typed::ToolUpdate(t) => {
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            req(&t.status, |s| {
                matches!(s, "QUEUED" | "RUNNING" | "CANCELLING")
            })?;
            opt_ok(&t.progress, |v| (0.0..=100.0).contains(v))?;
        }
        Typed::ToolDone(t) => {
            f.call_id = Some(req(&t.call_id, is_uuid)?);
            opt_ok(&t.status, |s| matches!(*s, "OK" | "CANCELLED" | "ERROR"))?;
        }
        Typed::ToolCancel(t) => f.call_id = Some(req(&t.call_id, is_uuid)?),
        Typed::ToolList => {}
        Typed::ToolSchema(t) => {
            t.tool.is_present().then_some(())?;
            req(&t.schema, |s| s.object)?;
        }
        Typed::Error(e) => {
            f.code = Some(req(&e.code, |_| true)?);
            e.message.is_present().then_some(())?;
            opt_ok(&e.related_id, |r| is_uuid(r))?;
            f.related_id = e.related_id.get();
            opt_ok(&e.detail, |d| d.object)?;
        }
        Typed::Flow(fl) => {
            f.payload_channel = Some(req(&fl.channel, |_| true)?);
            opt_ok(&fl.add_messages, |n| (1..=i64::MAX as u64).contains(n))?;
            opt_ok(&fl.add_bytes, |n| (1..=i64::MAX as u64).contains(n))?;
            f.add_messages = fl.add_messages.get().map(|n| n as i64);
            f.add_bytes = fl.add_bytes.get().map(|n| n as i64);
        }
        Typed::Channel(c) => f.payload_channel = Some(req(&c.channel, |_| true)?),
        Typed::RunStarted => {}
        Typed::RunFinished(r) => {
            opt_ok(&r.status, |s| matches!(*s, "OK" | "CANCELLED" | "ERROR"))?;
        }
        Typed::RunCancel(r) => {
            req(&r.run_id, is_uuid)?;
            f.payload_run_id = true;
        }
    }
    Some(())
}
