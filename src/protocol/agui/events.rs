//! What each of AG-UI's event types is to the checker: which streamed item it opens,
//! continues or closes, and how it stands towards an open chunk stream (The Event Model › The
//! events; Streaming Messages › Closing a chunk stream).

use serde_json::Value;

/// The three kinds of streamed item (Streaming Messages), matched by an id each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Text,
    Tool,
    Reasoning,
}

impl Kind {
    /// The field naming an item of this kind.
    pub fn id_field(self) -> &'static str {
        match self {
            Kind::Tool => "toolCallId",
            Kind::Text | Kind::Reasoning => "messageId",
        }
    }

    /// How messages name the item: "text message m-1".
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Text => "text message",
            Kind::Tool => "tool call",
            Kind::Reasoning => "reasoning message",
        }
    }

    /// The event types of the explicit triad: START, content, END.
    pub fn triad(self) -> [&'static str; 3] {
        match self {
            Kind::Text => [
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
            ],
            Kind::Tool => ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"],
            Kind::Reasoning => [
                "REASONING_MESSAGE_START",
                "REASONING_MESSAGE_CONTENT",
                "REASONING_MESSAGE_END",
            ],
        }
    }
}

/// One step of a streamed item's triad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Start,
    Content,
    End,
}

/// The item event `ty` is a triad step of, if it is one.
pub fn triad_step(ty: &str) -> Option<(Kind, Part)> {
    [Kind::Text, Kind::Tool, Kind::Reasoning]
        .into_iter()
        .find_map(|kind| {
            let [start, content, end] = kind.triad();
            match ty {
                t if t == start => Some((kind, Part::Start)),
                t if t == content => Some((kind, Part::Content)),
                t if t == end => Some((kind, Part::End)),
                _ => None,
            }
        })
}

/// The kind a chunk event stands for, if `ty` is one.
pub fn chunk_kind(ty: &str) -> Option<Kind> {
    match ty {
        "TEXT_MESSAGE_CHUNK" => Some(Kind::Text),
        "TOOL_CALL_CHUNK" => Some(Kind::Tool),
        "REASONING_MESSAGE_CHUNK" => Some(Kind::Reasoning),
        _ => None,
    }
}

/// Run-level events: they close every open chunk stream, and carry no attribution.
pub fn is_run_level(ty: &str) -> bool {
    matches!(
        ty,
        "RUN_STARTED" | "RUN_FINISHED" | "RUN_ERROR" | "MESSAGES_SNAPSHOT"
    )
}

/// Events that stand aside from chunk assembly and close nothing (RAW, ACTIVITY_SNAPSHOT,
/// ACTIVITY_DELTA, REASONING_ENCRYPTED_VALUE, and SUBAGENT_STARTED, which opens a new lane).
pub fn stands_aside(ty: &str) -> bool {
    matches!(
        ty,
        "RAW"
            | "ACTIVITY_SNAPSHOT"
            | "ACTIVITY_DELTA"
            | "REASONING_ENCRYPTED_VALUE"
            | "SUBAGENT_STARTED"
    )
}

/// The subagent invocation an event is attributed to (`None`: the parent agent).
pub fn owner(event: &Value) -> Option<String> {
    event
        .get("subagentRunId")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A string field of `event`.
pub fn text<'a>(event: &'a Value, field: &str) -> Option<&'a str> {
    event.get(field).and_then(Value::as_str)
}

/// How an owner reads in a message.
pub fn owner_name(owner: &Option<String>) -> String {
    match owner {
        Some(id) => format!("subagent {id:?}"),
        None => "the parent agent".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_triad_step_and_chunk_is_known_by_its_type() {
        assert_eq!(
            triad_step("TOOL_CALL_ARGS"),
            Some((Kind::Tool, Part::Content))
        );
        assert_eq!(
            triad_step("REASONING_MESSAGE_END"),
            Some((Kind::Reasoning, Part::End))
        );
        assert_eq!(triad_step("REASONING_START"), None);
        assert_eq!(chunk_kind("TOOL_CALL_CHUNK"), Some(Kind::Tool));
        for kind in [Kind::Text, Kind::Tool, Kind::Reasoning] {
            for ty in kind.triad() {
                assert!(crate::protocol::agui::schema::schema().knows(ty), "{ty}");
            }
        }
    }
}
