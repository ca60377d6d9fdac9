//! The server side of the SSE + HTTP binding, for judging a client: wireprobe serves the event
//! stream, the routes a client POSTs to, and a WebSocket, and the runner gets one
//! [`Connection`] per client session, whichever of them the client uses.
//!
//! A session starts with the client's first request. What the runner sends goes out as SSE
//! events numbered 1, 2, 3… in `id:` (or as text frames over a WebSocket the client opened);
//! every event is kept (bounded), so a client that reopens the stream with `Last-Event-ID: N`
//! or `?after=N` gets what it missed after N, as the hosted framework does. Sending a drop
//! ([`Outgoing::Stream`] with `None`) ends the open stream, to see how the client resumes.
//! The stream carries `retry:` and a comment heartbeat of its own.
//!
//! What the client does reaches the runner typed: [`Received::Subscribed`] when it opens the
//! stream (from where), [`Received::Posted`] for each POST with the status it was answered,
//! frames as frames. How a POST is answered is the protocol's to say ([`Responder`]): the
//! transport knows no event type.

use super::http_serve::{self, Arrivals};
use super::websocket::{self, Opened};
use super::TransportError;
use super::{next_of, Body, Command, Connection, Frame, Inbox, Outgoing, Received, StreamFrom};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// New sessions waiting for the runner to take them; past this, a request gets 503.
const MAX_WAITING_SESSIONS: usize = 4;
/// Chunks written to one stream but not yet read by the client.
const STREAM_BUFFER: usize = 64;
/// Bytes of sent events kept for a client that resumes, whatever `history` allows.
const MAX_HISTORY_BYTES: usize = 32 * 1024 * 1024;
/// Budget for one relayed send over the client's WebSocket.
const SEND_BUDGET: Duration = Duration::from_secs(30);

/// How POSTs are answered: the protocol's knowledge, handed to a transport that has none.
pub trait Responder: Send + Sync {
    /// Notes an event the server sent (a request id a later response may name).
    fn sent(&self, text: &str);
    /// The status a POST of `body` to `route` is answered with.
    fn status(&self, route: &str, body: &[u8]) -> u16;
    /// A text frame the client sent over its WebSocket that the binding refuses: the close
    /// status it closes the socket with, and why. `None` (the default): taken.
    fn refuses_frame(&self, text: &str) -> Option<(u16, String)> {
        let _ = text;
        None
    }
    /// An event's text as one frame's payload of an answer in the framed media type `media`
    /// (AG-UI's protobuf); `None` (the default) when the binding has no such encoding or the
    /// event has none in it.
    fn framed(&self, media: &str, text: &str) -> Option<Vec<u8>> {
        let _ = (media, text);
        None
    }
}

/// What a WebSocket served for `responder`'s binding refuses: the frames it says it closes on.
pub fn refusal_of(responder: Arc<dyn Responder>) -> websocket::Refusal {
    Arc::new(move |text: &str| responder.refuses_frame(text))
}

/// How the site behaves.
#[derive(Clone)]
pub struct SiteOptions {
    /// The event stream's route (`/events/live`); any prefix before it is accepted.
    pub stream_route: String,
    /// The WebSocket's route (`/ws`).
    pub ws_route: String,
    /// The routes a client POSTs to (`/inputs`, `/responses`, …).
    pub post_routes: Vec<String>,
    /// The binding keeps no standing stream: each POST's answer is the event stream (AG-UI's
    /// run), a fresh one that replays nothing, and a new POST ends the one before.
    pub posts_answer_with_stream: bool,
    /// Media types of length-prefixed binary frames an answer is given in when the POST's
    /// `Accept` admits one (the responder encodes each event: [`Responder::framed`]); empty:
    /// every answer is an event stream.
    pub framed_answers: Vec<String>,
    /// Largest POST body or frame accepted.
    pub max_frame: usize,
    /// Events kept for a client that resumes.
    pub history: usize,
    /// How often the stream carries a comment heartbeat.
    pub heartbeat: Duration,
    /// The reconnection delay the stream asks for (`retry:`).
    pub retry_ms: u64,
    pub responder: Arc<dyn Responder>,
}

