//! A client's RunAgentInput, judged: its shape (AGUI-CLI-001 to -003, -005, -008), its version
//! and request head (-006, -007), and, on a thread it continues, what the last answer left it
//! owing (a fresh runId, -004; the calls to answer, -009, -010; the state, -011 to -013; no call
//! a consumer refused answered as if it ran, -015, -016). Each check notes its rule as exercised
//! where the input holds what the rule is about, whatever the outcome.

use super::state::Reading;
use super::{Ending, Thread};
use crate::protocol::agui::conversation::Input;
use crate::protocol::agui::schema::Flaw;
use crate::rules::ids::{
    AGUI_CLI_001, AGUI_CLI_002, AGUI_CLI_003, AGUI_CLI_004, AGUI_CLI_005, AGUI_CLI_006,
    AGUI_CLI_007, AGUI_CLI_008, AGUI_CLI_009, AGUI_CLI_010, AGUI_CLI_011, AGUI_CLI_012,
    AGUI_CLI_013, AGUI_CLI_018,
};
use crate::rules::{Exercised, Violation};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Paths named in one message, at most.
const SHOWN: usize = 3;

/// What the thread follows of an input that named its thread and run.
pub struct Seen {
    pub thread: String,
    pub run: String,
    pub offered: HashSet<String>,
    /// The state the run starts from (absent: the empty object).
    pub state: Value,
}

/// Judges one POST, its JSON and that JSON's reading (`None`: not JSON), against the threads
/// followed so far; what the thread follows of it, when it named a thread and a run.
pub fn judge(
    threads: &HashMap<String, Thread>,
    hits: &mut Exercised,
    posted: Option<(&Value, &(Input, Vec<Flaw>))>,
    headers: &[(String, String)],
    out: &mut Vec<Violation>,
) -> Option<Seen> {
    head(headers, hits, out);
    // Every POST's body is owed as a RunAgentInput.
    hits.hit(AGUI_CLI_001);
    let (value, input) = match posted {
        Some((Value::Object(m), (input, flaws))) => {
            shape(flaws, hits, out);
            (m, input)
        }
        _ => {
            out.push(Violation::new(
                AGUI_CLI_001,
                "the POST's body is not a JSON object: no RunAgentInput",
            ));
            return None;
        }
    };
    messages(value, hits, out);
    let thread_id = value.get("threadId").and_then(Value::as_str);
    // "unless it knows its peer predates the field": an agent whose last RUN_STARTED on the
    // thread declared no version is such a peer.
    let peer_predates = thread_id
        .and_then(|t| threads.get(t))
        .is_some_and(|t| t.peer_declares == Some(false));
    // Judged on every input, the peer's exception granted or not.
    hits.hit(AGUI_CLI_006);
    if !value.contains_key("protocolVersion") && !peer_predates {
        out.push(Violation::new(
            AGUI_CLI_006,
            "the input declares no protocolVersion",
        ));
    }
    let thread = thread_id?.to_owned();
    let run = value.get("runId")?.as_str()?.to_owned();
    elsewhere(threads, &thread, value, hits, out);
    refused_answered(threads, &thread, value, hits, out);
    if let Some(had) = threads.get(&thread) {
        // The runId against those the thread used (a first run has none to compare with).
        hits.hit(AGUI_CLI_004);
        if had.run_ids.contains(&run) {
            out.push(Violation::new(
                AGUI_CLI_004,
                format!("runId {run:?} was already used for a run of thread {thread:?}"),
            ));
        }
        if had.continued {
            owed(had, value, hits, out);
        }
    }
    Some(Seen {
        thread,
        run,
        offered: input.frontend.clone(),
        state: input.state.clone(),
    })
}

/// The request's head: an `Accept` naming what the client reads, a JSON body. A head that was
/// not kept (a capture of bodies alone; a proxied request with neither header) says nothing.
fn head(headers: &[(String, String)], hits: &mut Exercised, out: &mut Vec<Violation>) {
    if headers.is_empty() {
        return;
    }
    hits.hit(AGUI_CLI_007);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    let accept = header("accept").unwrap_or_default();
    // Named, not only admitted through a wildcard, and not down-ranked to nothing.
    let names = |media: &str| {
        let named = accept.split(',').any(|r| r.trim().starts_with(media));
        named && crate::transport::accept::admits(&accept, media)
    };
    if !names("text/event-stream") && !names(crate::protocol::agui::PROTO_MEDIA_TYPE) {
        let said = match accept.is_empty() {
            true => "no Accept".to_owned(),
            false => format!("Accept {accept:?}"),
        };
        out.push(Violation::new(
            AGUI_CLI_007,
            format!("the request sends {said}: it names neither text/event-stream nor the protobuf media type"),
        ));
    }
    let json = header("content-type").is_some_and(|t| t.starts_with("application/json"));
    if !json {
        out.push(Violation::new(
            AGUI_CLI_007,
            "the request's Content-Type is not application/json",
        ));
    }
}

