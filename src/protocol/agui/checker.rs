//! The AG-UI checker: each answer's events through every concern, in the order a consumer
//! meets them (shape, the run's lifecycle, chunk expansion and the streamed items, steps,
//! subagents, snapshots and deltas, tool calls, identity), and the HTTP exchange around them.

use super::conversation::Conversation;
use super::lifecycle::Place;
use super::{http, identity, lifecycle, patches, steps, streams, subagents, tools, validate};
use crate::protocol::{Checker, Observed};
use crate::rules::ids::{
    AGUI_HTTP_001, AGUI_HTTP_002, AGUI_HTTP_003, AGUI_HTTP_004, AGUI_HTTP_005, AGUI_IN_001,
    AGUI_IN_002, AGUI_IN_003, AGUI_RUN_005, AGUI_TOOL_001, AGUI_TOOL_002, AGUI_TOOL_003,
    AGUI_TOOL_004, AGUI_VAL_001, AGUI_VER_002,
};
use crate::rules::{Unjudged, Violation};
use crate::transcript::Direction;
use serde_json::Value;

/// Checks AG-UI exchanges (wireprobe is the client; the agent is judged).
#[derive(Debug, Default)]
pub struct AguiChecker {
    conv: Conversation,
    /// What the client owes, judged on each input it POSTs (`--client`).
    consumer: super::consumer::Consumer,
    /// What the checker was shown beyond the events: an input, an answer's HTTP head.
    saw_input: bool,
    saw_head: bool,
    /// An answer's stream is under way: its events came, its end has not.
    stream_open: bool,
}

/// Rules only an input decides, and why a stream shown without one leaves them unjudged.
const NEED_INPUT: &[(&str, &str)] = &[
    (
        AGUI_IN_001,
        "no input was shown, so whether it was malformed is not known",
    ),
    (
        AGUI_IN_002,
        "no input was shown, so whether it was valid is not known",
    ),
    (
        AGUI_IN_003,
        "no input was shown, so whether it was malformed is not known",
    ),
    (
        AGUI_VER_002,
        "no input was shown, so whether it declared a newer version is not known",
    ),
    (
        AGUI_TOOL_001,
        "no input was shown, so which tools are the client's own is not known",
    ),
    (
        AGUI_TOOL_002,
        "no input was shown, so which tools are the client's own is not known",
    ),
    (
        AGUI_TOOL_003,
        "no input was shown, so which tools are the client's own is not known",
    ),
    (
        AGUI_TOOL_004,
        "no input was shown, so which tools are the client's own is not known",
    ),
];

/// Rules the HTTP head of an answer decides.
const NEED_HEAD: &[&str] = &[AGUI_HTTP_001, AGUI_HTTP_002, AGUI_HTTP_003];

impl Checker for AguiChecker {
    fn observe(
        &mut self,
        from: Direction,
        _at_ms: u64,
        item: Observed<'_>,
        out: &mut Vec<Violation>,
    ) {
        let conv = &mut self.conv;
        match (from, item) {
            (Direction::Client, Observed::Post { .. } | Observed::Event(..)) => {
                self.saw_input = true
            }
            (Direction::Client, Observed::Garbage(_) | Observed::Binary(_)) => {
                self.saw_input = true
            }
            (Direction::Server, Observed::Http(_)) => self.saw_head = true,
            (Direction::Server, Observed::AnswerEnded { .. }) => self.stream_open = false,
            (
                Direction::Server,
                Observed::Event(..) | Observed::Garbage(_) | Observed::Binary(_),
            ) => self.stream_open = true,
            _ => {}
        }
        match (from, item) {
            (Direction::Client, Observed::Post { body, headers, .. }) => {
                let json = body.json();
                let json = json.as_deref().ok();
                let read = json.map(http::read_input);
                self.consumer.posted(json, read.as_ref(), headers, out);
                http::posted(conv, read.map(|(input, _)| input), headers)
            }
            // A body POSTed as exact bytes (a fuzzed input) is recorded as what it was, JSON or
            // not, rather than as a POST: AG-UI's inputs all go by POST, so it is an exchange
            // all the same, answered in its turn. Left out, every answer after it was paired
            // with the POST after its own once answers lagged behind the POSTs.
            (Direction::Client, Observed::Event(event, _)) => {
                http::posted_raw(conv, Some(event.value()))
            }
            (Direction::Client, Observed::Garbage(_) | Observed::Binary(_)) => {
                http::posted_raw(conv, None)
            }
            (Direction::Client, _) => {}
            (Direction::Server, Observed::Http(answer)) => http::answered(conv, answer, out),
            (Direction::Server, Observed::Event(event, _)) => {
                let before = out.len();
                self.event(event.value(), out);
                let refused = out[before..]
                    .iter()
                    .find_map(|v| super::consumer::refusal(v.rule));
                self.consumer.agent_event(event.value(), refused);
            }
            // An event too large to keep whole is stored cut, and cannot be read back: it was
            // an event of the stream, whatever it said.
            (Direction::Server, Observed::Garbage(text))
                if text.ends_with(crate::transcript::TRUNCATED_MARK) =>
            {
                conv.stream_events = conv.stream_events.saturating_add(1);
            }
            (Direction::Server, Observed::Garbage(text)) if !conv.answering_broken() => {
                let shown: String = text.chars().take(80).collect();
                out.push(Violation::new(
                    AGUI_VAL_001,
                    format!("an SSE event whose data is not one JSON event: {shown:?}"),
                ));
            }
            (Direction::Server, Observed::Binary(len)) if !conv.answering_broken() => {
                out.push(Violation::new(
                    AGUI_HTTP_004,
                    format!("a protobuf frame of {len} bytes that does not decode as an event"),
                ));
            }
            (Direction::Server, Observed::Notice(what))
                if what == crate::transport::sse::CR_LINE_ENDS && !conv.answering_broken() =>
            {
                out.push(Violation::new(
                    AGUI_HTTP_005,
                    "the event stream ends its lines with CR (CR LF or CR): the binding pins LF",
                ));
            }
            (Direction::Server, Observed::AnswerEnded { error }) if !conv.answering_broken() => {
                lifecycle::answer_ended(conv, error, out);
                identity::answer_ended(conv, out);
            }
            _ => {}
        }
    }

