//! Server-Sent Events in, HTTP POSTs out: one [`Connection`] over an event stream and the
//! routes a client posts to.
//!
//! Down: every SSE event that carries data, parsed by `sse-stream` (BOM, CR/LF/CRLF,
//! multi-line `data:`, comments, `retry:`, `id:` with NUL ignored), becomes one
//! [`Received::SseEvent`]: the data exactly as sent, with the event's `id`, `event` and `retry`
//! fields beside it (never inside the target's JSON). Every answer to a POST is a
//! [`Received::Http`], and a reopened stream is announced by [`Received::StreamOpened`] before
//! its first event.
//!
//! Up: [`Outgoing::Post`] POSTs a body to a route under the target's base URL,
//! [`Outgoing::Stream`] reopens the event stream (`?after=N`, or the `Last-Event-ID` header) or
//! drops it, and a plain frame is POSTed exactly as it is to the default route.

use super::local_ports::{self, Tried};
use super::{
    Body, Command, Connection, Frame, HttpAnswer, Inbox, Outgoing, Received, SseMeta, StreamFrom,
    TransportError,
};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// How to open an SSE + HTTP connection.
#[derive(Clone, Debug)]
pub struct SseOptions {
    /// The target's base URL (`http://host:port/prefix`); routes are appended to it.
    pub base: String,
    /// The event stream's route (`/events/live`); `None` when the binding keeps no standing
    /// stream and each POST's answer is the stream (AG-UI).
    pub stream_path: Option<String>,
    /// Where a frame that does not name its route is POSTed (`/inputs`).
    pub default_post_path: String,
    /// Extra request headers (`--header`, a bearer token).
    pub headers: Vec<(String, String)>,
    /// Longest SSE line, and largest HTTP answer body kept.
    pub max_frame: usize,
    /// Budget for a request's answer head (the stream's, a POST's).
    pub timeout: Duration,
    /// `https://`: accept any certificate (`--insecure`, for self-signed test deployments).
    pub insecure: bool,
    /// Media types whose answer bodies are 4-byte length-prefixed binary frames, read frame
    /// by frame (AG-UI's protobuf binding).
    pub framed_types: Vec<String>,
}

/// Connects: opens the event stream and returns a live [`Connection`].
///
/// No listener is [`TransportError::Unreachable`]; a 401/403 is [`TransportError::Rejected`];
/// any other status, or a 200 that is not `text/event-stream`, is a
/// [`TransportError::Protocol`] naming what came back.
pub async fn connect(opts: &SseOptions) -> Result<Connection, TransportError> {
    let base = opts.base.trim_end_matches('/').to_owned();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(TransportError::BadTarget {
            target: opts.base.clone(),
            reason: "an SSE target is an http:// URL".into(),
        });
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .use_preconfigured_tls(super::tls::client_config(opts.insecure).as_ref().clone())
        .connect_timeout(opts.timeout)
        .build()
        .map_err(|e| TransportError::Protocol(format!("cannot build an HTTP client: {e}")))?;
    let http = Http {
        client,
        base,
        opts: opts.clone(),
        urls: Default::default(),
    };
    let asked = std::time::Instant::now();
    let response = match &opts.stream_path {
        Some(_) => Some(http.open_stream(&StreamFrom::Live).await?),
        None => {
            http.reachable().await?;
            None
        }
    };
    let took = asked.elapsed();
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(run(http, response, inbox, commands));
    Ok(Connection::from_parts(parts, task)
        .counting_answers()
        .opened_in(took))
}

/// The HTTP side: one client, the base URL, the options.
struct Http {
    client: reqwest::Client,
    base: String,
    opts: SseOptions,
    /// Each path's URL, parsed once: parsing it from its string for every request was 1.6% of
    /// an HPD fuzz campaign's instructions (reqwest parses each request's URI once more for
    /// its redirect policy, which no setting turns off).
    urls: std::sync::Mutex<std::collections::HashMap<String, reqwest::Url>>,
}

