//! The Nuum transcript checker: every stdout line is classified and validated, and the
//! lifecycles are followed — init first and once, turns (turn_accepted … exactly one result),
//! tool uses and their results, mid-turn queueing and injection, and one session_id per
//! database across restarts.
//!
//! It works on stdout alone (`check nuum --from server`) and uses what the client sent when the
//! transcript has it: a user message sent while idle must start a turn with turn_accepted.

use super::validate::{self, Kind};
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{
    NUUM_HOST_001, NUUM_HOST_002, NUUM_INIT_001, NUUM_INJ_002, NUUM_OUT_001, NUUM_OUT_002,
    NUUM_RES_001, NUUM_SID_001, NUUM_SID_002, NUUM_TASK_003, NUUM_TOOL_001, NUUM_TOOL_002,
    NUUM_TR_001, NUUM_TR_002, NUUM_TURN_001,
};
use crate::rules::{Exercised, Violation};
use crate::transcript::Direction;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};

/// Tool-use ids remembered at most (a hostile flood cannot grow memory without bound).
const MAX_TRACKED: usize = 4096;

/// One process's lifecycle state.
#[derive(Debug, Default)]
struct Process {
    /// Something has been written to stdout (init or not).
    spoke: bool,
    init_seen: bool,
    session_id: Option<String>,
    /// The client closed stdin (the runner's `$close`): an exit is expected now.
    stdin_closed: bool,
    turn: Turn,
}

#[derive(Debug, Default)]
struct Turn {
    open: bool,
    /// The client sent a user message while no turn was open: turn_accepted is due.
    accept_due: bool,
    /// Messages queued during this turn and not yet injected.
    queued: u64,
    /// A tool result came after the oldest uninjected message was queued: the model call
    /// under way then has ended, and the next one must see the message.
    model_call_ended: bool,
    /// Messages queued in an earlier turn that ended without injecting them: the target may
    /// inject them later or run them as a turn of their own (the spec does not say).
    carried: u64,
    /// tool_use ids of this turn without a tool result yet.
    unanswered_tools: Vec<String>,
    /// This turn called a tool: a success result owes each call its result (NUUM-TOOL-002),
    /// answered or not by then.
    used_tools: bool,
    /// This turn's calls of a tool the spec says creates a task or alarm, not failed: by name
    /// and id.
    task_calls: Vec<(String, String)>,
    /// A tasks snapshot came during this turn.
    snapshot_seen: bool,
}

impl Turn {
    /// With no turn open, output or a result may be a queued message's own turn: one an
    /// earlier turn ended without injecting (§Mid-Turn Message Injection says only that queued
    /// messages are injected "at the next opportunity"). The public build runs each such
    /// message as a turn with no turn_accepted (the message was received, and answered
    /// `queued`, long before). True when one was waiting: its turn opens now.
    fn runs_carried(&mut self) -> bool {
        if self.carried == 0 {
            return false;
        }
        self.carried -= 1;
        self.open = true;
        true
    }
}

/// The tool_use a tool_result block answers.
fn use_id(block: &Value) -> Option<&str> {
    block.get("tool_use_id").and_then(Value::as_str)
}

/// The tools §Tasks Snapshot names as creating a task or an alarm: "This is emitted on: Task
/// created (`background_research`, `background_reflect`) … Alarm created (`set_alarm`)".
const TASK_TOOLS: [&str; 3] = ["background_research", "background_reflect", "set_alarm"];

/// The Nuum [`Checker`].
#[derive(Debug, Default)]
pub struct NuumChecker {
    process: Process,
    /// The session_id of the first process: every later start must show the same.
    first_session_id: Option<String>,
    /// The transcript has the host's lines too (not a bare stdout capture).
    saw_client: bool,
    /// The host's last line was bad input (the process must refuse it and keep running).
    client_broken: bool,
    /// tool_use ids seen, oldest first, bounded.
    tool_ids: VecDeque<String>,
    tool_id_set: HashSet<String>,
    /// The rules checked since the judge last asked ([`Checker::exercised`]).
    exercised: Exercised,
}

