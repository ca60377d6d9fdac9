//! Streamed items (Streaming Messages; Text Messages; Tool Calls; Reasoning): chunk events
//! expanded first, each lane's chunk stream closed when the spec says it ends, then every
//! START, content and END judged by the triad rules — no double open, nothing for an id not
//! open, a reopening that agrees, one spelling per item, continuations agreeing with their
//! opener's owner — and reasoning spans by their own ids.

use super::conversation::{Conversation, MessageKind, Opened, Owner};
use super::events::{self, chunk_kind, triad_step, Kind, Part};
use crate::rules::ids::{
    AGUI_STR_001, AGUI_STR_002, AGUI_STR_003, AGUI_STR_004, AGUI_STR_005, AGUI_STR_006,
    AGUI_STR_007, AGUI_SUB_004,
};
use crate::rules::Violation;
use serde_json::{Map, Value};

/// The opener fields a continuation chunk may repeat, per kind.
fn repeatable(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Text => &["role", "name"],
        Kind::Tool => &["toolCallName", "parentMessageId"],
        Kind::Reasoning => &[],
    }
}

/// What an opener establishes: its describing fields, a text message's role defaulting to
/// `assistant` (an absent role means it).
fn established(kind: Kind, event: &Value) -> Map<String, Value> {
    let mut fields: Map<String, Value> = repeatable(kind)
        .iter()
        .filter_map(|f| event.get(*f).map(|v| ((*f).to_owned(), v.clone())))
        .collect();
    if kind == Kind::Text && !fields.contains_key("role") {
        fields.insert("role".into(), Value::String("assistant".into()));
    }
    fields
}

/// Judges one event of an active run.
pub fn observe(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) {
    let tag = events::owner(event);
    let ended = end_chunk_streams(conv, ty, event, &tag, out);
    if let Some(kind) = chunk_kind(ty) {
        chunk(conv, kind, event, tag, out);
    } else if let Some((kind, part)) = triad_step(ty) {
        let Some(id) = events::text(event, kind.id_field()) else {
            return; // the schema requires it: reported as malformed
        };
        // An explicit event of an item: held to the item's one spelling.
        conv.exercised.hit(AGUI_STR_006);
        let mixed = ended.as_ref() == Some(&(kind, id.to_owned()));
        if mixed {
            out.push(Violation::new(
                AGUI_STR_006,
                format!("{ty} for {} {id:?}, which chunk events were assembling: an item is spelled in one form", kind.noun()),
            ));
            return;
        }
        let fields = established(kind, event);
        triad(conv, kind, part, id, tag, fields, false, out);
    } else if ty == "REASONING_START" || ty == "REASONING_END" {
        span(conv, ty, event, tag, out);
    }
}

/// Closes the chunk streams `ty` ends (Streaming Messages › Closing a chunk stream); the item
/// an explicit event named while a chunk stream was assembling it, if one.
fn end_chunk_streams(
    conv: &mut Conversation,
    ty: &str,
    event: &Value,
    tag: &Owner,
    out: &mut Vec<Violation>,
) -> Option<(Kind, String)> {
    if events::is_run_level(ty) {
        let lanes: Vec<Owner> = conv.chunks.keys().cloned().collect();
        for lane in lanes {
            close_lane(conv, &lane, out);
        }
        return None;
    }
    if ty == "SUBAGENT_FINISHED" || ty == "SUBAGENT_ERROR" {
        close_lane(conv, tag, out);
        return None;
    }
    if chunk_kind(ty).is_some() || events::stands_aside(ty) {
        return None;
    }
    // An explicit event naming an item a chunk stream is assembling ends that stream.
    let mut named = None;
    if let Some((kind, _)) = triad_step(ty) {
        if let Some(id) = events::text(event, kind.id_field()) {
            let lane = conv
                .chunks
                .iter()
                .find(|(_, (k, i))| *k == kind && i == id)
                .map(|(lane, _)| lane.clone());
            if let Some(lane) = lane {
                close_lane(conv, &lane, out);
                named = Some((kind, id.to_owned()));
            }
        }
    }
    // The event's lane: its tag, or, untagged, the owner of the item it continues ("an
    // untagged continuation continues whatever the opener owns").
    let lane = match (tag, triad_step(ty)) {
        (None, Some((kind, Part::Content | Part::End))) => events::text(event, kind.id_field())
            .and_then(|id| conv.items(kind).open.get(id))
            .and_then(|o| o.owner.clone()),
        _ => tag.clone(),
    };
    close_lane(conv, &lane, out);
    named
}

