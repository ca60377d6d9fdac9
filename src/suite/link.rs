//! The connection side of a running case: sending, receiving with deadlines, and the
//! arrivals no step has consumed yet.

use super::arrival::Item;
use super::outcome::Outcome;
use super::slots::Slot;
use crate::protocol::{Decoded, Session};
use crate::transcript::Transcript;
use crate::transport::{Body, Connection, Frame, Outgoing, Received, SseMeta, TransportError};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::time::Instant;

/// Most arrivals kept unconsumed.
const MAX_PENDING: usize = 10_000;

/// Most arrivals taken in by one drain before a send.
const MAX_DRAIN: usize = 4096;

/// What a watcher decides about one arrival.
pub(super) enum Watch<T> {
    /// Consume it and finish with `T`.
    Take(T),
    /// Keep it for later steps and finish with `T`.
    Stop(T),
    /// Keep it for later steps and go on.
    Keep,
}

/// The connection side of a running case: what was sent and received, and what is kept.
pub(super) struct Link {
    pub(super) session: Box<dyn Session>,
    pub(super) conn: Option<Connection>,
    /// Why the last connection attempt was refused, when it was.
    pub(super) refused: Option<String>,
    /// How the connection ended, once it has.
    pub(super) ended: Option<String>,
    /// Why this machine lost the connection (it had no local port to connect from), when it
    /// did: what a step sees after that is no verdict on the target.
    pub(super) lost: Option<String>,
    pub(super) transcript: Transcript,
    /// Items no step has consumed yet (order the spec leaves open is tolerated).
    pub(super) pending: VecDeque<Item>,
    /// The session's automatic answers go out (the case did not turn them off).
    pub(super) auto_answer: bool,
    /// Automatic answers not sent yet.
    pub(super) answers: Vec<Value>,
    /// The run's work slot, lent while it waits on the target (a campaign's runs share them).
    pub(super) slot: Option<Slot>,
    /// The longest round trip this case measured: as a connection opened (see
    /// [`Connection::round_trip`]) or as a ping was answered ([`Link::pong`]). How much
    /// longer than its `ms` a wait for the target's answers lasts, so a distant target's
    /// answers arrive before a later step is judged.
    pub(super) round_trip: std::time::Duration,
    /// How many pings were answered, and when the last answer came.
    pub(super) pongs: Option<Pong>,
    /// A ping went unanswered in its time: this case asks no more (a target that never
    /// answers would cost each wait that long).
    pub(super) unanswered_ping: bool,
}

/// The pings of a case answered so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pong {
    pub(super) count: u64,
    pub(super) at: Instant,
}

/// What a frame of `len` bytes adds to a send's deadline: a second per whole MiB.
fn reading_time(len: usize) -> std::time::Duration {
    std::time::Duration::from_secs((len >> 20) as u64)
}

/// Most automatic answers waiting to go out (a target flooding calls cannot grow this).
const MAX_ANSWERS: usize = 256;

/// What a [`Link::watch`] judge consults besides the arrival: the session (which it reads
/// as one), and what the connection knows of the answers to what was sent.
pub(super) struct Seen<'l> {
    session: &'l dyn Session,
    answers_owed: Option<usize>,
}

impl<'l> std::ops::Deref for Seen<'l> {
    type Target = dyn Session + 'l;

    fn deref(&self) -> &Self::Target {
        self.session
    }
}

impl Seen<'_> {
    /// The target owes nothing more for what it took in, as far as the protocol's structure
    /// shows: its session says so, or everything it owes comes in the answer to each
    /// exchange, and every answer has come whole.
    pub(super) fn settled(&self) -> bool {
        self.session.settled() == Some(true) || self.answered_whole()
    }

    /// Nothing more can come: everything the target owes comes in the answer to each
    /// exchange, and every answer has come whole.
    pub(super) fn answered_whole(&self) -> bool {
        self.session.answers_in_reply() && self.answers_owed == Some(0)
    }
}

