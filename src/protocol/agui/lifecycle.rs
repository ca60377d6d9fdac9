//! The run (Runs and Steps): a stream opens with RUN_STARTED or RUN_ERROR, nothing but the two
//! admitted events follows a closed run, no run opens inside another, everything a run opened
//! is closed by its RUN_FINISHED, its outcome says what it is, and a stream that ends before a
//! terminal event is a truncated run.

use super::conversation::{Conversation, Phase, Run};
use super::events;
use crate::rules::ids::{
    AGUI_INT_001, AGUI_RUN_001, AGUI_RUN_002, AGUI_RUN_003, AGUI_RUN_004, AGUI_RUN_005,
    AGUI_RUN_007,
};
use crate::rules::Violation;
use serde_json::Value;
use std::collections::HashSet;

/// Where an event stands in the run lifecycle, before the other concerns judge it.
pub enum Place {
    /// It opens a run (RUN_STARTED accepted).
    Opens,
    /// Inside an active run: every concern judges it.
    InRun,
    /// It ends the active run (RUN_FINISHED or RUN_ERROR).
    Ends,
    /// A late RUN_ERROR after RUN_FINISHED, or a RUN_ERROR opening the stream.
    LateError,
    /// Out of place (reported): the other concerns leave it alone.
    Outside,
}

/// Judges where `ty` may come, and moves the run along.
pub fn place(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) -> Place {
    let first = conv.stream_events == 0;
    conv.stream_events = conv.stream_events.saturating_add(1);
    let phase = if first {
        None
    } else {
        conv.run.as_ref().map(|r| r.phase)
    };
    // What this event's place is judged by: the stream's opening event, any RUN_STARTED
    // (against a run still active), any event after a run closed.
    if first {
        conv.exercised.hit(AGUI_RUN_001);
    }
    if ty == "RUN_STARTED" {
        conv.exercised.hit(AGUI_RUN_003);
    }
    if matches!(phase, Some(Phase::Finished | Phase::Errored)) {
        conv.exercised.hit(AGUI_RUN_002);
    }
    match (phase, ty) {
        (Some(Phase::Active), "RUN_STARTED") => {
            out.push(Violation::new(
                AGUI_RUN_003,
                "RUN_STARTED while a run is still active",
            ));
            Place::Outside
        }
        (_, "RUN_STARTED") => {
            conv.run = Some(Run::new(
                events::text(event, "runId").map(str::to_owned),
                events::text(event, "protocolVersion").map(str::to_owned),
            ));
            Place::Opens
        }
        (Some(Phase::Active), "RUN_FINISHED" | "RUN_ERROR") => Place::Ends,
        (Some(Phase::Active), _) => Place::InRun,
        (None, "RUN_ERROR") | (Some(Phase::Finished), "RUN_ERROR") => Place::LateError,
        (None, _) if first => {
            out.push(Violation::new(
                AGUI_RUN_001,
                format!("the stream begins with {ty}, not RUN_STARTED or RUN_ERROR"),
            ));
            Place::Outside
        }
        (None, _) => {
            // A run the answer never opened (a stream that opened out of place).
            Place::Outside
        }
        (Some(Phase::Finished), _) => {
            out.push(Violation::new(
                AGUI_RUN_002,
                format!("{ty} after RUN_FINISHED (only RUN_STARTED or RUN_ERROR may follow)"),
            ));
            Place::Outside
        }
        (Some(Phase::Errored), _) => {
            out.push(Violation::new(
                AGUI_RUN_002,
                format!("{ty} after RUN_ERROR (only RUN_STARTED may follow)"),
            ));
            Place::Outside
        }
    }
}

/// RUN_FINISHED, after the other concerns saw it: nothing may still be open, and the outcome
/// must be what it says.
pub fn finished(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let mut open = super::streams::still_open(conv);
    let failed = conv.run.as_ref().is_some_and(|r| r.malformed);
    // The close is owed only what the run opened (and a run failed as malformed owes none).
    if conv.run.as_ref().is_some_and(|r| r.opened) && !failed {
        conv.exercised.hit(AGUI_RUN_004);
    }
    if let Some(run) = conv.run.as_mut() {
        let mut steps: Vec<String> = run
            .steps
            .iter()
            .map(|(owner, name)| match owner {
                Some(o) => format!("step {name:?} of subagent {o:?}"),
                None => format!("step {name:?}"),
            })
            .collect();
        steps.sort();
        open.extend(steps);
        let mut subagents: Vec<String> = run
            .active_subagents
            .iter()
            .map(|s| format!("subagent invocation {s:?}"))
            .collect();
        subagents.sort();
        open.extend(subagents);
        run.phase = Phase::Finished;
    }
    if !open.is_empty() && !failed {
        out.push(Violation::new(
            AGUI_RUN_004,
            format!("RUN_FINISHED with {} still open", open.join(", ")),
        ));
    }
    super::streams::abandon_open(conv);
    let outcome = event.get("outcome");
    let kind = outcome.and_then(|o| o.get("type")).and_then(Value::as_str);
    if kind == Some("cancelled") {
        conv.exercised.hit(AGUI_RUN_007);
    }
    if kind == Some("cancelled") && event.get("result").is_some() {
        out.push(Violation::new(
            AGUI_RUN_007,
            "a cancelled run's RUN_FINISHED carries a result",
        ));
    }
    if kind == Some("interrupt") {
        let mut seen = HashSet::new();
        let ids = outcome
            .and_then(|o| o.get("interrupts"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("id").and_then(Value::as_str));
        for id in ids {
            conv.exercised.hit(AGUI_INT_001);
            if !seen.insert(id) {
                out.push(Violation::new(
                    AGUI_INT_001,
                    format!("interrupt id {id:?} appears twice in the run's outcome"),
                ));
            }
        }
    }
}

/// RUN_ERROR ends the run and everything still open in it.
pub fn errored(conv: &mut Conversation) {
    super::streams::abandon_open(conv);
    if let Some(run) = conv.run.as_mut() {
        run.phase = Phase::Errored;
    } else {
        let mut run = Run::new(None, None);
        run.phase = Phase::Errored;
        conv.run = Some(run);
    }
}

/// The answer's body ended (`error`: broken off): a run still open, or no run at all, is a
/// truncated run.
pub fn answer_ended(conv: &mut Conversation, error: Option<&str>, out: &mut Vec<Violation>) {
    // Without the exchange (a captured stream judged offline) the body is the stream.
    if conv.answer.as_ref().is_some_and(|a| !a.streamed) {
        return;
    }
    // A streamed answer owes a terminal event: its end is judged for one.
    conv.exercised.hit(AGUI_RUN_005);
    let how = match error {
        Some(e) => format!("broke off ({e})"),
        None => "ended".to_owned(),
    };
    if conv.stream_events == 0 {
        out.push(Violation::new(
            AGUI_RUN_005,
            format!("the answer's stream {how} without any event: a truncated run"),
        ));
    } else if conv.run.as_ref().is_some_and(|r| r.phase == Phase::Active) {
        out.push(Violation::new(
            AGUI_RUN_005,
            format!("the answer's stream {how} while its run was still active: a truncated run"),
        ));
    }
}
