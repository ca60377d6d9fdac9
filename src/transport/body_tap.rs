//! HTTP bodies through the proxy: a request's read first (bounded), so the judge has the
//! client's item before the upstream's answer to it; an answer's forwarded chunk by chunk as
//! it comes (an event stream is never held back), a copy read for the judge after each chunk
//! went on — except an answer that names its session (Engine.IO's handshake), read first so
//! the name is known before the client can use it.

use super::length_prefixed::Splitter;
use super::relayed::{hand_over, Peer, Relayed, StreamReader};
use super::sse_tap::SseTap;
use super::tap::TapSender;
use super::{Frame, Received};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, BodyStream, StreamBody};
use hyper::body::Incoming;
use std::time::Instant;
use tokio::sync::mpsc;

/// A body the proxy forwards, whatever it was made from.
pub type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// Chunks of an answer forwarded but not yet taken by the client: beyond this the upstream's
/// answer waits, as it would on a direct connection.
const IN_FLIGHT_CHUNKS: usize = 4;

/// A body, read up to a limit.
pub struct TakenBody {
    /// The bytes read (all of them when `whole`).
    pub bytes: Vec<u8>,
    /// The body ended within the limit.
    pub whole: bool,
    /// What goes upstream: the bytes read, then whatever was not.
    pub body: ProxyBody,
}

/// Reads `body` up to `max` bytes (more than that streams on unread).
pub async fn take_body(mut body: Incoming, max: usize) -> Result<TakenBody, hyper::Error> {
    let mut frames = Vec::new();
    let mut bytes = Vec::new();
    let whole = loop {
        let Some(frame) = body.frame().await.transpose()? else {
            break true;
        };
        if let Some(data) = frame.data_ref() {
            bytes.extend_from_slice(data);
        }
        frames.push(Ok(frame));
        if bytes.len() > max {
            break false;
        }
    };
    let read = futures_util::stream::iter(frames);
    let body = match whole {
        true => BodyExt::boxed(StreamBody::new(read)),
        false => BodyExt::boxed(StreamBody::new(read.chain(BodyStream::new(body)))),
    };
    Ok(TakenBody { bytes, whole, body })
}

/// How a copy of an answer is read.
pub enum Reading {
    /// An event stream: each event an item as it completes.
    Events(SseTap),
    /// Length-prefixed binary frames: each frame an item as it completes.
    Frames(Splitter),
    /// Kept whole up to `max` bytes, for the end.
    Copy { max: usize },
}

/// How an answer's body ended, and what was kept of it.
#[derive(Debug, Default)]
pub struct Pumped {
    /// The body as read (`Reading::Copy`), cut at its limit.
    pub copy: Vec<u8>,
    /// The copy was cut.
    pub cut: bool,
    /// Why the body, or the reading of it, broke; `None` when it ended cleanly.
    pub error: Option<String>,
    /// The client stopped taking the answer before it ended.
    pub abandoned: bool,
}

/// Where an answer's items go: session `conn`'s upstream side.
pub struct AnswerTap {
    pub tap: TapSender<Relayed>,
    pub conn: usize,
}

impl AnswerTap {
    async fn hand(&self, items: &mut Vec<Received>, pumped: &mut Pumped) {
        for received in items.drain(..) {
            if pumped.error.is_some() {
                continue;
            }
            match received {
                // A stream that cannot be read on ends the reading, not the session: the
                // answer's end says why.
                Received::Failed(e) => pumped.error = Some(e.to_string()),
                received => {
                    hand_over(
                        &self.tap,
                        self.conn,
                        Peer::Upstream,
                        received,
                        Instant::now(),
                    )
                    .await
                }
            }
        }
    }
}

impl Pumped {
    /// An answer read whole before it went on ([`take_body`]).
    pub fn taken(taken: &TakenBody) -> Pumped {
        Pumped {
            copy: taken.bytes.clone(),
            cut: !taken.whole,
            ..Pumped::default()
        }
    }
}

/// A body for the client carrying `answer` as it comes, and the task's future that forwards
/// it (handing what `reading` makes of each chunk to `to`), resolving to how it ended.
pub fn pump(
    answer: Incoming,
    reading: Reading,
    to: AnswerTap,
) -> (ProxyBody, impl std::future::Future<Output = Pumped> + Send) {
    let (tx, rx) = mpsc::channel(IN_FLIGHT_CHUNKS);
    let body = BodyExt::boxed(StreamBody::new(tokio_stream_of(rx)));
    (body, forward(answer, tx, reading, to))
}

fn tokio_stream_of<T: Send + 'static>(
    mut rx: mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

type Chunk = Result<hyper::body::Frame<Bytes>, hyper::Error>;

async fn forward(
    mut answer: Incoming,
    tx: mpsc::Sender<Chunk>,
    mut reading: Reading,
    to: AnswerTap,
) -> Pumped {
    let mut pumped = Pumped::default();
    let mut items = Vec::new();
    loop {
        // A client that leaves is noticed at once, not at the upstream's next chunk (a
        // stream's next heartbeat may be long in coming).
        let next = tokio::select! {
            next = answer.frame() => next,
            () = tx.closed() => {
                pumped.abandoned = true;
                break;
            }
        };
        let frame = match next {
            None => break,
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                pumped.error = Some(format!("the body failed: {e}"));
                // The client sees the answer break as it did.
                let _ = tx.send(Err(e)).await;
                break;
            }
        };
        let data = frame.data_ref().cloned();
        if tx.send(Ok(frame)).await.is_err() {
            pumped.abandoned = true;
            break;
        }
        if let Some(data) = data {
            read(&mut reading, &data, &mut items, &mut pumped);
            to.hand(&mut items, &mut pumped).await;
        }
    }
    if !pumped.abandoned {
        end(&mut reading, &mut items, &mut pumped);
        to.hand(&mut items, &mut pumped).await;
    }
    pumped
}

fn read(reading: &mut Reading, data: &[u8], items: &mut Vec<Received>, pumped: &mut Pumped) {
    match reading {
        Reading::Events(sse) => sse.feed(data, items),
        Reading::Frames(splitter) if pumped.error.is_none() => {
            let split = splitter.push(data, |f| items.push(Received::Frame(Frame::Binary(f))));
            if let Err(e) = split {
                items.push(Received::Failed(super::TransportError::Protocol(
                    e.to_string(),
                )));
            }
        }
        Reading::Frames(_) => {}
        Reading::Copy { max } => {
            let room = max.saturating_sub(pumped.copy.len());
            pumped.cut |= data.len() > room;
            pumped.copy.extend_from_slice(&data[..data.len().min(room)]);
        }
    }
}

fn end(reading: &mut Reading, items: &mut Vec<Received>, pumped: &mut Pumped) {
    match reading {
        Reading::Events(sse) => sse.end(items),
        Reading::Frames(splitter) if pumped.error.is_none() => {
            if let Err(e) = splitter.finish() {
                pumped.error = Some(e.to_string());
            }
        }
        Reading::Frames(_) | Reading::Copy { .. } => {}
    }
}
