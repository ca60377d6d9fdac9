//! The HAIP agent's event faults (listed in `faults.rs`) at work: each renames, re-statuses,
//! doubles or adds to an event of a run or a tool call as it goes out
//! ([`EventFaults::on_event`]), so the scripted agent (`agent.rs`) writes events as the spec has
//! them. The envelope faults apply where a message is sealed (`outbox.rs`); the faults of
//! behaviour (a plan that writes a part before its start, a tool that never finishes or reports
//! after it has, a cancel ignored, a run limit not kept) act where the agent or the connection
//! decides.

use super::outbox::Outgoing;
use super::Config;
use crate::protocol::haip::model::AGENT_CHANNEL;
use serde_json::{json, Value};
use std::collections::HashSet;

/// How many runs the `unknown-event-type` fault remembers having started.
const RUNS_KEPT: usize = 1024;

/// The state the event faults keep over one connection.
#[derive(Default)]
pub struct EventFaults {
    /// `unknown-event-type`: the runs whose first event has gone (a THINKING beside it).
    runs_begun: HashSet<String>,
}

impl EventFaults {
    /// What `o` becomes under the configured event faults: none, one or several messages.
    pub fn on_event(&mut self, config: &Config, mut o: Outgoing) -> Vec<Outgoing> {
        let faults = &config.faults;
        // Every message the connection sends comes here: without a fault on, it goes as it is.
        if faults.is_empty() {
            return vec![o];
        }
        let on = |name: &str| faults.has(name);
        match o.ty.as_str() {
            "TEXT_MESSAGE_START" | "TEXT_MESSAGE_PART" | "TEXT_MESSAGE_END"
                if on("bad-message-id") =>
            {
                o.payload["message_id"] = json!("message-1");
            }
            "RUN_ERROR" if on("run-error-without-run-id") => o.run_id = None,
            "RUN_FINISHED" if on("bad-run-status") && o.payload["status"] == "OK" => {
                o.payload["status"] = json!("DONE");
            }
            // The progress of a running call (a queued one reports none of its own).
            "TOOL_UPDATE"
                if on("bad-tool-progress")
                    && o.payload["status"] == "RUNNING"
                    && o.payload.get("progress").is_some() =>
            {
                o.payload["progress"] = json!(150);
            }
            "AUDIO_CHUNK" => {
                let mime = o.payload.get("mime").cloned();
                if on("audio-without-mime") {
                    if let Some(payload) = o.payload.as_object_mut() {
                        payload.remove("mime");
                    }
                }
                // Base64 data with the envelope field only two-frame binary may carry.
                if on("base64-with-bin-mime") && o.binary.is_none() {
                    let mime = mime.unwrap_or_else(|| json!("audio/opus"));
                    o.envelope_extra.insert("bin_mime".into(), mime);
                }
            }
            _ => {}
        }
        let mut out = Vec::with_capacity(2);
        if on("unknown-event-type") {
            if let Some(thinking) = self.thinking(&o) {
                // A run's THINKING comes right after its RUN_STARTED, or first of all.
                match o.ty == "RUN_STARTED" {
                    true => out.extend([o, thinking]),
                    false => out.extend([thinking, o]),
                }
                return out;
            }
        }
        let twice = o.ty == "RUN_FINISHED" && on("run-finished-twice");
        if twice {
            out.push(o.clone());
        }
        out.push(o);
        out
    }

    /// The THINKING (a type the spec does not have) that goes with the first event of a run
    /// the agent writes in, once per run.
    fn thinking(&mut self, o: &Outgoing) -> Option<Outgoing> {
        let run = o.run_id.as_deref().filter(|_| o.channel == AGENT_CHANNEL)?;
        if self.runs_begun.contains(run) {
            return None;
        }
        if self.runs_begun.len() >= RUNS_KEPT {
            self.runs_begun.clear();
        }
        self.runs_begun.insert(run.to_owned());
        Some(
            Outgoing::new("THINKING", AGENT_CHANNEL, Value::Object(Default::default()))
                .in_run(Some(run)),
        )
    }
}
