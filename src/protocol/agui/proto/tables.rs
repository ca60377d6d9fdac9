//! The `ag_ui` protobuf messages as facts: for each message, its fields' numbers, JSON names
//! and kinds, as the published `@ag-ui/proto` 1.0 wire gives them (the envelope `Event`'s
//! arms 1–31, `EventType`'s values, the nested input, message, part and patch messages). The
//! wire is generated from the schema, so each name is the schema's field.

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A string protobuf gives no presence: absent reads as `""` (the schema requires it).
    Str,
    /// An optional string.
    OptStr,
    Bool,
    /// An optional 64-bit integer.
    Int,
    /// A `google.protobuf.Value`: any JSON.
    Value,
    /// A `google.protobuf.Struct`: a JSON object.
    Struct,
    Msg(&'static [Field]),
    RepStr,
    RepMsg(&'static [Field]),
    /// Repeated `InputContent`: content parts.
    Parts,
    /// An `InputContentSource`: where a media part's bytes are.
    Source,
    /// Repeated [`MESSAGE`]: conversation messages, their merged wire fields reshaped by role.
    Messages,
    /// Repeated `JsonPatchOperation`: a JSON Patch.
    Patch,
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub num: u32,
    pub name: &'static str,
    pub kind: Kind,
    /// A repeated field the schema requires: kept as `[]` when empty.
    pub required: bool,
}

const fn f(num: u32, name: &'static str, kind: Kind) -> Field {
    Field {
        num,
        name,
        kind,
        required: false,
    }
}

const fn req(num: u32, name: &'static str, kind: Kind) -> Field {
    Field {
        num,
        name,
        kind,
        required: true,
    }
}

use Kind::*;

/// `JsonPatchOperation.op`'s values, in enum order.
pub const PATCH_OPS: &[&str] = &["add", "remove", "replace", "move", "copy", "test"];

/// `InputContent`'s arms: the part's `type` and its fields (each part's `source` is an
/// `InputContentSource`).
pub const PART_ARMS: &[(u32, &str, &[Field])] = &[
    (
        1,
        "text",
        &[
            f(1, "text", Str),
            f(2, "id", OptStr),
            f(3, "metadata", Value),
        ],
    ),
    (2, "image", MEDIA_PART),
    (3, "audio", MEDIA_PART),
    (4, "video", MEDIA_PART),
    (5, "document", MEDIA_PART),
];
const MEDIA_PART: &[Field] = &[
    f(1, "source", Source),
    f(2, "metadata", Value),
    f(3, "id", OptStr),
];

/// `InputContentSource`'s arms: the source's `type` and its fields.
pub const SOURCE_ARMS: &[(u32, &str, &[Field])] = &[
    (1, "data", &[f(1, "value", Str), f(2, "mimeType", Str)]),
    (2, "url", &[f(1, "value", Str), f(2, "mimeType", OptStr)]),
    (
        3,
        "file",
        &[
            f(1, "value", Str),
            f(2, "provider", OptStr),
            f(3, "mimeType", OptStr),
        ],
    ),
];

const TOOL_CALL: &[Field] = &[
    f(1, "id", Str),
    f(2, "type", Str),
    f(
        3,
        "function",
        Msg(&[f(1, "name", Str), f(2, "arguments", Str)]),
    ),
    f(4, "metadata", Struct),
    f(5, "encryptedValue", OptStr),
];

/// A message as the wire carries it: every role's fields merged (content as a string, as
/// parts, or an activity's object).
pub const MESSAGE: &[Field] = &[
    f(1, "id", Str),
    f(2, "role", Str),
    f(3, "content", OptStr),
    f(4, "name", OptStr),
    f(5, "toolCalls", RepMsg(TOOL_CALL)),
    f(6, "toolCallId", OptStr),
    f(7, "error", OptStr),
    f(8, "contentParts", Parts),
    f(9, "metadata", Struct),
    f(10, "subagentRunId", OptStr),
    f(11, "encryptedValue", OptStr),
    f(12, "activityType", OptStr),
    f(13, "activityContent", Struct),
];

pub const RUN_AGENT_INPUT: &[Field] = &[
    f(1, "threadId", Str),
    f(2, "runId", Str),
    f(3, "parentRunId", OptStr),
    f(4, "state", Value),
    req(5, "messages", Messages),
    f(
        6,
        "tools",
        RepMsg(&[
            f(1, "name", Str),
            f(2, "description", Str),
            f(3, "parameters", Value),
            f(4, "metadata", Struct),
        ]),
    ),
    f(
        7,
        "context",
        RepMsg(&[f(1, "description", Str), f(2, "value", Str)]),
    ),
    f(8, "forwardedProps", Value),
    f(
        9,
        "resume",
        RepMsg(&[
            f(1, "interruptId", Str),
            f(2, "status", Str),
            f(3, "payload", Value),
            f(4, "metadata", Struct),
        ]),
    ),
    f(10, "protocolVersion", OptStr),
];

pub const INTERRUPT: &[Field] = &[
    f(1, "id", Str),
    f(2, "reason", Str),
    f(3, "message", OptStr),
    f(4, "toolCallId", OptStr),
    f(5, "responseSchema", Value),
    f(6, "expiresAt", OptStr),
    f(7, "metadata", Value),
    f(8, "subagentRunId", OptStr),
];

const USAGE: &[Field] = &[
    f(1, "provider", OptStr),
    f(2, "model", OptStr),
    f(3, "inputTokens", Int),
    f(4, "outputTokens", Int),
    f(5, "totalTokens", Int),
    f(6, "reasoningTokens", Int),
    f(7, "cachedInputTokens", Int),
    f(8, "cacheWriteInputTokens", Int),
];

/// The base event every event message carries as its field 1: `type` (an `EventType`),
/// `timestamp`, `rawEvent`, `metadata`.
pub const BASE_FIELD: u32 = 1;

/// One arm of the envelope `Event`: its number, the event type, that type's `EventType`
/// value, and the event message's fields after the base event.
pub struct Arm {
    pub num: u32,
    pub ty: &'static str,
    pub enum_value: u64,
    pub fields: &'static [Field],
}

const fn arm(num: u32, ty: &'static str, enum_value: u64, fields: &'static [Field]) -> Arm {
    Arm {
        num,
        ty,
        enum_value,
        fields,
    }
}

const SUB: Field = f(0, "subagentRunId", OptStr);

const fn sub(num: u32) -> Field {
    Field { num, ..SUB }
}

pub const ARMS: &[Arm] = &[
    arm(
        1,
        "TEXT_MESSAGE_START",
        0,
        &[
            f(2, "messageId", Str),
            f(3, "role", OptStr),
            f(4, "name", OptStr),
            sub(5),
        ],
    ),
    arm(
        2,
        "TEXT_MESSAGE_CONTENT",
        1,
        &[f(2, "messageId", Str), f(3, "delta", Str), sub(4)],
    ),
    arm(3, "TEXT_MESSAGE_END", 2, &[f(2, "messageId", Str), sub(3)]),
    arm(
        4,
        "TOOL_CALL_START",
        3,
        &[
            f(2, "toolCallId", Str),
            f(3, "toolCallName", Str),
            f(4, "parentMessageId", OptStr),
            sub(5),
        ],
    ),
    arm(
        5,
        "TOOL_CALL_ARGS",
        4,
        &[f(2, "toolCallId", Str), f(3, "delta", Str), sub(4)],
    ),
    arm(6, "TOOL_CALL_END", 5, &[f(2, "toolCallId", Str), sub(3)]),
    arm(7, "STATE_SNAPSHOT", 6, &[f(2, "snapshot", Value), sub(3)]),
    arm(8, "STATE_DELTA", 7, &[req(2, "delta", Patch), sub(3)]),
    arm(9, "MESSAGES_SNAPSHOT", 8, &[req(2, "messages", Messages)]),
    arm(
        10,
        "RAW",
        9,
        &[f(2, "event", Value), f(3, "source", OptStr), sub(4)],
    ),
    arm(
        11,
        "CUSTOM",
        10,
        &[f(2, "name", Str), f(3, "value", Value), sub(4)],
    ),
    arm(
        12,
        "RUN_STARTED",
        11,
        &[
            f(2, "threadId", Str),
            f(3, "runId", Str),
            f(4, "parentRunId", OptStr),
            f(5, "input", Msg(RUN_AGENT_INPUT)),
            f(6, "protocolVersion", OptStr),
        ],
    ),
    arm(
        13,
        "RUN_FINISHED",
        12,
        &[
            f(2, "threadId", Str),
            f(3, "runId", Str),
            f(4, "result", Value),
            f(5, "outcome", OptStr),
            f(6, "interrupts", RepMsg(INTERRUPT)),
            f(7, "usage", RepMsg(USAGE)),
            f(8, "pendingToolCallIds", RepStr),
        ],
    ),
    arm(
        14,
        "RUN_ERROR",
        13,
        &[
            f(2, "code", OptStr),
            f(3, "message", Str),
            f(4, "usage", RepMsg(USAGE)),
        ],
    ),
    arm(15, "STEP_STARTED", 14, &[f(2, "stepName", Str), sub(3)]),
    arm(16, "STEP_FINISHED", 15, &[f(2, "stepName", Str), sub(3)]),
    arm(
        17,
        "TEXT_MESSAGE_CHUNK",
        19,
        &[
            f(2, "messageId", OptStr),
            f(3, "role", OptStr),
            f(4, "delta", OptStr),
            f(5, "name", OptStr),
            sub(6),
        ],
    ),
    arm(
        18,
        "TOOL_CALL_CHUNK",
        20,
        &[
            f(2, "toolCallId", OptStr),
            f(3, "toolCallName", OptStr),
            f(4, "parentMessageId", OptStr),
            f(5, "delta", OptStr),
            sub(6),
        ],
    ),
    arm(
        19,
        "SUBAGENT_STARTED",
        16,
        &[
            f(2, "subagentRunId", Str),
            f(3, "name", Str),
            f(4, "description", OptStr),
            f(5, "parentSubagentRunId", OptStr),
            f(6, "parentToolCallId", OptStr),
            f(7, "parentMessageId", OptStr),
        ],
    ),
    arm(
        20,
        "SUBAGENT_FINISHED",
        17,
        &[
            f(2, "subagentRunId", Str),
            f(3, "result", Value),
            f(4, "outcome", OptStr),
            f(5, "interruptIds", RepStr),
        ],
    ),
    arm(
        21,
        "SUBAGENT_ERROR",
        18,
        &[
            f(2, "subagentRunId", Str),
            f(3, "message", Str),
            f(4, "code", OptStr),
        ],
    ),
    arm(
        22,
        "TOOL_CALL_RESULT",
        21,
        &[
            sub(2),
            f(3, "messageId", Str),
            f(4, "toolCallId", Str),
            f(5, "content", OptStr),
            f(6, "role", OptStr),
            f(7, "contentParts", Parts),
        ],
    ),
    arm(
        23,
        "ACTIVITY_SNAPSHOT",
        22,
        &[
            sub(2),
            f(3, "messageId", Str),
            f(4, "activityType", Str),
            f(5, "content", Struct),
            f(6, "replace", Bool),
        ],
    ),
    arm(
        24,
        "ACTIVITY_DELTA",
        23,
        &[
            sub(2),
            f(3, "messageId", Str),
            f(4, "activityType", Str),
            req(5, "patch", Patch),
        ],
    ),
    arm(25, "REASONING_START", 24, &[sub(2), f(3, "messageId", Str)]),
    arm(
        26,
        "REASONING_MESSAGE_START",
        25,
        &[sub(2), f(3, "messageId", Str), f(4, "role", Str)],
    ),
    arm(
        27,
        "REASONING_MESSAGE_CONTENT",
        26,
        &[sub(2), f(3, "messageId", Str), f(4, "delta", Str)],
    ),
    arm(
        28,
        "REASONING_MESSAGE_END",
        27,
        &[sub(2), f(3, "messageId", Str)],
    ),
    arm(
        29,
        "REASONING_MESSAGE_CHUNK",
        28,
        &[sub(2), f(3, "messageId", OptStr), f(4, "delta", OptStr)],
    ),
    arm(30, "REASONING_END", 29, &[sub(2), f(3, "messageId", Str)]),
    arm(
        31,
        "REASONING_ENCRYPTED_VALUE",
        30,
        &[
            sub(2),
            f(3, "subtype", Str),
            f(4, "entityId", Str),
            f(5, "encryptedValue", Str),
        ],
    ),
];

/// The arm of an event type.
pub fn arm_of(ty: &str) -> Option<&'static Arm> {
    ARMS.iter().find(|a| a.ty == ty)
}

/// The arm numbered `num`.
pub fn arm_numbered(num: u32) -> Option<&'static Arm> {
    ARMS.iter().find(|a| a.num == num)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_type_has_one_arm_and_one_enum_value() {
        let schema = crate::protocol::agui::schema::schema();
        let mut values: Vec<u64> = ARMS.iter().map(|a| a.enum_value).collect();
        values.sort();
        assert_eq!(values, (0..31).collect::<Vec<u64>>());
        for (i, a) in ARMS.iter().enumerate() {
            assert_eq!(a.num as usize, i + 1);
            assert!(schema.knows(a.ty), "{}", a.ty);
        }
    }
}
