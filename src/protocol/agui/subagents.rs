//! Subagent invocations (Subagents › Lifecycle, Nesting and parallelism): announced before any
//! event attributed to them, never announced twice or after they finished in the run, a parent
//! invocation named only once announced; a close of one never announced is recorded.

use super::conversation::{Conversation, MAX_IDS};
use super::events;
use crate::rules::ids::{AGUI_SUB_001, AGUI_SUB_002, AGUI_SUB_003, AGUI_SUB_006};
use crate::rules::Violation;
use serde_json::Value;

/// Judges one event of an active run.
pub fn observe(conv: &mut Conversation, ty: &str, event: &Value, out: &mut Vec<Violation>) {
    let Some(run) = conv.run.as_mut() else {
        return;
    };
    let Some(id) = events::owner(event) else {
        return;
    };
    match ty {
        "SUBAGENT_STARTED" => {
            conv.exercised.hit(AGUI_SUB_001);
            conv.exercised.hit(AGUI_SUB_002);
            if run.attributed.contains(&id) {
                out.push(Violation::new(
                    AGUI_SUB_001,
                    format!("SUBAGENT_STARTED announces {id:?} after events attributed to it"),
                ));
            }
            if run.active_subagents.contains(&id) {
                out.push(Violation::new(
                    AGUI_SUB_002,
                    format!("SUBAGENT_STARTED announces {id:?}, which is already active"),
                ));
            } else if run.finished_subagents.contains(&id) {
                out.push(Violation::new(
                    AGUI_SUB_002,
                    format!("SUBAGENT_STARTED announces {id:?}, an invocation that already finished in this run"),
                ));
            }
            if let Some(parent) = events::text(event, "parentSubagentRunId") {
                conv.exercised.hit(AGUI_SUB_003);
                if !run.active_subagents.contains(parent)
                    && !run.finished_subagents.contains(parent)
                {
                    out.push(Violation::new(
                        AGUI_SUB_003,
                        format!("SUBAGENT_STARTED names parent invocation {parent:?}, which was not announced in this run"),
                    ));
                }
            }
            if run.active_subagents.len() < MAX_IDS {
                run.active_subagents.insert(id);
            }
            run.opened = true;
        }
        "SUBAGENT_FINISHED" | "SUBAGENT_ERROR" => {
            conv.exercised.hit(AGUI_SUB_006);
            if !run.active_subagents.remove(&id) {
                let again = run.finished_subagents.contains(&id);
                out.push(Violation::new(
                    AGUI_SUB_006,
                    format!(
                        "{ty} closes invocation {id:?}, which {} in this run",
                        match again {
                            true => "had already been closed",
                            false => "was never announced",
                        }
                    ),
                ));
            }
            if run.finished_subagents.len() < MAX_IDS {
                run.finished_subagents.insert(id);
            }
        }
        _ => {
            let announced =
                run.active_subagents.contains(&id) || run.finished_subagents.contains(&id);
            if !announced && run.attributed.len() < MAX_IDS {
                run.attributed.insert(id);
            }
        }
    }
}
