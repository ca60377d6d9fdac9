//! Identity (Run Input › Identity; The Event Model › Identifiers; Versioning › Version
//! negotiation): the input's threadId on every run's boundary events, the requested run
//! echoing the input's runId, boundary events agreeing, a runId never reused in the thread, a
//! messageId naming one message, and the producer's own version declared.

use super::conversation::{version, Conversation, MessageKind, MAX_IDS};
use super::events;
use crate::rules::ids::{
    AGUI_ID_001, AGUI_ID_002, AGUI_ID_003, AGUI_ID_004, AGUI_VER_001, AGUI_VER_002, AGUI_VER_003,
};
use crate::rules::Violation;
use serde_json::Value;

/// Notes that `id` names a message of `kind`; another message already named so breaks
/// uniqueness.
pub fn note_message(
    conv: &mut Conversation,
    id: &str,
    kind: MessageKind,
    out: &mut Vec<Violation>,
) {
    conv.exercised.hit(AGUI_ID_004);
    if let Some(had) = conv.message(id, kind.clone()) {
        out.push(Violation::new(
            AGUI_ID_004,
            format!(
                "messageId {id:?} names {}, but it already named {} in this thread",
                kind.describe(),
                had.describe()
            ),
        ));
    }
}

/// RUN_STARTED: the thread it names, its runId not already a run of this answer, its version.
pub fn run_started(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    boundary_thread(conv, event, out);
    let run_id = events::text(event, "runId").map(str::to_owned);
    let declared = events::text(event, "protocolVersion");
    // What a producer declares is its own, whatever it was asked: judged from the stream.
    if declared.is_some() {
        conv.exercised.hit(AGUI_VER_003);
    }
    if let Some(declared) = declared.filter(|d| version(d).is_none()) {
        out.push(Violation::new(
            AGUI_VER_003,
            format!("RUN_STARTED declares protocolVersion {declared:?}, not MAJOR.MINOR"),
        ));
    }
    let Some(answer) = conv.answer.as_mut() else {
        return;
    };
    if let Some(id) = &run_id {
        conv.exercised.hit(AGUI_ID_003);
        if answer.runs.iter().any(|(r, _)| r.as_deref() == Some(id)) {
            out.push(Violation::new(
                AGUI_ID_003,
                format!("RUN_STARTED opens run {id:?} a second time in one stream"),
            ));
        }
        if answer.input.run_id.as_deref() == Some(id.as_str()) {
            answer.requested = Some(declared.map(str::to_owned));
        }
    }
    if answer.runs.len() < MAX_IDS {
        answer.runs.push((run_id, declared.map(str::to_owned)));
    }
    if let Some(declared) = declared {
        let newer_input = answer
            .input
            .version
            .as_deref()
            .and_then(version)
            .is_some_and(|v| v > (1, 1));
        if newer_input {
            conv.exercised.hit(AGUI_VER_002);
        }
        if newer_input && answer.input.version.as_deref() == Some(declared) {
            out.push(Violation::new(
                AGUI_VER_002,
                format!("RUN_STARTED declares protocolVersion {declared:?}, the input's own newer version echoed instead of the producer's"),
            ));
        }
    }
}

/// RUN_FINISHED: the thread it names, and the runId its RUN_STARTED opened.
pub fn run_finished(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    boundary_thread(conv, event, out);
    let said = events::text(event, "runId");
    let opened = conv.run.as_ref().and_then(|r| r.run_id.as_deref());
    if let (Some(said), Some(opened)) = (said, opened) {
        conv.exercised.hit(AGUI_ID_002);
        if said != opened {
            out.push(Violation::new(
                AGUI_ID_002,
                format!("RUN_FINISHED names run {said:?}, but its RUN_STARTED opened {opened:?}"),
            ));
        }
    }
}

/// A boundary event carries the input's threadId. With no input to hold it to (a captured
/// stream, a proxy that joined late), the stream's boundary events are held to each other:
/// each carries the input's threadId, so two that differ cannot both.
fn boundary_thread(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let ty = events::text(event, "type").unwrap_or_default();
    let Some(said) = events::text(event, "threadId") else {
        return;
    };
    let input = conv
        .answer
        .as_ref()
        .and_then(|a| a.input.thread_id.as_deref());
    if let Some(want) = input {
        conv.exercised.hit(AGUI_ID_001);
        if said != want {
            out.push(Violation::new(
                AGUI_ID_001,
                format!("{ty} names thread {said:?}, but the input's threadId is {want:?}"),
            ));
        }
        return;
    }
    if conv.stream_thread.is_some() {
        conv.exercised.hit(AGUI_ID_001);
    }
    match conv.stream_thread.as_deref() {
        None => conv.stream_thread = Some(said.to_owned()),
        Some(first) if first != said => out.push(Violation::new(
            AGUI_ID_001,
            format!(
                "{ty} names thread {said:?}, but the stream's first boundary event named {first:?}: every run on a stream carries the input's threadId, so one of them does not"
            ),
        )),
        Some(_) => {}
    }
}

/// The answer ended: the requested run was there and declared its version, and it is not a
/// run an earlier answer already carried.
pub fn answer_ended(conv: &mut Conversation, out: &mut Vec<Violation>) {
    let Some(answer) = conv.answer.as_ref() else {
        return;
    };
    if answer.runs.is_empty() {
        return;
    }
    let wanted = answer.input.run_id.clone();
    // The answer carried runs: whether one echoes the input's runId (when the input is known),
    // whether the requested run declared its version, whether it is a run already carried.
    if wanted.is_some() {
        conv.exercised.hit(AGUI_ID_001);
    }
    conv.exercised.hit(AGUI_VER_001);
    if answer.requested.is_none() {
        if let Some(want) = &wanted {
            let seen: Vec<String> = answer
                .runs
                .iter()
                .map(|(r, _)| format!("{:?}", r.as_deref().unwrap_or("")))
                .collect();
            out.push(Violation::new(
                AGUI_ID_001,
                format!(
                    "no run of the answer echoes the input's runId {want:?} (it carried {})",
                    seen.join(", ")
                ),
            ));
        }
    }
    // The requested run: the one echoing the input's runId, else the answer's last.
    let declared = match &answer.requested {
        Some(declared) => declared.clone(),
        None => answer.runs.last().and_then(|(_, d)| d.clone()),
    };
    if declared.is_none() {
        out.push(Violation::new(
            AGUI_VER_001,
            "the requested run's RUN_STARTED declares no protocolVersion",
        ));
    }
    // Runs before the last may replay earlier ones; the last is the one this input asked for.
    if let Some((Some(last), _)) = answer.runs.last() {
        conv.exercised.hit(AGUI_ID_003);
        if conv.earlier_runs.contains(last) {
            out.push(Violation::new(
                AGUI_ID_003,
                format!("the requested run is {last:?}, a run an earlier answer of this thread already carried"),
            ));
        }
    }
    let runs: Vec<String> = answer.runs.iter().filter_map(|(r, _)| r.clone()).collect();
    for id in runs {
        if conv.earlier_runs.len() < MAX_IDS {
            conv.earlier_runs.insert(id);
        }
    }
}
