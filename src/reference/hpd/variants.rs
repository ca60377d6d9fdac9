//! Legal-but-different behaviours of the HPD reference target (`--variant NAME`): each one
//! does something the spec and the framework allow that the default does not, so a suite is
//! shown to judge the protocol rather than this implementation's habits.

use crate::reference::Variant;
use crate::variant;

pub static VARIANTS: &[Variant] = &[
    variant!(
        "whole-text",
        "every text and reasoning block is a single delta"
    ),
    variant!(
        "own-ids",
        "ids are counters (msg_1, call_1, turn_1, perm_1, ...) instead of UUIDs"
    ),
    variant!(
        "end-after-result",
        "TOOL_CALL_RESULT comes before TOOL_CALL_END"
    ),
    variant!(
        "extra-fields",
        "every event also carries executionContext, traceId, spanId and sessionId, and the \
         stream has PLAN_UPDATED and STATE_SNAPSHOT events between the others"
    ),
    variant!(
        "sparse-ids",
        "SSE ids start at 1000 and step by 7 (increasing, not contiguous)"
    ),
    variant!(
        "chatty-stream",
        "SSE heartbeat every 100 ms, retry: 3000 at stream start, an event: line naming each \
         type, CRLF line endings"
    ),
    variant!(
        "no-agent-turns",
        "no AGENT_TURN_STARTED or AGENT_TURN_FINISHED at all"
    ),
    variant!(
        "denial-as-result",
        "a permission-gated call is announced (TOOL_CALL_START, ARGS) before PERMISSION_REQUEST, \
         and a denied one is closed with TOOL_CALL_END and a TOOL_CALL_RESULT holding the \
         denial's text, as the framework does"
    ),
    variant!(
        "interruption-handled",
        "an interrupted turn ends with INTERRUPTION_HANDLED alone (no FINISHED, open blocks left \
         open), as the framework does"
    ),
    variant!(
        "busy-409",
        "an input sent while a turn runs is refused with 409 (over the WebSocket: ignored) \
         instead of queued, as the framework does"
    ),
    variant!(
        "dotnet-types",
        "MESSAGE_TURN_FINISHED.duration is a .NET TimeSpan string (\"00:00:00.0030000\"), as \
         the public framework writes it"
    ),
    variant!(
        "other-words",
        "the agent's texts are its own words, never the directive's text"
    ),
    variant!(
        "paced",
        "streams as a model does: a delta every 20 ms, and the turn's end 50 ms after its last \
         block (the default publishes a whole turn at once)"
    ),
];

/// Legal-but-different behaviours of the HPD reference client.
pub static CLIENT_VARIANTS: &[Variant] = &[
    variant!(
        "after-query",
        "resumes an ended stream with ?after=N, not Last-Event-ID"
    ),
    variant!(
        "denies",
        "denies every permission (with a reason) and every continuation"
    ),
    variant!(
        "answers-later",
        "answers each request 300 ms after it arrives, not at once"
    ),
    variant!(
        "greets",
        "POSTs a USER_TEXT_INPUT and a bare {\"text\"} input before it subscribes"
    ),
];
