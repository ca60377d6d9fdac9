//! Transports move frames and nothing else.
//!
//! Every transport hands the runner the same [`Connection`]: a background task owns the socket
//! (or process) and talks to the runner over two channels, so the runner never needs to know
//! which transport is underneath, and protocol-level keep-alives (Engine.IO pings, say) can be
//! answered by the transport task at any moment.

pub mod accept;
pub mod body_tap;
pub mod exchange;
pub mod exchanges;
pub(crate) mod http_serve;
mod kind;
pub mod length_prefixed;
pub mod line_tap;
pub mod listen;
pub mod local_ports;
pub mod passthrough;
pub mod pipe_relay;
pub mod process;
mod query;
pub mod relay;
pub mod relayed;
pub mod socketio;
pub mod sse;
pub mod sse_server;
pub mod sse_tap;
pub mod stdio;
pub mod tap;
pub mod tls;
pub mod websocket;
pub mod ws_tap;

pub use exchange::{Body, HttpAnswer, Outgoing, SseMeta, StreamFrom};
pub use kind::TransportKind;
pub use query::{query_escape, query_param, query_unescape};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Default cap on one received frame: a hostile target cannot make us buffer more.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;
/// Cap on bytes received but not yet consumed by the runner, across all queued frames (a frame
/// larger than this still fits: it takes the whole budget).
const MAX_QUEUED_BYTES: usize = 32 * 1024 * 1024;
/// Cap on frames received but not yet consumed by the runner.
const MAX_QUEUED_FRAMES: usize = 4096;

/// One frame on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A text frame (valid UTF-8).
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
    /// A text frame with arbitrary bytes, for sending invalid UTF-8 on purpose.
    RawText(Vec<u8>),
}