/// Synthesizes the END of `lane`'s open chunk stream, if it has one.
fn close_lane(conv: &mut Conversation, lane: &Owner, out: &mut Vec<Violation>) {
    if let Some((kind, id)) = conv.chunks.remove(lane) {
        triad(
            conv,
            kind,
            Part::End,
            &id,
            lane.clone(),
            Map::new(),
            true,
            out,
        );
    }
}

/// A chunk: the first of its item opens it (carrying its ids), a later one continues it.
fn chunk(conv: &mut Conversation, kind: Kind, event: &Value, tag: Owner, out: &mut Vec<Violation>) {
    let ty = event["type"].as_str().unwrap_or_default();
    let id = events::text(event, kind.id_field());
    let assembling = |conv: &Conversation, want: &dyn Fn(&str) -> bool| -> Vec<Owner> {
        conv.chunks
            .iter()
            .filter(|(_, (k, i))| *k == kind && want(i))
            .map(|(lane, _)| lane.clone())
            .collect()
    };
    let lane = match id {
        Some(id) => {
            let lanes = assembling(conv, &|i| i == id);
            match lanes.into_iter().next() {
                Some(lane) => lane,
                None => return open_by_chunk(conv, kind, id, event, tag, out),
            }
        }
        None => {
            let lanes = assembling(conv, &|_| true);
            // An unattributed continuation without an id: its referent must be unique.
            if tag.is_none() {
                conv.exercised.hit(AGUI_STR_007);
            }
            let lane = match &tag {
                Some(_) => lanes.iter().find(|l| **l == tag).cloned(),
                None if lanes.contains(&None) => Some(None),
                None if lanes.len() == 1 => lanes.first().cloned(),
                None if lanes.len() > 1 => {
                    out.push(Violation::new(
                        AGUI_STR_007,
                        format!("{ty} without {} or subagentRunId continues nothing unique: {} subagents have {} chunk streams open", kind.id_field(), lanes.len(), kind.noun()),
                    ));
                    return;
                }
                None => None,
            };
            match lane {
                Some(lane) => lane,
                None => {
                    out.push(Violation::new(
                        AGUI_STR_004,
                        format!("{ty} without {} opens a {} (no chunk stream of its kind is open): the first chunk carries its id", kind.id_field(), kind.noun()),
                    ));
                    return;
                }
            }
        }
    };
    // A continuation of `lane`'s open stream.
    let Some((_, id)) = conv.chunks.get(&lane).cloned() else {
        return;
    };
    // An attributed continuation is held to its opener's owner.
    if tag.is_some() {
        conv.exercised.hit(AGUI_SUB_004);
    }
    if tag.is_some() && tag != lane {
        out.push(Violation::new(
            AGUI_SUB_004,
            format!(
                "{ty} for {} {id:?} is attributed to {}, but {} opened it",
                kind.noun(),
                events::owner_name(&tag),
                events::owner_name(&lane)
            ),
        ));
    }
    let opener = conv.items(kind).open.get(&id).map(|o| o.fields.clone());
    for field in repeatable(kind) {
        let (Some(said), Some(Some(had))) =
            (event.get(*field), opener.as_ref().map(|o| o.get(*field)))
        else {
            continue;
        };
        conv.exercised.hit(AGUI_STR_005);
        if said != had {
            out.push(Violation::new(
                AGUI_STR_005,
                format!("{ty} for {} {id:?} repeats {field} as {said}, but its opener established {had}", kind.noun()),
            ));
        }
    }
}

