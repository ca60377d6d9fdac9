//! The lifecycles inside a message turn: agent turns by iteration, text and reasoning blocks
//! by messageId, tool calls by callId, permission requests by permissionId.
//!
//! A client may join a stream in the middle of a turn (the previous case's, or another
//! client's), so nothing is blamed for lacking a start the checker may not have seen: an id
//! that shows up without its START is judged when its START comes late, or when the turn it
//! appeared in, whose whole stream the checker saw, ends without one.

use super::events::{BlockKind, BlockStep, Family, ToolStep};
use crate::rules::ids::{
    HPD_ASK_001, HPD_ASK_002, HPD_INT_001, HPD_STREAM_001, HPD_STREAM_002, HPD_TOOL_001,
    HPD_TOOL_003, HPD_TURN_001, HPD_TURN_002, HPD_TURN_003, HPD_TURN_004,
};
use crate::rules::{Exercised, Violation};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Most blocks, calls and requests remembered: a long stream cannot grow the checker without
/// bound (ended ones are forgotten first).
const REMEMBERED: usize = 10_000;

/// A message turn whose STARTED the checker saw.
#[derive(Debug, Default)]
struct Turn {
    id: String,
    iterations: BTreeSet<i64>,
    interrupted: bool,
    /// Ids used in this turn before (or without) their START: `(id, what)`.
    orphans: Vec<(String, &'static str)>,
}

#[derive(Debug)]
struct Block {
    kind: BlockKind,
    ended: bool,
    turn: Option<String>,
}

#[derive(Debug, Default)]
struct Call {
    ended: bool,
    has_result: bool,
    turn: Option<String>,
}

#[derive(Debug, Default)]
struct Permission {
    call_id: Option<String>,
    /// The tool it gates (`functionName`).
    function: Option<String>,
    /// What the client answered.
    answered: Option<bool>,
    /// What the agent said it decided.
    outcome: Option<bool>,
    turn: Option<String>,
}

/// Gated tools whose approved results are kept, and results kept per tool.
const MAX_GATED_TOOLS: usize = 256;
const MAX_RESULTS_PER_TOOL: usize = 8;

/// Lifecycle state over a whole transcript.
#[derive(Debug, Default)]
pub struct Lifecycle {
    open: Vec<Turn>,
    ended_turns: HashSet<String>,
    /// Ended turns the client had asked to interrupt.
    interrupted_turns: HashSet<String>,
    /// A whole turn has been seen since the stream was joined: the stream is in step.
    in_step: bool,
    // Ordered maps: what a turn's end reports comes in the same order every run.
    blocks: BTreeMap<String, Block>,
    calls: BTreeMap<String, Call>,
    permissions: BTreeMap<String, Permission>,
    denied_calls: HashSet<String>,
    /// The permission that gates each call, by callId (so a result finds it at once).
    gated_calls: HashMap<String, String>,
    /// What approved calls of each gated tool returned (a few per tool): a denied call of the
    /// same tool whose result is one of these ran (HPD-ASK-002).
    approved_results: HashMap<String, Vec<Value>>,
    /// Every request id the agent issued (permission, continuation, clarification, client tool).
    pub issued: HashSet<String>,
    /// The rules the agent's events were held to since the checker last asked.
    pub exercised: Exercised,
}

fn id_of<'a>(m: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    m.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn block_name(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Text => "text",
        BlockKind::Reasoning => "reasoning",
    }
}

impl Lifecycle {
    fn current(&self) -> Option<String> {
        self.open.last().map(|t| t.id.clone())
    }

    /// The rule an event of `turn` is held to, and whether it breaks it (the turn has ended):
    /// HPD-INT-001 when the client interrupted the turn, else HPD-TURN-004. `None` for a turn
    /// the checker cannot place (none, one without an id, one forgotten).
    fn after_end(&self, turn: &Option<String>) -> Option<(&'static str, bool)> {
        let turn = turn.as_deref().filter(|t| !t.is_empty())?;
        let rule = |interrupted: bool| match interrupted {
            true => HPD_INT_001,
            false => HPD_TURN_004,
        };
        if self.ended_turns.contains(turn) {
            return Some((rule(self.interrupted_turns.contains(turn)), true));
        }
        let open = self.open.iter().find(|t| t.id == turn)?;
        Some((rule(open.interrupted), false))
    }

