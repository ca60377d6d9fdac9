//! What the AG-UI checker knows of a conversation: the input of the exchange in progress, the
//! run being streamed, and what the thread has established across runs (ids, closed items,
//! state, activities). The concern modules read and update it; none of them judges alone.

use super::events::Kind;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Who an item belongs to: a subagent invocation, or the parent agent (`None`).
pub type Owner = Option<String>;

/// Most ids of one sort the checker remembers: a flooding target cannot grow memory without
/// bound (past the cap new ids are judged as if unseen).
pub const MAX_IDS: usize = 100_000;

/// A streamed item as its opener established it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub owner: Owner,
    /// Opened by a chunk: it continues and closes in chunk form only.
    pub chunked: bool,
    /// The opener's describing fields (`role`, `name`; `toolCallName`, `parentMessageId`).
    pub fields: Map<String, Value>,
}

/// The items of one kind: those open in the run, and those closed in the thread (a closed
/// message or call MAY be reopened, agreeing with what it was).
#[derive(Debug, Default)]
pub struct Items {
    pub open: HashMap<String, Opened>,
    pub closed: HashMap<String, Opened>,
}

impl Items {
    /// Closes `id` (a no-op when it is not open).
    pub fn close(&mut self, id: &str) {
        if let Some(item) = self.open.remove(id) {
            if self.closed.len() < MAX_IDS {
                self.closed.insert(id.to_owned(), item);
            }
        }
    }
}

/// Where the run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Active,
    /// RUN_FINISHED came: a RUN_ERROR (late failure) or a RUN_STARTED may follow.
    Finished,
    /// RUN_ERROR came: only a RUN_STARTED may follow.
    Errored,
}

/// The run being streamed.
#[derive(Debug)]
pub struct Run {
    pub run_id: Option<String>,
    pub phase: Phase,
    /// The producer's `protocolVersion` on RUN_STARTED.
    pub declared: Option<String>,
    /// An event of the run carried a malformed known value: every conforming consumer has
    /// failed the run there, so what it left open is no further finding.
    pub malformed: bool,
    /// Reasoning spans open, by id.
    pub spans: HashMap<String, Owner>,
    /// Steps open, by owner and name.
    pub steps: HashSet<(Owner, String)>,
    /// Subagent invocations announced and not closed.
    pub active_subagents: HashSet<String>,
    /// Subagent invocations closed in this run.
    pub finished_subagents: HashSet<String>,
    /// Subagent ids events carried before (or without) an announcement.
    pub attributed: HashSet<String>,
    /// Tool calls the run started, in order, with their tool's name.
    pub calls: Vec<(String, Option<String>)>,
    /// Tool calls the run answered with TOOL_CALL_RESULT.
    pub answered: HashSet<String>,
    /// The run opened something (a message, tool call, reasoning span, step, subagent
    /// invocation) its RUN_FINISHED owes closed: only then does that close exercise AGUI-RUN-004.
    pub opened: bool,
}

impl Run {
    pub fn new(run_id: Option<String>, declared: Option<String>) -> Run {
        Run {
            run_id,
            phase: Phase::Active,
            declared,
            malformed: false,
            spans: HashMap::new(),
            steps: HashSet::new(),
            active_subagents: HashSet::new(),
            finished_subagents: HashSet::new(),
            attributed: HashSet::new(),
            calls: Vec::new(),
            answered: HashSet::new(),
            opened: false,
        }
    }

    /// True when the producer declared a version newer than 1.1: what this checker does not
    /// know may be that version's, not a defect.
    pub fn speaks_newer(&self) -> bool {
        self.declared
            .as_deref()
            .and_then(version)
            .is_some_and(|v| v > (1, 1))
    }
}

/// `MAJOR.MINOR` as numbers, when the text is that.
pub fn version(text: &str) -> Option<(u64, u64)> {
    let (major, minor) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// What an input POSTed to the agent was, as the schema reads it.
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    pub version: Option<String>,
    /// The state the run starts from (`{}` when the input carried none).
    pub state: Value,
    /// The frontend tools the input offered, by name.
    pub frontend: HashSet<String>,
    /// The messages the input carried: id and role.
    pub messages: Vec<(String, String)>,
    pub standing: Standing,
    /// Members the schema does not describe (the input is still valid).
    pub novel: bool,
}

/// Whether an input is one a producer must serve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Standing {
    #[default]
    Valid,
    /// Not JSON, or a described field with a value the schema rejects: refused before a run.
    Malformed,
    /// Its only flaw is a `null` for an optional field, which a producer may tolerate through a
    /// compatibility shim: a refusal stands, and a run served for it is judged as any run.
    NullsOnly,
}

/// One POST and its answer.
#[derive(Debug)]
pub struct Answer {
    pub input: Input,
    /// The request's `Accept` admitted the protobuf media type.
    pub proto_admitted: bool,
    /// The head came: its status and whether the body is an event stream of either encoding.
    pub status: Option<u16>,
    pub streamed: bool,
    /// The head named the protobuf media type: the events are decoded frames, not SSE lines.
    pub proto: bool,
    /// The runs this answer carried (ids from RUN_STARTED), in order, with the version each
    /// declared.
    pub runs: Vec<(Option<String>, Option<String>)>,
    /// The run echoing the input's runId was seen, and what it declared.
    pub requested: Option<Option<String>>,
    /// Whether a message about answering broken input has been given.
    pub broken_judged: bool,
}