impl Frame {
    pub fn len(&self) -> usize {
        match self {
            Frame::Text(t) => t.len(),
            Frame::Binary(b) | Frame::RawText(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a connection observed.
#[derive(Debug)]
pub enum Received {
    Frame(Frame),
    /// An SSE event with data: the data as the target sent it, and the event's other fields.
    SseEvent {
        data: String,
        meta: SseMeta,
    },
    /// The target's answer to a POST (SSE + HTTP).
    Http(HttpAnswer),
    /// The event stream was reopened from here: everything after it is the new stream's.
    StreamOpened(StreamFrom),
    /// The body of an answer to a POST that was a stream of its own (AG-UI's) ended: cleanly
    /// (`error` is `None`), or broken (a dropped connection, a body ending mid-frame). The
    /// connection goes on: another POST may follow.
    AnswerEnded {
        path: String,
        error: Option<String>,
    },
    /// A client POSTed `body` to the route `path`: a client under test, answered `status` by
    /// wireprobe serving SSE + HTTP; or a client the proxy carries (`status` is `None`: the
    /// upstream answers, and its answer is an item of its own).
    Posted {
        path: String,
        body: Body,
        status: Option<u16>,
        /// The media type wireprobe's answer streamed in, when the answer was the run's
        /// stream (AG-UI's); `None`: a JSON answer, or the upstream's.
        answered_as: Option<String>,
        /// The request headers the binding reads (an `Accept`), when they were kept.
        headers: Vec<(String, String)>,
    },
    /// A client under test opened the event stream, from here (wireprobe serving SSE + HTTP).
    Subscribed(StreamFrom),
    /// The target closed the connection (`code` is `None` when it dropped without a close frame).
    Closed {
        code: Option<u16>,
        reason: String,
    },
    /// The connection failed: an oversized or malformed frame, an I/O error.
    Failed(TransportError),
    /// Something worth recording that does not end the connection (a stdio target's blank
    /// line, over-long line or CRLF ending).
    Notice(String),
    /// A line the target wrote to stderr.
    Stderr(String),
    /// Our own measurement, not the target's data: a ping [`Connection::ping`] asked for was
    /// answered this long after it went out (a WebSocket pong carrying the ping's random
    /// payload, which only an answer to it can). Everything the target sent before it read
    /// the ping arrived before this.
    RoundTrip(std::time::Duration),
}

impl Received {
    /// Bytes of what the target sent (0 for what was only observed).
    pub fn len(&self) -> usize {
        match self {
            Received::Frame(f) => f.len(),
            Received::SseEvent { data, .. } => data.len(),
            Received::Http(answer) => answer.body.len(),
            Received::Posted { body, .. } => body.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when nothing can follow: the connection closed or failed.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Received::Closed { .. } | Received::Failed(_))
    }
}

/// Why a transport operation failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TransportError {
    #[error("cannot reach {target}: {reason}")]
    Unreachable { target: String, reason: String },
    #[error("the target refused the connection with HTTP {status}")]
    Rejected { status: u16 },
    #[error("received a frame of {size} bytes, over the {limit}-byte limit")]
    FrameTooLarge { size: usize, limit: usize },
    #[error("the connection is closed")]
    Closed,
    #[error("timed out after {0} ms")]
    Timeout(u64),
    #[error("invalid target {target:?}: {reason}")]
    BadTarget { target: String, reason: String },
    /// This machine had no port to connect from: nothing the target did (see `local_ports`).
    #[error("cannot connect to {target}: {reason}")]
    NoLocalPort { target: String, reason: String },
    #[error("{0}")]
    Protocol(String),
}

impl TransportError {
    /// True when the target could not be reached at all (no listener, no route, no DNS).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            TransportError::Unreachable { .. } | TransportError::BadTarget { .. }
        )
    }

    /// True when the failure was this machine's own (no local port to connect from): nothing
    /// the target did, so never recorded or judged as the target's.
    pub fn is_local(&self) -> bool {
        matches!(self, TransportError::NoLocalPort { .. })
    }
}

/// What the runner asks the transport task to do.
#[derive(Debug)]
pub(crate) enum Command {
    Send(Outgoing, oneshot::Sender<Result<(), TransportError>>),
    /// Ask the target for a pong now, behind the frames already sent (a transport that can:
    /// see [`Connection::pinging`]).
    Ping,
    /// Close: normally, or with the close status and reason given (a WebSocket refusing what
    /// its peer sent; transports without close statuses close as usual).
    Close(Option<(u16, String)>),
}

/// A received item plus its share of the byte budget, released when the runner consumes it.
struct Queued {
    received: Received,
    /// When the transport took it off the wire (the runner may read it much later).
    at: std::time::Instant,
    /// The last item of the answer to one of our exchanges (see [`Connection::answers_owed`]).
    closes_answer: bool,
    /// On a connection that confirms delivery: how many of the runner's sends had reached
    /// the target when the target wrote this (see [`Connection::confirming_delivery`]).
    after_sends: u64,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The transport task's end of a connection: where it pushes what it observes (a transport
/// with several readers, SSE's stream and its POST answers, clones it).
#[derive(Clone)]
pub(crate) struct Inbox {
    tx: mpsc::Sender<Queued>,
    budget: Arc<Semaphore>,
}

impl Inbox {
    /// Queues an observation, waiting while the runner is behind (bounded memory).
    /// Returns false once the runner has dropped the connection.
    pub(crate) async fn push(&self, received: Received) -> bool {
        self.push_marked(received, false, 0).await
    }

    /// [`Inbox::push`] on a connection that confirms delivery, of what the target wrote once
    /// `after_sends` of the runner's sends had reached it.
    pub(crate) async fn push_after(&self, received: Received, after_sends: u64) -> bool {
        self.push_marked(received, false, after_sends).await
    }

    /// [`Inbox::push`] for the last item of the answer to one of the runner's sends, on a
    /// connection [`Connection::counting_answers`]: nothing more of that answer follows.
    pub(crate) async fn push_closing(&self, received: Received) -> bool {
        self.push_marked(received, true, 0).await
    }

