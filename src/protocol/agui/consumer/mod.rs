//! What an AG-UI client (the consumer) owes, followed across a transcript: the agent's answers
//! on each thread say what the next input must carry (the calls to answer, the state), and
//! each input the client POSTs is judged against it ([`input`]). The agent's events are
//! followed as a conforming consumer takes them: a stream that breaks a MUST a consumer
//! enforces (an event after its run closed, a malformed known value) fails the run there, and
//! what came from that point on is refused (ERRATA reading 22).

mod input;
pub mod state;

use super::events;
use crate::rules::{Exercised, Violation};
use serde_json::Value;
use state::Followed;
use std::collections::{HashMap, HashSet};

/// Threads followed at once; past this a new thread is not followed (its inputs are still
/// judged on their own).
const MAX_THREADS: usize = 256;
/// Tool calls followed per answer, and run ids remembered per thread.
const MAX_CALLS: usize = 1024;
const MAX_RUN_IDS: usize = 4096;
/// Longest argument text kept for a call.
const MAX_ARGS: usize = 64 * 1024;

/// A tool call an answer streamed.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: Option<String>,
    /// The deltas joined (cut at [`MAX_ARGS`]: `None` then, and not compared).
    pub args: Option<String>,
    pub ended: bool,
    /// The agent answered it with TOOL_CALL_RESULT (a backend call).
    pub answered: bool,
}

/// How the last answer's run ended, as a conforming consumer takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// No run has ended (or none began).
    #[default]
    Open,
    /// RUN_FINISHED with the success outcome (or none).
    Succeeded,
    /// RUN_FINISHED with another outcome (an interrupt, a cancellation).
    OtherOutcome,
    /// RUN_ERROR, or a late RUN_ERROR after RUN_FINISHED.
    Failed,
    /// The stream broke a MUST the consumer enforces: the run failed there.
    Refused,
}

/// What one answer delivered on a thread.
#[derive(Debug, Default)]
pub struct Delivered {
    pub ending: Ending,
    /// The run closed (RUN_FINISHED or RUN_ERROR): what follows, but a new run, is rejected.
    pub closed: bool,
    pub calls: Vec<Call>,
    /// Calls a consumer refused: streamed after the run closed, or open when the stream broke.
    /// Why, by call id.
    pub refused: HashMap<String, Refused>,
    pub state: Followed,
}

/// One thread as the client's inputs and the agent's answers made it.
#[derive(Debug, Default)]
pub struct Thread {
    pub run_ids: HashSet<String>,
    /// The tools the last input offered: the client's own.
    pub offered: HashSet<String>,
    /// The last answer on the thread.
    pub delivered: Delivered,
    /// An input on the thread was judged: the next is a continuation.
    pub continued: bool,
    /// Whether the agent's last RUN_STARTED on the thread declared a protocolVersion (`None`:
    /// no run yet): a client that knows its peer predates the field may omit its own.
    pub peer_declares: Option<bool>,
}

/// The client's duties across a transcript.
#[derive(Debug, Default)]
pub struct Consumer {
    threads: HashMap<String, Thread>,
    /// The thread whose answer is streaming (of the last input).
    current: Option<String>,
    /// The client rules judged on an input they apply to since the last drain.
    exercised: Exercised,
}

/// The client rule a refused event's calls are judged by, and why it was refused, by the
/// agent-side rule the event broke: the consumer enforces these (Runs and Steps › After a run
/// closes; Processing Model › The rule).
pub fn refusal(rule: &str) -> Option<Refused> {
    use crate::rules::ids::{AGUI_CLI_015, AGUI_CLI_016, AGUI_RUN_002, AGUI_VAL_001};
    match rule {
        r if r == AGUI_RUN_002 => Some(Refused {
            rule: AGUI_CLI_015,
            why: "it came after its run closed",
        }),
        r if r == AGUI_VAL_001 => Some(Refused {
            rule: AGUI_CLI_016,
            why: "its run's stream carried a malformed known value",
        }),
        _ => None,
    }
}

/// Why a consumer refused an event, and the client rule its calls are then judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub rule: &'static str,
    pub why: &'static str,
}

