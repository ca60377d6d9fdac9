//! The reference agent's runs: what a `wireprobe:` directive in the last user message makes it
//! stream (see the table and `suites/agui/`), in the form the variants pick. Sans-IO:
//! an input in, the events of the answer out; faults are applied afterwards
//! ([`super::faults::apply`]).

use super::Config;
use crate::reference::directive::Directive;
use serde_json::{json, Map, Value};

/// The version the reference agent speaks.
pub const VERSION: &str = "1.1";

/// Builds the events of one answer.
pub struct Script<'c> {
    config: &'c Config,
    events: Vec<Value>,
    next_id: u64,
    pub thread_id: String,
    pub run_id: String,
}

/// The text of the input's last user message (its text parts joined, when it has parts).
pub fn last_user_text(input: &Value) -> String {
    let messages = input.get("messages").and_then(Value::as_array);
    let Some(last) = messages
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return String::new();
    };
    match last.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

impl<'c> Script<'c> {
    pub fn new(config: &'c Config, input: &Value) -> Script<'c> {
        let text = |k: &str| {
            input
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Script {
            config,
            events: Vec::new(),
            next_id: 0,
            thread_id: text("threadId"),
            run_id: text("runId"),
        }
    }

    fn variant(&self, name: &str) -> bool {
        self.config.variants.has(name)
    }

    /// A fresh id: `msg-1`, or a UUID-like id under `other-ids`.
    pub fn fresh(&mut self, prefix: &str) -> String {
        // Ids are the agent's for its lifetime: a later run on the thread mints new ones (a
        // repeated messageId would reopen the old message).
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        self.next_id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if self.variant("other-ids") {
            format!(
                "{:08x}-{prefix}-{:04}",
                0x5eed_0000u32 + self.next_id as u32,
                self.next_id
            )
        } else {
            format!("{prefix}-{}", self.next_id)
        }
    }

    pub fn push(&mut self, event: Value) {
        self.events.push(event);
    }

    /// The events of the answer to `input` (the requested run, after any replayed ones).
    pub fn play(mut self, input: &Value, replayed: &[(String, Vec<Value>)]) -> Vec<Value> {
        for (run_id, messages) in replayed {
            self.push(json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": run_id, "protocolVersion": VERSION}));
            self.push(json!({"type": "MESSAGES_SNAPSHOT", "messages": messages}));
            self.push(json!({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": run_id}));
        }
        let mut started = json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id, "protocolVersion": VERSION});
        if self.variant("echoes-input") {
            started["input"] = known_input(input);
        }
        self.push(started);
        let mut outcome = None;
        match Directive::parse(&last_user_text(input)) {
            Directive::Say(text) => self.text(&text),
            Directive::Reason(text) => {
                self.reasoning(&text);
                self.text("I have thought it through.");
            }
            Directive::Tool { name, args } => self.backend_tool(&name, &args),
            Directive::Frontend { name, args } => {
                let call = self.tool_call(&name, &args, None);
                outcome = Some(json!({"type": "success", "pendingToolCallIds": [call]}));
            }
            Directive::State(patch) => {
                let snapshot = input.get("state").cloned().unwrap_or_else(|| json!({}));
                self.push(json!({"type": "STATE_SNAPSHOT", "snapshot": snapshot}));
                self.push(json!({"type": "STATE_DELTA", "delta": patch}));
                self.text("The state is updated.");
            }
            Directive::Step(name) => {
                self.push(json!({"type": "STEP_STARTED", "stepName": name}));
                self.text("This is the step's work.");
                self.push(json!({"type": "STEP_FINISHED", "stepName": name}));
            }
            Directive::Interrupt(reason) => {
                self.text("I need an answer before I go on.");
                let id = self.fresh("int");
                let reason = reason.unwrap_or_else(|| "confirmation".into());
                outcome = Some(
                    json!({"type": "interrupt", "interrupts": [{"id": id, "reason": reason, "message": "Please confirm."}]}),
                );
            }
            Directive::Fail => {
                self.push(json!({"type": "RUN_ERROR", "message": "The run failed, as asked.", "code": "wireprobe_fail"}));
                return self.events;
            }
            Directive::Chunks(text) => self.chunked_text(&text),
            other => {
                let said = match other {
                    Directive::Chat(text) => format!("You said: {text}"),
                    _ => "I read your message.".to_owned(),
                };
                self.text(&said)
            }
        }
        if self.variant("explicit-success") && outcome.is_none() {
            outcome = Some(json!({"type": "success"}));
        }
        let mut finished =
            json!({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id});
        if let Some(outcome) = outcome {
            finished["outcome"] = outcome;
        }
        self.push(finished);
        if self.variant("raw-events") {
            // As an adapter does that carries the framework's own event along: it may hold the
            // whole input (a 512 KiB message makes every event that large).
            let raw = json!({"source": "wireprobe", "input": last_user_text(input)});
            for event in self.events.iter_mut() {
                event["rawEvent"] = raw.clone();
            }
        }
        if self.variant("timestamps") {
            for (i, event) in self.events.iter_mut().enumerate() {
                event["timestamp"] = json!(1_767_225_600_000i64 + i as i64);
            }
        }
        self.events
    }

    /// A text message: the triad in several deltas, or chunks under `chunks`.
    pub fn text(&mut self, text: &str) {
        if self.variant("chunks") {
            return self.chunked_text(text);
        }
        let id = self.fresh("msg");
        self.push(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}));
        for delta in pieces(text) {
            self.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": delta}));
        }
        self.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
    }

    /// A text message as TEXT_MESSAGE_CHUNK events: the first carries its id and role.
    pub fn chunked_text(&mut self, text: &str) {
        let id = self.fresh("msg");
        for (i, delta) in pieces(text).into_iter().enumerate() {
            let mut chunk = json!({"type": "TEXT_MESSAGE_CHUNK", "delta": delta});
            if i == 0 || self.variant("ids-on-every-chunk") {
                chunk["messageId"] = json!(id);
            }
            if i == 0 {
                chunk["role"] = json!("assistant");
            }
            self.push(chunk);
        }
    }

    /// A reasoning span holding one reasoning message.
    fn reasoning(&mut self, text: &str) {
        let span = self.fresh("span");
        let id = self.fresh("reasoning");
        self.push(json!({"type": "REASONING_START", "messageId": span}));
        self.push(json!({"type": "REASONING_MESSAGE_START", "messageId": id, "role": "reasoning"}));
        for delta in pieces(text) {
            self.push(
                json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": delta}),
            );
        }
        self.push(json!({"type": "REASONING_MESSAGE_END", "messageId": id}));
        self.push(json!({"type": "REASONING_END", "messageId": span}));
    }

    /// A tool call streamed as START, ARGS in pieces and END; its id.
    fn tool_call(&mut self, name: &str, args: &Value, parent: Option<&str>) -> String {
        let id = self.fresh("call");
        let mut start = json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name});
        if let Some(parent) = parent {
            start["parentMessageId"] = json!(parent);
        }
        self.push(start);
        for delta in pieces(&args.to_string()) {
            self.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": delta}));
        }
        self.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
        id
    }