    fn orphan(&mut self, id: &str, what: &'static str) {
        if let Some(turn) = self.open.last_mut() {
            if !turn.orphans.iter().any(|(o, _)| o == id) {
                turn.orphans.push((id.to_owned(), what));
            }
        }
    }

    fn forget_if_full(&mut self) {
        if self.blocks.len() > REMEMBERED {
            self.blocks.retain(|_, b| !b.ended);
        }
        if self.calls.len() > REMEMBERED {
            self.calls.retain(|_, c| !c.ended);
        }
        if self.permissions.len() > REMEMBERED {
            self.permissions.clear();
        }
        if self.ended_turns.len() > REMEMBERED {
            self.ended_turns.clear();
            self.interrupted_turns.clear();
        }
        if self.issued.len() > REMEMBERED {
            self.issued.clear();
        }
    }

    /// The client asked to interrupt: the turn in progress must end.
    pub fn interrupted(&mut self) {
        if let Some(turn) = self.open.last_mut() {
            turn.interrupted = true;
        }
    }

    /// The client answered a permission request.
    pub fn permission_answered(&mut self, permission_id: &str, approved: bool) {
        if let Some(p) = self.permissions.get_mut(permission_id) {
            p.answered = Some(approved);
        }
    }

    /// Checks one event the agent sent.
    pub fn observe(
        &mut self,
        family: Family,
        kind: &str,
        m: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) {
        self.forget_if_full();
        match family {
            Family::TurnStarted => self.turn_started(m, out),
            Family::TurnFinished | Family::TurnError => self.turn_ended(kind, m, out),
            Family::AgentTurnStarted => {
                if let (Some(turn), Some(n)) = (self.open.last_mut(), iteration(m)) {
                    turn.iterations.insert(n);
                }
            }
            Family::AgentTurnFinished => {
                if let (Some(turn), Some(n)) = (self.open.last_mut(), iteration(m)) {
                    self.exercised.hit(HPD_TURN_003);
                    if !turn.iterations.remove(&n) {
                        out.push(Violation::new(
                            HPD_TURN_003,
                            format!("AGENT_TURN_FINISHED for iteration {n}, which did not start in this message turn"),
                        ));
                    }
                }
            }
            Family::Block(block, step) => self.block(block, step, kind, m, out),
            Family::Tool(step) => self.tool(step, kind, m, out),
            Family::PermissionRequest => {
                self.outside_turn(kind, out);
                if let Some(id) = id_of(m, "permissionId") {
                    self.issued.insert(id.to_owned());
                    if let Some(call) = id_of(m, "callId") {
                        self.gated_calls.insert(call.to_owned(), id.to_owned());
                    }
                    self.permissions.insert(
                        id.to_owned(),
                        Permission {
                            call_id: id_of(m, "callId").map(str::to_owned),
                            function: id_of(m, "functionName").map(str::to_owned),
                            turn: self.current(),
                            ..Permission::default()
                        },
                    );
                }
            }
            Family::PermissionApproved | Family::PermissionDenied => {
                self.permission_outcome(family == Family::PermissionApproved, kind, m, out)
            }
            Family::ContinuationRequest
            | Family::ClarificationRequest
            | Family::ClientToolRequest => {
                self.outside_turn(kind, out);
                if let Some(field) = super::events::request_id_field(family) {
                    if let Some(id) = id_of(m, field) {
                        self.issued.insert(id.to_owned());
                    }
                }
            }
            Family::Upstream | Family::Other => {}
        }
    }

