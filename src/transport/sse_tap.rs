//! Reading an event stream off bytes that pass by, sans-IO: what `proxy` forwards of an SSE
//! answer it also hands here, a chunk at a time, and gets back what the SSE + HTTP
//! transport's reader would have received — through the same parser, so a stream judged
//! through the proxy is read exactly as one judged by `run`.

use super::relayed::StreamReader;
use super::sse::{captured_of, line_chunks, Captured, CrWatch, CR_LINE_ENDS};
use super::Received;
use bytes::Bytes;
use futures_util::{FutureExt, Stream, StreamExt};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

/// The bytes handed over and not yet parsed, and whether the stream has ended.
#[derive(Default)]
struct Fed {
    chunks: VecDeque<Bytes>,
    ended: bool,
}

type Parsed = Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>;

/// One event stream, read as it passes. After the failure that ends a stream (a line over
/// the limit), nothing more is read: the bytes still pass, unjudged.
pub struct SseTap {
    fed: Arc<Mutex<Fed>>,
    parsed: Parsed,
    cr: CrWatch,
    failed: bool,
}

impl SseTap {
    /// A reader keeping lines of at most `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        let fed = Arc::new(Mutex::new(Fed::default()));
        let source = fed.clone();
        // Pending when nothing is queued: the reader is only ever polled right after a feed,
        // so no waker is needed.
        let body = futures_util::stream::poll_fn(move |_| {
            let Ok(mut fed) = source.lock() else {
                return Poll::Ready(None);
            };
            match fed.chunks.pop_front() {
                Some(chunk) => Poll::Ready(Some(Ok::<_, Infallible>(chunk))),
                None if fed.ended => Poll::Ready(None),
                None => Poll::Pending,
            }
        });
        let cr = CrWatch::default();
        let lines = line_chunks(cr.watching(body), max_line);
        SseTap {
            fed,
            parsed: Box::pin(sse_stream::SseStream::from_bytes_stream(lines)),
            cr,
            failed: false,
        }
    }

    /// Everything the parser can make of what was fed so far.
    fn drain(&mut self, out: &mut Vec<Received>) {
        while !self.failed {
            let Some(Some(item)) = self.parsed.next().now_or_never() else {
                return;
            };
            if self.cr.first_time() {
                out.push(Received::Notice(CR_LINE_ENDS.into()));
            }
            if let Some(captured) = captured_of(item) {
                self.failed = matches!(captured, Captured::Failed(_));
                out.push(Received::from(captured));
            }
        }
    }

    fn push(&mut self, chunk: Option<Bytes>) {
        if let Ok(mut fed) = self.fed.lock() {
            match chunk {
                Some(chunk) => fed.chunks.push_back(chunk),
                None => fed.ended = true,
            }
        }
    }
}

impl StreamReader for SseTap {
    /// Reads `bytes` (the next ones of the body); `out` gets the events they complete, then,
    /// once, the failure that ends the stream.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Received>) {
        if self.failed {
            return;
        }
        self.push(Some(Bytes::copy_from_slice(bytes)));
        self.drain(out);
    }

    /// The body ended: an event not closed by a blank line is not dispatched, as the SSE
    /// specification says.
    fn end(&mut self, out: &mut Vec<Received>) {
        self.push(None);
        self.drain(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::TransportError;

    fn read(chunks: &[&str], max: usize) -> Vec<Received> {
        let mut tap = SseTap::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            tap.feed(chunk.as_bytes(), &mut out);
        }
        tap.end(&mut out);
        out
    }

    #[test]
    fn events_split_anywhere_come_out_whole_with_their_fields() {
        let out = read(
            &["id: 4\nda", "ta: {\"a\"", ":1}\n\n: beat\n\ndata: x\n"],
            1024,
        );
        assert_eq!(out.len(), 1, "{out:?}");
        match &out[0] {
            Received::SseEvent { data, meta } => {
                assert_eq!(data, r#"{"a":1}"#);
                assert_eq!(meta.id.as_deref(), Some("4"));
            }
            other => panic!("an event, not {other:?}"),
        }
    }

    #[test]
    fn cr_line_ends_are_noticed_once_and_a_long_line_ends_the_reading() {
        let out = read(&["data: 1\r\n\r\ndata: 2\r\n\r\n"], 1024);
        let notices = out
            .iter()
            .filter(|r| matches!(r, Received::Notice(n) if n == CR_LINE_ENDS))
            .count();
        assert_eq!((notices, out.len()), (1, 3), "{out:?}");
        let out = read(&["data: ", &"x".repeat(64), "\n\ndata: 1\n\n"], 16);
        assert!(
            matches!(
                out.as_slice(),
                [Received::Failed(TransportError::FrameTooLarge { .. })]
            ),
            "{out:?}"
        );
    }
}
