//! Reading WebSocket frames off bytes that pass by, sans-IO: what `proxy` forwards byte for
//! byte it also hands here, a chunk at a time, and gets back the messages, closes and
//! oddities a connection's runner would have received (RFC 6455 §5). It never writes, never
//! blocks and keeps at most one message (up to its limit) and one frame head.

use super::relayed::StreamReader;
use super::{Frame, Received, TransportError};

/// How a stream that ended without a close frame is reported (as the WebSocket transport
/// reports it, so [`super::websocket::dropped`] reads it the same).
use super::websocket::DROPPED;

/// Where the reader is in the byte stream.
#[derive(Debug)]
enum State {
    /// Reading a frame's head (2 to 14 bytes, gathered in `head`).
    Head,
    /// Reading `left` payload bytes of the current frame.
    Payload { left: u64 },
    /// The stream broke the framing: nothing more is read.
    Lost,
}

/// The frame being read.
#[derive(Debug, Default)]
struct Current {
    fin: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    /// Payload bytes read so far (for the mask's position).
    at: u64,
}

/// A message being put together from its frames.
#[derive(Debug)]
struct Message {
    text: bool,
    bytes: Vec<u8>,
    /// Bytes the message holds in all (those past the limit are counted, not kept).
    len: u64,
}

/// One direction of a WebSocket connection, read as it passes.
#[derive(Debug)]
pub struct WsTap {
    limit: usize,
    state: State,
    head: Vec<u8>,
    current: Current,
    message: Option<Message>,
    /// A control frame's payload (at most 125 bytes).
    control: Vec<u8>,
    closed: bool,
}

impl WsTap {
    /// A reader keeping messages of at most `limit` bytes; a longer one is forwarded and
    /// reported as too large.
    pub fn new(limit: usize) -> Self {
        WsTap {
            limit,
            state: State::Head,
            head: Vec::with_capacity(14),
            current: Current::default(),
            message: None,
            control: Vec::new(),
            closed: false,
        }
    }

    fn lose(&mut self, why: impl Into<String>, out: &mut Vec<Received>) {
        self.state = State::Lost;
        out.push(Received::Failed(TransportError::Protocol(why.into())));
    }

    /// The head is complete: checks it and starts reading the payload.
    fn start_frame(&mut self, out: &mut Vec<Received>) {
        let h = std::mem::take(&mut self.head);
        let (fin, rsv, opcode) = (h[0] & 0x80 != 0, h[0] & 0x70, h[0] & 0x0f);
        let masked = h[1] & 0x80 != 0;
        let (len, at) = match h[1] & 0x7f {
            126 => (u16::from_be_bytes([h[2], h[3]]) as u64, 4),
            127 => (
                u64::from_be_bytes([h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9]]),
                10,
            ),
            n => (n as u64, 2),
        };
        let mask = masked.then(|| [h[at], h[at + 1], h[at + 2], h[at + 3]]);
        self.head = h;
        self.head.clear();
        if rsv != 0 {
            return self.lose(
                "a WebSocket frame with RSV bits set (an extension the proxy did not negotiate)",
                out,
            );
        }
        let control = opcode >= 8;
        match opcode {
            0 if self.message.is_none() => {
                return self.lose("a continuation frame with no message to continue", out)
            }
            1 | 2 if self.message.is_some() => {
                return self.lose("a new message before the last one's final frame", out)
            }
            0..=2 | 8..=10 => {}
            other => {
                return self.lose(
                    format!("a WebSocket frame with reserved opcode {other}"),
                    out,
                )
            }
        }
        if control && (!fin || len > 125) {
            return self.lose("a control frame fragmented or over 125 bytes", out);
        }
        if opcode == 1 || opcode == 2 {
            self.message = Some(Message {
                text: opcode == 1,
                bytes: Vec::new(),
                len: 0,
            });
        }
        self.control.clear();
        self.current = Current {
            fin,
            opcode,
            mask,
            at: 0,
        };
        self.state = State::Payload { left: len };
        if len == 0 {
            self.end_frame(out);
        }
    }

    fn payload(&mut self, chunk: &[u8]) {
        let start = self.current.at;
        self.current.at += chunk.len() as u64;
        let mask = self.current.mask;
        let unmasked = |dst: &mut Vec<u8>, chunk: &[u8]| {
            let from = dst.len();
            dst.extend_from_slice(chunk);
            if let Some(mask) = mask {
                for (i, b) in dst[from..].iter_mut().enumerate() {
                    *b ^= mask[((start + i as u64) % 4) as usize];
                }
            }
        };
        if self.current.opcode >= 8 {
            unmasked(&mut self.control, chunk);
            return;
        }
        let limit = self.limit;
        let Some(message) = self.message.as_mut() else {
            return;
        };
        message.len += chunk.len() as u64;
        if message.len <= limit as u64 {
            unmasked(&mut message.bytes, chunk);
        } else {
            // Too large: what it held is let go; the rest is only counted.
            message.bytes = Vec::new();
        }
    }

    fn end_frame(&mut self, out: &mut Vec<Received>) {
        self.state = State::Head;
        match self.current.opcode {
            8 => {
                let c = std::mem::take(&mut self.control);
                let code = (c.len() >= 2).then(|| u16::from_be_bytes([c[0], c[1]]));
                let reason = c.get(2..).map(String::from_utf8_lossy).unwrap_or_default();
                self.closed = true;
                out.push(Received::Closed {
                    code,
                    reason: reason.into_owned(),
                });
            }
            // Pings and pongs pass through; a runner never sees them either.
            9 | 10 => {}
            _ if !self.current.fin => {}
            _ => {
                let Some(message) = self.message.take() else {
                    return;
                };
                if message.len > self.limit as u64 {
                    let kind = if message.text { "text" } else { "binary" };
                    out.push(Received::Notice(format!(
                        "a {kind} message of {} bytes, over the {}-byte limit (--max-frame-bytes): forwarded, not judged",
                        message.len, self.limit
                    )));
                    return;
                }
                out.push(Received::Frame(match message.text {
                    true => super::stdio::frame_of(message.bytes),
                    false => Frame::Binary(message.bytes),
                }));
            }
        }
    }
}

