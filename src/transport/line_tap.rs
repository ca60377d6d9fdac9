//! Reading NDJSON lines off bytes that pass by, sans-IO: what `proxy` copies between a host
//! and its agent it also hands here, a chunk at a time, and gets back the lines a stdio
//! connection's runner would have received (blank and over-long lines as notices).

use super::relayed::StreamReader;
use super::stdio::frame_of;
use super::Received;
use crate::ndjson::{Line, LineSplitter};

/// One direction of a stdio conversation, read as it passes.
#[derive(Debug)]
pub struct LineTap {
    max: usize,
    splitter: LineSplitter,
    line: Vec<u8>,
    /// What became of a line over `max` bytes, for its notice.
    over_limit: &'static str,
}

impl LineTap {
    /// A reader keeping lines of at most `max` bytes, of a stream passed on whole.
    pub fn new(max: usize) -> Self {
        LineTap {
            max,
            splitter: LineSplitter::new(max),
            line: Vec::new(),
            over_limit: "forwarded, not judged",
        }
    }

    /// [`LineTap::new`] for a stream read only by the run (a relay's): a line over `max`
    /// bytes is skipped, as a stdio target's is.
    pub fn skipping(max: usize) -> Self {
        LineTap {
            over_limit: "skipped",
            ..LineTap::new(max)
        }
    }

    fn received(&mut self, line: Line) -> Received {
        match line {
            Line::TooLong(n) => Received::Notice(format!(
                "a line of {n} bytes, over the {}-byte limit ({})",
                self.max, self.over_limit
            )),
            _ if self.line.is_empty() => Received::Notice("a blank line".into()),
            _ => Received::Frame(frame_of(std::mem::take(&mut self.line))),
        }
    }
}

impl StreamReader for LineTap {
    /// Reads `bytes` (the next ones on the stream); `out` gets the lines they complete.
    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Received>) {
        while !bytes.is_empty() {
            let (used, ended) = self.splitter.feed(bytes, &mut self.line);
            bytes = &bytes[used..];
            if let Some(line) = ended {
                out.push(self.received(line));
            }
        }
    }

    /// The stream ended: a last line without its newline still counts.
    fn end(&mut self, out: &mut Vec<Received>) {
        match self.splitter.finish(&mut self.line) {
            Line::Eof => {}
            line => out.push(self.received(line)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Frame;

    #[test]
    fn lines_come_whole_however_the_bytes_are_cut() {
        let wire = b"{\"a\":1}\r\n\n{\"b\":2}\nxxxxxxxxxxxxxxxxxxxxxxxx\ntail";
        for step in [1, 2, 5, wire.len()] {
            let mut tap = LineTap::new(16);
            let mut out = Vec::new();
            for chunk in wire.chunks(step) {
                tap.feed(chunk, &mut out);
            }
            tap.end(&mut out);
            let shown: Vec<String> = out
                .iter()
                .map(|r| match r {
                    Received::Frame(Frame::Text(t)) => t.clone(),
                    Received::Notice(n) => format!("notice: {n}"),
                    other => format!("{other:?}"),
                })
                .collect();
            assert_eq!(
                shown,
                [
                    "{\"a\":1}",
                    "notice: a blank line",
                    "{\"b\":2}",
                    "notice: a line of 24 bytes, over the 16-byte limit (forwarded, not judged)",
                    "tail"
                ],
                "step {step}"
            );
        }
    }
}
