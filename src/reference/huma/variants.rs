//! Legal-but-different behaviours of the reference target (`--variant NAME`): each one does
//! something the spec allows that the default does not, so the suite is shown to judge the
//! protocol's structure rather than this implementation's habits.

use crate::reference::Variant;
use crate::variant;

pub static VARIANTS: &[Variant] = &[
    variant!(
        "own-tool-names",
        "names the tool it calls itself (agent_NAME) instead of the name the directive asked \
         for, and refuses a tool-result that does not name the tool-call's tool"
    ),
    variant!(
        "messaging-without-call-id",
        "messaging events carry no toolCallId (the spec makes it optional); confirmations \
         name ''"
    ),
    variant!(
        "refuses-unknown-calls",
        "answers a tool-result for a call it never issued with an error (the spec leaves that \
         open, HUMA-LC-006)"
    ),
    variant!(
        "socket-io-limits",
        "refuses, at its transport, any message over 1,000,000 bytes (Node socket.io's default \
         maxHttpBufferSize; over a WebSocket, close 1009) before its application sees it"
    ),
];

/// The reference client's variants (`wireprobe client huma --variant NAME`).
pub static CLIENT_VARIANTS: &[Variant] = &[
    variant!(
        "answers-later",
        "answers each tool-call 300 ms after it arrives, not at once"
    ),
    variant!(
        "confirms-late",
        "confirms each message_sent 300 ms after it arrives"
    ),
    variant!(
        "failure-confirmations",
        "reports every message as not delivered (success false, with an error), as the spec allows"
    ),
    variant!(
        "string-results",
        "returns results as JSON strings, as the spec's second example does"
    ),
];