impl Link {
    /// The session and the connection's count of answers, as a judge sees them now.
    pub(super) fn seen(&self) -> Seen<'_> {
        Seen {
            session: &*self.session,
            answers_owed: self.conn.as_ref().and_then(Connection::answers_owed),
        }
    }

    /// Records and decodes one observation.
    /// `None` for transport-level control packets, which only the transcript keeps.
    pub(super) fn arrive(&mut self, received: Received, at: std::time::Instant) -> Option<Item> {
        match received {
            Received::Frame(frame) => {
                let decoded = self.session.decode(&frame);
                let Decoded::Event(event) = decoded else {
                    self.transcript.record_received(&Received::Frame(frame), at);
                    return self.decoded(decoded, None);
                };
                let event = Arc::new(event);
                match &frame {
                    Frame::Text(text) if self.session.decodes_verbatim() => self
                        .transcript
                        .record_received_parsed(text, &event, None, at),
                    // A binary frame the protocol decodes to an event (AG-UI's protobuf) is
                    // kept, and judged, as that event.
                    Frame::Binary(bytes) => {
                        self.transcript
                            .record_received_decoded(bytes.len(), &event, at)
                    }
                    _ => self.transcript.record_received(&Received::Frame(frame), at),
                }
                Some(self.event(event, None))
            }
            // SSE data is parsed once: the transcript keeps the tree, and the steps share it
            // unless the session reads the event otherwise than as sent.
            Received::SseEvent { data, meta } => match serde_json::from_str::<Value>(&data) {
                Ok(event) => {
                    let event = Arc::new(event);
                    self.transcript
                        .record_received_parsed(&data, &event, Some(&meta), at);
                    match self.session.decode_shared(&data, &event) {
                        None => Some(self.event(event, Some(meta))),
                        Some(decoded) => self.decoded(decoded, Some(meta)),
                    }
                }
                Err(_) => {
                    let received = Received::SseEvent { data, meta };
                    self.transcript.record_received(&received, at);
                    self.non_frame(received)
                }
            },
            // Our own measurement: kept in the record, never an arrival the steps see.
            Received::RoundTrip(took) => {
                self.transcript
                    .record_received(&Received::RoundTrip(took), at);
                self.round_trip = self.round_trip.max(took);
                self.pongs = Some(Pong {
                    count: self.pongs.map_or(1, |p| p.count + 1),
                    at: Instant::from_std(at),
                });
                None
            }
            other => {
                self.transcript.record_received(&other, at);
                self.non_frame(other)
            }
        }
    }

    /// What a decoded frame (or SSE event's data, with its fields) is to the steps; an event
    /// queues the session's automatic answer to it, if it has one.
    fn decoded(&mut self, decoded: Decoded, sse: Option<SseMeta>) -> Option<Item> {
        Some(match decoded {
            Decoded::Event(event) => self.event(Arc::new(event), sse),
            Decoded::Binary(n) => Item::Binary(n),
            Decoded::Garbage(t) => Item::Garbage(t),
            Decoded::Control => return None,
        })
    }

    /// An event to the steps, after queueing the session's automatic answer to it, if any.
    fn event(&mut self, event: Arc<Value>, sse: Option<SseMeta>) -> Item {
        if self.auto_answer && self.answers.len() < MAX_ANSWERS {
            self.answers.extend(self.session.answer(&event));
        }
        Item::Event(event, sse)
    }

    /// What a non-frame arrival means to the steps.
    fn non_frame(&mut self, received: Received) -> Option<Item> {
        let item = match received {
            Received::Frame(_) | Received::StreamOpened(_) => return None,
            Received::SseEvent { data, meta } => {
                let decoded = self.session.decode(&Frame::Text(data));
                return self.decoded(decoded, Some(meta));
            }
            Received::Http(answer) => {
                self.session.answered(&answer);
                Item::Http(answer)
            }
            Received::AnswerEnded { path, error } => Item::AnswerEnded { path, error },
            Received::Subscribed(from) => Item::Stream(from),
            // A client's POST carries one of its events (or what it sent instead of one).
            Received::Posted { path, body, .. } => match body {
                Body::Json(v) => {
                    let decoded = self.session.decode(&Frame::Text(v.to_string()));
                    return self.decoded(decoded, None);
                }
                Body::Text(text) => Item::Garbage(text),
                Body::Empty => Item::Garbage(format!("an empty POST to {path}")),
            },
            Received::Closed { code, reason } => Item::Ended(match code {
                Some(c) if reason.is_empty() => format!("close code {c}"),
                Some(c) => format!("close code {c} {reason:?}"),
                None if reason.is_empty() => "closed without a close frame".into(),
                None => reason,
            }),
            Received::Failed(e) => {
                let how = e.to_string();
                if e.is_local() {
                    self.lost = Some(how.clone());
                }
                Item::Ended(how)
            }
            // A framing anomaly is something the target sent; stderr is only for the record.
            Received::Notice(what) => Item::Garbage(what),
            Received::Stderr(_) | Received::RoundTrip(_) => return None,
        };
        if let Item::Ended(how) = &item {
            self.ended = Some(how.clone());
        }
        Some(item)
    }

    /// Keeps an arrival for later steps; past the cap the oldest is forgotten (it stays in the
    /// transcript), so a flooding target cannot grow memory without bound.
    pub(super) fn keep(&mut self, arrival: Item) {
        crate::protocol::recent::push_bounded(&mut self.pending, arrival, MAX_PENDING);
    }

    /// Moves everything already received into `pending`, without waiting (bounded, so a
    /// flood cannot hold us here).
    pub(super) fn drain(&mut self) {
        for _ in 0..MAX_DRAIN {
            let Some((received, at)) = self.conn.as_mut().and_then(Connection::try_recv) else {
                return;
            };
            if let Some(arrival) = self.arrive(received, at) {
                self.keep(arrival);
            }
        }
    }

    /// Looks through kept arrivals and then new ones, in wire order, until `judge` decides,
    /// the connection ends, or `deadline` passes (`None`). Kept arrivals always come first:
    /// whatever arrived while a step was sending (a server's greeting sent on connect, a
    /// refusal closing the socket before our first frame) is an answer like any other.
    pub(super) async fn watch<T>(
        &mut self,
        deadline: Instant,
        judge: impl FnMut(&Item, &Seen<'_>) -> Watch<T>,
    ) -> Option<T> {
        self.watch_while_owed(deadline, false, judge).await
    }

    /// [`Link::watch`], which also ends (`None`) as soon as nothing more can come
    /// ([`Seen::answered_whole`]) and nothing kept or arrived decided: a run's events that
    /// came whole without the one awaited will not bring it later.
    pub(super) async fn watch_answered<T>(
        &mut self,
        deadline: Instant,
        judge: impl FnMut(&Item, &Seen<'_>) -> Watch<T>,
    ) -> Option<T> {
        self.watch_while_owed(deadline, true, judge).await
    }

    async fn watch_while_owed<T>(
        &mut self,
        deadline: Instant,
        until_answered: bool,
        mut judge: impl FnMut(&Item, &Seen<'_>) -> Watch<T>,
    ) -> Option<T> {
        for i in 0..self.pending.len() {
            match judge(&self.pending[i], &self.seen()) {
                Watch::Take(t) => {
                    self.pending.remove(i);
                    return Some(t);
                }
                Watch::Stop(t) => return Some(t),
                Watch::Keep => {}
            }
        }
        loop {
            // A flood must not keep us past the deadline: every wait is bounded.
            if Instant::now() >= deadline || (until_answered && self.seen().answered_whole()) {
                return None;
            }
            let (received, at) = self.receive(deadline).await?;
            let Some(arrival) = self.arrive(received, at) else {
                continue;
            };
            self.send_answers(deadline).await;
            match judge(&arrival, &self.seen()) {
                Watch::Take(t) => return Some(t),
                Watch::Stop(t) => {
                    self.keep(arrival);
                    return Some(t);
                }
                Watch::Keep => self.keep(arrival),
            }
        }
    }

    /// The connection's next observation, lending the run's slot while it waits: `None` once
    /// `deadline` passes, the connection has ended, or there is none.
    async fn receive(&mut self, deadline: Instant) -> Option<(Received, std::time::Instant)> {
        let conn = self.conn.as_mut()?;
        match &mut self.slot {
            Some(slot) => slot.recv(conn, deadline).await,
            None => conn.recv(deadline).await,
        }
    }

    /// Asks the target for a pong where the transport can (a WebSocket), and waits for it until
    /// `bound`, keeping what arrives meanwhile for the steps after: when it came, everything
    /// the target sent before it read the ping having come before it. `None` when the
    /// transport cannot ask, the connection ended, or the pong did not come in time (then the
    /// case asks no more).
    pub(super) async fn pong(&mut self, bound: Instant) -> Option<Instant> {
        if self.unanswered_ping || self.ended.is_some() {
            return None;
        }
        if !self.conn.as_mut().is_some_and(Connection::ping) {
            return None;
        }
        let asked = self.pongs.map_or(0, |p| p.count);
        loop {
            match self.pongs {
                Some(pong) if pong.count > asked => return Some(pong.at),
                _ => {}
            }
            if self.ended.is_some() {
                return None;
            }
            let Some((received, at)) = self.receive(bound).await else {
                self.unanswered_ping = Instant::now() >= bound;
                return None;
            };
            if let Some(arrival) = self.arrive(received, at) {
                self.keep(arrival);
            }
            self.send_answers(bound).await;
        }
    }

    /// Sends one frame or exchange, recording it first.
    pub(super) async fn send(
        &mut self,
        out: impl Into<Outgoing>,
        deadline: Instant,
    ) -> Result<(), Outcome> {
        self.send_parsed(out.into(), None, deadline).await
    }

    /// [`Link::send`], given the JSON a text frame of it is exactly the text of (the session's
    /// [`Session::encode_parsed`]), which the transcript keeps as it is.
    pub(super) async fn send_parsed(
        &mut self,
        out: Outgoing,
        parsed: Option<Value>,
        deadline: Instant,
    ) -> Result<(), Outcome> {
        // A target still reading a large frame while it works takes longer over it than over a
        // small one: a second more per MiB, so a slow reader is not called one that stopped (a
        // 4 MiB line to a process on a busy machine, seen), while one that stopped still times
        // out.
        let deadline = deadline + reading_time(out.len());
        // Take in what already arrived first, so the transcript keeps the wire's order.
        self.drain();
        self.send_answers(deadline).await;
        if self.conn.is_none() {
            return Err(Outcome::Error(
                "no connection to send on (it was refused)".into(),
            ));
        }
        match self.send_recorded(out, parsed, deadline).await {
            Ok(()) => Ok(()),
            Err(TransportError::Timeout(_)) => Err(Outcome::Error(
                "the target stopped reading: a send timed out".into(),
            )),
            // The target ending the connection is its behaviour, and the steps after this one
            // judge it: a refusal expected next holds, an expected answer fails with "the
            // connection ended". Failing the send itself would blame a target that closed on
            // purpose (a 1008 refusal racing our first frame).
            Err(TransportError::Closed) => {
                if self.ended.is_none() {
                    // The end itself (a process's exit status, say) may be just behind.
                    let soon = deadline.min(Instant::now() + std::time::Duration::from_secs(1));
                    self.watch(soon, |a, _| match a {
                        Item::Ended(_) => Watch::Stop(()),
                        _ => Watch::Keep,
                    })
                    .await;
                }
                if self.ended.is_none() {
                    let how = "the target closed the connection before this step could send";
                    self.ended = Some(how.to_owned());
                    self.keep(Item::Ended(how.to_owned()));
                }
                Ok(())
            }
            Err(other) => Err(Outcome::Error(format!("could not send: {other}"))),
        }
    }

    /// Sends the automatic answers due. A failure is not the step's: the connection's end
    /// (or a send timing out) shows in what the steps see next.
    async fn send_answers(&mut self, deadline: Instant) {
        for answer in std::mem::take(&mut self.answers) {
            let Ok(out) = self.session.encode(&answer) else {
                continue;
            };
            if self.send_recorded(out, None, deadline).await.is_err() {
                return;
            }
        }
    }

    /// Sends `out` and records it, in the order of the wire: first, on most connections; on
    /// one that says when the target was handed a frame (a host's agent relayed), once it
    /// was, after what the target wrote before that (a host writing ahead of its agent's
    /// init is recorded so, though its line reached us after the init left).
    async fn send_recorded(
        &mut self,
        out: Outgoing,
        parsed: Option<Value>,
        deadline: Instant,
    ) -> Result<(), TransportError> {
        let sent = self.transcript.sent(&out, parsed);
        let Some(conn) = self.conn.as_mut() else {
            return Err(TransportError::Closed);
        };
        if !conn.confirms_delivery() {
            self.transcript.record(sent);
            return conn.send(out, deadline).await;
        }
        let result = conn.send(out, deadline).await;
        while let Some((received, at)) = self
            .conn
            .as_mut()
            .and_then(Connection::try_recv_written_before)
        {
            if let Some(arrival) = self.arrive(received, at) {
                self.keep(arrival);
            }
        }
        self.transcript.record(sent);
        result
    }

    /// A short list of what arrived but matched nothing, for failure messages.
    pub(super) fn unmatched_summary(&self) -> String {
        let mut seen: Vec<String> = self
            .pending
            .iter()
            .rev()
            .take(8)
            .map(Item::describe)
            .collect();
        seen.reverse();
        if seen.is_empty() {
            "nothing arrived".into()
        } else {
            format!("received: {}", seen.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame the size of a case's 4 MiB line gets four seconds more to go out; an event's
    /// size, none.
    #[test]
    fn a_large_frame_gets_a_second_more_per_mib_to_go_out() {
        assert_eq!(reading_time(4 << 20), std::time::Duration::from_secs(4));
        assert_eq!(reading_time(64 * 1024), std::time::Duration::ZERO);
    }
}
