//! Snapshots and deltas (State; Activity; Snapshots and Deltas): STATE_DELTA applied as an
//! RFC 6902 patch to the input's state or the last snapshot as amended since, ACTIVITY_DELTA to
//! the content of an activity message its snapshot created. A patch that does not apply is
//! warned about and skipped, as a consumer does; a malformed one is the schema's finding.

use super::conversation::{Activity, Conversation, MessageKind, MAX_IDS};
use super::events;
use crate::rules::ids::{AGUI_ACT_001, AGUI_ACT_002, AGUI_STATE_001, AGUI_SUB_004};
use crate::rules::Violation;
use serde_json::Value;

/// Judges a state or activity event of an active run.
pub fn observe(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) {
    match ty {
        "STATE_SNAPSHOT" => {
            if let Some(snapshot) = event.get("snapshot") {
                conv.state = Some(snapshot.clone());
            }
        }
        "STATE_DELTA" => {
            let Some(delta) = event.get("delta") else {
                return;
            };
            let Some(state) = conv.state.as_mut() else {
                return conv.not_judged(
                    AGUI_STATE_001,
                    "a STATE_DELTA came before any STATE_SNAPSHOT, and the state it amends is the input's, which was not shown",
                );
            };
            conv.exercised.hit(AGUI_STATE_001);
            if let Err(why) = apply(state, delta) {
                out.push(Violation::new(
                    AGUI_STATE_001,
                    format!("STATE_DELTA does not apply to the state it amends: {why}"),
                ));
            }
        }
        "ACTIVITY_SNAPSHOT" => activity_snapshot(conv, event, out),
        "ACTIVITY_DELTA" => activity_delta(conv, event, out),
        "MESSAGES_SNAPSHOT" => messages_snapshot(conv, event, out),
        _ => {}
    }
}

/// ACTIVITY_SNAPSHOT creates or replaces an activity message; `replace: false` leaves an
/// existing one as it stands, and must agree with its owner.
fn activity_snapshot(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let (Some(id), Some(content)) = (events::text(event, "messageId"), event.get("content")) else {
        return;
    };
    super::identity::note_message(conv, id, MessageKind::Activity, out);
    let owner = events::owner(event);
    let keep = event.get("replace") == Some(&Value::Bool(false));
    let room = conv.activities.len() < MAX_IDS;
    // A snapshot that keeps an existing activity, attributed: held to the activity's owner.
    if keep && owner.is_some() && conv.activities.contains_key(id) {
        conv.exercised.hit(AGUI_SUB_004);
    }
    match conv.activities.get_mut(id) {
        Some(existing) if keep && owner.is_some() && owner != existing.owner => {
            out.push(Violation::new(
                AGUI_SUB_004,
                format!(
                    "ACTIVITY_SNAPSHOT (replace: false) for activity {id:?} is attributed to {}, but {} owns it",
                    events::owner_name(&owner),
                    events::owner_name(&existing.owner)
                ),
            ));
        }
        Some(_) if keep => {}
        // A replacing snapshot re-mints the activity, its owner included.
        Some(existing) => {
            *existing = Activity {
                content: content.clone(),
                owner,
            };
        }
        None if room => {
            let minted = Activity {
                content: content.clone(),
                owner,
            };
            conv.activities.insert(id.to_owned(), minted);
        }
        None => {}
    }
}