    fn turn_started(&mut self, m: &Map<String, Value>, out: &mut Vec<Violation>) {
        let id = id_of(m, "messageTurnId").unwrap_or("").to_owned();
        if !id.is_empty() {
            // A turn with an id is held to starting once.
            self.exercised.hit(HPD_TURN_001);
        }
        if !id.is_empty()
            && (self.ended_turns.contains(&id) || self.open.iter().any(|t| t.id == id))
        {
            out.push(Violation::new(
                HPD_TURN_001,
                format!("message turn {id:?} starts a second time"),
            ));
            return;
        }
        self.open.push(Turn {
            id,
            ..Turn::default()
        });
    }

    fn turn_ended(&mut self, kind: &str, m: &Map<String, Value>, out: &mut Vec<Violation>) {
        let id = id_of(m, "messageTurnId").unwrap_or("");
        let at = match self.open.iter().position(|t| t.id == id) {
            Some(at) => {
                if !id.is_empty() {
                    // The end names the turn's own id: its id did not drift.
                    self.exercised.hit(HPD_TURN_002);
                }
                at
            }
            None if !id.is_empty() && self.ended_turns.contains(id) => {
                out.push(Violation::new(
                    HPD_TURN_001,
                    format!("{kind} for message turn {id:?}, which had already ended"),
                ));
                return;
            }
            None if self.open.len() == 1 && !id.is_empty() && !self.open[0].id.is_empty() => {
                out.push(Violation::new(
                    HPD_TURN_002,
                    format!(
                        "{kind} carries messageTurnId {id:?}; the turn in progress started as {:?}",
                        self.open[0].id
                    ),
                ));
                0
            }
            None if self.open.len() == 1 && id.is_empty() => 0,
            // A turn that started before the stream was joined.
            None => return,
        };
        // The end closes a turn whose start the checker saw: it ends once, having started.
        self.exercised.hit(HPD_TURN_001);
        let turn = self.open.remove(at);
        self.close_turn(turn, kind, out);
        self.in_step = true;
    }

    /// What must hold when a turn whose whole stream was seen ends.
    fn close_turn(&mut self, turn: Turn, kind: &str, out: &mut Vec<Violation>) {
        let of_turn = |t: &Option<String>| t.as_deref() == Some(turn.id.as_str());
        for (id, block) in &self.blocks {
            if !of_turn(&block.turn) {
                continue;
            }
            self.exercised.hit(HPD_STREAM_002);
            if !block.ended {
                out.push(Violation::new(
                    HPD_STREAM_002,
                    format!(
                        "the {} block {id:?} is still open at {kind}",
                        block_name(block.kind)
                    ),
                ));
            }
        }
        for (id, call) in &self.calls {
            if !of_turn(&call.turn) {
                continue;
            }
            self.exercised.hit(HPD_TOOL_003);
            if !call.ended {
                out.push(Violation::new(
                    HPD_TOOL_003,
                    format!("tool call {id:?} has no TOOL_CALL_END at {kind}"),
                ));
            }
            let excused = turn.interrupted || self.denied_calls.contains(id);
            if !call.has_result && !excused && kind != "MESSAGE_TURN_ERROR" {
                out.push(Violation::new(
                    HPD_TOOL_003,
                    format!("tool call {id:?} has no TOOL_CALL_RESULT at {kind}"),
                ));
            }
        }
        for (id, p) in &self.permissions {
            if !of_turn(&p.turn) || p.answered.is_none() {
                continue;
            }
            // An answered permission is owed its outcome by the turn's end.
            self.exercised.hit(HPD_ASK_001);
            if p.outcome.is_none() {
                out.push(Violation::new(
                    HPD_ASK_001,
                    format!("permission {id:?} was answered but neither PERMISSION_APPROVED nor PERMISSION_DENIED came before {kind}"),
                ));
            }
        }
        for n in &turn.iterations {
            out.push(Violation::new(
                HPD_TURN_003,
                format!("agent turn {n} never finished before {kind}"),
            ));
        }
        for (id, what) in &turn.orphans {
            let started = match *what {
                "tool" => self.calls.contains_key(id),
                _ => self.blocks.contains_key(id),
            };
            let rule = if *what == "tool" {
                HPD_TOOL_001
            } else {
                HPD_STREAM_001
            };
            // An id used before (or without) its START is owed one by the turn's end.
            self.exercised.hit(rule);
            if !started {
                out.push(Violation::new(
                    rule,
                    format!("{what} events name {id:?}, which no START opened in the turn"),
                ));
            }
        }
        if !turn.id.is_empty() {
            if turn.interrupted {
                self.interrupted_turns.insert(turn.id.clone());
            }
            self.ended_turns.insert(turn.id);
        }
    }