/// The input against the schema: malformed (-001), nulls (-002), undescribed material (-003).
fn shape(flaws: &[Flaw], hits: &mut Exercised, out: &mut Vec<Violation>) {
    // The schema read the whole object: its nulls and undescribed material were looked for.
    hits.hit(AGUI_CLI_002);
    hits.hit(AGUI_CLI_003);
    let paths = |pick: fn(&Flaw) -> bool| -> Vec<String> {
        flaws
            .iter()
            .filter(|f| pick(f))
            .take(SHOWN)
            .map(|f| {
                let at = match f.path() {
                    "" => "the input",
                    path => path,
                };
                match f {
                    Flaw::Malformed { message, .. } => format!("{at}: {message}"),
                    Flaw::Unknown { names, .. } => format!("{at}: {}", names.join(", ")),
                    Flaw::Unrecognised { value, .. } => format!("{at}: {value:?}"),
                    Flaw::Null { .. } => at.to_owned(),
                }
            })
            .collect()
    };
    let malformed = paths(|f| matches!(f, Flaw::Malformed { .. }));
    if !malformed.is_empty() {
        out.push(Violation::new(
            AGUI_CLI_001,
            format!("the input is malformed: {}", malformed.join("; ")),
        ));
    }
    let nulls = paths(|f| matches!(f, Flaw::Null { .. }));
    if !nulls.is_empty() {
        out.push(Violation::new(
            AGUI_CLI_002,
            format!("the input sends null for {}", nulls.join(", ")),
        ));
    }
    let novel = paths(|f| matches!(f, Flaw::Unknown { .. } | Flaw::Unrecognised { .. }));
    if !novel.is_empty() {
        out.push(Violation::new(
            AGUI_CLI_003,
            format!(
                "the input carries what the schema does not describe: {}",
                novel.join("; ")
            ),
        ));
    }
}

/// The messages: ids unique (-005), no activity message (-008).
fn messages(input: &Map<String, Value>, hits: &mut Exercised, out: &mut Vec<Violation>) {
    let Some(Value::Array(messages)) = input.get("messages") else {
        return;
    };
    if !messages.is_empty() {
        // Each message's role is looked at for an activity one.
        hits.hit(AGUI_CLI_008);
    }
    let mut seen = HashSet::new();
    let mut repeated = None;
    for m in messages {
        if let Some(id) = m.get("id").and_then(Value::as_str) {
            hits.hit(AGUI_CLI_005);
            if !seen.insert(id) && repeated.is_none() {
                repeated = Some(id);
            }
        }
    }
    if let Some(id) = repeated {
        out.push(Violation::new(
            AGUI_CLI_005,
            format!("two messages of the input have the id {id:?}"),
        ));
    }
    if let Some(activity) = messages.iter().find(|m| m["role"] == "activity") {
        let id = activity.get("id").and_then(Value::as_str).unwrap_or("");
        out.push(Violation::new(
            AGUI_CLI_008,
            format!("the input sends activity message {id:?} back to the agent"),
        ));
    }
}

/// A tool message answering a call another thread's last answer made: the thread was not
/// kept (AGUI-CLI-018).
fn elsewhere(
    threads: &HashMap<String, Thread>,
    thread: &str,
    input: &Map<String, Value>,
    hits: &mut Exercised,
    out: &mut Vec<Violation>,
) {
    let mut answered = tool_answers(input).map(|(call, _)| call).peekable();
    if answered.peek().is_none() {
        return;
    }
    // The input answers calls: where each was made is looked up.
    hits.hit(AGUI_CLI_018);
    // The calls other threads' last answers made, by id: one pass, however many messages.
    // Call ids need not be unique across threads (`call_0` per run is common): only an id this
    // thread never made points at another.
    let own = threads.get(thread);
    let made_here = |id: &str| own.is_some_and(|t| t.delivered.calls.iter().any(|c| c.id == id));
    let made: HashMap<&str, &str> = threads
        .iter()
        .filter(|(t, _)| *t != thread)
        .flat_map(|(t, had)| {
            had.delivered
                .calls
                .iter()
                .map(|c| (c.id.as_str(), t.as_str()))
        })
        .collect();
    let elsewhere = |c: &str| Some(*made.get(c)?).filter(|_| !made_here(c));
    if let Some((call, made_on)) = answered.find_map(|c| Some((c, elsewhere(c)?))) {
        out.push(Violation::new(
            AGUI_CLI_018,
            format!("the input answers tool call {call:?}, made on thread {made_on:?}, on another thread, {thread:?}"),
        ));
    }
}

