//! HAIP event vocabulary shared by the session, the checker and the reference target.

use base64::Engine;
use serde_json::Value;

/// The version this profile implements.
pub const HAIP_VERSION: &str = "1.1.2";

/// Every event type of the catalogue, in the spec's order.
pub const EVENT_TYPES: [&str; 22] = [
    "HAI",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_CANCEL",
    "RUN_ERROR",
    "PING",
    "PONG",
    "REPLAY_REQUEST",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_PART",
    "TEXT_MESSAGE_END",
    "AUDIO_CHUNK",
    "TOOL_CALL",
    "TOOL_UPDATE",
    "TOOL_DONE",
    "TOOL_CANCEL",
    "TOOL_LIST",
    "TOOL_SCHEMA",
    "ERROR",
    "FLOW_UPDATE",
    "PAUSE_CHANNEL",
    "RESUME_CHANNEL",
];

/// Error codes the spec names (its "common codes" plus the two named elsewhere).
pub const KNOWN_ERROR_CODES: [&str; 8] = [
    "PROTOCOL_VIOLATION",
    "SEQ_VIOLATION",
    "FLOW_CONTROL_VIOLATION",
    "VERSION_INCOMPATIBLE",
    "RUN_LIMIT_EXCEEDED",
    "REPLAY_TOO_OLD",
    "UNSUPPORTED_TYPE",
    "RESUME_FAILED",
];

/// True for events that consume flow-control credit. Handshake, liveness, replay, error and
/// flow-control events are exempt, or flow control could deadlock itself (see ERRATA.md).
pub fn consumes_credit(ty: &str) -> bool {
    !matches!(
        ty,
        "HAI"
            | "PING"
            | "PONG"
            | "REPLAY_REQUEST"
            | "ERROR"
            | "FLOW_UPDATE"
            | "PAUSE_CHANNEL"
            | "RESUME_CHANNEL"
    )
}

/// The channel control events go on unless a case says otherwise.
pub const SYSTEM_CHANNEL: &str = "SYSTEM";
/// The channel the client's user content goes on unless a case says otherwise.
pub const USER_CHANNEL: &str = "USER";
/// The channel the server's agent content goes on unless told otherwise.
pub const AGENT_CHANNEL: &str = "AGENT";

/// A JSON integer as the schema reads one: `10240` and `10240.0` alike (draft-07's
/// `integer` is any number without a fractional part).
pub fn whole_i64(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        let f = value.as_f64()?;
        (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
    })
}

/// [`whole_i64`] for a count that cannot be negative.
pub fn whole_u64(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| whole_i64(value).and_then(|n| u64::try_from(n).ok()))
}

/// Parses a `uint64str` (1 to 20 decimal digits); `None` when malformed or over `u64`.
pub fn parse_seq(value: &Value) -> Option<u64> {
    parse_seq_str(value.as_str()?)
}

/// [`parse_seq`] on a string.
pub fn parse_seq_str(s: &str) -> Option<u64> {
    // One pass: the pattern's digits read as they are checked (`check` reads every seq).
    if !(1..=20).contains(&s.len()) {
        return None;
    }
    s.bytes().try_fold(0u64, |n, b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// The schema's `uint64str`: `^[0-9]{1,20}$`.
pub fn is_uint64_str(s: &str) -> bool {
    (1..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// The schema's `uuid` pattern: 8-4-4-4-12 hex digits, version 1 to 5, variant 8, 9, A or B.
pub fn is_uuid(s: &str) -> bool {
    let Ok(b) = <&[u8; 36]>::try_from(s.as_bytes()) else {
        return false;
    };
    // Every byte looked up and the answers folded together, with no branch per byte (`check`
    // reads two or three UUIDs in every message): a position's own table says what it takes.
    let mut ok = true;
    for (i, c) in b.iter().enumerate() {
        ok &= UUID_POSITIONS[i] & UUID_CLASSES[usize::from(*c)] != 0;
    }
    ok
}

// What each class bit of `UUID_CLASSES` stands for.
const HEX: u8 = 1;
const DASH: u8 = 2;
const VERSION: u8 = 4;
const VARIANT: u8 = 8;

/// Per byte value, the classes it belongs to.
const UUID_CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_hexdigit() {
            t[c] |= HEX;
        }
        if b == b'-' {
            t[c] |= DASH;
        }
        if b >= b'1' && b <= b'5' {
            t[c] |= VERSION;
        }
        if matches!(b, b'8' | b'9' | b'a' | b'b' | b'A' | b'B') {
            t[c] |= VARIANT;
        }
        c += 1;
    }
    t
};

/// Per position of a UUID, the class its byte must be of.
const UUID_POSITIONS: [u8; 36] = {
    let mut t = [HEX; 36];
    t[8] = DASH;
    t[13] = DASH;
    t[18] = DASH;
    t[23] = DASH;
    t[14] = VERSION;
    t[19] = VARIANT;
    t
};

/// The schema's `channel` pattern: `^[A-Za-z0-9_\-]{1,128}$`.
pub fn is_channel(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The event's `type`, if it is a string.
pub fn event_type(event: &Value) -> Option<&str> {
    event.get("type").and_then(Value::as_str)
}

/// A string field of the payload.
pub fn payload_str<'a>(event: &'a Value, field: &str) -> Option<&'a str> {
    event.get("payload")?.get(field)?.as_str()
}

/// The code of an `ERROR` event.
pub fn error_code(event: &Value) -> Option<&str> {
    if event_type(event) == Some("ERROR") {
        payload_str(event, "code")
    } else {
        None
    }
}

/// True when `s` is `MAJOR.MINOR.PATCH` in decimal numbers.
pub fn is_version_triplet(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A capability from a HAI payload: `capabilities.NAME`, or `NAME` on the payload itself
/// (the schema puts `binary_frames` and `max_concurrent_runs` there; the prose puts them in
/// `capabilities` — ERRATA.md).
pub fn hai_capability<'a>(hai: &'a Value, name: &str) -> Option<&'a Value> {
    let payload = hai.get("payload")?;
    payload
        .get("capabilities")
        .and_then(|c| c.get(name))
        .or_else(|| payload.get(name))
}