impl StreamReader for WsTap {
    /// Reads `bytes` (the next ones on the wire); `out` gets what they complete.
    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Received>) {
        while !bytes.is_empty() {
            match self.state {
                State::Lost => return,
                State::Head => {
                    let need = head_len(&self.head).saturating_sub(self.head.len()).max(1);
                    let take = need.min(bytes.len());
                    self.head.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if self.head.len() >= 2 && self.head.len() == head_len(&self.head) {
                        self.start_frame(out);
                    }
                }
                State::Payload { left } => {
                    let take = (left.min(bytes.len() as u64)) as usize;
                    self.payload(&bytes[..take]);
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.state = State::Payload { left };
                    if left == 0 {
                        self.end_frame(out);
                    }
                }
            }
        }
    }

    /// The stream ended: a connection that sent no close frame dropped.
    fn end(&mut self, out: &mut Vec<Received>) {
        if !self.closed && !matches!(self.state, State::Lost) {
            out.push(Received::Closed {
                code: None,
                reason: DROPPED.into(),
            });
        }
        self.closed = true;
    }
}

/// How long the head that starts with `head` is (2 until the second byte is known).
fn head_len(head: &[u8]) -> usize {
    let Some(second) = head.get(1) else {
        return 2;
    };
    let extended = match second & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if second & 0x80 != 0 { 4 } else { 0 };
    2 + extended + mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame as a peer writes it.
    fn frame(fin: bool, opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
        let mut out = vec![(fin as u8) << 7 | opcode];
        let m = if mask.is_some() { 0x80 } else { 0 };
        match payload.len() {
            n if n < 126 => out.push(m | n as u8),
            n if n <= u16::MAX as usize => {
                out.push(m | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(m | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        match mask {
            Some(k) => {
                out.extend_from_slice(&k);
                out.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
            }
            None => out.extend_from_slice(payload),
        }
        out
    }

    /// Everything `bytes` yields, fed `step` bytes at a time.
    fn read(bytes: &[u8], step: usize, limit: usize) -> Vec<Received> {
        let mut tap = WsTap::new(limit);
        let mut out = Vec::new();
        for chunk in bytes.chunks(step) {
            tap.feed(chunk, &mut out);
        }
        tap.end(&mut out);
        out
    }

    #[test]
    fn messages_come_whole_however_the_bytes_are_cut() {
        let mut wire = frame(true, 1, b"{\"a\":1}", Some([1, 2, 3, 4]));
        wire.extend(frame(false, 2, &[0u8; 300], None));
        wire.extend(frame(true, 9, b"ping", None));
        wire.extend(frame(true, 0, &[7u8; 70_000], None));
        wire.extend(frame(true, 8, b"\x03\xe8bye", Some([9, 9, 9, 9])));
        for step in [1, 3, 14, 4096, wire.len()] {
            let got = read(&wire, step, 1 << 20);
            assert_eq!(got.len(), 3, "step {step}: {got:?}");
            assert!(matches!(&got[0], Received::Frame(Frame::Text(t)) if t == "{\"a\":1}"));
            match &got[1] {
                Received::Frame(Frame::Binary(b)) => assert_eq!(b.len(), 70_300),
                other => panic!("{other:?}"),
            }
            assert!(
                matches!(&got[2], Received::Closed { code: Some(1000), reason } if reason == "bye")
            );
        }
    }

    #[test]
    fn a_stream_ending_without_a_close_frame_dropped() {
        let got = read(&frame(true, 1, b"x", None), 1, 100);
        assert!(super::super::websocket::dropped(&got[1]), "{got:?}");
    }

    #[test]
    fn too_large_invalid_and_broken_frames_are_told_apart() {
        let mut wire = frame(true, 1, &[b'a'; 200], None);
        wire.extend(frame(true, 1, &[0xff, 0xfe], None));
        wire.extend(frame(true, 0, b"orphan", None));
        wire.extend(frame(true, 1, b"never read", None));
        let got = read(&wire, 7, 100);
        assert!(
            matches!(&got[0], Received::Notice(n) if n.contains("200 bytes")),
            "{got:?}"
        );
        assert!(matches!(&got[1], Received::Frame(Frame::RawText(b)) if b == &[0xff, 0xfe]));
        assert!(matches!(&got[2], Received::Failed(_)), "{got:?}");
        assert_eq!(
            got.len(),
            3,
            "nothing is read after the framing broke: {got:?}"
        );
    }
}
