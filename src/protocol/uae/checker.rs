//! The UAE transcript checker: each event through the validator, then what ties events
//! together — one session per conversation, ids unique within it, a result for each call with
//! the call's trace_id, session_id and tool, actions on views the agent sent, and the trace
//! of the output that follows a result.
//!
//! It judges by type, not by side, so one checker serves a target in either role and a
//! recorded three-party transcript (`from: ui | agent | executor`): a tool.result answers the
//! tool.call with its trace_id whoever sent them.

use super::validate::{check_event_noting, Kind};
use crate::protocol::recent::RecentSet;
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{
    UAE_DIR_001, UAE_ENV_001, UAE_ENV_006, UAE_ENV_009, UAE_RES_001, UAE_RES_002, UAE_SES_001,
    UAE_TRC_001, UAE_UI_003, UAE_UI_004,
};
use crate::rules::{Exercised, Violation};
use crate::transcript::Direction;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// Ids, sessions and views remembered at most (a flood cannot grow memory without bound).
const RECENT: usize = 4096;
/// Calls awaiting a result, at most.
const MAX_OPEN_CALLS: usize = 1024;

/// A tool.call and how often it has been answered.
#[derive(Debug)]
struct Call {
    tool: Option<String>,
    session_id: Option<String>,
    answered: bool,
}

/// The UAE [`Checker`].
#[derive(Debug, Default)]
pub struct UaeChecker {
    /// Session ids the client side (the UI, or the agent calling an executor) has used.
    client_sessions: RecentSet<RECENT>,
    /// Session ids the target side (the agent, or the executor) has used.
    server_sessions: RecentSet<RECENT>,
    /// Event ids seen, both sides.
    ids: RecentSet<RECENT>,
    /// view_ids of the assistant.views seen.
    views: RecentSet<RECENT>,
    /// Calls by trace_id, oldest first (one trace may hold several calls).
    calls: HashMap<String, VecDeque<Call>>,
    call_order: VecDeque<String>,
    /// A result went to the agent: the trace its next output to the UI should carry.
    answered_trace: Option<String>,
    /// The client side's last frame was no event the target can use: not JSON, or of a type
    /// the spec does not define.
    client_broken: bool,
    /// The rules evaluated since the judge last asked (see [`Checker::exercised`]).
    exercised: Exercised,
}

impl UaeChecker {
    fn event(&mut self, from: Direction, event: &Value, out: &mut Vec<Violation>) {
        let Some(kind) = check_event_noting(event, out, &mut self.exercised) else {
            return;
        };
        if from == Direction::Client && matches!(kind, Kind::Other(_)) {
            self.client_broken = true;
        }
        let field = |name: &str| event.get(name).and_then(Value::as_str);
        let ty = field("type").unwrap_or_default();
        if let Some(id) = field("id") {
            // Each new id is compared with those seen.
            self.exercised.hit(UAE_ENV_006);
            if !self.ids.insert(id) {
                out.push(Violation::new(
                    UAE_ENV_006,
                    format!("{ty} reuses the id {id:?} of an earlier event"),
                ));
            }
        }
        // Every event the target sends has its type held to the parties who may send it.
        if from == Direction::Server {
            self.exercised.hit(UAE_DIR_001);
            if kind.from_ui() {
                out.push(Violation::new(
                    UAE_DIR_001,
                    format!("the target sent {ty}, which only the Web UI sends"),
                ));
            }
        }
        self.session(from, kind, ty, field("session_id"), out);
        match kind {
            Kind::AssistantView => {
                if let Some(view) = event
                    .pointer("/payload/view/view_id")
                    .and_then(Value::as_str)
                {
                    self.views.insert(view);
                }
            }
            Kind::UiAction => {
                let view = event.pointer("/payload/view_id").and_then(Value::as_str);
                if view.is_some() {
                    self.exercised.hit(UAE_UI_003);
                }
                if let Some(view) = view.filter(|v| !self.views.contains(v)) {
                    out.push(Violation::new(
                        UAE_UI_003,
                        format!(
                            "ui.action names view_id {view:?}, which no assistant.view carried"
                        ),
                    ));
                }
            }
            Kind::ToolCall => self.call(event),
            Kind::ToolResult => self.result(event, out),
            _ => {}
        }
        if kind.to_ui() {
            self.output_trace(ty, field("trace_id"), out);
        }
    }