/// What an HTTP request hands a session's task.
enum ToSession {
    /// The client opened the event stream from `from`: the body's sender.
    Subscribe(StreamFrom, mpsc::Sender<Bytes>),
    /// The client opened a WebSocket.
    Upgrade(Connection),
    /// The client POSTed where the answer is the stream: the answer body's sender, the framed
    /// media type it is given in (`None`: an event stream), and the POST to pass on once the
    /// stream is the one events go to.
    Answer(mpsc::Sender<Bytes>, Option<String>, Received),
}

/// State every HTTP connection of one site shares.
struct Shared {
    opts: SiteOptions,
    /// The session requests belong to, while it lives.
    current: SyncMutex<Option<SessionHandle>>,
    arrivals: mpsc::Sender<(Connection, Opened)>,
}

#[derive(Clone)]
struct SessionHandle {
    inbox: Inbox,
    to_task: mpsc::Sender<ToSession>,
}

/// An SSE + HTTP site: feed it the TCP connections that arrive ([`SseServer::serve_tcp`]),
/// take each client session with [`SseServer::accept`].
pub struct SseServer {
    shared: Arc<Shared>,
    arrivals: Arrivals,
}

impl SseServer {
    pub fn new(opts: SiteOptions) -> Self {
        let (tx, arrivals) = Arrivals::new(MAX_WAITING_SESSIONS);
        SseServer {
            shared: Arc::new(Shared {
                opts,
                current: SyncMutex::new(None),
                arrivals: tx,
            }),
            arrivals,
        }
    }

    /// Serves the HTTP requests of one TCP connection (in a task of its own).
    pub fn serve_tcp(&self, tcp: TcpStream) {
        let shared = self.shared.clone();
        http_serve::serve_tcp(tcp, move |peer, req| route(shared.clone(), peer, req));
    }

    /// The next client session, within `timeout`.
    pub async fn accept(&self, timeout: Duration) -> Result<(Connection, Opened), TransportError> {
        self.arrivals.accept(timeout).await
    }
}

type ResponseBody = BoxBody<Bytes, Infallible>;

fn answer(status: StatusCode, body: &str) -> Response<ResponseBody> {
    let mut resp = Response::new(Full::new(Bytes::from(body.to_owned())).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// Which of the site's routes `path` names (any prefix before it is the deployment's).
pub(super) fn route_of<'a>(
    path: &str,
    routes: impl IntoIterator<Item = &'a String>,
) -> Option<&'a str> {
    routes
        .into_iter()
        .find(|r| path.ends_with(r.as_str()))
        .map(String::as_str)
}

/// Where a stream request resumes: `?after=N` first, then `Last-Event-ID`.
pub(super) fn stream_from<B>(req: &Request<B>) -> StreamFrom {
    let after = req
        .uri()
        .query()
        .and_then(|q| super::query_param(q, "after"))
        .map(str::to_owned);
    let last = req
        .headers()
        .get("last-event-id")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    match (after, last) {
        (Some(n), _) => StreamFrom::After(n),
        (None, Some(n)) => StreamFrom::LastEventId(n),
        (None, None) => StreamFrom::Live,
    }
}

async fn route(
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    mut req: Request<Incoming>,
) -> Response<ResponseBody> {
    let path = req.uri().path().to_owned();
    let Some(session) = session_for(&shared, peer, &req) else {
        return answer(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"busy"}"#);
    };
    let opts = &shared.opts;
    if req.method() == Method::GET && path.ends_with(opts.ws_route.as_str()) {
        let refusal = refusal_of(opts.responder.clone());
        let upgraded = websocket::answer_upgrade(&mut req, peer, opts.max_frame, Some(refusal), {
            move |conn, _| async move {
                let _ = session.to_task.send(ToSession::Upgrade(conn)).await;
            }
        });
        let Some(resp) = upgraded else {
            return answer(
                StatusCode::BAD_REQUEST,
                r#"{"error":"not a WebSocket upgrade"}"#,
            );
        };
        return resp;
    }
    if req.method() == Method::GET && path.ends_with(opts.stream_route.as_str()) {
        let (tx, rx) = mpsc::channel::<Bytes>(STREAM_BUFFER);
        let from = stream_from(&req);
        if session
            .to_task
            .send(ToSession::Subscribe(from, tx))
            .await
            .is_err()
        {
            return answer(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"ended"}"#);
        }
        return event_stream(rx);
    }
    if req.method() == Method::POST {
        if let Some(route) = route_of(&path, &opts.post_routes) {
            let route = route.to_owned();
            return match opts.posts_answer_with_stream {
                true => answered_with_stream(opts, &session, route, req).await,
                false => posted(opts, &session, route, req).await,
            };
        }
    }
    let what = format!(
        "{} {path}, which is not a route of the binding: answered 404",
        req.method()
    );
    session.inbox.push(Received::Notice(what)).await;
    answer(StatusCode::NOT_FOUND, r#"{"error":"no such route"}"#)
}

/// A POST's body, at most the largest frame; a larger one (or one cut short) is answered 413
/// and the runner told.
async fn read_posted(
    opts: &SiteOptions,
    session: &SessionHandle,
    route: &str,
    req: Request<Incoming>,
) -> Result<Bytes, Response<ResponseBody>> {
    let limit = opts.max_frame;
    match Limited::new(req.into_body(), limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => {
            let what = format!("a POST to {route} over {limit} bytes (or cut short): answered 413");
            session.inbox.push(Received::Notice(what)).await;
            Err(answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                r#"{"error":"too large"}"#,
            ))
        }
    }
}

