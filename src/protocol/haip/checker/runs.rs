//! Runs and the tool calls in them: a run is started once under a fresh id and ended once
//! (HAIP-RUN-001, -002), its events name an open run, RUN_STARTED carries its run_id
//! (HAIP-RUN-006), RUN_ERROR and RUN_CANCEL name theirs (HAIP-RUN-003); a tool's updates and
//! result answer a call the peer made and is not done with (HAIP-TOOL-001).

use super::echoes::Begun;
use super::HaipChecker;
use crate::protocol::haip::facts::Facts;
use crate::rules::ids::{HAIP_RUN_001, HAIP_RUN_002, HAIP_RUN_003, HAIP_RUN_006, HAIP_TOOL_001};
use crate::rules::Violation;
use crate::transcript::Direction;

impl HaipChecker {
    pub(super) fn check_runs(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
        // A run the peer began with a broken RUN_STARTED is not open: going on with it answers
        // broken input (`echoes.rs`), and is not held to the run being open.
        let answers_broken = f
            .run_id
            .is_some_and(|id| self.continues_broken(from, Begun::Run, id));
        let runs = &mut self.shared;
        let hit = &mut self.exercised;
        match ty {
            "RUN_STARTED" => match f.run_id {
                Some(id) => {
                    hit.hit(HAIP_RUN_002);
                    hit.hit(HAIP_RUN_006);
                    if !runs.runs_seen.insert(id) {
                        out.push(Violation::new(
                            HAIP_RUN_002,
                            format!("RUN_STARTED reuses run_id {id}"),
                        ));
                    }
                    runs.runs_open.insert(id.to_owned());
                }
                None => out.push(Violation::new(
                    HAIP_RUN_006,
                    "RUN_STARTED carries no run_id",
                )),
            },
            "RUN_FINISHED" | "RUN_ERROR" if f.run_id.is_some() || ty == "RUN_ERROR" => {
                hit.hit(if f.run_id.is_some() {
                    HAIP_RUN_001
                } else {
                    HAIP_RUN_003
                });
                if ty == "RUN_ERROR" {
                    hit.hit(HAIP_RUN_003);
                }
                match f.run_id {
                    Some(id) if !runs.runs_open.remove(id) && !answers_broken => {
                        out.push(Violation::new(
                            HAIP_RUN_001,
                            format!("{ty} names run {id}, which is not open"),
                        ))
                    }
                    Some(_) => {}
                    None => out.push(Violation::new(
                        HAIP_RUN_003,
                        "RUN_ERROR carries no envelope run_id",
                    )),
                }
            }
            "RUN_FINISHED" => {}
            "RUN_CANCEL" => {
                hit.hit(HAIP_RUN_003);
                if f.run_id.is_none() || !f.payload_run_id {
                    out.push(Violation::new(
                        HAIP_RUN_003,
                        "RUN_CANCEL lacks run_id in the envelope or the payload",
                    ));
                }
            }
            "ERROR" | "HAI" => {}
            _ => {
                if let Some(id) = f.run_id {
                    hit.hit(HAIP_RUN_001);
                    if !runs.runs_open.contains(id) && !answers_broken {
                        out.push(Violation::new(
                            HAIP_RUN_001,
                            format!("{ty} names run {id}, which is not open"),
                        ));
                    }
                }
            }
        }
    }

