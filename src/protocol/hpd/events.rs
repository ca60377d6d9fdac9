//! The event types HPD names (the spec's families and the framework's type strings, see
//! `../shared/specs/README.md` § HPD) and the fields each carries.

/// What an event type is to the lifecycle checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    TurnStarted,
    TurnFinished,
    TurnError,
    AgentTurnStarted,
    AgentTurnFinished,
    /// Text or reasoning: `START`, `DELTA`, `END` by messageId.
    Block(BlockKind, BlockStep),
    Tool(ToolStep),
    PermissionRequest,
    PermissionApproved,
    PermissionDenied,
    ContinuationRequest,
    ClarificationRequest,
    ClientToolRequest,
    /// Client → server: inputs, responses, interruption.
    Upstream,
    /// Known, and nothing the lifecycle follows.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Reasoning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStep {
    Start,
    Delta,
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStep {
    Start,
    Args,
    End,
    Result,
}

/// Field kinds known events carry. The spec gives no field a type: its one envelope example
/// shows `messageId` and `text` as strings (HPD-ENV-008, should); the other kinds are the
/// framework's (HPD-ENV-007, recorded only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A non-empty string id.
    Id,
    Integer,
    Bool,
    Str,
    /// A string, as the spec's envelope example shows it (`messageId`, a delta's `text`).
    ExampleStr,
    /// A duration: a number, or a .NET TimeSpan string (`"00:00:00.0030000"`), which is how
    /// the public framework writes one.
    Duration,
}

use BlockKind::*;
use BlockStep::*;
use Family::*;
use FieldKind::*;