/// A POST: its body read (bounded), answered as the responder says, handed to the runner.
async fn posted(
    opts: &SiteOptions,
    session: &SessionHandle,
    route: String,
    req: Request<Incoming>,
) -> Response<ResponseBody> {
    let bytes = match read_posted(opts, session, &route, req).await {
        Ok(bytes) => bytes,
        Err(too_large) => return too_large,
    };
    let status = opts.responder.status(&route, &bytes);
    let body = Body::of_bytes(&bytes);
    session
        .inbox
        .push(Received::Posted {
            path: route,
            body,
            status: Some(status),
            answered_as: None,
            headers: Vec::new(),
        })
        .await;
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let text = if status.is_success() {
        r#"{"accepted":true}"#
    } else {
        r#"{"error":"refused"}"#
    };
    answer(status, text)
}

/// A POST whose answer is the event stream: its body read (bounded) and handed to the runner
/// with its headers once the stream it opens is where events go, so none sent in answer to it
/// is lost.
async fn answered_with_stream(
    opts: &SiteOptions,
    session: &SessionHandle,
    route: String,
    req: Request<Incoming>,
) -> Response<ResponseBody> {
    // Only what the binding judges is kept (a credential or a cookie stays out of reports).
    let headers = super::exchanges::judged_headers(req.headers());
    let accept = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("accept"))
        .map_or("", |(_, value)| value.as_str());
    let framing = opts
        .framed_answers
        .iter()
        .find(|media| super::accept::admits(accept, media))
        .cloned();
    let bytes = match read_posted(opts, session, &route, req).await {
        Ok(bytes) => bytes,
        Err(too_large) => return too_large,
    };
    let posted = Received::Posted {
        path: route,
        body: Body::of_bytes(&bytes),
        status: Some(200),
        answered_as: Some(
            framing
                .clone()
                .unwrap_or_else(|| "text/event-stream".to_owned()),
        ),
        headers,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(STREAM_BUFFER);
    let media = framing.clone();
    if session
        .to_task
        .send(ToSession::Answer(tx, framing, posted))
        .await
        .is_err()
    {
        return answer(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"ended"}"#);
    }
    streamed(rx, media.as_deref().unwrap_or("text/event-stream"))
}

/// A `200` whose body is what arrives on `rx`, as an event stream.
fn event_stream(rx: mpsc::Receiver<Bytes>) -> Response<ResponseBody> {
    streamed(rx, "text/event-stream")
}

/// A `200` of `media` whose body is what arrives on `rx`.
fn streamed(mut rx: mpsc::Receiver<Bytes>, media: &str) -> Response<ResponseBody> {
    let chunks = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|c| c.map(|b| Ok::<_, Infallible>(hyper::body::Frame::data(b))))
    });
    let mut resp = Response::new(StreamBody::new(chunks).boxed());
    let headers = resp.headers_mut();
    let media = hyper::header::HeaderValue::from_str(media)
        .unwrap_or(hyper::header::HeaderValue::from_static("text/event-stream"));
    headers.insert(hyper::header::CONTENT_TYPE, media);
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    resp
}