    /// The client side names the session; what the target sends must stay in it. Results are
    /// judged against their call instead (UAE-RES-002).
    fn session(
        &mut self,
        from: Direction,
        kind: Kind<'_>,
        ty: &str,
        session: Option<&str>,
        out: &mut Vec<Violation>,
    ) {
        let Some(session) = session else {
            return;
        };
        match from {
            // A UI may start a session or take the agent's; a third one is neither (a should
            // of the UI's own: wireprobe's deliberately odd input as the UI is never counted
            // broken for it).
            Direction::Client => {
                let known = self.client_sessions.contains(session)
                    || self.server_sessions.contains(session);
                // The UI's first session is its own choice: only a later one is judged.
                if !self.client_sessions.is_empty() {
                    self.exercised.hit(UAE_UI_004);
                    if !known {
                        out.push(Violation::new(
                            UAE_UI_004,
                            format!("{ty} carries session_id {session:?}, which neither party used before in this session"),
                        ));
                    }
                }
                self.client_sessions.insert(session);
            }
            Direction::Server if kind == Kind::ToolResult => {}
            Direction::Server => {
                self.server_sessions.insert(session);
                // Judged once the other party has named a session.
                if !self.client_sessions.is_empty() {
                    self.exercised.hit(UAE_SES_001);
                    if !self.client_sessions.contains(session) {
                        out.push(Violation::new(
                            UAE_SES_001,
                            format!("{ty} carries session_id {session:?}, a session the other party never named"),
                        ));
                    }
                }
            }
        }
    }

    fn call(&mut self, event: &Value) {
        let Some(trace) = event.get("trace_id").and_then(Value::as_str) else {
            return;
        };
        if self.call_order.len() >= MAX_OPEN_CALLS {
            if let Some(old) = self.call_order.pop_front() {
                if let Some(calls) = self.calls.get_mut(&old) {
                    calls.pop_front();
                    if calls.is_empty() {
                        self.calls.remove(&old);
                    }
                }
            }
        }
        self.call_order.push_back(trace.to_owned());
        self.calls
            .entry(trace.to_owned())
            .or_default()
            .push_back(Call {
                tool: event
                    .pointer("/payload/tool")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                session_id: event
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                answered: false,
            });
    }

    fn result(&mut self, event: &Value, out: &mut Vec<Violation>) {
        // Without a trace_id the result cannot be paired (UAE-ENV-002 says so).
        let Some(trace) = event.get("trace_id").and_then(Value::as_str) else {
            return;
        };
        // A result with a trace is paired with its call: the pairing is UAE-RES-002's.
        self.exercised.hit(UAE_RES_002);
        let Some(calls) = self.calls.get_mut(trace) else {
            out.push(Violation::new(
                UAE_RES_002,
                format!("a tool.result with trace_id {trace:?}, which no tool.call carried"),
            ));
            return;
        };
        // A call of this trace was made: is this result its first answer or a second one?
        self.exercised.hit(UAE_RES_001);
        let tool = event.pointer("/payload/tool").and_then(Value::as_str);
        let session = event.get("session_id").and_then(Value::as_str);
        // The call it answers: an open one of the same tool and session, else of the same
        // tool, else the oldest open one.
        let open = calls
            .iter()
            .position(|c| {
                !c.answered && c.tool.as_deref() == tool && c.session_id.as_deref() == session
            })
            .or_else(|| {
                calls
                    .iter()
                    .position(|c| !c.answered && c.tool.as_deref() == tool)
            })
            .or_else(|| calls.iter().position(|c| !c.answered));
        let Some(i) = open else {
            out.push(Violation::new(
                UAE_RES_001,
                format!("a second tool.result for the call with trace_id {trace:?}"),
            ));
            return;
        };
        let call = &mut calls[i];
        call.answered = true;
        if let (Some(want), Some(got)) = (call.tool.as_deref(), tool) {
            if want != got {
                out.push(Violation::new(
                    UAE_RES_002,
                    format!(
                        "the result of a {want:?} call (trace_id {trace:?}) names tool {got:?}"
                    ),
                ));
            }
        }
        if let (Some(want), Some(got)) = (call.session_id.as_deref(), session) {
            if want != got {
                out.push(Violation::new(
                    UAE_RES_002,
                    format!("the result of trace_id {trace:?} carries session_id {got:?}; the call had {want:?}"),
                ));
            }
        }
        self.answered_trace = Some(trace.to_owned());
    }