/// Most paths whose URL is kept parsed (a case may post to many; past this they are parsed
/// each time).
const PARSED_URLS: usize = 64;

impl Http {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut req = match self.url(path) {
            Some(url) => self.client.request(method, url),
            // Not a URL: reqwest says why when the request is sent.
            None => self
                .client
                .request(method, format!("{}{}", self.base, path)),
        };
        for (name, value) in &self.opts.headers {
            req = req.header(name, value);
        }
        req
    }

    /// The URL of `path` under the base, as parsing their concatenation gives it.
    fn url(&self, path: &str) -> Option<reqwest::Url> {
        let mut urls = self.urls.lock().ok()?;
        if let Some(url) = urls.get(path) {
            return Some(url.clone());
        }
        let url = reqwest::Url::parse(&format!("{}{}", self.base, path)).ok()?;
        if urls.len() < PARSED_URLS {
            urls.insert(path.to_owned(), url.clone());
        }
        Some(url)
    }

    fn failure(&self, path: &str, e: reqwest::Error) -> TransportError {
        let target = format!("{}{}", self.base, path);
        // reqwest's own message is generic ("error sending request"): the cause says why.
        let mut reason = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            reason = format!("{reason}: {c}");
            cause = c.source();
        }
        if e.is_connect() {
            let lower = reason.to_ascii_lowercase();
            let reason = if lower.contains("certificate") || lower.contains("tls") {
                super::tls::describe(&reason)
            } else {
                reason
            };
            TransportError::Unreachable { target, reason }
        } else if e.is_builder() {
            TransportError::BadTarget { target, reason }
        } else if e.is_timeout() {
            TransportError::Timeout(self.opts.timeout.as_millis() as u64)
        } else {
            TransportError::Protocol(format!("{target}: {reason}"))
        }
    }

    /// Checks a listener answers at the target's host and port, without an HTTP request: a
    /// binding with no standing stream sends nothing the target would judge until a case does.
    async fn reachable(&self) -> Result<(), TransportError> {
        let unreachable = |reason: String| TransportError::Unreachable {
            target: self.base.clone(),
            reason,
        };
        let url = reqwest::Url::parse(&self.base).map_err(|e| TransportError::BadTarget {
            target: self.base.clone(),
            reason: e.to_string(),
        })?;
        let host = url.host_str().ok_or_else(|| TransportError::BadTarget {
            target: self.base.clone(),
            reason: "no host".into(),
        })?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = url.port_or_known_default().unwrap_or(80);
        let deadline = Instant::now() + self.opts.timeout;
        let opened =
            local_ports::retrying(deadline, || tokio::net::TcpStream::connect((host, port)));
        match tokio::time::timeout(self.opts.timeout, opened).await {
            Ok(Tried::Done(Ok(_))) => Ok(()),
            Ok(Tried::Done(Err(e))) => Err(unreachable(e.to_string())),
            Ok(Tried::RanOut(waited)) => Err(local_ports::error(self.base.clone(), waited)),
            Err(_) => Err(TransportError::Timeout(self.opts.timeout.as_millis() as u64)),
        }
    }

    /// Sends the request `build` makes, made again while this machine has no port free to open
    /// its connection from, until `deadline` ([`local_ports`]).
    async fn send(
        &self,
        path: &str,
        deadline: Instant,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, TransportError> {
        let mut again = true;
        loop {
            let sent = match local_ports::retrying(deadline, || build().send()).await {
                Tried::Done(sent) => sent,
                Tried::RanOut(waited) => {
                    return Err(local_ports::error(format!("{}{path}", self.base), waited))
                }
            };
            match sent {
                // A kept-alive connection the server closed as the request went out (uvicorn
                // does after answering 500) was reset before any answer: the server took
                // nothing, so the request goes once more, on a fresh connection, as browsers do.
                Err(e) if again && reset_before_answer(&e) => again = false,
                sent => return sent.map_err(|e| self.failure(path, e)),
            }
        }
    }

    /// GETs the event stream and checks it is one.
    async fn open_stream(&self, from: &StreamFrom) -> Result<reqwest::Response, TransportError> {
        let Some(stream_path) = &self.opts.stream_path else {
            return Err(TransportError::Protocol(
                "this binding has no event stream to open: each POST's answer is one".into(),
            ));
        };
        let path = match from {
            StreamFrom::After(n) => {
                format!("{stream_path}?after={}", super::query_escape(n))
            }
            _ => stream_path.clone(),
        };
        let build = || {
            let req = self
                .request(reqwest::Method::GET, &path)
                .header("accept", "text/event-stream");
            match from {
                StreamFrom::LastEventId(n) => req.header("last-event-id", n.as_str()),
                _ => req,
            }
        };
        let deadline = Instant::now() + self.opts.timeout;
        let sent = tokio::time::timeout(self.opts.timeout, self.send(&path, deadline, build)).await;
        let response = match sent {
            Err(_) => return Err(TransportError::Timeout(self.opts.timeout.as_millis() as u64)),
            Ok(r) => r?,
        };
        let status = response.status().as_u16();
        if status == 401 || status == 403 {
            return Err(TransportError::Rejected { status });
        }
        if status != 200 {
            return Err(TransportError::Protocol(format!(
                "GET {path} answered HTTP {status}, not an event stream"
            )));
        }
        let kind = content_type(&response);
        if !is_media_type(&kind, "text/event-stream") {
            return Err(TransportError::Protocol(format!(
                "GET {path} answered 200 with content-type {}, not text/event-stream",
                crate::show::quoted_or_none(Some(kind.as_str()).filter(|k| !k.is_empty()))
            )));
        }
        Ok(response)
    }

    /// POSTs `body` to `path` and reads the answer's head, then either its whole body (capped
    /// at the frame limit) or, when the body is an event stream or length-prefixed frames, a
    /// response left for a reader to follow.
    async fn post(
        &self,
        path: &str,
        body: Vec<u8>,
        headers: &[(String, String)],
    ) -> Result<(HttpAnswer, Option<(AnswerBody, reqwest::Response)>), TransportError> {
        // Shared, not copied, by a request made again (see `send`).
        let body = Bytes::from(body);
        let build = || {
            let mut req = self
                .request(reqwest::Method::POST, path)
                .header("content-type", "application/json");
            for (name, value) in headers {
                req = req.header(name, value);
            }
            req.body(body.clone())
        };
        let deadline = Instant::now() + self.opts.timeout;
        let work = async {
            let mut response = self.send(path, deadline, build).await?;
            let status = response.status().as_u16();
            let kind = content_type(&response);
            let mut answer = HttpAnswer {
                method: "POST".into(),
                path: path.to_owned(),
                status,
                content_type: kind.clone(),
                body: Body::Empty,
            };
            let streamed = if is_media_type(&kind, "text/event-stream") {
                Some(AnswerBody::Events)
            } else if self
                .opts
                .framed_types
                .iter()
                .any(|t| is_media_type(&kind, t))
            {
                Some(AnswerBody::Frames)
            } else {
                None
            };
            if let Some(streamed) = streamed {
                return Ok((answer, Some((streamed, response))));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| self.failure(path, e))? {
                let room = self.opts.max_frame.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if room <= chunk.len() {
                    break;
                }
            }
            answer.body = Body::of_bytes(&body);
            Ok::<_, TransportError>((answer, None))
        };
        match tokio::time::timeout(self.opts.timeout, work).await {
            Ok(answer) => answer,
            Err(_) => Err(TransportError::Timeout(self.opts.timeout.as_millis() as u64)),
        }
    }
}

