//! Steps (Runs and Steps › Steps; Subagents › Ownership): opened and finished by name, per
//! owner — no step opened twice, none finished that was never opened, and a STEP_FINISHED
//! carrying its STEP_STARTED's attribution.

use super::conversation::Conversation;
use super::events;
use crate::rules::ids::{AGUI_STEP_001, AGUI_SUB_004};
use crate::rules::Violation;
use serde_json::Value;

/// Judges a STEP_STARTED or STEP_FINISHED of an active run.
pub fn observe(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) {
    let (Some(name), Some(run)) = (events::text(event, "stepName"), conv.run.as_mut()) else {
        return;
    };
    let owner = events::owner(event);
    let key = (owner.clone(), name.to_owned());
    // Every step event is held to the steps open; a STEP_FINISHED also to its opener's owner.
    conv.exercised.hit(AGUI_STEP_001);
    if ty == "STEP_FINISHED" {
        conv.exercised.hit(AGUI_SUB_004);
    }
    match ty {
        "STEP_STARTED" if !run.steps.insert(key.clone()) => {
            out.push(Violation::new(
                AGUI_STEP_001,
                format!(
                    "STEP_STARTED for step {name:?} of {}, which is already open",
                    events::owner_name(&owner)
                ),
            ));
        }
        "STEP_STARTED" => run.opened = true,
        "STEP_FINISHED" => {
            if run.steps.remove(&key) {
                return;
            }
            let other = run
                .steps
                .iter()
                .find(|(_, n)| n == name)
                .map(|(o, _)| o.clone());
            match other {
                Some(opener) => out.push(Violation::new(
                    AGUI_SUB_004,
                    format!(
                        "STEP_FINISHED for step {name:?} is attributed to {}, but {} opened it",
                        events::owner_name(&owner),
                        events::owner_name(&opener)
                    ),
                )),
                None => out.push(Violation::new(
                    AGUI_STEP_001,
                    format!("STEP_FINISHED for step {name:?}, which was never opened"),
                )),
            }
        }
        _ => {}
    }
}
