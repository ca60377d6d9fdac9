//! A URL query's values, escaped and read back (RFC 3986).

/// `s` percent-encoded for a URL query: every byte but the unreserved ones (RFC 3986).
pub fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The value of `name` in a query string (empty for a bare `name`), as it stands (escaped).
pub fn query_param<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

/// `s` with its `%XX` escapes decoded (and `+` as a space, as a form-encoded query has it);
/// an escape that is not two hex digits stays as it is.
pub fn query_unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
            (b'+', _, _) => out.push(b' '),
            (other, _, _) => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_value_escaped_is_read_back() {
        for s in ["abc.def-_~", "a b/c?d=e&f", "ünï", "%zz"] {
            assert_eq!(query_unescape(&query_escape(s)), s);
        }
        assert_eq!(query_unescape("a+b%2"), "a b%2");
    }
}