impl NuumChecker {
    fn on_server_line(&mut self, line: &Value, out: &mut Vec<Violation>) {
        // Every output line is tested for the form of a Nuum message (an object with a string
        // type) and its type and subtype against the spec's lists: both rules apply to each.
        self.exercised.hit(NUUM_OUT_002);
        let kind = match validate::classify(line) {
            Ok(kind) => kind,
            // JSON, but not in the form every example shows.
            Err(why) => {
                self.process.spoke = true;
                out.push(Violation::new(
                    NUUM_OUT_002,
                    format!("stdout carried {why}"),
                ));
                return;
            }
        };
        self.exercised.hit(NUUM_OUT_001);
        self.startup(kind, line, out);
        validate::shape_checks(kind, line, out, &mut self.exercised);
        self.session_identity(kind, line, out);
        match kind {
            Kind::TurnAccepted => {
                // A turn a user message started (or, in a bare stdout capture, any turn) is
                // accepted before its first output: NUUM-TURN-001 holds (it is broken in
                // `turn_output` or `result` when output comes first).
                if self.process.turn.accept_due || !self.saw_client {
                    self.exercised.hit(NUUM_TURN_001);
                }
                self.process.turn.open = true;
                self.process.turn.accept_due = false;
            }
            Kind::Assistant => {
                self.turn_output(kind, out);
                let turn = &mut self.process.turn;
                // An output while messages wait to be injected is what NUUM-INJ-002 judges.
                if turn.queued > 0 {
                    self.exercised.hit(NUUM_INJ_002);
                }
                // Outputs of the model call under way when the message was queued may still
                // come (one call can stream several assistant lines); wireprobe sees a call end
                // only at a tool result, and judges the output after that.
                if turn.queued > 0 && turn.model_call_ended {
                    out.push(Violation::new(
                        NUUM_INJ_002,
                        format!(
                            "assistant output after a tool result while {} queued message(s) were not injected",
                            turn.queued
                        ),
                    ));
                    turn.queued = 0;
                    turn.model_call_ended = false;
                }
                self.tool_uses(line);
                let unlisted = validate::content_blocks(line)
                    .filter_map(|b| b.get("type").and_then(Value::as_str))
                    .filter(|ty| !matches!(*ty, "text" | "tool_use"));
                for ty in unlisted {
                    out.push(Violation::new(
                        NUUM_OUT_001,
                        format!("an assistant content block of type {ty:?}, which the spec does not list"),
                    ));
                }
            }
            Kind::ToolResult | Kind::ToolResultAsUser => {
                self.turn_output(kind, out);
                self.tool_results(kind, line, out);
                let turn = &mut self.process.turn;
                turn.model_call_ended = turn.queued > 0;
            }
            Kind::Result => self.result(line, out),
            Kind::Tasks => self.process.turn.snapshot_seen = true,
            // Queued after the turn's result (the message raced the turn's end): it waits for a
            // later turn, like one the turn left uninjected.
            Kind::Queued if !self.process.turn.open => self.process.turn.carried += 1,
            Kind::Queued => {
                let turn = &mut self.process.turn;
                if turn.queued == 0 {
                    turn.model_call_ended = false;
                }
                turn.queued += 1;
            }
            Kind::Injected => {
                let count = line
                    .get("message_count")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let turn = &mut self.process.turn;
                let waiting = turn.queued + turn.carried;
                self.exercised.hit(NUUM_INJ_002);
                if count > waiting {
                    out.push(Violation::new(
                        NUUM_INJ_002,
                        format!("system/injected reports {count} message(s) with {waiting} queued"),
                    ));
                }
                let from_this_turn = count.min(turn.queued);
                turn.queued -= from_this_turn;
                if turn.queued == 0 {
                    turn.model_call_ended = false;
                }
                turn.carried = turn.carried.saturating_sub(count - from_this_turn);
            }
            Kind::OtherSystem(subtype) => out.push(Violation::new(
                NUUM_OUT_001,
                format!("system/{subtype}, a subtype the spec does not list"),
            )),
            Kind::Other(ty) => out.push(Violation::new(
                NUUM_OUT_001,
                format!("type {ty:?}, an output type the spec does not list"),
            )),
            _ => {}
        }
    }