/// A known field and the kind of value it holds.
type Field = (&'static str, FieldKind);

/// Every built-in type: its family and its typed fields.
static TYPES: &[(&str, Family, &[Field])] = &[
    (
        "MESSAGE_TURN_STARTED",
        TurnStarted,
        &[("messageTurnId", Id)],
    ),
    (
        "MESSAGE_TURN_FINISHED",
        TurnFinished,
        &[("messageTurnId", Id), ("duration", Duration)],
    ),
    (
        "MESSAGE_TURN_ERROR",
        TurnError,
        &[("messageTurnId", Id), ("message", Str)],
    ),
    (
        "AGENT_TURN_STARTED",
        AgentTurnStarted,
        &[("iteration", Integer)],
    ),
    (
        "AGENT_TURN_FINISHED",
        AgentTurnFinished,
        &[("iteration", Integer)],
    ),
    (
        "STATE_SNAPSHOT",
        Other,
        &[
            ("currentIteration", Integer),
            ("maxIterations", Integer),
            ("isTerminated", Bool),
        ],
    ),
    (
        "TEXT_MESSAGE_START",
        Block(Text, Start),
        &[("messageId", ExampleStr)],
    ),
    (
        "TEXT_DELTA",
        Block(Text, Delta),
        &[("messageId", ExampleStr), ("text", ExampleStr)],
    ),
    (
        "TEXT_MESSAGE_END",
        Block(Text, End),
        &[("messageId", ExampleStr)],
    ),
    (
        "REASONING_MESSAGE_START",
        Block(Reasoning, Start),
        &[("messageId", ExampleStr)],
    ),
    (
        "REASONING_DELTA",
        Block(Reasoning, Delta),
        &[("messageId", ExampleStr), ("text", ExampleStr)],
    ),
    (
        "REASONING_MESSAGE_END",
        Block(Reasoning, End),
        &[("messageId", ExampleStr)],
    ),
    (
        "TOOL_CALL_START",
        Tool(ToolStep::Start),
        &[("callId", Id), ("name", Str)],
    ),
    (
        "TOOL_CALL_ARGS",
        Tool(ToolStep::Args),
        &[("callId", Id), ("argsJson", Str)],
    ),
    ("TOOL_CALL_END", Tool(ToolStep::End), &[("callId", Id)]),
    (
        "TOOL_CALL_RESULT",
        Tool(ToolStep::Result),
        &[("callId", Id)],
    ),
    (
        "PERMISSION_REQUEST",
        PermissionRequest,
        &[("permissionId", Id), ("callId", Id)],
    ),
    (
        "PERMISSION_RESPONSE",
        Upstream,
        &[("permissionId", Id), ("approved", Bool)],
    ),
    (
        "PERMISSION_APPROVED",
        PermissionApproved,
        &[("permissionId", Id)],
    ),
    (
        "PERMISSION_DENIED",
        PermissionDenied,
        &[("permissionId", Id), ("callId", Id)],
    ),
    (
        "CONTINUATION_REQUEST",
        ContinuationRequest,
        &[
            ("continuationId", Id),
            ("currentIteration", Integer),
            ("maxIterations", Integer),
        ],
    ),
    (
        "CONTINUATION_RESPONSE",
        Upstream,
        &[
            ("continuationId", Id),
            ("approved", Bool),
            ("extensionAmount", Integer),
        ],
    ),
    (
        "CLARIFICATION_REQUEST",
        ClarificationRequest,
        &[("requestId", Id), ("question", Str)],
    ),
    (
        "CLARIFICATION_RESPONSE",
        Upstream,
        &[("requestId", Id), ("answer", Str)],
    ),
    (
        "CLIENT_TOOL_INVOKE_REQUEST",
        ClientToolRequest,
        &[("requestId", Id)],
    ),
    (
        "CLIENT_TOOL_INVOKE_RESPONSE",
        Upstream,
        &[("requestId", Id)],
    ),
    ("MIDDLEWARE_ERROR", Other, &[("errorMessage", Str)]),
    ("INTERRUPTION_REQUEST", Upstream, &[("reason", Str)]),
    ("USER_TEXT_INPUT", Upstream, &[("text", Str)]),
    ("USER_MESSAGES_INPUT", Upstream, &[]),
    ("BRANCH_RUN_STARTED", Other, &[]),
    ("BRANCH_RUN_COMPLETED", Other, &[]),
    ("TOOL_CALL_BACKGROUND_TASK_STARTED", Other, &[]),
    ("TOOL_CALL_BACKGROUND_TASK_COMPLETED", Other, &[]),
    ("TOOL_CALL_BACKGROUND_TASK_CANCELLED", Other, &[]),
    ("TOOL_CALL_BACKGROUND_TASK_FAULTED", Other, &[]),
    ("BACKGROUND_OPERATION_STARTED", Other, &[]),
    ("BACKGROUND_OPERATION_STATUS", Other, &[]),
    ("USER_AUDIO_TRANSCRIPT_DELTA", Other, &[]),
    ("USER_AUDIO_TRANSCRIPT_COMPLETED", Other, &[]),
    ("USER_AUDIO_TRANSCRIPT_FAILED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_STARTED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_STREAM_STARTED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_CHUNK_READY", Other, &[]),
    ("ASSISTANT_AUDIO_PUSH_TEXT_STREAM_OPENING", Other, &[]),
    ("ASSISTANT_AUDIO_PUSH_TEXT_STREAM_OPENED", Other, &[]),
    ("ASSISTANT_AUDIO_PUSH_TEXT_INPUT_SENT", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_STREAM_COMPLETED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_ARTIFACT_CAPTURED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_SEGMENT_FAILED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_COMPLETED", Other, &[]),
    ("ASSISTANT_AUDIO_OUTPUT_FAILED", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_QUEUED", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_STARTED", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_PROGRESS", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_COMPLETED", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_INTERRUPTED", Other, &[]),
    ("ASSISTANT_AUDIO_PLAYBACK_FAILED", Other, &[]),
    ("COMPACTION", Other, &[]),
    ("MODEL_CALL_RETRY", Other, &[]),
    ("FUNCTION_RETRY", Other, &[]),
    ("STRUCTURED_OUTPUT_START", Other, &[]),
    ("STRUCTURED_OUTPUT_PARTIAL", Other, &[]),
    ("STRUCTURED_OUTPUT_COMPLETE", Other, &[]),
    ("STRUCTURED_OUTPUT_ERROR", Other, &[]),
    ("CONTENT_UPLOADED", Other, &[]),
    ("INTERRUPTION_HANDLED", Other, &[]),
    ("PLAN_UPDATED", Other, &[]),
    ("CHECKPOINT", Other, &[]),
    ("ITERATION_START", Other, &[]),
];

/// A built-in type, matched case-insensitively (as the framework reads it).
#[derive(Debug, Clone, Copy)]
pub struct KnownType {
    /// The SCREAMING_SNAKE_CASE name.
    pub name: &'static str,
    pub family: Family,
    pub fields: &'static [Field],
}

/// The built-in type `kind` names, in any letter case.
pub fn known(kind: &str) -> Option<KnownType> {
    // Looked up several times for every event judged: a scan of the 76 names, compared
    // letter-case-blind, was 3% of fuzzing HPD. Types come in their own case nearly always.
    let by_name = by_name();
    let at = match by_name.get(kind) {
        Some(at) => *at,
        None if kind.bytes().any(|b| b.is_ascii_lowercase()) => {
            *by_name.get(kind.to_ascii_uppercase().as_str())?
        }
        None => return None,
    };
    let (name, family, fields) = TYPES[at];
    Some(KnownType {
        name,
        family,
        fields,
    })
}

/// Where each of [`TYPES`] is, by its name.
fn by_name() -> &'static foldhash::HashMap<&'static str, usize> {
    static BY_NAME: std::sync::OnceLock<foldhash::HashMap<&'static str, usize>> =
        std::sync::OnceLock::new();
    BY_NAME.get_or_init(|| {
        TYPES
            .iter()
            .enumerate()
            .map(|(at, (name, _, _))| (*name, at))
            .collect()
    })
}

/// The types a client sends to the inputs route.
pub fn is_input(kind: &str) -> bool {
    ["USER_TEXT_INPUT", "USER_MESSAGES_INPUT"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(kind))
}

/// The id field a response event answers by (`PERMISSION_RESPONSE` → `permissionId`).
pub fn response_id_field(kind: &str) -> Option<&'static str> {
    let kind = known(kind)?.name;
    match kind {
        "PERMISSION_RESPONSE" => Some("permissionId"),
        "CONTINUATION_RESPONSE" => Some("continuationId"),
        "CLARIFICATION_RESPONSE" | "CLIENT_TOOL_INVOKE_RESPONSE" => Some("requestId"),
        _ => None,
    }
}

/// The request id field of a server request event (`PERMISSION_REQUEST` → `permissionId`).
pub fn request_id_field(family: Family) -> Option<&'static str> {
    match family {
        PermissionRequest => Some("permissionId"),
        ContinuationRequest => Some("continuationId"),
        ClarificationRequest | ClientToolRequest => Some("requestId"),
        _ => None,
    }
}

/// The response type that answers a request of `family`.
pub fn answer_to(family: Family) -> Option<&'static str> {
    Some(match family {
        PermissionRequest => "PERMISSION_RESPONSE",
        ContinuationRequest => "CONTINUATION_RESPONSE",
        ClarificationRequest => "CLARIFICATION_RESPONSE",
        ClientToolRequest => "CLIENT_TOOL_INVOKE_RESPONSE",
        _ => return None,
    })
}