/// How an answer's body that is a stream of its own is read.
#[derive(Clone, Copy, Debug)]
enum AnswerBody {
    /// Server-Sent Events.
    Events,
    /// 4-byte length-prefixed binary frames.
    Frames,
}

/// True when the content type `kind` names `media` (parameters such as `charset` aside).
pub(super) fn is_media_type(kind: &str, media: &str) -> bool {
    kind.split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(media))
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// The transport task: POSTs in order, while the stream reader and the readers of answers
/// that are streams run on their own.
async fn run(
    http: Http,
    response: Option<reqwest::Response>,
    inbox: Inbox,
    mut commands: tokio::sync::mpsc::Receiver<Command>,
) {
    let max = http.opts.max_frame;
    let mut reader = response.map(|r| spawn_reader(r, inbox.clone(), max));
    let mut answers = Answers::default();
    while let Some(command) = commands.recv().await {
        let (out, done) = match command {
            Command::Close(_) => break,
            Command::Send(out, done) => (out, done),
            // Not a pinging connection: never asked.
            Command::Ping => continue,
        };
        let result = match out {
            Outgoing::Frame(frame) => {
                let bytes = match frame {
                    Frame::Text(t) => t.into_bytes(),
                    Frame::Binary(b) | Frame::RawText(b) => b,
                };
                let path = http.opts.default_post_path.clone();
                post(&http, &inbox, &path, bytes, &[], &mut answers).await
            }
            Outgoing::Post {
                path,
                body,
                headers,
            } => {
                post(
                    &http,
                    &inbox,
                    &path,
                    body.to_bytes(),
                    &headers,
                    &mut answers,
                )
                .await
            }
            Outgoing::StreamLines(_) => Err(TransportError::Protocol(
                "raw stream lines are written by a stream wireprobe serves, not one it reads"
                    .into(),
            )),
            Outgoing::Stream(from) => {
                if let Some(old) = reader.take() {
                    // Abort takes effect at the old reader's next await: one preempted in the
                    // middle of queueing an event would queue it after the reopen's mark, an
                    // old id the checker would take for the new stream's (a false HPD-SSE-001
                    // under load). Waiting for it to stop keeps every old event before the mark.
                    old.abort();
                    let _ = old.await;
                }
                match from {
                    None => Ok(()),
                    Some(from) => match http.open_stream(&from).await {
                        Ok(response) => {
                            // Everything the old stream delivered is queued before this mark,
                            // so a reader of the transcript knows where the new stream starts.
                            inbox.push(Received::StreamOpened(from)).await;
                            reader = Some(spawn_reader(response, inbox.clone(), max));
                            Ok(())
                        }
                        Err(e) => Err(e),
                    },
                }
            }
        };
        let failed = result.as_ref().err().cloned();
        let _ = done.send(result);
        if let Some(e) = failed {
            inbox.push(Received::Failed(e)).await;
            break;
        }
    }
    for task in reader.into_iter().chain(answers.tasks) {
        task.abort();
    }
}

