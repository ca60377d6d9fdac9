//! Snapshots and deltas (State; Activity; Snapshots and Deltas): STATE_DELTA applied as an
//! RFC 6902 patch to the input's state or the last snapshot as amended since, ACTIVITY_DELTA to
//! the content of an activity message its snapshot created. A patch that does not apply is
//! warned about and skipped, as a consumer does; a malformed one is the schema's finding.

use super::conversation::{Conversation, MessageKind, MAX_IDS};
use super::events;
use crate::rules::Violation;
use serde_json::Value;

/// Judges a state or activity event of an active run.
pub fn observe(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) {
    match ty {
        "STATE_SNAPSHOT" => {
            if let Some(snapshot) = event.get("snapshot") {
                conv.state = snapshot.clone();
            }
        }
        "STATE_DELTA" => {
            let Some(delta) = event.get("delta") else {
                return;
            };
            if let Err(why) = apply(&mut conv.state, delta) {
                out.push(Violation::new(
                    "AGUI-STATE-001",
                    format!("STATE_DELTA does not apply to the state it amends: {why}"),
                ));
            }
        }
        "ACTIVITY_SNAPSHOT" => {
            let (Some(id), Some(content)) =
                (events::text(event, "messageId"), event.get("content"))
            else {
                return;
            };
            super::identity::note_message(conv, id, MessageKind::Activity, out);
            let keep = event.get("replace") == Some(&Value::Bool(false));
            let room = conv.activities.len() < MAX_IDS;
            match conv.activities.get_mut(id) {
                Some(existing) if !keep => *existing = content.clone(),
                Some(_) => {}
                None if room => {
                    conv.activities.insert(id.to_owned(), content.clone());
                }
                None => {}
            }
        }
        "ACTIVITY_DELTA" => {
            let (Some(id), Some(patch)) = (events::text(event, "messageId"), event.get("patch"))
            else {
                return;
            };
            let Some(content) = conv.activities.get_mut(id) else {
                out.push(Violation::new(
                    "AGUI-ACT-001",
                    format!("ACTIVITY_DELTA for activity message {id:?}, which no ACTIVITY_SNAPSHOT created"),
                ));
                return;
            };
            let mut patched = content.clone();
            match apply(&mut patched, patch) {
                Err(why) => out.push(Violation::new(
                    "AGUI-STATE-001",
                    format!("ACTIVITY_DELTA does not apply to activity {id:?}: {why}"),
                )),
                Ok(()) if !patched.is_object() => out.push(Violation::new(
                    "AGUI-ACT-002",
                    format!(
                        "ACTIVITY_DELTA makes activity {id:?}'s content {}, not an object",
                        crate::show::event(&patched)
                    ),
                )),
                Ok(()) => *content = patched,
            }
        }
        _ => {}
    }
}

/// Applies `patch` to `value` atomically; why not, when it does not apply (a patch the
/// schema rejects is left to it, and to nobody else).
fn apply(value: &mut Value, patch: &Value) -> Result<(), String> {
    let Ok(patch) = serde_json::from_value::<json_patch::Patch>(patch.clone()) else {
        return Ok(());
    };
    json_patch::patch(value, &patch).map_err(|e| e.to_string())
}