/// The live session, or a new one announced to the runner (`None` when too many wait).
fn session_for<B>(
    shared: &Arc<Shared>,
    peer: Option<SocketAddr>,
    req: &Request<B>,
) -> Option<SessionHandle> {
    let mut current = shared.current.lock().ok()?;
    if let Some(live) = current.as_ref().filter(|s| !s.to_task.is_closed()) {
        return Some(live.clone());
    }
    let (inbox, commands, parts) = Connection::channels();
    let (to_task, from_http) = mpsc::channel(8);
    let state = SessionTask {
        opts: shared.opts.clone(),
        inbox: inbox.clone(),
        history: VecDeque::new(),
        history_bytes: 0,
        next_id: 1,
        attached: false,
        stream: None,
        framing: None,
        ws: None,
    };
    let task = tokio::spawn(state.run(commands, from_http));
    let conn = Connection::from_parts(parts, task);
    shared
        .arrivals
        .try_send((conn, Opened::of(peer, req)))
        .ok()?;
    let handle = SessionHandle { inbox, to_task };
    *current = Some(handle.clone());
    Some(handle)
}

/// One client session: what was sent (for resumes), and where events go now.
struct SessionTask {
    opts: SiteOptions,
    inbox: Inbox,
    /// What was sent, by id (text only: a binary frame cannot go on the stream).
    history: VecDeque<(u64, Frame)>,
    history_bytes: usize,
    next_id: u64,
    /// The client has opened the stream or a WebSocket before: what was sent before that
    /// first opening is delivered by it, not lost.
    attached: bool,
    /// The open event stream's body.
    stream: Option<mpsc::Sender<Bytes>>,
    /// The framed media type the open answer is given in (`None`: an event stream).
    framing: Option<String>,
    /// The client's WebSocket, when it opened one.
    ws: Option<Connection>,
}