/// The answers to POSTs still being delivered. They are delivered one after another, in the
/// order the POSTs went: an answer's head, events and end are queued only once the answer
/// before it has ended, so whoever reads the connection can tell which answer an event
/// belongs to (AG-UI's runs, one stream per POST). An answer still streaming holds back the
/// ones after it, as a client reading one response at a time would.
#[derive(Default)]
struct Answers {
    tasks: Vec<JoinHandle<()>>,
    /// Fires when the last answer queued so far has been delivered whole.
    last: Option<tokio::sync::oneshot::Receiver<()>>,
}

/// True when `e` is a connection reset before any byte of an answer came, or a request hyper
/// dropped unsent: what a request meets on a pooled connection its server had just closed.
fn reset_before_answer(e: &reqwest::Error) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    if !e.is_request() || e.is_timeout() {
        return false;
    }
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(io.kind(), ConnectionReset | BrokenPipe | ConnectionAborted);
        }
        // Not an incomplete message: the server may have read that request whole.
        if let Some(h) = cause.downcast_ref::<hyper::Error>() {
            if h.is_canceled() {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

/// POSTs `body` to `path` and queues the answer after the answers before it; an answer whose
/// body is a stream is read to its end by a task of its own.
async fn post(
    http: &Http,
    inbox: &Inbox,
    path: &str,
    body: Vec<u8>,
    headers: &[(String, String)],
    answers: &mut Answers,
) -> Result<(), TransportError> {
    let (answer, streamed) = http.post(path, body, headers).await?;
    answers.tasks.retain(|t| !t.is_finished());
    let before = answers.last.take();
    if before.is_none() && streamed.is_none() {
        inbox.push_closing(Received::Http(answer)).await;
        return Ok(());
    }
    let (delivered, last) = tokio::sync::oneshot::channel();
    answers.last = Some(last);
    let inbox = inbox.clone();
    let path = path.to_owned();
    let max = http.opts.max_frame;
    answers.tasks.push(tokio::spawn(async move {
        if let Some(before) = before {
            let _ = before.await;
        }
        let head = Received::Http(answer);
        let Some((kind, response)) = streamed else {
            if inbox.push_closing(head).await {
                let _ = delivered.send(());
            }
            return;
        };
        if !inbox.push(head).await {
            return;
        }
        let error = match kind {
            AnswerBody::Events => read_answer_events(response, &inbox, max).await,
            AnswerBody::Frames => read_answer_frames(response, &inbox, max).await,
        };
        let Some(error) = error else {
            return;
        };
        inbox
            .push_closing(Received::AnswerEnded { path, error })
            .await;
        let _ = delivered.send(());
    }));
    Ok(())
}

/// Reads an answer that is an event stream to its end: `None` when the runner is gone, else
/// how it ended (`Some(None)`: its body ended cleanly).
async fn read_answer_events(
    response: reqwest::Response,
    inbox: &Inbox,
    max_line: usize,
) -> Option<Option<String>> {
    let saw_cr = CrWatch::default();
    let body = saw_cr.watching(response.bytes_stream());
    let lines = line_chunks(body, max_line);
    let mut events = Box::pin(
        sse_stream::SseStream::from_bytes_stream(lines)
            .filter_map(|item| async { captured_of(item) }),
    );
    while let Some(captured) = events.next().await {
        if saw_cr.first_time() && !inbox.push(Received::Notice(CR_LINE_ENDS.into())).await {
            return None;
        }
        let received = match captured {
            Captured::Failed(e) => return Some(Some(e.to_string())),
            other => Received::from(other),
        };
        if !inbox.push(received).await {
            return None;
        }
    }
    Some(None)
}

/// Reads an answer of length-prefixed frames to its end, each frame one binary
/// [`Received::Frame`]: `None` when the runner is gone, else how it ended.
async fn read_answer_frames(
    mut response: reqwest::Response,
    inbox: &Inbox,
    max_frame: usize,
) -> Option<Option<String>> {
    let mut splitter = super::length_prefixed::Splitter::new(max_frame);
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Some(splitter.finish().err().map(|e| e.to_string())),
            Err(e) => return Some(Some(format!("the body failed: {e}"))),
        };
        let mut frames = Vec::new();
        let split = splitter.push(&chunk, |f| frames.push(f));
        for frame in frames {
            if !inbox.push(Received::Frame(Frame::Binary(frame))).await {
                return None;
            }
        }
        if let Err(e) = split {
            return Some(Some(e.to_string()));
        }
    }
}

