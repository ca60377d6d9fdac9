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

/// The state of the line being assembled: one splitter serves the blocking reader below and
/// the async one ([`AsyncLines`]), so both frame lines the same way.
#[derive(Debug)]
pub struct LineSplitter {
    max: usize,
    /// Bytes of the current line so far, including those not kept because it is too long.
    total: usize,
    too_long: bool,
}

impl LineSplitter {
    pub fn new(max: usize) -> Self {
        LineSplitter {
            max,
            total: 0,
            too_long: false,
        }
    }

    /// Takes what belongs to the current line from `chunk` into `buf`; returns how many bytes
    /// were used and, when the line ended in this chunk, what it was.
    pub fn feed(&mut self, chunk: &[u8], buf: &mut Vec<u8>) -> (usize, Option<Line>) {
        let (part, found_newline) = match memchr(chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        self.total += part.len();
        if !self.too_long {
            if buf.len() + part.len() > self.max {
                self.too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        let used = part.len() + usize::from(found_newline);
        (used, found_newline.then(|| self.end_line(buf)))
    }

    /// The input ended: the unterminated last line, if any, or [`Line::Eof`].
    pub fn finish(&mut self, buf: &mut Vec<u8>) -> Line {
        if self.total == 0 && !self.too_long {
            return Line::Eof;
        }
        self.end_line(buf)
    }

    fn end_line(&mut self, buf: &mut Vec<u8>) -> Line {
        let total = std::mem::take(&mut self.total);
        if std::mem::take(&mut self.too_long) {
            return Line::TooLong(total);
        }
        trim_cr(buf);
        Line::Complete
    }
}

/// Reads the next line into `buf` (cleared first), never holding more than `max` bytes.
pub fn read_line<R: BufRead>(reader: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut splitter = LineSplitter::new(max);
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(splitter.finish(buf));
        }
        let (used, line) = splitter.feed(chunk, buf);
        reader.consume(used);
        if let Some(line) = line {
            return Ok(line);
        }
    }
}

/// Async NDJSON lines with the same framing as [`read_line`]. Cancel-safe: the partial line
/// lives here, not in the future, so a `select!` that drops [`AsyncLines::next`] loses nothing
/// (its only await point, `fill_buf`, consumes nothing).
pub struct AsyncLines<R> {
    reader: R,
    splitter: LineSplitter,
    buf: Vec<u8>,
    /// The last call returned a line: the next one starts afresh.
    returned: bool,
}

impl<R: tokio::io::AsyncBufRead + Unpin> AsyncLines<R> {
    pub fn new(reader: R, max: usize) -> Self {
        AsyncLines {
            reader,
            splitter: LineSplitter::new(max),
            buf: Vec::new(),
            returned: false,
        }
    }

    /// The next line; on [`Line::Complete`] its bytes are in [`AsyncLines::line`].
    pub async fn next(&mut self) -> io::Result<Line> {
        use tokio::io::AsyncBufReadExt;
        if std::mem::take(&mut self.returned) {
            self.buf.clear();
        }
        loop {
            let chunk = self.reader.fill_buf().await?;
            let line = if chunk.is_empty() {
                self.splitter.finish(&mut self.buf)
            } else {
                let (used, line) = self.splitter.feed(chunk, &mut self.buf);
                self.reader.consume(used);
                match line {
                    Some(line) => line,
                    None => continue,
                }
            };
            self.returned = true;
            return Ok(line);
        }
    }

    /// The line [`AsyncLines::next`] last returned.
    pub fn line(&self) -> &[u8] {
        &self.buf
    }

    /// Takes the line [`AsyncLines::next`] last returned.
    pub fn take_line(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', haystack)
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