/// A call a consumer refused, on any thread, answered as one that ran: a tool message without
/// `error` (one saying it failed is an answer that says nothing ran). A client that moves to
/// another thread carries what it took all the same.
///
/// The rule a refusal names is exercised when the thread's last answer refused calls (the
/// input continuing it is the one that must not run them: a conforming client leaves them
/// out) and when any tool message answers a refused call, with or without `error`.
fn refused_answered(
    threads: &HashMap<String, Thread>,
    thread: &str,
    input: &Map<String, Value>,
    hits: &mut Exercised,
    out: &mut Vec<Violation>,
) {
    let own = threads.get(thread).map(|t| &t.delivered);
    for refused in own.into_iter().flat_map(|d| d.refused.values()) {
        hits.hit(refused.rule);
    }
    for (call, message) in tool_answers(input) {
        // The input's own thread decides for an id it knows; another thread's refusal counts
        // only for an id this thread never made (call ids may repeat across threads).
        let refused = match own {
            Some(d) if d.refused.contains_key(call) => d.refused.get(call),
            Some(d) if d.calls.iter().any(|c| c.id == call) => None,
            _ => threads
                .iter()
                .filter(|(t, _)| *t != thread)
                .find_map(|(_, t)| t.delivered.refused.get(call)),
        };
        let Some(refused) = refused else {
            continue;
        };
        hits.hit(refused.rule);
        if message.get("error").is_none() {
            out.push(Violation::new(
                refused.rule,
                format!(
                    "the input answers tool call {call:?} with a result, as if it ran, but a consumer refuses it: {}",
                    refused.why
                ),
            ));
        }
    }
}

/// The input's tool messages, each with the call it answers (`toolCallId`).
fn tool_answers(input: &Map<String, Value>) -> impl Iterator<Item = (&str, &Value)> {
    let messages = input.get("messages").and_then(Value::as_array);
    messages
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| Some((m.get("toolCallId")?.as_str()?, m)))
}

/// What the thread's last answer left the input owing.
fn owed(
    thread: &Thread,
    input: &Map<String, Value>,
    hits: &mut Exercised,
    out: &mut Vec<Violation>,
) {
    let d = &thread.delivered;
    let history: &[Value] = input
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if d.ending != Ending::Succeeded {
        return;
    }
    let tool_messages: HashMap<&str, &Value> = tool_answers(input).collect();
    let pending = d.calls.iter().filter(|c| {
        c.ended
            && !c.answered
            && !d.refused.contains_key(&c.id)
            && c.name.as_ref().is_some_and(|n| thread.offered.contains(n))
    });
    for call in pending {
        hits.hit(AGUI_CLI_009);
        if !tool_messages.contains_key(call.id.as_str()) {
            out.push(Violation::new(
                AGUI_CLI_009,
                format!(
                    "the last run left the call {:?} to the client's tool {:?} unanswered, and the next run carries no tool message for it",
                    call.id,
                    call.name.as_deref().unwrap_or("")
                ),
            ));
        }
        history_call(history, call, hits, out);
    }
    // The state is judged only where a state event left a value that can travel back; a
    // failed patch's rule and a merged snapshot's only where such a client would hold another
    // value than the spec's, so that the reading can tell it.
    if d.state.judged() {
        hits.hit(AGUI_CLI_011);
        if d.state.partial_differs() {
            hits.hit(AGUI_CLI_012);
        }
        if d.state.merged_differs() {
            hits.hit(AGUI_CLI_013);
        }
    }
    let state = input.get("state");
    let (rule, what) = match d.state.read(state) {
        Reading::Agreed => return,
        Reading::Partial => (
            AGUI_CLI_012,
            "the first operations of a patch that failed applied",
        ),
        Reading::Merged => (
            AGUI_CLI_013,
            "a snapshot merged into the prior state rather than replacing it",
        ),
        Reading::Other => (
            AGUI_CLI_011,
            "another value than the last run's state events left behind",
        ),
    };
    let shown = crate::show::event;
    out.push(Violation::new(
        rule,
        format!(
            "the next run's state is {} ({what}); the events left {}",
            state.map_or("absent".into(), shown),
            shown(&d.state.agreed)
        ),
    ));
}

/// The call in the history: a ToolCall on an assistant message, its arguments the deltas joined.
fn history_call(
    history: &[Value],
    call: &super::Call,
    hits: &mut Exercised,
    out: &mut Vec<Violation>,
) {
    hits.hit(AGUI_CLI_010);
    let carried = history
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m.get("toolCalls").and_then(Value::as_array))
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(call.id.as_str()));
    let Some(carried) = carried else {
        out.push(Violation::new(
            AGUI_CLI_010,
            format!(
                "the next run's history carries no assistant message with the call {:?}",
                call.id
            ),
        ));
        return;
    };
    let sent = carried
        .pointer("/function/arguments")
        .and_then(Value::as_str);
    if let (Some(joined), Some(sent)) = (&call.args, sent) {
        if joined != sent {
            out.push(Violation::new(
                AGUI_CLI_010,
                format!(
                    "the call {:?} is carried with arguments {sent:?}, not its deltas joined ({joined:?})",
                    call.id
                ),
            ));
        }
    }
}