    async fn push_marked(&self, received: Received, closes_answer: bool, after_sends: u64) -> bool {
        let at = std::time::Instant::now();
        let size = received.len().min(MAX_QUEUED_BYTES);
        let permit = if size > 0 {
            match self.budget.clone().acquire_many_owned(size as u32).await {
                Ok(p) => Some(p),
                Err(_) => return false,
            }
        } else {
            None
        };
        self.tx
            .send(Queued {
                received,
                at,
                closes_answer,
                after_sends,
                _permit: permit,
            })
            .await
            .is_ok()
    }
}

/// The outcome of a write the transport task reports back.
type WriteDone = oneshot::Receiver<Result<(), TransportError>>;

/// A live connection to a target, whatever the transport.
pub struct Connection {
    commands: mpsc::Sender<Command>,
    incoming: mpsc::Receiver<Queued>,
    task: JoinHandle<()>,
    finished: bool,
    /// Whether a send returns once the transport has the frame (it writes them in order, and
    /// several queued behind each other in one go) rather than once it is written.
    pipelined: bool,
    /// The last pipelined write, until its outcome is known: a failure fails the next send.
    unconfirmed: Option<WriteDone>,
    /// For a transport whose every send is an exchange answered on its own (a POST): how many
    /// answers to sends made are not yet received whole. Counted here, on the runner's side,
    /// as sends go and as their answers' last items are taken in, so it is never ahead of
    /// what the runner has received.
    answers_owed: Option<usize>,
    /// How long the transport's opening exchange took (see [`Connection::round_trip`]).
    round_trip: Option<std::time::Duration>,
    /// The transport answers [`Command::Ping`] (see [`Connection::ping`]).
    pings: bool,
    /// On a connection whose sends return once the target has been handed the frame (see
    /// [`Connection::confirming_delivery`]): how many sends returned so; `None` elsewhere.
    delivered: Option<u64>,
    /// An item taken off the channel to look at, not yet handed out (boxed: most connections
    /// never hold one, and a connection is moved around).
    held: Option<Box<Queued>>,
}

impl Connection {
    /// Creates the channel pair; the transport spawns `task` with the returned ends.
    pub(crate) fn channels() -> (Inbox, mpsc::Receiver<Command>, ConnectionParts) {
        let (in_tx, in_rx) = mpsc::channel(MAX_QUEUED_FRAMES);
        let (cmd_tx, cmd_rx) = mpsc::channel(64);
        let inbox = Inbox {
            tx: in_tx,
            budget: Arc::new(Semaphore::new(MAX_QUEUED_BYTES)),
        };
        (
            inbox,
            cmd_rx,
            ConnectionParts {
                commands: cmd_tx,
                incoming: in_rx,
            },
        )
    }

    pub(crate) fn from_parts(parts: ConnectionParts, task: JoinHandle<()>) -> Self {
        Connection {
            commands: parts.commands,
            incoming: parts.incoming,
            task,
            finished: false,
            pipelined: false,
            unconfirmed: None,
            answers_owed: None,
            round_trip: None,
            pings: false,
            delivered: None,
            held: None,
        }
    }

    /// This connection's sends return once the target has been handed the frame (a relay
    /// says when it wrote it to the host), and its transport pushes what the target wrote
    /// with [`Inbox::push_after`]: what the target wrote before a frame reached it can then be
    /// told from what it wrote after ([`Connection::try_recv_written_before`]), though both
    /// arrive after the send began.
    pub(crate) fn confirming_delivery(mut self) -> Self {
        self.delivered = Some(0);
        self
    }

    /// This connection's sends return once the target was handed the frame
    /// ([`Connection::confirming_delivery`]).
    pub fn confirms_delivery(&self) -> bool {
        self.delivered.is_some()
    }

    /// The next item received, when the target wrote it before the last send that returned
    /// reached it (only a connection [`Connection::confirming_delivery`] knows): it came after
    /// that send, but is the earlier of the two on the wire.
    pub fn try_recv_written_before(&mut self) -> Option<(Received, std::time::Instant)> {
        let delivered = self.delivered.filter(|_| !self.finished)?;
        if self.held.is_none() {
            self.held = self.incoming.try_recv().ok().map(Box::new);
        }
        let head = self.held.take_if(|q| q.after_sends < delivered)?;
        Some(self.took(*head))
    }