    /// The first output to the UI after a result: does it carry the call's trace?
    fn output_trace(&mut self, ty: &str, trace: Option<&str>, out: &mut Vec<Violation>) {
        let Some(want) = self.answered_trace.take() else {
            return;
        };
        self.exercised.hit(UAE_TRC_001);
        if trace != Some(want.as_str()) {
            out.push(Violation::new(
                UAE_TRC_001,
                format!(
                    "{ty} after the result of trace_id {want:?} carries {}",
                    trace.map_or("no trace_id".to_owned(), |t| format!("trace_id {t:?}"))
                ),
            ));
        }
    }
}

impl Checker for UaeChecker {
    fn observe(
        &mut self,
        from: Direction,
        _at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        if from == Direction::Client {
            self.client_broken = matches!(item, Observed::Garbage(_) | Observed::Binary(_));
        }
        match item {
            // A result answers a call on its own connection (a process's own stdio): calls
            // left open when a connection ended are not owed on the next one.
            Observed::Connect(_) => {
                self.calls.clear();
                self.call_order.clear();
                self.answered_trace = None;
            }
            // A text frame or line: UAE-ENV-009 held (a binary one breaks it, below).
            Observed::Event(event, _) => {
                self.exercised.hit(UAE_ENV_009);
                self.event(from, event.value(), out);
            }
            // Either side's: only the side a run judges counts (an agent under test that
            // calls its executor is the client side).
            Observed::Garbage(text) => {
                self.exercised.hit(UAE_ENV_009);
                out.push(Violation::new(
                    UAE_ENV_001,
                    format!(
                        "sent text that is not JSON: {:?}",
                        text.chars().take(60).collect::<String>()
                    ),
                ));
            }
            Observed::Binary(len) => out.push(Violation::new(
                UAE_ENV_009,
                format!("sent a binary frame of {len} bytes, not a JSON event"),
            )),
            _ => {}
        }
    }

    fn input_broken(&self) -> bool {
        self.client_broken
    }

    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.exercised.drain_into(into);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(ty: &str, trace: &str, session: &str, payload: Value) -> Value {
        json!({"type": ty, "id": format!("evt_{}", uuid::Uuid::new_v4().simple()),
            "ts": "2026-01-08T12:34:56.789Z", "trace_id": trace, "session_id": session,
            "payload": payload})
    }