/// What an event stream's body delivers, parsed: events with data, dropped lines, and the
/// failure that ends it (a line over `max_line` bytes, a broken body).
pub fn events(
    response: reqwest::Response,
    max_line: usize,
) -> impl Stream<Item = Captured> + Send + 'static {
    let lines = line_chunks(response.bytes_stream(), max_line);
    sse_stream::SseStream::from_bytes_stream(lines).filter_map(|item| async { captured_of(item) })
}

/// Reads one event stream to its end, pushing an event frame per SSE event with data.
fn spawn_reader(response: reqwest::Response, inbox: Inbox, max_line: usize) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut events = Box::pin(events(response, max_line));
        while let Some(captured) = events.next().await {
            let received = Received::from(captured);
            let last = received.is_terminal();
            if !inbox.push(received).await || last {
                return;
            }
        }
        let ended = Received::Closed {
            code: None,
            reason: "the event stream ended".into(),
        };
        inbox.push(ended).await;
    })
}

/// One thing a parsed SSE stream delivers.
#[derive(Debug)]
pub enum Captured {
    /// An event with data: the data as sent, and the event's other fields.
    Event { data: String, meta: SseMeta },
    /// A line the parser dropped (the WHATWG parser ignores unknown fields too).
    Notice(String),
    /// The failure that ends the stream.
    Failed(TransportError),
}

