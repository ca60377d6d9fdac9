//! Small JSON facts every profile's validator asks: a value's JSON type, and whether a string
//! is an RFC 3339 timestamp (and writing one); and a message quoting a target's JSON, kept
//! short.

use serde_json::Value;

/// An RFC 3339 UTC timestamp with milliseconds (`2026-01-08T12:34:56.789Z`), the form the
/// specs' examples show.
pub fn timestamp(at: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// The JSON type of `v`, as messages name it.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `args` formatted up to `max` bytes (cut on a character boundary, `…` after the cut). The
/// formatting stops at the cut: a schema error quoting a megabyte of a target's JSON costs
/// `max` bytes, not the megabyte.
pub fn bounded(args: std::fmt::Arguments<'_>, max: usize) -> String {
    struct UpTo {
        out: String,
        max: usize,
        cut: bool,
    }
    impl std::fmt::Write for UpTo {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = self.max.saturating_sub(self.out.len());
            if s.len() <= room {
                self.out.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.out.push_str(&s[..end]);
            self.cut = true;
            Err(std::fmt::Error)
        }
    }
    let mut up_to = UpTo {
        out: String::new(),
        max,
        cut: false,
    };
    // An error here is the cut (or a Display that failed): what was written stands.
    let _ = std::fmt::write(&mut up_to, args);
    if up_to.cut {
        up_to.out.push('…');
    }
    up_to.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert!(is_rfc3339("2026-02-05T15:30:00.000Z"));
        assert!(is_rfc3339("2026-02-05T15:30:00Z"));
        assert!(is_rfc3339("2026-02-05T15:30:00+01:00"));
        assert!(!is_rfc3339("2026-02-05 15:30"));
        assert!(!is_rfc3339("2026-02-05T15:30:00."));
        assert!(!is_rfc3339("yesterday"));
    }

    #[test]
    fn bounded_messages_stop_at_their_limit() {
        assert_eq!(
            bounded(format_args!("{}: {}", "/", "short"), 10),
            "/: short"
        );
        assert_eq!(bounded(format_args!("{}", "abcdef"), 6), "abcdef");
        assert_eq!(bounded(format_args!("{}", "abcdefg"), 6), "abcdef…");
        // Never inside a character: é is two bytes.
        assert_eq!(bounded(format_args!("{}", "aé"), 2), "a…");
        // A huge value is not written past the cut.
        let big = Value::Array(vec![Value::from("x".repeat(100)); 100_000]);
        let said = bounded(format_args!("{big} is not of type \"object\""), 300);
        assert_eq!(said.chars().count(), 301);
    }
}
