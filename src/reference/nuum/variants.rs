//! Legal-but-different behaviours of the reference target (`--variant NAME`): each one does
//! something the spec allows that the default does not, so the suite is shown to judge the
//! protocol's structure rather than this implementation's habits.

use crate::reference::Variant;
use crate::variant;

pub static VARIANTS: &[Variant] = &[
    variant!(
        "own-words",
        "answers every directive in its own words, over two assistant lines (no text the \
         default uses)"
    ),
    variant!(
        "own-tools",
        "calls its tools by other names (mirror, spawn_research, schedule_alarm) whatever \
         the directive names, and lists those in init"
    ),
    variant!(
        "text-after-slow",
        "a slow turn prints nothing until its slow work is done"
    ),
    variant!(
        "tasks-before-tool",
        "shows the tasks snapshot of a new task or alarm before the tool_use that made it"
    ),
    variant!(
        "tool-results-as-user",
        "tool results come as user lines carrying tool_result blocks, as newer public builds send them"
    ),
    variant!(
        "tasks-without-tool",
        "creates a task or alarm without showing a tool_use: only its tasks snapshot says so"
    ),
];

/// The names the agent calls its tools by: `(echo, research, alarm)`.
pub fn tool_names(variants: &crate::reference::Variants) -> [&'static str; 3] {
    if variants.has("own-tools") {
        ["mirror", "spawn_research", "schedule_alarm"]
    } else {
        ["echo", "background_research", "set_alarm"]
    }
}

/// Legal-but-different behaviours of the Nuum reference host.
pub static CLIENT_VARIANTS: &[Variant] = &[
    variant!(
        "content-blocks",
        "sends its text as an array of content blocks, not a string"
    ),
    variant!(
        "heartbeats",
        "sends a heartbeat control message before each user message"
    ),
    variant!(
        "asks-status",
        "asks for the status once the agent has said init"
    ),
];