impl SessionTask {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut from_http: mpsc::Receiver<ToSession>,
    ) {
        let mut beat = tokio::time::interval(self.opts.heartbeat);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                command = commands.recv() => match command {
                    Some(Command::Send(out, done)) => {
                        let result = self.send(out).await;
                        let _ = done.send(result);
                    }
                    // Not a pinging connection: never asked.
                    Some(Command::Ping) => {}
                    Some(Command::Close(_)) | None => break,
                },
                Some(http) = from_http.recv() => match http {
                    ToSession::Subscribe(from, tx) => self.subscribe(from, tx).await,
                    ToSession::Upgrade(conn) => self.upgraded(conn).await,
                    ToSession::Answer(tx, framing, posted) => {
                        // The answer before ends here (its sender dropped): a run per POST.
                        self.attached = true;
                        self.stream = Some(tx);
                        self.framing = framing;
                        if !self.inbox.push(posted).await {
                            break;
                        }
                    }
                },
                // The client ending its WebSocket ends the session, as a dialled one would:
                // a client that connects again starts the next.
                Some((received, _)) = next_of(self.ws.as_mut()) => {
                    let last = received.is_terminal();
                    if !self.inbox.push(received).await || last {
                        break;
                    }
                }
                // A run's answer carries no heartbeat: what else a stream may carry is a case's
                // to send (AG-UI keeps no standing stream to keep alive).
                _ = beat.tick(), if !self.opts.posts_answer_with_stream => {
                    if let Some(stream) = &self.stream {
                        let _ = stream.try_send(Bytes::from_static(b": heartbeat\n\n"));
                    }
                }
            }
        }
        if let Some(ws) = self.ws.take() {
            ws.close().await;
        }
    }

    /// The client opened the stream: what it missed after the id it named (everything, the
    /// first time), then live.
    async fn subscribe(&mut self, from: StreamFrom, tx: mpsc::Sender<Bytes>) {
        let mut first = format!("retry: {}\n\n", self.opts.retry_ms).into_bytes();
        let after = match from.resume_id() {
            _ if !self.attached => Some(0),
            Some(n) => n.trim().parse::<u64>().ok(),
            None => None,
        };
        self.attached = true;
        if let Some(after) = after {
            for (id, frame) in self.history.iter().filter(|(id, _)| *id > after) {
                first.extend_from_slice(&sse_event(*id, frame_text(frame)));
            }
        }
        // A replay larger than the buffer waits for the client to read it (bounded by the
        // history's size).
        let _ = tokio::time::timeout(SEND_BUDGET, tx.send(Bytes::from(first))).await;
        self.stream = Some(tx);
        self.inbox.push(Received::Subscribed(from)).await;
    }

    async fn send(&mut self, out: Outgoing) -> Result<(), TransportError> {
        let frame = match out {
            Outgoing::Frame(frame) => frame,
            Outgoing::Stream(None) => {
                self.stream = None;
                if let Some(ws) = self.ws.take() {
                    ws.close().await;
                }
                return Ok(());
            }
            Outgoing::StreamLines(_) if self.framing.is_some() => {
                return Err(TransportError::Protocol(
                    "an answer of length-prefixed frames has no lines to write".into(),
                ))
            }
            Outgoing::StreamLines(lines) => {
                let mut text = String::new();
                for line in lines {
                    text.push_str(&line);
                    text.push('\n');
                }
                return self.write(Bytes::from(text)).await;
            }
            Outgoing::Stream(Some(_)) | Outgoing::Post { .. } => {
                return Err(TransportError::Protocol(
                    "serving a client, wireprobe sends events and can drop the stream; it does not POST or reopen".into(),
                ))
            }
        };
        if let Frame::Text(text) = &frame {
            self.opts.responder.sent(text);
        }
        if let Some(ws) = self.ws.as_mut() {
            return ws.send(frame, Instant::now() + SEND_BUDGET).await;
        }
        if let Frame::Binary(_) = frame {
            return Err(TransportError::Protocol(
                "an SSE stream carries text, not a binary frame".into(),
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        // A run's answer is read once and never resumed: its events carry no `id:`.
        let event = match (&self.framing, self.opts.posts_answer_with_stream) {
            (Some(media), _) => {
                let text = String::from_utf8_lossy(frame_text(&frame));
                let Some(payload) = self.opts.responder.framed(media, &text) else {
                    return Err(TransportError::Protocol(format!(
                        "this event has no {media} encoding: {}",
                        text.chars().take(80).collect::<String>()
                    )));
                };
                Bytes::from(super::length_prefixed::encode(&payload))
            }
            (None, true) => Bytes::from(sse_data(frame_text(&frame))),
            (None, false) => Bytes::from(sse_event(id, frame_text(&frame))),
        };
        self.history_bytes += frame.len();
        self.history.push_back((id, frame));
        while self.history.len() > self.opts.history || self.history_bytes > MAX_HISTORY_BYTES {
            match self.history.pop_front() {
                Some((_, old)) => self.history_bytes -= old.len(),
                None => break,
            }
        }
        self.write(event).await
    }

    /// Writes `bytes` into the open stream. With none open, an event waits in the history for
    /// a client that resumes.
    async fn write(&mut self, bytes: Bytes) -> Result<(), TransportError> {
        if let Some(stream) = &self.stream {
            let sent = tokio::time::timeout(SEND_BUDGET, stream.send(bytes)).await;
            match sent {
                Ok(Ok(())) => {}
                // The client closed the stream: the event waits in the history.
                Ok(Err(_)) => self.stream = None,
                Err(_) => return Err(TransportError::Timeout(SEND_BUDGET.as_millis() as u64)),
            }
        }
        Ok(())
    }
}

impl SessionTask {
    /// The client opened a WebSocket: what was sent before any opening goes to it first.
    async fn upgraded(&mut self, mut conn: Connection) {
        if !self.attached {
            self.history_bytes = 0;
            for (_, frame) in std::mem::take(&mut self.history) {
                let deadline = Instant::now() + SEND_BUDGET;
                if conn.send(frame, deadline).await.is_err() {
                    break;
                }
            }
        }
        self.attached = true;
        self.ws = Some(conn);
    }
}

/// The bytes of a frame the stream carries.
fn frame_text(frame: &Frame) -> &[u8] {
    match frame {
        Frame::Text(text) => text.as_bytes(),
        Frame::RawText(bytes) | Frame::Binary(bytes) => bytes,
    }
}

/// One SSE event: `id:`, then each line of `data` as a `data:` line.
fn sse_event(id: u64, data: &[u8]) -> Vec<u8> {
    let mut out = format!("id: {id}\n").into_bytes();
    out.extend_from_slice(&sse_data(data));
    out
}

/// One SSE event of `data` alone: each of its lines a `data:` line, then the blank line.
fn sse_data(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16);
    for line in data.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

#[cfg(test)]
#[path = "sse_server_tests.rs"]
mod tests;