/// The request `event` (an agent's) makes of the client, if it makes one: its id and the
/// response type that answers it.
pub fn request_of(event: &serde_json::Value) -> Option<(&str, &'static str)> {
    let kind = event.get("type")?.as_str()?;
    let family = known(kind)?.family;
    let id = event.get(request_id_field(family)?)?.as_str()?;
    Some((id, answer_to(family)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `known` was before its index: the first type whose name matches, letter case aside.
    fn scanned(kind: &str) -> Option<&'static str> {
        TYPES
            .iter()
            .find(|(name, _, _)| name.eq_ignore_ascii_case(kind))
            .map(|(name, _, _)| *name)
    }

    #[test]
    fn a_type_is_known_in_any_letter_case_as_a_scan_finds_it() {
        let mut kinds = vec![
            String::new(),
            "NOT_A_TYPE".into(),
            "message_turn_startеd".into(), // a Cyrillic "е"
            "TEXT_DELTA ".into(),
        ];
        for (name, _, _) in TYPES {
            // The index finds a name in any case through its upper case.
            assert_eq!(*name, name.to_ascii_uppercase(), "{name}");
            let mixed: String = name
                .chars()
                .enumerate()
                .map(|(i, c)| match i % 2 {
                    0 => c.to_ascii_lowercase(),
                    _ => c,
                })
                .collect();
            kinds.extend([name.to_string(), name.to_ascii_lowercase(), mixed]);
            kinds.push(format!("{name}X"));
            kinds.push(name[1..].to_string());
        }
        for kind in &kinds {
            assert_eq!(known(kind).map(|k| k.name), scanned(kind), "{kind:?}");
        }
    }
}