/// A message's kind, for messageId uniqueness (The Event Model › Identifiers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// A text message, with its role.
    Text(String),
    Reasoning,
    /// A tool message minted by TOOL_CALL_RESULT, answering this call.
    ToolResult(String),
    Activity,
    /// A message of the input, with its role.
    Input(String),
}

impl MessageKind {
    /// True when a message of kind `self` may be met again as `other` under one id: the
    /// same message restated, reopened or continued.
    pub fn same_message(&self, other: &MessageKind) -> bool {
        match (self, other) {
            (MessageKind::Input(input), MessageKind::Text(text))
            | (MessageKind::Text(text), MessageKind::Input(input)) => input == text,
            // A text message reopened with another role is the reopening rule's business.
            (MessageKind::Text(_), MessageKind::Text(_)) => true,
            (MessageKind::Input(role), MessageKind::Reasoning)
            | (MessageKind::Reasoning, MessageKind::Input(role)) => role == "reasoning",
            (MessageKind::Input(role), MessageKind::ToolResult(_))
            | (MessageKind::ToolResult(_), MessageKind::Input(role)) => role == "tool",
            (MessageKind::Input(role), MessageKind::Activity)
            | (MessageKind::Activity, MessageKind::Input(role)) => role == "activity",
            (a, b) => a == b,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            MessageKind::Text(role) => format!("a text message of role {role}"),
            MessageKind::Reasoning => "a reasoning message".into(),
            MessageKind::ToolResult(call) => format!("the result of tool call {call:?}"),
            MessageKind::Activity => "an activity message".into(),
            MessageKind::Input(role) => format!("the input's {role} message"),
        }
    }
}

/// An activity message as its snapshots and deltas have made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Activity {
    pub content: Value,
    /// The subagent invocation the snapshot that minted it was attributed to.
    pub owner: Owner,
}

/// Everything the checker holds across a case's exchanges (one thread).
#[derive(Debug, Default)]
pub struct Conversation {
    pub answer: Option<Answer>,
    /// Exchanges POSTed whose answers have not begun: answers come in the order the POSTs
    /// went (the transport delivers them one after another).
    pub queued: std::collections::VecDeque<Answer>,
    /// Events of the stream in progress (the answer's, or a captured stream's).
    pub stream_events: usize,
    /// The threadId the stream's first boundary event named: with no input to hold them to,
    /// every other boundary event of the stream is held to it (each carries the input's).
    pub stream_thread: Option<String>,
    pub run: Option<Run>,
    pub texts: Items,
    pub tools: Items,
    pub reasoning: Items,
    /// Open chunk streams, per lane (owner): the item's kind and id.
    pub chunks: HashMap<Owner, (Kind, String)>,
    /// Run ids of earlier answers (replays may restate them; a requested run may not).
    pub earlier_runs: HashSet<String>,
    pub messages: HashMap<String, MessageKind>,
    /// Activity messages' content and owner, by messageId.
    pub activities: HashMap<String, Activity>,
    /// The state as the input and the producer's events have made it; `None` while it is not
    /// known (a captured stream without its input, before any STATE_SNAPSHOT).
    pub state: Option<Value>,
    /// Rules a concern could not judge on what it was shown, and why (see
    /// [`crate::rules::Unjudged`]).
    pub unjudged: Vec<crate::rules::Unjudged>,
    /// Rules a concern checked on an item they apply to, whatever the outcome, since the
    /// checker last drained them (see [`crate::rules::Exercised`]).
    pub exercised: crate::rules::Exercised,
}

impl Conversation {
    pub fn items(&mut self, kind: Kind) -> &mut Items {
        match kind {
            Kind::Text => &mut self.texts,
            Kind::Tool => &mut self.tools,
            Kind::Reasoning => &mut self.reasoning,
        }
    }

    /// True when the answer in progress answers input wireprobe sent broken: only the rules
    /// about broken input judge it.
    pub fn answering_broken(&self) -> bool {
        self.answer
            .as_ref()
            .is_some_and(|a| a.input.standing == Standing::Malformed)
    }

    /// Notes that the run in progress opened something its RUN_FINISHED owes closed.
    pub fn note_opened(&mut self) {
        if let Some(run) = self.run.as_mut() {
            run.opened = true;
        }
    }

    /// Notes that `rule` could not be judged, and why (once per rule).
    pub fn not_judged(&mut self, rule: &'static str, why: &'static str) {
        if !self.unjudged.iter().any(|u| u.rule == rule) {
            self.unjudged.push(crate::rules::Unjudged { rule, why });
        }
    }

    /// Remembers a message id's kind; the kind it already had when that is another message.
    pub fn message(&mut self, id: &str, kind: MessageKind) -> Option<MessageKind> {
        match self.messages.get(id) {
            Some(had) if !had.same_message(&kind) => Some(had.clone()),
            Some(_) => None,
            None => {
                if self.messages.len() < MAX_IDS {
                    self.messages.insert(id.to_owned(), kind);
                }
                None
            }
        }
    }
}