    /// init first, and once per process.
    fn startup(&mut self, kind: Kind<'_>, line: &Value, out: &mut Vec<Violation>) {
        let p = &mut self.process;
        let first = !p.spoke;
        p.spoke = true;
        // An init (once?) and the first line (an init?) are what NUUM-INIT-001 is about.
        if kind == Kind::Init || first {
            self.exercised.hit(NUUM_INIT_001);
        }
        match (kind, p.init_seen) {
            (Kind::Init, true) => out.push(Violation::new(
                NUUM_INIT_001,
                "a second system/init from the same process",
            )),
            (Kind::Init, false) => {
                p.init_seen = true;
                let sid = line.get("session_id").and_then(Value::as_str);
                p.session_id = sid.map(str::to_owned);
                match (&self.first_session_id, sid) {
                    (None, Some(sid)) => self.first_session_id = Some(sid.to_owned()),
                    // A restart: its session_id is compared with the first start's.
                    (Some(first), Some(sid)) => {
                        self.exercised.hit(NUUM_SID_002);
                        if first != sid {
                            out.push(Violation::new(
                                NUUM_SID_002,
                                format!("after a restart init carries session_id {sid:?}; the first start had {first:?}"),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            (_, false) if first => out.push(Violation::new(
                NUUM_INIT_001,
                format!(
                    "{} is the first line on stdout, before system/init",
                    validate::describe(kind)
                ),
            )),
            _ => {}
        }
    }

    fn session_identity(&mut self, kind: Kind<'_>, line: &Value, out: &mut Vec<Violation>) {
        if kind == Kind::Init {
            return;
        }
        let (Some(sid), Some(expected)) = (
            line.get("session_id").and_then(Value::as_str),
            self.process.session_id.as_deref(),
        ) else {
            return;
        };
        self.exercised.hit(NUUM_SID_001);
        if sid != expected {
            out.push(Violation::new(
                NUUM_SID_001,
                format!(
                    "{} carries session_id {sid:?}; init said {expected:?}",
                    validate::describe(kind)
                ),
            ));
        }
    }

    /// Output that belongs to a turn: a turn must have been accepted.
    fn turn_output(&mut self, kind: Kind<'_>, out: &mut Vec<Violation>) {
        let turn = &mut self.process.turn;
        // With the host's lines in view, a turn no user message started (an alarm firing, say)
        // needs no turn_accepted: the spec ties that to a received message.
        if turn.open {
            return;
        }
        if turn.runs_carried() {
            return;
        }
        if turn.accept_due || !self.saw_client {
            out.push(Violation::new(
                NUUM_TURN_001,
                format!(
                    "{} with no turn accepted (no system/turn_accepted since the last result)",
                    validate::describe(kind)
                ),
            ));
        }
        // Judge the rest of this turn as if it had been accepted.
        turn.open = true;
        turn.accept_due = false;
    }

    fn tool_uses(&mut self, line: &Value) {
        for block in validate::content_blocks(line) {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                continue;
            }
            let Some(id) = block.get("id").and_then(Value::as_str) else {
                continue;
            };
            if self.tool_ids.len() >= MAX_TRACKED {
                if let Some(old) = self.tool_ids.pop_front() {
                    self.tool_id_set.remove(&old);
                }
            }
            if self.tool_id_set.insert(id.to_owned()) {
                self.tool_ids.push_back(id.to_owned());
            }
            let turn = &mut self.process.turn;
            turn.used_tools = true;
            if turn.unanswered_tools.len() < MAX_TRACKED {
                turn.unanswered_tools.push(id.to_owned());
            }
            let name = block.get("name").and_then(Value::as_str).unwrap_or("");
            if TASK_TOOLS.contains(&name) && turn.task_calls.len() < MAX_TRACKED {
                turn.task_calls.push((name.to_owned(), id.to_owned()));
            }
        }
    }

    fn tool_results(&mut self, kind: Kind<'_>, line: &Value, out: &mut Vec<Violation>) {
        let blocks: Vec<&Value> = match kind {
            Kind::ToolResult => line.get("tool_result").into_iter().collect(),
            _ => validate::tool_result_blocks(line).collect(),
        };
        let ids: Vec<&str> = blocks.iter().copied().filter_map(use_id).collect();
        let failed: Vec<&str> = blocks
            .iter()
            .copied()
            .filter(|b| b.get("is_error") == Some(&Value::Bool(true)))
            .filter_map(use_id)
            .collect();
        // A task tool that failed created nothing.
        self.process
            .turn
            .task_calls
            .retain(|(_, id)| !failed.contains(&id.as_str()));
        for id in ids {
            self.exercised.hit(NUUM_TOOL_001);
            if !self.tool_id_set.contains(id) {
                out.push(Violation::new(
                    NUUM_TOOL_001,
                    format!("a tool result for tool_use_id {id:?}, which no earlier tool_use has"),
                ));
            }
            let pending = &mut self.process.turn.unanswered_tools;
            let known = pending.iter().position(|p| p == id);
            if let Some(i) = known {
                pending.remove(i);
                // Only the example shows the system/tool_result form; newer public builds
                // write a `user` line, which is taken as the result and recorded.
                if kind == Kind::ToolResultAsUser {
                    out.push(Violation::new(
                        NUUM_OUT_001,
                        format!("the result of tool_use {id:?} came as a `user` line, not system/tool_result (newer public builds do this: suites/nuum/ERRATA.md)"),
                    ));
                }
            }
        }
    }

    fn result(&mut self, line: &Value, out: &mut Vec<Violation>) {
        let turn = &mut self.process.turn;
        // Every result is tested for an open turn to end (NUUM-TURN-001 instead when the turn
        // it ends was never accepted: broken, so counted).
        self.exercised.hit(NUUM_RES_001);
        if !turn.open && !turn.runs_carried() {
            out.push(Violation::new(
                if turn.accept_due {
                    NUUM_TURN_001
                } else {
                    NUUM_RES_001
                },
                if turn.accept_due {
                    "a result for a turn that was never accepted (no system/turn_accepted)"
                } else {
                    "a result with no turn open: a second result for one turn?"
                },
            ));
        }
        // A snapshot is owed only when the turn called a tool that creates a task.
        if !turn.task_calls.is_empty() {
            self.exercised.hit(NUUM_TASK_003);
        }
        if let Some((name, id)) = turn.task_calls.first().filter(|_| !turn.snapshot_seen) {
            out.push(Violation::new(
                NUUM_TASK_003,
                format!("the turn called {name} (tool_use {id:?}), which creates a task, but no tasks snapshot came"),
            ));
        }
        turn.task_calls.clear();
        turn.snapshot_seen = false;
        if line.get("subtype").and_then(Value::as_str) == Some("success") {
            // Results are owed only when the turn called a tool.
            if turn.used_tools {
                self.exercised.hit(NUUM_TOOL_002);
            }
            for id in &turn.unanswered_tools {
                out.push(Violation::new(
                    NUUM_TOOL_002,
                    format!(
                        "the turn succeeded, but tool_use {id:?} never got a system/tool_result"
                    ),
                ));
            }
        }
        turn.open = false;
        turn.accept_due = false;
        turn.unanswered_tools.clear();
        turn.used_tools = false;
        turn.carried += std::mem::take(&mut turn.queued);
        turn.model_call_ended = false;
    }

    fn on_client_line(&mut self, line: &Value, out: &mut Vec<Violation>) {
        self.saw_client = true;
        // Each line the host writes is tested for being a message the spec lists.
        self.exercised.hit(NUUM_HOST_001);
        let parsed = super::input::line_of(line);
        self.client_broken = parsed.is_err();
        if let Err(why) = &parsed {
            out.push(Violation::new(
                NUUM_HOST_001,
                format!("a line the agent cannot take: {why}"),
            ));
        }
        // Only a user message the process can take starts a turn; a broken one is refused.
        if matches!(parsed, Ok(super::input::HostLine::User { .. })) && !self.process.turn.open {
            self.process.turn.accept_due = true;
        }
    }
}

impl Checker for NuumChecker {
    fn observe(
        &mut self,
        from: Direction,
        _at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        match (from, item) {
            (_, Observed::Connect(_)) => {
                self.process = Process::default();
            }
            // A line that reached the checker as JSON is a line of JSON: NUUM-TR-001 (the
            // process) and NUUM-HOST-002 (the host) hold for it; Garbage below breaks them.
            (Direction::Server, Observed::Event(line, _)) => {
                self.exercised.hit(NUUM_TR_001);
                self.on_server_line(line.value(), out);
            }
            (Direction::Client, Observed::Event(line, _)) => {
                self.exercised.hit(NUUM_HOST_002);
                self.on_client_line(line.value(), out);
            }
            (Direction::Client, Observed::Garbage(text)) => {
                self.saw_client = true;
                self.client_broken = true;
                // An empty text stands for a line that is not UTF-8 (see `observed_of`).
                out.push(Violation::new(
                    NUUM_HOST_002,
                    match text.is_empty() {
                        true => "the host wrote a line that is not UTF-8, so not JSON".to_owned(),
                        false => format!(
                            "the host wrote a line that is not JSON: {:?}",
                            text.chars().take(60).collect::<String>()
                        ),
                    },
                ));
            }
            (Direction::Server, Observed::Garbage(text)) => {
                self.process.spoke = true;
                let shown: String = text.chars().take(80).collect();
                out.push(Violation::new(
                    NUUM_TR_001,
                    if text.is_empty() {
                        "stdout carried a line that is not UTF-8".to_owned()
                    } else {
                        format!("stdout carried a line that is not JSON: {shown:?}")
                    },
                ));
            }
            (Direction::Client, Observed::Closed { .. }) => self.process.stdin_closed = true,
            // The wait for the process's first line is init's startup test.
            (Direction::Server, Observed::NoGreeting { waited_ms }) => {
                self.exercised.hit(NUUM_INIT_001);
                if !self.process.spoke {
                    out.push(Violation::new(
                        NUUM_INIT_001,
                        format!("no system/init within {waited_ms} ms of the process starting (it is sent on startup)"),
                    ));
                }
            }
            // The process ending is what NUUM-TR-002 judges: broken while stdin is open.
            (Direction::Server, Observed::Closed { .. }) => {
                self.exercised.hit(NUUM_TR_002);
                if !self.process.stdin_closed {
                    out.push(Violation::new(
                        NUUM_TR_002,
                        "the process ended while its stdin was still open",
                    ));
                    self.process.stdin_closed = true;
                }
            }
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
#[path = "checker_tests.rs"]
mod tests;