    /// This connection's transport can ask the target for a pong ([`Connection::ping`]).
    pub(crate) fn pinging(mut self) -> Self {
        self.pings = true;
        self
    }

    /// Asks the target to answer a ping now, behind what was already sent: its answer arrives
    /// as [`Received::RoundTrip`], after everything the target sent before reading the ping.
    /// False when this transport cannot ask (SSE + HTTP, a process) or the ask could not be
    /// queued; a target that never answers is the caller's to bound.
    pub fn ping(&mut self) -> bool {
        self.pings && !self.finished && self.commands.try_send(Command::Ping).is_ok()
    }

    /// This connection's opening exchange (a request the target answered) took `took`.
    pub(crate) fn opened_in(mut self, took: std::time::Duration) -> Self {
        self.round_trip = Some(took);
        self
    }

    /// How long the one request this connection's opening made took to be answered (the
    /// WebSocket upgrade, timed once TCP and TLS are up), or for SSE + HTTP, to open the event
    /// stream (its GET, with the TCP and TLS setup before it: two or more round trips over a
    /// real network) or, for a binding without a standing stream, to connect over TCP: about
    /// a round trip to the target, its time to answer included. `None` for a
    /// connection that made none (a process, a client that connected to us).
    pub fn round_trip(&self) -> Option<std::time::Duration> {
        self.round_trip
    }

    /// This connection's sends are exchanges, each answered on its own, whose answer's last
    /// item its transport pushes with [`Inbox::push_closing`].
    pub(crate) fn counting_answers(mut self) -> Self {
        self.answers_owed = Some(0);
        self
    }

    /// How many answers to the exchanges sent are still to be received whole (`None`: this
    /// transport's sends are not exchanges). A protocol whose target owes an input nothing
    /// beyond that answer (AG-UI's run streams in its POST's answer) is settled at 0.
    pub fn answers_owed(&self) -> Option<usize> {
        self.answers_owed
    }

    /// Takes in `q`: the connection ends with a terminal item, and an answer with its last.
    fn took(&mut self, q: Queued) -> (Received, std::time::Instant) {
        if q.received.is_terminal() {
            self.finished = true;
        }
        if let (true, Some(owed)) = (q.closes_answer, self.answers_owed.as_mut()) {
            *owed = owed.saturating_sub(1);
        }
        (q.received, q.at)
    }

    /// This connection's sends return once its transport has the frame, for a transport that
    /// writes frames in the order given, fails every write after one that failed, and writes
    /// the frames queued behind each other together: a run's consecutive sends then cost one
    /// write, not one each (and no round trip to the transport task apiece).
    pub(crate) fn pipelined(mut self) -> Self {
        self.pipelined = true;
        self
    }

    /// Sends one frame (or, over SSE + HTTP, makes one exchange), giving up at `deadline` (a
    /// target that stops reading cannot hang us). Over a pipelined transport it returns once
    /// the frame is queued (at most a channel's worth, so a target that stops reading still
    /// times a send out), and a write that failed fails the send after it, whose frame could
    /// not go either; what the target did meanwhile (closed, say) arrives as an observation.
    pub async fn send(
        &mut self,
        out: impl Into<Outgoing>,
        deadline: Instant,
    ) -> Result<(), TransportError> {
        if let Some(mut earlier) = self.unconfirmed.take() {
            match earlier.try_recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(oneshot::error::TryRecvError::Closed) => return Err(TransportError::Closed),
                // Frames go in order: this one's outcome will tell the earlier one's too.
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
        }
        let (done_tx, done_rx) = oneshot::channel();
        let mut out = out.into();
        // Reopening a stream is no exchange: no answer of its own comes.
        let exchange = !matches!(out, Outgoing::Stream(_) | Outgoing::StreamLines(_));
        let pipelined = self.pipelined && !self.confirms_delivery();
        if pipelined {
            // Its writes only take frames: anything else is refused now, not at the next send.
            out = Outgoing::Frame(frame_only(out)?);
        }
        let work = async {
            self.commands
                .send(Command::Send(out, done_tx))
                .await
                .map_err(|_| TransportError::Closed)?;
            if pipelined {
                return Ok(Some(done_rx));
            }
            done_rx
                .await
                .map_err(|_| TransportError::Closed)?
                .map(|()| None)
        };
        match tokio::time::timeout_at(deadline, work).await {
            Ok(Ok(unconfirmed)) => {
                self.unconfirmed = unconfirmed;
                if let Some(delivered) = self.delivered.as_mut() {
                    *delivered += 1;
                }
                if let (true, Some(owed)) = (exchange, self.answers_owed.as_mut()) {
                    *owed += 1;
                }
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(TransportError::Timeout(0)),
        }
    }

    /// The next observation and when it came off the wire, or `None` when `deadline` passes
    /// first or the connection has already ended.
    pub async fn recv(&mut self, deadline: Instant) -> Option<(Received, std::time::Instant)> {
        if self.finished {
            return None;
        }
        if let Some(q) = self.held.take() {
            return Some(self.took(*q));
        }
        match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
            Ok(Some(q)) => Some(self.took(q)),
            Ok(None) => {
                self.finished = true;
                let ended = Received::Closed {
                    code: None,
                    reason: "connection ended".into(),
                };
                Some((ended, std::time::Instant::now()))
            }
            Err(_) => None,
        }
    }