    /// True when the turn in progress already saw `id` used before this, its START.
    fn started_late(&self, id: &str) -> bool {
        self.open
            .last()
            .is_some_and(|t| t.orphans.iter().any(|(o, _)| o == id))
    }

    /// A START of something while no turn is open, on a stream in step (one that is not
    /// may have joined a turn in the middle: nothing is judged).
    fn outside_turn(&mut self, kind: &str, out: &mut Vec<Violation>) {
        if !self.in_step {
            return;
        }
        self.exercised.hit(HPD_TURN_004);
        if self.open.is_empty() {
            out.push(Violation::new(
                HPD_TURN_004,
                format!("{kind} arrives while no message turn is in progress"),
            ));
        }
    }

    fn block(
        &mut self,
        kind_of: BlockKind,
        step: BlockStep,
        kind: &str,
        m: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) {
        let Some(id) = id_of(m, "messageId") else {
            return;
        };
        if step == BlockStep::Start {
            self.outside_turn(kind, out);
            // A block's id is compared with those used and opened before.
            self.exercised.hit(HPD_STREAM_001);
            if self.started_late(id) {
                out.push(Violation::new(
                    HPD_STREAM_001,
                    format!("{kind} for {id:?} comes after that block's other events"),
                ));
            } else if self.blocks.contains_key(id) {
                out.push(Violation::new(
                    HPD_STREAM_001,
                    format!("{kind} opens block {id:?} a second time"),
                ));
            }
            self.blocks.insert(
                id.to_owned(),
                Block {
                    kind: kind_of,
                    ended: false,
                    turn: self.current(),
                },
            );
            return;
        }
        let Some(block) = self.blocks.get(id) else {
            self.orphan(id, block_name(kind_of));
            return;
        };
        let after_end = self.after_end(&block.turn);
        if let Some((rule, _)) = after_end {
            self.exercised.hit(rule);
        }
        if let Some((rule, true)) = after_end {
            out.push(Violation::new(
                rule,
                format!("{kind} for block {id:?} after its message turn ended"),
            ));
        } else {
            // A DELTA or END of a block whose START came is held to its START and END.
            self.exercised.hit(HPD_STREAM_001);
            if block.ended {
                out.push(Violation::new(
                    HPD_STREAM_001,
                    format!("{kind} for block {id:?} after its END"),
                ));
            } else if block.kind != kind_of {
                out.push(Violation::new(
                    HPD_STREAM_001,
                    format!("{kind} names {id:?}, a {} block", block_name(block.kind)),
                ));
            }
        }
        if step == BlockStep::End {
            if let Some(b) = self.blocks.get_mut(id) {
                b.ended = true;
            }
        }
    }