    /// A call of the agent's own tool, its result, then text; interleaved with the text
    /// message under `interleaved`.
    fn backend_tool(&mut self, name: &str, args: &Value) {
        let result = json!({"echo": args}).to_string();
        if self.variant("interleaved") {
            let msg = self.fresh("msg");
            self.push(json!({"type": "TEXT_MESSAGE_START", "messageId": msg, "role": "assistant"}));
            self.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": msg, "delta": "Calling the tool: "}));
            let call = self.tool_call(name, args, Some(&msg));
            self.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": msg, "delta": "done."}));
            self.push(json!({"type": "TEXT_MESSAGE_END", "messageId": msg}));
            let result_id = self.fresh("result");
            self.push(json!({"type": "TOOL_CALL_RESULT", "messageId": result_id, "toolCallId": call, "content": result, "role": "tool"}));
            return;
        }
        let call = self.tool_call(name, args, None);
        let result_id = self.fresh("result");
        self.push(json!({"type": "TOOL_CALL_RESULT", "messageId": result_id, "toolCallId": call, "content": result, "role": "tool"}));
        self.text("The tool has answered.");
    }
}

/// `text` in a few pieces (at word ends), so content arrives as several deltas.
fn pieces(text: &str) -> Vec<String> {
    if text.is_empty() {
        return vec![String::new()];
    }
    let mut out = Vec::new();
    let mut piece = String::new();
    for (i, word) in text.split_inclusive(' ').enumerate() {
        piece.push_str(word);
        if i % 2 == 1 {
            out.push(std::mem::take(&mut piece));
        }
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

/// The input as RUN_STARTED may echo it: the members the schema describes.
fn known_input(input: &Value) -> Value {
    const KNOWN: &[&str] = &[
        "threadId",
        "runId",
        "protocolVersion",
        "parentRunId",
        "state",
        "messages",
        "tools",
        "context",
        "forwardedProps",
        "resume",
    ];
    let mut kept: Map<String, Value> = input
        .as_object()
        .into_iter()
        .flatten()
        // A whole optional field sent as null is an absent one (the agent's compatibility
        // shim): the echo leaves it out.
        .filter(|(k, v)| KNOWN.contains(&k.as_str()) && !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // A message of a role this version does not name is unrecognised material: stripped.
    if let Some(Value::Array(messages)) = kept.get_mut("messages") {
        messages.retain(|m| {
            m["role"]
                .as_str()
                .is_some_and(|r| crate::protocol::agui::closed_sets::ROLES.contains(&r))
        });
    }
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_comes_in_several_pieces_that_join_to_it() {
        let text = "one two three four five";
        let p = pieces(text);
        assert!(p.len() > 1);
        assert_eq!(p.concat(), text);
        assert_eq!(pieces(""), [""]);
    }
}
