//! Legal-but-different behaviours of the reference target (`--variant NAME`): each one does
//! something the spec allows that the default does not, so the suite is shown to judge the
//! protocol's structure rather than this implementation's habits.

use crate::reference::Variant;
use crate::variant;

pub static VARIANTS: &[Variant] = &[
    variant!(
        "hai-on-connect",
        "sends its HAI the moment the socket opens, before the client's HAI arrives, then \
     takes the client's session (or resumes it) when that HAI comes"
    ),
    variant!(
        "other-tools",
        "advertises its tools under other names (util.mirror, util.sleep)"
    ),
    variant!(
        "upper-case-ids",
        "writes the UUIDs it makes up (message, run and envelope ids) in upper-case hex"
    ),
    variant!(
        "whole-text",
        "streams a `say` reply as one TEXT_MESSAGE_START carrying all of the text, with no \
         TEXT_MESSAGE_PART"
    ),
    variant!(
        "little-credit",
        "grants the client 8 messages of credit per channel instead of 64 (refilled, as by \
         default, once a channel has used half and gone quiet for a second)"
    ),
    variant!(
        "pings-paused-channels",
        "sends a PING on a channel the moment the client pauses it (a pause holds what credit \
         counts, and a PING is not counted)"
    ),
    variant!(
        "slow-first-error",
        "sends the first ERROR of its life 2.5 s late, as a server still warming up might (the \
         spec sets no time for an error; a fuzz campaign with a shorter timeout sees one late \
         answer that no replay shows again)"
    ),
    variant!(
        "no-client-runs",
        "opens runs only for user messages: a client's RUN_STARTED is accepted silently and \
         opens nothing"
    ),
];

/// Legal-but-different behaviours of the reference client: a client suite that passes each
/// does not fit one client.
pub const CLIENT_VARIANTS: &[Variant] = &[
    variant!("late-pong", "answers each PING 200 ms later"),
    variant!(
        "own-channel",
        "sends its user text on a channel named chat instead of USER (the spec leaves the name open)"
    ),
    variant!(
        "chunked-text",
        "sends its user text as START, two PARTs and END instead of START and END"
    ),
    variant!(
        "token-subprotocol",
        "presents its token in Sec-WebSocket-Protocol, not as ?token="
    ),
    variant!(
        "resumes-later",
        "waits 300 ms after a dropped connection before it resumes"
    ),
];
