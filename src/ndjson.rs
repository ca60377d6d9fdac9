//! NDJSON framing with a bound on line length, so one endless line cannot exhaust memory.

use std::io::{self, BufRead};

/// Default longest line accepted.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line in the buffer, without its `\n` or `\r\n`.
    Complete,
    /// A line longer than the limit; it was skipped up to its end, its length is given.
    TooLong(usize),
    /// The input ended (a final unterminated line is returned as `Complete` first).
    Eof,
}

/// Reads the next line into `buf` (cleared first), never holding more than `max` bytes.
pub fn read_line<R: BufRead>(reader: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut total = 0usize;
    let mut too_long = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong(total)
            } else if total == 0 {
                Line::Eof
            } else {
                trim_cr(buf);
                Line::Complete
            });
        }
        let (part, found_newline) = match memchr(chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        let used = part.len() + usize::from(found_newline);
        total += part.len();
        if !too_long {
            if buf.len() + part.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        reader.consume(used);
        if found_newline {
            if too_long {
                return Ok(Line::TooLong(total));
            }
            trim_cr(buf);
            return Ok(Line::Complete);
        }
    }
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == b'\n')
}

fn trim_cr(buf: &mut Vec<u8>) {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_crlf_partial_and_overlong_lines() {
        let input = b"a\r\nbb\n\nxxxxxxxxxx\nlast".to_vec();
        let mut r = io::BufReader::with_capacity(3, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Complete);
        assert_eq!(buf, b"a");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Complete);
        assert_eq!(buf, b"bb");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Complete);
        assert_eq!(buf, b"");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::TooLong(10));
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Complete);
        assert_eq!(buf, b"last");
        assert_eq!(read_line(&mut r, &mut buf, 5).unwrap(), Line::Eof);
    }
}