impl Consumer {
    /// The client POSTed `json` (`None`: a body that is not JSON), read as `read`
    /// ([`super::http::read_input`]), with `headers`: judged against what its thread owes, then
    /// the thread follows the answer to it.
    pub fn posted(
        &mut self,
        json: Option<&Value>,
        read: Option<&(super::conversation::Input, Vec<super::schema::Flaw>)>,
        headers: &[(String, String)],
        out: &mut Vec<Violation>,
    ) {
        let judged = input::judge(
            &self.threads,
            &mut self.exercised,
            json.zip(read),
            headers,
            out,
        );
        let Some(input) = judged else {
            self.current = None;
            return;
        };
        let room = self.threads.len() < MAX_THREADS;
        let Some(thread) = (match self.threads.contains_key(&input.thread) {
            true => self.threads.get_mut(&input.thread),
            false if room => Some(self.threads.entry(input.thread.clone()).or_default()),
            false => None,
        }) else {
            self.current = None;
            return;
        };
        if thread.run_ids.len() < MAX_RUN_IDS {
            thread.run_ids.insert(input.run);
        }
        thread.offered = input.offered;
        thread.continued = true;
        thread.delivered = Delivered {
            state: Followed::starting(input.state),
            ..Delivered::default()
        };
        self.current = Some(input.thread);
    }

    /// Moves the client rules exercised since the last call into `into` (the checker's
    /// [`crate::protocol::Checker::exercised`] hands them on).
    pub fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
    }

    /// The agent sent `event` in answer to the last input; `refused` says why a consumer
    /// refuses it, when the agent-side checker found it breaking a rule the consumer enforces.
    pub fn agent_event(&mut self, event: &Value, refused: Option<Refused>) {
        let Some(thread) = self.current.as_ref().and_then(|t| self.threads.get_mut(t)) else {
            return;
        };
        let d = &mut thread.delivered;
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
        let call_id = events::text(event, "toolCallId");
        if let Some(why) = refused {
            // The run fails here, even after its close ("A failed run … keeps everything it
            // delivered before failing"): a call it left open goes with it, and one the refused
            // event names is refused unless the run had ended it already (as many as calls are
            // followed: a flood of late events grows nothing).
            let ended = |id: &str| d.calls.iter().any(|c| c.ended && c.id == id);
            let named = call_id.filter(|id| !ended(id));
            let open = d.calls.iter().filter(|c| !c.ended).map(|c| c.id.as_str());
            let refusing: Vec<String> = named.into_iter().chain(open).map(str::to_owned).collect();
            for id in refusing {
                if d.refused.len() < MAX_CALLS && !d.refused.contains_key(&id) {
                    d.refused.insert(id, why);
                }
            }
            d.ending = Ending::Refused;
            return;
        }
        if d.ending == Ending::Refused && ty != "RUN_STARTED" {
            return;
        }
        match ty {
            "RUN_STARTED" => {
                // A new run on the stream: what is pending is the last run's (run-scoped tracking
                // does not cross the boundary); whether the peer declares its version is noted.
                d.ending = Ending::Open;
                d.closed = false;
                d.calls.clear();
                thread.peer_declares = Some(event.get("protocolVersion").is_some());
            }
            "RUN_FINISHED" => {
                d.closed = true;
                let outcome = event.pointer("/outcome/type").and_then(Value::as_str);
                d.ending = match outcome {
                    None | Some("success") => Ending::Succeeded,
                    Some(_) => Ending::OtherOutcome,
                };
            }
            "RUN_ERROR" => {
                d.closed = true;
                d.ending = Ending::Failed;
            }
            "TOOL_CALL_START" => {
                if let Some(id) = call_id {
                    // A reopened call is open again.
                    if let Some(call) = d.calls.iter_mut().find(|c| c.id == id) {
                        call.ended = false;
                    } else if d.calls.len() < MAX_CALLS {
                        d.calls.push(Call {
                            id: id.to_owned(),
                            name: events::text(event, "toolCallName").map(str::to_owned),
                            args: Some(String::new()),
                            ended: false,
                            answered: false,
                        });
                    }
                }
            }
            "TOOL_CALL_ARGS" => {
                let delta = events::text(event, "delta").unwrap_or("");
                if let Some(call) = d.calls.iter_mut().find(|c| Some(c.id.as_str()) == call_id) {
                    call.args = call
                        .args
                        .take()
                        .map(|mut a| {
                            a.push_str(delta);
                            a
                        })
                        .filter(|a| a.len() <= MAX_ARGS);
                }
            }
            "TOOL_CALL_END" => {
                if let Some(call) = d.calls.iter_mut().find(|c| Some(c.id.as_str()) == call_id) {
                    call.ended = true;
                }
            }
            "TOOL_CALL_RESULT" => {
                if let Some(call) = d.calls.iter_mut().find(|c| Some(c.id.as_str()) == call_id) {
                    call.answered = true;
                }
            }
            "STATE_SNAPSHOT" => {
                if let Some(snapshot) = event.get("snapshot") {
                    d.state.snapshot(snapshot);
                }
            }
            "STATE_DELTA" => {
                if let Some(delta) = event.get("delta") {
                    d.state.delta(delta);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod consumer_tests;
