//! Each message type's payload as a struct of borrowed fields (unknown fields refused, as the
//! schema refuses them), and [`TypedSeed`], which reads a payload as its type's struct.

use super::read::{AnyStr, MapOnly, Object, Opt, Shape};
use serde::de::{DeserializeSeed, Error as _};
use serde::{Deserialize, Deserializer};

macro_rules! payload {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, bound(deserialize = "'de: 'a"))]
        #[allow(dead_code)]
        pub(super) struct $name<'a> {
            $(#[serde(default)] pub(super) $field: $ty,)*
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
pub(super) struct ToolListP<'a> {
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

/// A payload read as its message type's struct.
pub(super) enum Typed<'a> {
    Ping(PingP<'a>),
    Replay(ReplayP<'a>),
    TextStart(TextStartP<'a>),
    TextPart(TextPartP<'a>),
    TextEnd(TextEndP<'a>),
    Audio(AudioP<'a>),
    ToolCall(ToolCallP<'a>),
    ToolUpdate(ToolUpdateP<'a>),
    ToolDone(ToolDoneP<'a>),
    ToolCancel(ToolCancelP<'a>),
    ToolList,
    ToolSchema(ToolSchemaP<'a>),
    Error(ErrorP<'a>),
    Flow(FlowP<'a>),
    Channel(ChannelP<'a>),
    RunStarted,
    RunFinished(RunFinishedP<'a>),
    RunCancel(RunCancelP<'a>),
}

/// Reads the payload of a message of the type it holds, as an object only. A HAI (rare and
/// intricate) or an unknown type is an error: the schema judges that message.
pub(super) struct TypedSeed<'t>(pub(super) &'t str);

impl<'de> DeserializeSeed<'de> for TypedSeed<'_> {
    type Value = Typed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Typed<'de>, D::Error> {
        let d = MapOnly(d);
        Ok(match self.0 {
            "PING" | "PONG" => Typed::Ping(Deserialize::deserialize(d)?),
            "REPLAY_REQUEST" => Typed::Replay(Deserialize::deserialize(d)?),
            "TEXT_MESSAGE_START" => Typed::TextStart(Deserialize::deserialize(d)?),
            "TEXT_MESSAGE_PART" => Typed::TextPart(Deserialize::deserialize(d)?),
            "TEXT_MESSAGE_END" => Typed::TextEnd(Deserialize::deserialize(d)?),
            "AUDIO_CHUNK" => Typed::Audio(Deserialize::deserialize(d)?),
            "TOOL_CALL" => Typed::ToolCall(Deserialize::deserialize(d)?),
            "TOOL_UPDATE" => Typed::ToolUpdate(Deserialize::deserialize(d)?),
            "TOOL_DONE" => Typed::ToolDone(Deserialize::deserialize(d)?),
            "TOOL_CANCEL" => Typed::ToolCancel(Deserialize::deserialize(d)?),
            "TOOL_LIST" => {
                ToolListP::deserialize(d)?;
                Typed::ToolList
            }
            "TOOL_SCHEMA" => Typed::ToolSchema(Deserialize::deserialize(d)?),
            "ERROR" | "RUN_ERROR" => Typed::Error(Deserialize::deserialize(d)?),
            "FLOW_UPDATE" => Typed::Flow(Deserialize::deserialize(d)?),
            "PAUSE_CHANNEL" | "RESUME_CHANNEL" => Typed::Channel(Deserialize::deserialize(d)?),
            "RUN_STARTED" => {
                Shape::deserialize(d)?;
                Typed::RunStarted
            }
            "RUN_FINISHED" => Typed::RunFinished(Deserialize::deserialize(d)?),
            "RUN_CANCEL" => Typed::RunCancel(Deserialize::deserialize(d)?),
            _ => return Err(D::Error::custom("a message type the schema judges")),
        })
    }
}
