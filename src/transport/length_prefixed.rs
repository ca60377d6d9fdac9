//! Frames behind a 4-byte big-endian length, abutting with no separator (a response body of
//! binary messages, AG-UI's protobuf binding among them). Sans-IO: bytes go in as they come,
//! in chunks of any size; whole frames come out, and what is left at the end says whether the
//! body ended cleanly or mid-frame.

/// How a length-prefixed body failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("a frame announces {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
    #[error("the body ended mid-frame: {have} of {want} bytes")]
    EndedMidFrame { have: usize, want: usize },
}

/// Splits a byte stream into frames; never holds more than one frame (capped) at a time.
#[derive(Debug)]
pub struct Splitter {
    buffer: Vec<u8>,
    limit: usize,
}

/// Bytes of the length header.
const HEADER: usize = 4;

impl Splitter {
    /// A splitter refusing frames over `limit` bytes.
    pub fn new(limit: usize) -> Splitter {
        Splitter {
            buffer: Vec::new(),
            limit,
        }
    }

    /// Takes in `bytes` and hands every frame they complete to `each`, in order. A frame over
    /// the limit is an error, after which nothing more can be read.
    pub fn push(
        &mut self,
        bytes: &[u8],
        mut each: impl FnMut(Vec<u8>),
    ) -> Result<(), FramingError> {
        self.buffer.extend_from_slice(bytes);
        let mut start = 0;
        loop {
            let rest = &self.buffer[start..];
            let Some(header) = rest.get(..HEADER) else {
                break;
            };
            let size = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
            if size > self.limit {
                self.buffer.clear();
                return Err(FramingError::TooLarge {
                    size,
                    limit: self.limit,
                });
            }
            let Some(frame) = rest.get(HEADER..HEADER + size) else {
                break;
            };
            each(frame.to_vec());
            start += HEADER + size;
        }
        self.buffer.drain(..start);
        Ok(())
    }

    /// The body ended: clean when nothing of a frame is left over.
    pub fn finish(&self) -> Result<(), FramingError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let want = match self.buffer.get(..HEADER) {
            Some(h) => HEADER + u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize,
            None => HEADER,
        };
        Err(FramingError::EndedMidFrame {
            have: self.buffer.len(),
            want,
        })
    }
}

/// `frame` behind its length header, as a writer puts it on the wire.
pub fn encode(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + frame.len());
    out.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    out.extend_from_slice(frame);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], limit: usize) -> (Vec<Vec<u8>>, Result<(), FramingError>) {
        let mut s = Splitter::new(limit);
        let mut frames = Vec::new();
        for c in chunks {
            if let Err(e) = s.push(c, |f| frames.push(f)) {
                return (frames, Err(e));
            }
        }
        let end = s.finish();
        (frames, end)
    }

    #[test]
    fn frames_split_across_chunks_and_several_in_one_come_out_whole() {
        let mut wire = encode(b"abc");
        wire.extend(encode(b""));
        wire.extend(encode(b"hello"));
        let (one_by_one, end) = split(
            &wire.iter().map(std::slice::from_ref).collect::<Vec<_>>(),
            64,
        );
        assert_eq!(one_by_one, [b"abc".to_vec(), vec![], b"hello".to_vec()]);
        assert_eq!(end, Ok(()));
        let (at_once, _) = split(&[&wire], 64);
        assert_eq!(at_once, one_by_one);
    }

    #[test]
    fn a_body_ending_mid_frame_or_announcing_too_much_is_said_so() {
        let wire = encode(b"hello");
        assert_eq!(
            split(&[&wire[..6]], 64).1,
            Err(FramingError::EndedMidFrame { have: 6, want: 9 })
        );
        assert_eq!(
            split(&[&wire[..2]], 64).1,
            Err(FramingError::EndedMidFrame { have: 2, want: 4 })
        );
        assert_eq!(
            split(&[&wire], 4).1,
            Err(FramingError::TooLarge { size: 5, limit: 4 })
        );
    }
}