    fn tool(
        &mut self,
        step: ToolStep,
        kind: &str,
        m: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) {
        let Some(id) = id_of(m, "callId") else {
            return;
        };
        if step == ToolStep::Start {
            self.outside_turn(kind, out);
            if self.started_late(id) {
                out.push(Violation::new(
                    HPD_TOOL_001,
                    format!("TOOL_CALL_START for {id:?} comes after that call's other events"),
                ));
            }
            let turn = self.current();
            self.calls.entry(id.to_owned()).or_insert_with(|| Call {
                turn,
                ..Call::default()
            });
            return;
        }
        if step == ToolStep::Result {
            self.gated_result(id, m.get("result"), out);
        }
        let after_end = self.calls.get(id).and_then(|c| self.after_end(&c.turn));
        let Some(call) = self.calls.get_mut(id) else {
            self.orphan(id, "tool");
            return;
        };
        // The callId names a call whose START came.
        self.exercised.hit(HPD_TOOL_001);
        if let Some((rule, _)) = after_end {
            self.exercised.hit(rule);
        }
        if let Some((rule, true)) = after_end {
            out.push(Violation::new(
                rule,
                format!("{kind} for call {id:?} after its message turn ended"),
            ));
        }
        match step {
            ToolStep::End => call.ended = true,
            ToolStep::Result => call.has_result = true,
            _ => {}
        }
    }

    /// The result of a call a permission gated. The framework reports a denied call with a
    /// result too, the denial's text, so a denied call is told from one that ran by
    /// difference: a result an approved call of the same tool returned means it ran. With no
    /// approved call of that tool to compare, a result that is not a string (the tool's own
    /// output, not a denial's text) means it ran.
    fn gated_result(&mut self, call: &str, result: Option<&Value>, out: &mut Vec<Violation>) {
        let (Some(result), Some(p)) = (
            result,
            self.gated_calls
                .get(call)
                .and_then(|id| self.permissions.get(id)),
        ) else {
            return;
        };
        let function = p.function.clone().unwrap_or_default();
        let approved = p.outcome.or(p.answered) == Some(true);
        if self.denied_calls.contains(call) {
            // A result of a denied call is judged for having run.
            self.exercised.hit(HPD_ASK_002);
            let compared = self.approved_results.get(&function);
            let ran = match compared {
                Some(seen) => seen.contains(result),
                None => !result.is_string(),
            };
            if ran {
                let how = match compared {
                    Some(_) => format!("the result an approved call of {function:?} returned"),
                    None => "the tool's own output, not a denial's text".to_owned(),
                };
                out.push(Violation::new(
                    HPD_ASK_002,
                    format!("TOOL_CALL_RESULT for call {call:?}, whose permission was denied, carries {how}"),
                ));
            }
        } else if approved && self.approved_results.len() < MAX_GATED_TOOLS {
            let seen = self.approved_results.entry(function).or_default();
            if seen.len() < MAX_RESULTS_PER_TOOL && !seen.contains(result) {
                seen.push(result.clone());
            }
        }
    }

    fn permission_outcome(
        &mut self,
        approved: bool,
        kind: &str,
        m: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) {
        let Some(id) = id_of(m, "permissionId") else {
            return;
        };
        let Some(p) = self.permissions.get_mut(id) else {
            return;
        };
        if p.answered.is_some() {
            // An outcome of a permission the client answered is held to the answer.
            self.exercised.hit(HPD_ASK_001);
        }
        if p.answered.is_some_and(|a| a != approved) {
            out.push(Violation::new(
                HPD_ASK_001,
                format!("{kind} for permission {id:?}, which the client answered the other way"),
            ));
        }
        p.outcome = Some(approved);
        if !approved {
            let call = id_of(m, "callId")
                .map(str::to_owned)
                .or_else(|| p.call_id.clone());
            if let Some(call) = call {
                // A denial of a call the checker knows is held to the call not having run.
                if self.calls.contains_key(&call) {
                    self.exercised.hit(HPD_ASK_002);
                }
                if self.calls.get(&call).is_some_and(|c| c.has_result) {
                    out.push(Violation::new(
                        HPD_ASK_002,
                        format!("call {call:?} already has a TOOL_CALL_RESULT when its permission is denied"),
                    ));
                }
                self.denied_calls.insert(call);
            }
        }
    }
}

fn iteration(m: &Map<String, Value>) -> Option<i64> {
    m.get("iteration").and_then(Value::as_i64)
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