    /// What the items shown left unjudged: what the input or the HTTP head decides when
    /// neither was shown, the stream's end when it was not shown, and what a concern noted.
    fn unjudged(&self) -> Vec<Unjudged> {
        let mut out = Vec::new();
        if !self.saw_input {
            out.extend(NEED_INPUT.iter().map(|&(rule, why)| Unjudged { rule, why }));
        }
        if !self.saw_head {
            let why = "no HTTP head was shown: its status and Content-Type are not known";
            out.extend(NEED_HEAD.iter().map(|&rule| Unjudged { rule, why }));
        }
        if self.stream_open {
            out.push(Unjudged {
                rule: AGUI_RUN_005,
                why: "what was shown stops before the answer's stream ended (a capture cut short), so whether it ended after a terminal event is not known",
            });
        }
        out.extend(self.conv.unjudged.iter().cloned());
        out
    }

    /// The rules the concerns checked since the last call (the agent's), then the consumer's
    /// (the client's): the judge keeps those of the side it judges.
    fn exercised(&mut self, into: &mut Vec<&'static str>) {
        self.conv.exercised.drain_into(into);
        self.consumer.exercised(into);
    }

    /// The input just POSTed is one the schema rejects (or only tolerates).
    fn input_broken(&self) -> bool {
        self.conv
            .queued
            .back()
            .is_some_and(|a| a.input.standing != super::conversation::Standing::Valid)
    }
}

impl AguiChecker {
    fn event(&mut self, event: &Value, out: &mut Vec<Violation>) {
        let conv = &mut self.conv;
        if conv.answering_broken() {
            http::broken_answer(conv, event, out);
            return;
        }
        http::captured(conv);
        // An event of an answer whose head was shown: its encoding's framing was read for it
        // (a protobuf frame that decoded; SSE lines, whose line ends the transport watches).
        let framing = conv
            .answer
            .as_ref()
            .filter(|a| a.status.is_some() && a.streamed)
            .map(|a| match a.proto {
                true => AGUI_HTTP_004,
                false => AGUI_HTTP_005,
            });
        if let Some(rule) = framing {
            conv.exercised.hit(rule);
        }
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
        let place = lifecycle::place(conv, ty, event, out);
        let newer = conv.run.as_ref().is_some_and(|r| r.speaks_newer());
        let before = out.len();
        let shaped = validate::shape(event, newer, &mut conv.exercised, out);
        if out[before..].iter().any(|v| v.rule == AGUI_VAL_001) {
            if let Some(run) = conv.run.as_mut() {
                run.malformed = true;
            }
        }
        let Some(ty) = shaped else {
            return;
        };
        match place {
            Place::Outside => {}
            Place::LateError => {
                streams::observe(conv, ty, event, out);
                lifecycle::errored(conv);
            }
            Place::Opens => {
                streams::observe(conv, ty, event, out);
                // "A new run starts with nothing open" (what a run left open was judged at its
                // RUN_FINISHED, or ended with its RUN_ERROR).
                streams::abandon_open(conv);
                identity::run_started(conv, event, out);
            }
            Place::Ends => {
                streams::observe(conv, ty, event, out);
                if ty == "RUN_FINISHED" {
                    identity::run_finished(conv, event, out);
                    tools::finished(conv, event, out);
                    lifecycle::finished(conv, event, out);
                } else {
                    lifecycle::errored(conv);
                }
            }
            Place::InRun => {
                streams::observe(conv, ty, event, out);
                subagents::observe(conv, ty, event, out);
                match ty {
                    "STEP_STARTED" | "STEP_FINISHED" => steps::observe(conv, ty, event, out),
                    "TOOL_CALL_RESULT" => tools::result(conv, event, out),
                    _ => patches::observe(conv, ty, event, out),
                }
            }
        }
    }
}
