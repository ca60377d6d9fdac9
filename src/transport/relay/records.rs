//! What `wireprobe relay` sends up to the run, sans-IO: the host's bytes, and how far the
//! run's own bytes have been written to the host, interleaved in the order they happened.
//! The run reads the second to know which of the host's lines were written before a line it
//! sent reached the host (see the module above): the host's pipe and the relay's socket are
//! two queues, and only the relay sees both.
//!
//! A record is a tag byte and a big-endian length or count:
//! - `D`, a `u32` length, that many bytes the host wrote to its agent's stdin;
//! - `W`, a `u64`: the run's bytes written to the host's stdout so far.
//!
//! Downwards (run to host) the bytes go as they are: the host reads them as the agent's.

/// The tag of a record of the host's bytes.
const DATA: u8 = b'D';
/// The tag of a record of how far the run's bytes were written.
const WRITTEN: u8 = b'W';
/// Bytes of a record's head (tag and length or count) at most.
const HEAD: usize = 9;
/// Bytes of the host's data one record carries at most: the relay reads this many at a time,
/// and the run refuses a record of more.
pub const MAX_DATA: usize = 64 * 1024;

/// One record read off the relay's connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// Bytes the host wrote.
    Data(&'a [u8]),
    /// The run's bytes written to the host so far.
    Written(u64),
}

/// A record's head for `len` bytes of the host's data.
pub fn data_head(len: usize) -> [u8; 5] {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    [DATA, len[0], len[1], len[2], len[3]]
}

/// A record saying the run's bytes were written up to `total`.
pub fn written(total: u64) -> [u8; HEAD] {
    let mut record = [WRITTEN; HEAD];
    record[1..].copy_from_slice(&total.to_be_bytes());
    record
}

/// What was wrong with what came up the relay's connection: nothing `wireprobe relay` sends.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("the relay sent a record of unknown kind {0:#04x}")]
    UnknownKind(u8),
    #[error("the relay sent a record of {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
}

/// Reads records off the bytes as they come, however they are cut.
#[derive(Debug)]
pub struct RecordReader {
    limit: usize,
    buf: Vec<u8>,
    /// Where the unread bytes in `buf` start.
    start: usize,
}

impl RecordReader {
    /// A reader refusing data records over `limit` bytes (the relay's are at most its read
    /// size), so nothing that connects can make the run buffer without bound.
    pub fn new(limit: usize) -> Self {
        RecordReader {
            limit,
            buf: Vec::new(),
            start: 0,
        }
    }

    /// Takes in the next bytes off the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole record the bytes fed hold, if any.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, RecordError> {
        let rest = &self.buf[self.start..];
        let Some(&tag) = rest.first() else {
            return Ok(None);
        };
        let (head, body) = match tag {
            DATA => (5, read_len(rest, 1, 4)),
            WRITTEN => (HEAD, 0),
            other => return Err(RecordError::UnknownKind(other)),
        };
        if rest.len() < head {
            return Ok(None);
        }
        if body > self.limit {
            return Err(RecordError::TooLarge {
                size: body,
                limit: self.limit,
            });
        }
        if rest.len() < head + body {
            return Ok(None);
        }
        let from = self.start;
        self.start += head + body;
        let record = &self.buf[from..from + head + body];
        Ok(Some(match tag {
            DATA => Record::Data(&record[head..]),
            _ => Record::Written(read_len(record, 1, 8) as u64),
        }))
    }

    /// True when bytes of a record not yet whole are held (the connection ended mid-record).
    pub fn holds_partial(&self) -> bool {
        self.start < self.buf.len()
    }
}

/// The big-endian number in `bytes[at..at + n]`, or 0 when they are not all there yet.
fn read_len(bytes: &[u8], at: usize, n: usize) -> usize {
    bytes.get(at..at + n).map_or(0, |b| {
        b.iter()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
            .try_into()
            .unwrap_or(usize::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire() -> Vec<u8> {
        let mut wire = Vec::new();
        wire.extend_from_slice(&data_head(3));
        wire.extend_from_slice(b"ab\n");
        wire.extend_from_slice(&written(7));
        wire.extend_from_slice(&data_head(0));
        wire.extend_from_slice(&written(1 << 40));
        wire
    }

    /// Records come whole and in order however the bytes are cut.
    #[test]
    fn records_come_whole_however_the_bytes_are_cut() {
        let wire = wire();
        for step in [1, 2, 5, wire.len()] {
            let mut reader = RecordReader::new(16);
            let mut seen = Vec::new();
            for chunk in wire.chunks(step) {
                reader.feed(chunk);
                while let Some(record) = reader.next_record().expect("valid") {
                    seen.push(match record {
                        Record::Data(d) => format!("data {:?}", String::from_utf8_lossy(d)),
                        Record::Written(n) => format!("written {n}"),
                    });
                }
            }
            assert!(!reader.holds_partial());
            assert_eq!(
                seen,
                [
                    "data \"ab\\n\"",
                    "written 7",
                    "data \"\"",
                    "written 1099511627776"
                ],
                "step {step}"
            );
        }
    }

    /// What no relay sends is refused, not buffered: an unknown kind, an oversized record.
    #[test]
    fn what_no_relay_sends_is_refused() {
        let mut reader = RecordReader::new(16);
        reader.feed(b"X");
        assert_eq!(reader.next_record(), Err(RecordError::UnknownKind(b'X')));
        let mut reader = RecordReader::new(16);
        reader.feed(&data_head(17));
        assert_eq!(
            reader.next_record(),
            Err(RecordError::TooLarge {
                size: 17,
                limit: 16
            })
        );
        let mut reader = RecordReader::new(16);
        reader.feed(&data_head(4));
        reader.feed(b"ab");
        assert_eq!(reader.next_record(), Ok(None));
        assert!(reader.holds_partial());
    }
}