/// A chunk naming an item no chunk stream is assembling: it opens that item in its lane,
/// after the lane's previous stream closes.
fn open_by_chunk(
    conv: &mut Conversation,
    kind: Kind,
    id: &str,
    event: &Value,
    tag: Owner,
    out: &mut Vec<Violation>,
) {
    let ty = event["type"].as_str().unwrap_or_default();
    close_lane(conv, &tag, out);
    conv.exercised.hit(AGUI_STR_006);
    if conv.items(kind).open.get(id).is_some_and(|o| !o.chunked) {
        out.push(Violation::new(
            AGUI_STR_006,
            format!(
                "{ty} for {} {id:?}, which its START opened: an item is spelled in one form",
                kind.noun()
            ),
        ));
        return;
    }
    // The first chunk of an item: it carries the item's id (found here), and a tool call's
    // its name.
    conv.exercised.hit(AGUI_STR_004);
    if kind == Kind::Tool && events::text(event, "toolCallName").is_none() {
        out.push(Violation::new(
            AGUI_STR_004,
            format!("the first TOOL_CALL_CHUNK of tool call {id:?} carries no toolCallName"),
        ));
        return;
    }
    let fields = established(kind, event);
    triad(conv, kind, Part::Start, id, tag.clone(), fields, true, out);
    conv.chunks.insert(tag, (kind, id.to_owned()));
}

/// One START, content or END (sent, or synthesized from chunks) under the triad rules.
#[allow(clippy::too_many_arguments)]
fn triad(
    conv: &mut Conversation,
    kind: Kind,
    part: Part,
    id: &str,
    tag: Owner,
    fields: Map<String, Value>,
    chunked: bool,
    out: &mut Vec<Violation>,
) {
    let [start, ..] = kind.triad();
    match part {
        Part::Start => {
            conv.exercised.hit(AGUI_STR_001);
            if conv.items(kind).open.contains_key(id) {
                out.push(Violation::new(
                    AGUI_STR_001,
                    format!("{start} for {} {id:?}, which is already open", kind.noun()),
                ));
                return;
            }
            // A tool call inherits the owner of the message that carries it.
            let tag = match (&tag, kind) {
                (None, Kind::Tool) => fields
                    .get("parentMessageId")
                    .and_then(Value::as_str)
                    .and_then(|p| conv.texts.open.get(p).or_else(|| conv.texts.closed.get(p)))
                    .and_then(|m| m.owner.clone()),
                _ => tag,
            };
            let reopened = conv.items(kind).closed.get(id).cloned();
            if let Some(was) = &reopened {
                conv.exercised.hit(AGUI_STR_003);
                // What the reopening says against what the item established: an untagged
                // reopening claims no other owner, and a field it leaves out no other value.
                let other_owner = tag.is_some() && was.owner != tag;
                let other_field = fields
                    .iter()
                    .any(|(k, v)| was.fields.get(k).is_some_and(|had| had != v));
                if other_owner || other_field {
                    out.push(Violation::new(
                        AGUI_STR_003,
                        format!(
                            "{start} reopens {} {id:?} as {} of {}, but it was {} of {}",
                            kind.noun(),
                            Value::Object(fields.clone()),
                            events::owner_name(&tag),
                            Value::Object(was.fields.clone()),
                            events::owner_name(&was.owner)
                        ),
                    ));
                }
            }
            opened(conv, kind, id, &tag, &fields, out);
            conv.note_opened();
            conv.items(kind).open.insert(
                id.to_owned(),
                Opened {
                    owner: tag,
                    chunked,
                    fields,
                },
            );
        }
        Part::Content | Part::End => {
            let step = kind.triad()[if part == Part::End { 2 } else { 1 }];
            conv.exercised.hit(AGUI_STR_002);
            let Some(opener) = conv.items(kind).open.get(id).cloned() else {
                out.push(Violation::new(
                    AGUI_STR_002,
                    format!("{step} for {} {id:?}, which is not open", kind.noun()),
                ));
                return;
            };
            // An attributed explicit event is held to its opener's owner (a synthesized END
            // carries its lane, not a claim).
            if tag.is_some() && !chunked {
                conv.exercised.hit(AGUI_SUB_004);
            }
            if tag.is_some() && tag != opener.owner && !chunked {
                out.push(Violation::new(
                    AGUI_SUB_004,
                    format!(
                        "{step} for {} {id:?} is attributed to {}, but {} opened it",
                        kind.noun(),
                        events::owner_name(&tag),
                        events::owner_name(&opener.owner)
                    ),
                ));
            }
            if part == Part::End {
                conv.items(kind).close(id);
            }
        }
    }
}

