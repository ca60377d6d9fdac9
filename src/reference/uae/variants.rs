//! Legal-but-different behaviours of the UAE reference target: what the spec leaves open,
//! done another way, so the suite is shown not to fit one implementation.

use crate::reference::Variant;
use crate::variant;

pub static VARIANTS: &[Variant] = &[
    variant!("chatty", "the agent says something (\"Working on it.\") before every answer, and before each tool call"),
    variant!("view-with-message", "a view comes after an assistant.message that introduces it"),
    variant!("no-ui-trace", "assistant output carries no trace_id, as the spec's examples show"),
    variant!("fresh-trace-per-call", "each tool.call gets a trace_id of its own, not the UI event's"),
    variant!("uuid-ids", "ids are evt_ and a UUID, view_ids view_ and a UUID"),
    variant!("extra-fields", "envelopes and payloads carry fields the spec does not list"),
    variant!("no-null-keys", "a success leaves error out and a failure leaves result out, instead of null"),
    variant!("slow", "every answer waits 150 ms"),
    variant!("other-words", "every text is worded differently"),
    variant!("answers-unusable-input", "input it cannot use is answered, not ignored: the executor refuses it with a tool.result (ok false, the input's trace or a fresh one), the agent says it could not read it"),
];

/// Legal-but-different behaviours of the UAE reference Web UI.
pub static CLIENT_VARIANTS: &[Variant] = &[
    variant!(
        "acts-later",
        "submits each view 300 ms after it arrives (calls again 300 ms after a result), not at once"
    ),
    variant!(
        "two-calls",
        "as the agent calling its executor, keeps two calls in flight from the start"
    ),
    variant!(
        "with-trace",
        "every event it sends carries a trace_id, as the common envelope lists"
    ),
];