/// ACTIVITY_DELTA amends an activity a snapshot created, under its owner, leaving an object.
fn activity_delta(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let (Some(id), Some(patch)) = (events::text(event, "messageId"), event.get("patch")) else {
        return;
    };
    let owner = events::owner(event);
    conv.exercised.hit(AGUI_ACT_001);
    let Some(activity) = conv.activities.get_mut(id) else {
        out.push(Violation::new(
            AGUI_ACT_001,
            format!(
                "ACTIVITY_DELTA for activity message {id:?}, which no ACTIVITY_SNAPSHOT created"
            ),
        ));
        return;
    };
    // Its baseline exists: the patch is applied to it (and, attributed, held to its owner).
    conv.exercised.hit(AGUI_STATE_001);
    if owner.is_some() {
        conv.exercised.hit(AGUI_SUB_004);
    }
    if owner.is_some() && owner != activity.owner {
        out.push(Violation::new(
            AGUI_SUB_004,
            format!(
                "ACTIVITY_DELTA for activity {id:?} is attributed to {}, but {} owns it",
                events::owner_name(&owner),
                events::owner_name(&activity.owner)
            ),
        ));
    }
    let mut patched = activity.content.clone();
    let applied = apply(&mut patched, patch);
    if applied.is_ok() {
        conv.exercised.hit(AGUI_ACT_002);
    }
    match applied {
        Err(why) => out.push(Violation::new(
            AGUI_STATE_001,
            format!("ACTIVITY_DELTA does not apply to activity {id:?}: {why}"),
        )),
        Ok(()) if !patched.is_object() => out.push(Violation::new(
            AGUI_ACT_002,
            format!(
                "ACTIVITY_DELTA makes activity {id:?}'s content {}, not an object",
                crate::show::event(&patched)
            ),
        )),
        Ok(()) => activity.content = patched,
    }
}

/// MESSAGES_SNAPSHOT restates the conversation: each message keeps its id's kind, an activity
/// message is a baseline its deltas amend, and a tool message answering a frontend call of
/// this run is a message the producer fabricated.
fn messages_snapshot(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let messages = event.get("messages").and_then(Value::as_array);
    for m in messages.into_iter().flatten() {
        let (Some(id), Some(role)) = (events::text(m, "id"), events::text(m, "role")) else {
            continue;
        };
        super::identity::note_message(conv, id, MessageKind::Input(role.to_owned()), out);
        if role == "activity" {
            if let Some(content) = m.get("content").filter(|c| c.is_object()) {
                if conv.activities.len() < MAX_IDS || conv.activities.contains_key(id) {
                    let restated = Activity {
                        content: content.clone(),
                        owner: events::owner(m),
                    };
                    conv.activities.insert(id.to_owned(), restated);
                }
            }
        }
        if role == "tool" {
            if let Some(call) = events::text(m, "toolCallId") {
                super::tools::answered_in_snapshot(conv, call, out);
            }
        }
    }
}

/// Applies `patch` to `value` atomically; why not, when it does not apply (a patch the
/// schema rejects is left to it, and to nobody else).
/// Applies `patch` to `value` as RFC 6902 has it: whole, or (on an error) not at all.
pub fn apply(value: &mut Value, patch: &Value) -> Result<(), String> {
    let Ok(patch) = serde_json::from_value::<json_patch::Patch>(Value::Array(known_ops(patch)))
    else {
        return Ok(());
    };
    json_patch::patch(value, &patch).map_err(|e| e.to_string())
}

/// The operations of `patch` a consumer applies: one whose `op` RFC 6902 does not define is
/// unrecognised, dropped from the patch while the rest apply (Snapshots and Deltas › When a
/// patch does not apply).
fn known_ops(patch: &Value) -> Vec<Value> {
    let known = ["add", "remove", "replace", "move", "copy", "test"];
    patch
        .as_array()
        .into_iter()
        .flatten()
        .filter(|op| {
            op.get("op")
                .and_then(Value::as_str)
                .is_some_and(|o| known.contains(&o))
        })
        .cloned()
        .collect()
}

/// Applies `patch` operation by operation, keeping what applied before one failed: what a
/// consumer that does not apply patches atomically holds (Snapshots and Deltas › When a patch
/// does not apply), for the checker to name and the reference client's fault to do.
pub fn apply_partial(value: &mut Value, patch: &Value) {
    for op in known_ops(patch) {
        if apply(value, &Value::Array(vec![op])).is_err() {
            return;
        }
    }
}