/// What opening (or reopening) an item establishes beyond the triad: its message id's kind, a
/// tool call's place in the run and its owner agreeing with the message carrying it.
fn opened(
    conv: &mut Conversation,
    kind: Kind,
    id: &str,
    tag: &Owner,
    fields: &Map<String, Value>,
    out: &mut Vec<Violation>,
) {
    match kind {
        Kind::Text => {
            let role = fields
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("assistant")
                .to_owned();
            super::identity::note_message(conv, id, MessageKind::Text(role), out)
        }
        Kind::Reasoning => super::identity::note_message(conv, id, MessageKind::Reasoning, out),
        Kind::Tool => {
            if let Some(parent) = fields.get("parentMessageId").and_then(Value::as_str) {
                let holder = conv
                    .texts
                    .open
                    .get(parent)
                    .or_else(|| conv.texts.closed.get(parent))
                    .map(|m| m.owner.clone());
                // The message carrying the call is known: the call is held to its owner.
                if let Some(holder) = holder {
                    conv.exercised.hit(AGUI_SUB_004);
                    if holder != *tag {
                        out.push(Violation::new(
                            AGUI_SUB_004,
                            format!("tool call {id:?} is attributed to {}, but the message carrying it ({parent:?}) to {}", events::owner_name(tag), events::owner_name(&holder)),
                        ));
                    }
                }
            }
            // A call reopened in this run is one the run started too (pendingToolCallIds).
            if let Some(run) = conv.run.as_mut() {
                let new = !run.calls.iter().any(|(c, _)| c == id);
                if new && run.calls.len() < super::conversation::MAX_IDS {
                    let name = fields
                        .get("toolCallName")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    run.calls.push((id.to_owned(), name));
                }
            }
        }
    }
}

/// A reasoning span: opened and closed by its own id, a namespace apart from messages.
fn span(conv: &mut Conversation, ty: &str, event: &Value, tag: Owner, out: &mut Vec<Violation>) {
    let (Some(id), Some(run)) = (events::text(event, "messageId"), conv.run.as_mut()) else {
        return;
    };
    if ty == "REASONING_START" {
        conv.exercised.hit(AGUI_STR_001);
        if run.spans.contains_key(id) {
            out.push(Violation::new(
                AGUI_STR_001,
                format!("REASONING_START for span {id:?}, which is already open"),
            ));
        } else {
            run.spans.insert(id.to_owned(), tag);
            run.opened = true;
        }
        return;
    }
    conv.exercised.hit(AGUI_STR_002);
    if tag.is_some() && run.spans.contains_key(id) {
        conv.exercised.hit(AGUI_SUB_004);
    }
    match run.spans.remove(id) {
        None => out.push(Violation::new(
            AGUI_STR_002,
            format!("REASONING_END for span {id:?}, which is not open"),
        )),
        Some(owner) if tag.is_some() && tag != owner => out.push(Violation::new(
            AGUI_SUB_004,
            format!(
                "REASONING_END for span {id:?} is attributed to {}, but {} opened it",
                events::owner_name(&tag),
                events::owner_name(&owner)
            ),
        )),
        Some(_) => {}
    }
}

/// Everything still open in the run, one line each (for RUN_FINISHED).
pub fn still_open(conv: &Conversation) -> Vec<String> {
    let mut open = Vec::new();
    for (kind, items) in [
        (Kind::Text, &conv.texts),
        (Kind::Tool, &conv.tools),
        (Kind::Reasoning, &conv.reasoning),
    ] {
        let mut ids: Vec<&String> = items.open.keys().collect();
        ids.sort();
        open.extend(ids.into_iter().map(|id| format!("{} {id:?}", kind.noun())));
    }
    if let Some(run) = &conv.run {
        let mut spans: Vec<&String> = run.spans.keys().collect();
        spans.sort();
        open.extend(spans.into_iter().map(|id| format!("reasoning span {id:?}")));
    }
    open
}

/// Forgets every open item (RUN_ERROR ends them; a new run starts with nothing open).
pub fn abandon_open(conv: &mut Conversation) {
    conv.chunks.clear();
    for kind in [Kind::Text, Kind::Tool, Kind::Reasoning] {
        let ids: Vec<String> = conv.items(kind).open.keys().cloned().collect();
        for id in ids {
            conv.items(kind).close(&id);
        }
    }
}