    /// An observation that is already waiting, without blocking.
    pub fn try_recv(&mut self) -> Option<(Received, std::time::Instant)> {
        if self.finished {
            return None;
        }
        let q = match self.held.take() {
            Some(q) => *q,
            None => self.incoming.try_recv().ok()?,
        };
        Some(self.took(q))
    }

    /// True once the connection has closed or failed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Closes politely (after the frames already handed over), waiting briefly for the
    /// transport to finish.
    pub async fn close(self) {
        self.close_as(None).await
    }

    /// Closes with a close status and reason of ours (a WebSocket refusing a frame its peer
    /// sent: 1007 for an invalid payload), after the frames already handed over.
    pub async fn close_with(self, code: u16, reason: &str) {
        self.close_as(Some((code, reason.to_owned()))).await
    }

    async fn close_as(mut self, how: Option<(u16, String)>) {
        let brief = Duration::from_millis(500);
        let _ = tokio::time::timeout(brief, self.commands.send(Command::Close(how))).await;
        let _ = tokio::time::timeout(brief, &mut self.task).await;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Frames handed to a pipelined transport but not yet written still go out (a second at
        // most) before its task stops: a connection dropped on purpose (as a network failure
        // would drop it) drops after what the steps before sent, as when a send awaited its
        // write.
        let pending = self.unconfirmed.take().filter(oneshot::Receiver::is_empty);
        if let (Some(last), Ok(runtime)) = (pending, tokio::runtime::Handle::try_current()) {
            let task = self.task.abort_handle();
            runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(1), last).await;
                task.abort();
            });
            return;
        }
        self.task.abort();
    }
}

/// The next thing a connection that may not exist observed: pending forever while there is
/// none or it has finished, for a `select!` over a connection a session may not have opened.
pub(crate) async fn next_of(
    conn: Option<&mut Connection>,
) -> Option<(Received, std::time::Instant)> {
    match conn {
        Some(c) if !c.is_finished() => c.recv(Instant::now() + Duration::from_secs(3600)).await,
        _ => std::future::pending().await,
    }
}

/// The frame of `out`, or the error a transport that only moves frames gives for an HTTP
/// exchange.
pub(crate) fn frame_only(out: Outgoing) -> Result<Frame, TransportError> {
    match out {
        Outgoing::Frame(frame) => Ok(frame),
        Outgoing::Post { .. } | Outgoing::Stream(_) | Outgoing::StreamLines(_) => {
            Err(TransportError::Protocol(
                "a POST, a stream reopen or raw stream lines need the SSE + HTTP transport".into(),
            ))
        }
    }
}

/// The runner-side halves of a connection's channels.
pub(crate) struct ConnectionParts {
    commands: mpsc::Sender<Command>,
    incoming: mpsc::Receiver<Queued>,
}