impl From<Captured> for Received {
    fn from(captured: Captured) -> Received {
        match captured {
            Captured::Event { data, meta } => Received::SseEvent { data, meta },
            Captured::Notice(what) => Received::Notice(what),
            Captured::Failed(e) => Received::Failed(e),
        }
    }
}

/// What one item of the parsed stream is; `None` for an event with no data, which the SSE
/// spec does not dispatch.
pub(super) fn captured_of(item: Result<sse_stream::Sse, sse_stream::Error>) -> Option<Captured> {
    Some(match item {
        Ok(event) => {
            let meta = SseMeta {
                id: event.id,
                event: event.event,
                retry: event.retry,
            };
            Captured::Event {
                data: event.data?,
                meta,
            }
        }
        Err(sse_stream::Error::Body(e)) => Captured::Failed(match e.downcast_ref::<ChunkError>() {
            Some(ChunkError::LineTooLong { limit }) => TransportError::FrameTooLarge {
                size: limit + 1,
                limit: *limit,
            },
            _ => TransportError::Protocol(format!("the event stream failed: {e}")),
        }),
        Err(e) => Captured::Notice(format!("the SSE parser dropped a line: {e}")),
    })
}

/// Parses SSE text already captured (`check`): what a live stream would have delivered, in
/// order, through `each`. Reads `reader` as it goes; never holds more than a line.
pub fn read_captured<R: std::io::Read>(
    mut reader: R,
    max_line: usize,
    mut each: impl FnMut(Captured),
) {
    use futures_util::FutureExt;
    let mut chunk = vec![0u8; 64 * 1024];
    let body =
        futures_util::stream::iter(std::iter::from_fn(move || match reader.read(&mut chunk) {
            Ok(0) => None,
            Ok(n) => Some(Ok(Bytes::copy_from_slice(&chunk[..n]))),
            Err(e) => Some(Err(CapturedError(e.to_string()))),
        }));
    let saw_cr = CrWatch::default();
    let lines = line_chunks(saw_cr.watching(body), max_line);
    let mut events = Box::pin(sse_stream::SseStream::from_bytes_stream(lines));
    // Every chunk is ready at once, so the stream never waits.
    while let Some(Some(item)) = events.next().now_or_never() {
        if saw_cr.first_time() {
            each(Captured::Notice(CR_LINE_ENDS.into()));
        }
        if let Some(captured) = captured_of(item) {
            let last = matches!(captured, Captured::Failed(_));
            each(captured);
            if last {
                return;
            }
        }
    }
}

/// What a reader of an answer's stream (or of captured SSE text) notes once, before the first
/// event read after a CR went by: the stream ends its lines with CR LF or CR, not LF alone. A
/// binding that pins LF (AG-UI's) judges it; the others ignore it.
pub const CR_LINE_ENDS: &str = "the stream ends its lines with CR (CR LF or CR), not LF alone";