    fn judge(events: &[(Direction, Value)]) -> Vec<&'static str> {
        let mut checker = UaeChecker::default();
        let mut out = Vec::new();
        for (from, e) in events {
            checker.observe(*from, 0, Observed::Event(e.into(), None), &mut out);
        }
        out.iter().map(|v| v.rule).collect()
    }

    use Direction::{Client as C, Server as S};

    /// Text that is not JSON breaks the envelope whichever side sent it: an agent under test
    /// that calls its executor is the client side (the run counts only the judged side's).
    #[test]
    fn text_that_is_not_json_is_judged_from_either_side() {
        for from in [C, S] {
            let mut out = Vec::new();
            UaeChecker::default().observe(from, 0, Observed::Garbage("{\"type\":"), &mut out);
            let rules: Vec<&str> = out.iter().map(|v| v.rule).collect();
            assert_eq!(rules, ["UAE-ENV-001"], "from {from:?}");
        }
    }

    #[test]
    fn a_call_and_its_result_pair_by_trace() {
        let call = envelope(
            "tool.call",
            "tr_1",
            "sess_1",
            json!({"tool":"echo","args":{}}),
        );
        let ok = envelope(
            "tool.result",
            "tr_1",
            "sess_1",
            json!({"tool":"echo","ok":true,"result":{},"error":null}),
        );
        assert_eq!(
            judge(&[(C, call.clone()), (S, ok.clone())]),
            Vec::<&str>::new()
        );
        // The same result twice: a second answer, and a repeated id.
        assert_eq!(
            judge(&[(C, call.clone()), (S, ok.clone()), (S, ok)]),
            ["UAE-ENV-006", "UAE-RES-001"]
        );
        let other = envelope(
            "tool.result",
            "tr_1",
            "sess_2",
            json!({"tool":"fail","ok":true,"result":{},"error":null}),
        );
        assert_eq!(
            judge(&[(C, call), (S, other)]),
            ["UAE-RES-002", "UAE-RES-002"]
        );
        let stray = envelope(
            "tool.result",
            "tr_9",
            "sess_1",
            json!({"tool":"echo","ok":true,"result":{},"error":null}),
        );
        assert_eq!(judge(&[(S, stray)]), ["UAE-RES-002"]);
    }

    #[test]
    fn the_target_stays_in_the_uis_session() {
        let said = envelope("ui.message", "tr_1", "sess_1", json!({"text":"hi"}));
        let reply = envelope("assistant.message", "tr_1", "sess_2", json!({"text":"hi"}));
        assert_eq!(judge(&[(C, said.clone()), (S, reply)]), ["UAE-SES-001"]);
        assert_eq!(
            judge(&[(C, said.clone()), (S, said)]),
            ["UAE-ENV-006", "UAE-DIR-001"]
        );
    }

    #[test]
    fn actions_name_views_the_agent_sent() {
        let view = envelope(
            "assistant.view",
            "tr_1",
            "s",
            json!({"view":{"kind":"a2ui.v1","view_id":"view_1","tree":{}}}),
        );
        let action = |id: &str| {
            envelope(
                "ui.action",
                "tr_2",
                "s",
                json!({"view_id": id, "action":{"kind":"form.submit", "form_id": "f", "values": {}}}),
            )
        };
        assert_eq!(
            judge(&[(S, view.clone()), (C, action("view_1"))]),
            Vec::<&str>::new()
        );
        assert_eq!(judge(&[(S, view), (C, action("view_2"))]), ["UAE-UI-003"]);
    }

    /// Coverage names the rules checked on what flowed, not every rule: a call answered with
    /// ok true exercises the result's pairing and shape, never what a failed call owes, a
    /// view, or the trace of output the agent never sent.
    #[test]
    fn a_rule_counts_as_exercised_only_where_it_applies() {
        use crate::rules::ids::{UAE_RES_003, UAE_RES_004, UAE_VIEW_001};
        let call = envelope(
            "tool.call",
            "tr_1",
            "sess_1",
            json!({"tool":"echo","args":{}}),
        );
        let ok = envelope(
            "tool.result",
            "tr_1",
            "sess_1",
            json!({"tool":"echo","ok":true,"result":{},"error":null}),
        );
        let mut checker = UaeChecker::default();
        let (mut out, mut hits) = (Vec::new(), Vec::new());
        for (from, e) in [(C, &call), (S, &ok)] {
            checker.observe(from, 0, Observed::Event(e.into(), None), &mut out);
            checker.exercised(&mut hits);
        }
        assert!(out.is_empty(), "a valid exchange: {out:?}");
        crate::rules::assert_exercised(
            &hits,
            &[
                UAE_ENV_001,
                UAE_ENV_006,
                UAE_RES_001,
                UAE_RES_002,
                UAE_RES_003,
            ],
            &[UAE_RES_004, UAE_VIEW_001, UAE_TRC_001, UAE_UI_003],
        );
    }
}