/// Initial credit a HAI advertises: `(messages, bytes)`, each optional.
pub fn initial_credit(hai: &Value) -> (Option<u64>, Option<u64>) {
    let fc = hai_capability(hai, "flow_control");
    let get = |k: &str| fc.and_then(|f| f.get(k)).and_then(whole_u64);
    (get("initial_credit_messages"), get("initial_credit_bytes"))
}

/// Bytes a media message moves, for byte credit: `bin_len` in binary mode, else the decoded
/// length of `payload.data` (0 without either); `None` when `data` is not valid Base64.
pub fn media_bytes(event: &Value) -> Option<u64> {
    if let Some(len) = event.get("bin_len").and_then(whole_u64) {
        return Some(len);
    }
    match event.pointer("/payload/data").and_then(Value::as_str) {
        Some(data) => base64_len(data),
        None => Some(0),
    }
}

/// The decoded length of standard Base64 text; `None` when it is not valid Base64.
pub fn base64_len(data: &str) -> Option<u64> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()
        .map(|b| b.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema's patterns written the plain way, beside the quick ones.
    fn plain_uuid(s: &str) -> bool {
        let b = s.as_bytes();
        b.len() == 36
            && b.iter().enumerate().all(|(i, &c)| match i {
                8 | 13 | 18 | 23 => c == b'-',
                14 => (b'1'..=b'5').contains(&c),
                19 => matches!(c, b'8' | b'9' | b'a' | b'b' | b'A' | b'B'),
                _ => c.is_ascii_hexdigit(),
            })
    }

    /// Every byte value at every position of a valid UUID, against the plain reading.
    #[test]
    fn every_byte_at_every_uuid_position_is_judged_as_the_pattern_says() {
        let uuid = "123e4567-e89b-42d3-a456-426614174000";
        for at in 0..uuid.len() {
            for byte in 0..=255u8 {
                let mut b = uuid.as_bytes().to_vec();
                b[at] = byte;
                if let Ok(s) = std::str::from_utf8(&b) {
                    assert_eq!(is_uuid(s), plain_uuid(s), "byte {byte:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn quick_patterns_agree_with_the_plain_ones() {
        let uuid = "123e4567-e89b-42d3-a456-426614174000";
        let mut uuids = vec![uuid.to_owned(), uuid.to_uppercase(), String::new()];
        // Every one-byte change is the test above's; here the changes of length: a character
        // of two bytes in place of one, and one left out.
        for i in 0..uuid.len() {
            let mut s: Vec<char> = uuid.chars().collect();
            s[i] = 'é';
            uuids.push(s.into_iter().collect());
            uuids.push(format!("{}{}", &uuid[..i], &uuid[i + 1..]));
        }
        for s in &uuids {
            assert_eq!(is_uuid(s), plain_uuid(s), "{s}");
        }
        for s in [
            "0",
            "7",
            "01",
            "",
            "-1",
            "1a",
            " 1",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "000000000000000000001",
            "00000000000000000001",
        ] {
            let plain = is_uint64_str(s).then(|| s.parse::<u64>().ok()).flatten();
            assert_eq!(parse_seq_str(s), plain, "{s}");
        }
    }
}