/// Whether a CR has passed in a byte stream, and whether that was said yet.
#[derive(Clone, Default)]
pub(super) struct CrWatch {
    seen: std::sync::Arc<std::sync::atomic::AtomicBool>,
    said: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl CrWatch {
    /// `body`, noting every CR that passes.
    pub(super) fn watching<S, E>(&self, body: S) -> impl Stream<Item = Result<Bytes, E>>
    where
        S: Stream<Item = Result<Bytes, E>>,
    {
        let seen = self.seen.clone();
        body.inspect(move |chunk| {
            if chunk.as_ref().is_ok_and(|b| b.contains(&b'\r')) {
                seen.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        })
    }

    /// True the first time it is asked after a CR passed.
    pub(super) fn first_time(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.seen.load(Relaxed) && !self.said.swap(true, Relaxed)
    }
}

/// A read error of captured SSE text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CapturedError(String);

/// Why the byte stream under the SSE parser failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum ChunkError {
    #[error("{0}")]
    Body(Box<dyn std::error::Error + Send + Sync>),
    #[error("an SSE line longer than {limit} bytes")]
    LineTooLong { limit: usize },
}

/// Re-cuts a byte stream so every chunk ends at a line end (or is the unfinished rest of a
/// line): a line the parser rejects then costs only that line, and a line that never ends is
/// an error once it passes `max_line` instead of a buffer that grows without bound.
pub(super) fn line_chunks<E: std::error::Error + Send + Sync + 'static>(
    body: impl Stream<Item = Result<Bytes, E>>,
    max_line: usize,
) -> impl Stream<Item = Result<Bytes, ChunkError>> {
    struct State<S> {
        body: std::pin::Pin<Box<S>>,
        rest: Bytes,
        line_len: usize,
        done: bool,
    }
    let state = State {
        body: Box::pin(body),
        rest: Bytes::new(),
        line_len: 0,
        done: false,
    };
    futures_util::stream::unfold(state, move |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            if !s.rest.is_empty() {
                let chunk = match s.rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                    Some(end) => {
                        s.line_len = 0;
                        s.rest.split_to(end + 1)
                    }
                    None => {
                        s.line_len += s.rest.len();
                        std::mem::take(&mut s.rest)
                    }
                };
                if s.line_len > max_line {
                    s.done = true;
                    return Some((Err(ChunkError::LineTooLong { limit: max_line }), s));
                }
                return Some((Ok(chunk), s));
            }
            match s.body.next().await {
                None => return None,
                Some(Err(e)) => {
                    s.done = true;
                    return Some((Err(ChunkError::Body(Box::new(e))), s));
                }
                Some(Ok(bytes)) => s.rest = bytes,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(event: sse_stream::Sse) -> Option<(String, SseMeta)> {
        match captured_of(Ok(event))? {
            Captured::Event { data, meta } => Some((data, meta)),
            _ => None,
        }
    }

    #[test]
    fn an_event_keeps_its_fields_beside_its_data() {
        let e = sse_stream::Sse::default()
            .data(r#"{"type":"X","$sse":{"id":"9"}}"#)
            .id("7");
        let (data, meta) = parsed(e).expect("an event");
        // The data is the target's, whatever keys it holds; the id is the stream's.
        assert_eq!(data, r#"{"type":"X","$sse":{"id":"9"}}"#);
        assert_eq!(meta.id.as_deref(), Some("7"));
        assert_eq!(parsed(sse_stream::Sse::default().id("3")), None);
    }

    #[tokio::test]
    async fn lines_are_cut_at_their_ends_and_capped() {
        let body = futures_util::stream::iter(vec![
            Ok::<_, reqwest::Error>(Bytes::from_static(b"data: a\r\ndata")),
            Ok(Bytes::from_static(b": b\n\n")),
        ]);
        let chunks: Vec<_> = line_chunks(body, 100)
            .map(|c| {
                c.map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            })
            .collect()
            .await;
        assert_eq!(chunks, ["data: a\r", "\n", "data", ": b\n", "\n"]);
        let endless = futures_util::stream::iter(
            (0..4).map(|_| Ok::<_, reqwest::Error>(Bytes::from(vec![b'x'; 64]))),
        );
        let last = line_chunks(endless, 100).collect::<Vec<_>>().await;
        assert!(matches!(
            last.last(),
            Some(Err(ChunkError::LineTooLong { .. }))
        ));
    }
}