    pub(super) fn check_calls(&mut self, from: Direction, f: &Facts<'_>, out: &mut Vec<Violation>) {
        let ty = f.ty;
        let (Some(id), "TOOL_CALL" | "TOOL_UPDATE" | "TOOL_DONE") = (f.call_id, ty) else {
            return;
        };
        // A call the peer made with a broken TOOL_CALL: answering it answers broken input
        // (`echoes.rs`).
        let answers_broken = self.continues_broken(from, Begun::Call, id);
        let calls = &mut self.shared;
        if ty == "TOOL_CALL" {
            calls.calls_open.insert(id.to_owned(), from);
            return;
        }
        self.exercised.hit(HAIP_TOOL_001);
        match calls.calls_open.get(id) {
            Some(caller) if *caller != from => {
                if ty == "TOOL_DONE" {
                    calls.calls_open.remove(id);
                    calls.calls_done.insert(id);
                }
            }
            _ if calls.calls_done.contains(id) => out.push(Violation::new(
                HAIP_TOOL_001,
                format!("{ty} for call {id}, which is already done"),
            )),
            _ if answers_broken => {}
            _ => out.push(Violation::new(
                HAIP_TOOL_001,
                format!("{ty} names call {id}, which the peer never called"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::talk::*;
    use serde_json::json;

    fn in_run(run: &str) -> serde_json::Value {
        json!({"run_id": run})
    }

    #[test]
    fn a_run_starts_once_and_ends_once() {
        let mut talk = Talk::open();
        let run = uuid();
        assert_eq!(
            talk.send_with(Server, "RUN_STARTED", json!({}), in_run(&run)),
            NONE
        );
        let text = json!({"message_id": uuid(), "author": "agent", "text": "hi"});
        assert_eq!(
            talk.send_with(Server, "TEXT_MESSAGE_START", text, in_run(&run)),
            NONE
        );
        let done = json!({"status": "OK"});
        assert_eq!(
            talk.send_with(Server, "RUN_FINISHED", done.clone(), in_run(&run)),
            NONE
        );
        assert_eq!(
            talk.send_with(Server, "RUN_FINISHED", done, in_run(&run)),
            ["HAIP-RUN-001"]
        );
        assert_eq!(
            talk.send_with(Server, "RUN_STARTED", json!({}), in_run(&run)),
            ["HAIP-RUN-002"]
        );
    }

    #[test]
    fn run_events_name_their_run() {
        let mut talk = Talk::open();
        assert_eq!(
            talk.send(Server, "RUN_STARTED", json!({})),
            ["HAIP-RUN-006"]
        );
        let error = json!({"code": "RUN_LIMIT_EXCEEDED", "message": "busy"});
        assert_eq!(talk.send(Server, "RUN_ERROR", error), ["HAIP-RUN-003"]);
        let run = uuid();
        assert_eq!(
            talk.send_with(Client, "RUN_CANCEL", json!({"run_id": run}), json!({})),
            ["HAIP-RUN-003"]
        );
        let ping = json!({"nonce": "p"});
        assert_eq!(
            talk.send_with(Server, "PING", ping, in_run(&uuid())),
            ["HAIP-RUN-001"]
        );
    }

    #[test]
    fn a_tool_answers_a_call_the_peer_made_once() {
        let mut talk = Talk::open();
        let call = uuid();
        let called = json!({"call_id": call, "tool": "echo"});
        assert_eq!(talk.send(Server, "TOOL_CALL", called), NONE);
        let running = json!({"call_id": call, "status": "RUNNING"});
        assert_eq!(talk.send(Client, "TOOL_UPDATE", running), NONE);
        let done = json!({"call_id": call, "status": "OK"});
        assert_eq!(talk.send(Client, "TOOL_DONE", done.clone()), NONE);
        assert_eq!(talk.send(Client, "TOOL_DONE", done), ["HAIP-TOOL-001"]);
        // The caller cannot answer its own call, nor anyone a call never made.
        let own = uuid();
        talk.send(Server, "TOOL_CALL", json!({"call_id": own, "tool": "echo"}));
        assert_eq!(
            talk.send(Server, "TOOL_DONE", json!({"call_id": own})),
            ["HAIP-TOOL-001"]
        );
        assert_eq!(
            talk.send(Client, "TOOL_DONE", json!({"call_id": uuid()})),
            ["HAIP-TOOL-001"]
        );
    }

    /// A call or a run the client began with a message broken on purpose (here a `pv` out of
    /// range) is none the server may go on with, but a server that took it and does answers
    /// broken input: judged by the rules about broken input alone, not as a call never made or
    /// a run not open. A call or run nobody began is still both.
    #[test]
    fn a_call_or_run_begun_broken_and_answered_is_no_lifecycle_breach() {
        let mut talk = Talk::open();
        let broken = json!({"pv": -1});
        let call = uuid();
        let called = json!({"call_id": call, "tool": "echo"});
        assert_eq!(
            talk.send_with(Client, "TOOL_CALL", called, broken.clone()),
            ["HAIP-ENV-007"]
        );
        let done = json!({"call_id": call, "status": "OK"});
        assert_eq!(talk.send(Server, "TOOL_DONE", done), NONE);
        let run = uuid();
        let mut started = in_run(&run);
        started["pv"] = json!(-1);
        assert_eq!(
            talk.send_with(Client, "RUN_STARTED", json!({}), started),
            ["HAIP-ENV-007"]
        );
        let text = json!({"message_id": uuid(), "author": "agent", "text": "hi"});
        assert_eq!(
            talk.send_with(Server, "TEXT_MESSAGE_START", text, in_run(&run)),
            NONE
        );
        let finished = json!({"status": "OK"});
        assert_eq!(
            talk.send_with(Server, "RUN_FINISHED", finished.clone(), in_run(&run)),
            NONE
        );
        let never = json!({"call_id": uuid(), "status": "OK"});
        assert_eq!(talk.send(Server, "TOOL_DONE", never), ["HAIP-TOOL-001"]);
        assert_eq!(
            talk.send_with(Server, "RUN_FINISHED", finished, in_run(&uuid())),
            ["HAIP-RUN-001"]
        );
    }
}
