//! WebSocket transport on tokio-tungstenite: text and binary frames, deliberately malformed
//! frames, close codes, HTTP rejections, and a cap on received frame size.

use super::{Command, Connection, Frame, Inbox, Received, TransportError, DEFAULT_MAX_FRAME};
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame as WsFrame;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{
    error::{CapacityError, ProtocolError},
    Error as WsError, Message,
};

/// Bytes read from the socket at a time (see the comment where it is used).
pub const READ_BUFFER: usize = 16 * 1024;

/// How to open a WebSocket connection.
#[derive(Clone, Debug)]
pub struct WsOptions {
    /// `ws://host:port/path?query`.
    pub url: String,
    /// Extra request headers (`--header "K: V"`).
    pub headers: Vec<(String, String)>,
    /// Values offered in `Sec-WebSocket-Protocol`.
    pub subprotocols: Vec<String>,
    /// Largest frame or message accepted from the target.
    pub max_frame: usize,
    /// Budget for TCP connect plus the opening handshake.
    pub connect_timeout: Duration,
    /// `wss://`: accept any certificate (`--insecure`, for self-signed test deployments).
    pub insecure: bool,
}

impl WsOptions {
    pub fn new(url: impl Into<String>) -> Self {
        WsOptions {
            url: url.into(),
            headers: Vec::new(),
            subprotocols: Vec::new(),
            max_frame: DEFAULT_MAX_FRAME,
            connect_timeout: Duration::from_secs(5),
            insecure: false,
        }
    }
}

/// The URL with `/` as its path when it has none (`ws://h:1?x` → `ws://h:1/?x`): an empty
/// path would go out as a request line without a `/`, which servers answer with 400.
pub fn with_root_path(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let authority_end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| scheme_end + i);
    if url[authority_end..].starts_with('/') {
        url.to_owned()
    } else {
        format!("{}/{}", &url[..authority_end], &url[authority_end..])
    }
}

/// Connects and returns a live [`Connection`].
///
/// A failure to open TCP is [`TransportError::Unreachable`]; a target that accepts TCP but
/// answers the upgrade with an HTTP status is [`TransportError::Rejected`]; one that never
/// completes the upgrade is [`TransportError::Timeout`].
pub async fn connect(opts: &WsOptions) -> Result<Connection, TransportError> {
    let bad = |reason: String| TransportError::BadTarget {
        target: opts.url.clone(),
        reason,
    };
    let url = with_root_path(&opts.url);
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| bad(e.to_string()))?;
    let uri = request.uri().clone();
    let secure = match uri.scheme_str() {
        Some("ws") => false,
        Some("wss") => true,
        other => {
            return Err(bad(format!(
                "unsupported scheme {}; use ws:// or wss://",
                crate::show::quoted_or_none(other)
            )))
        }
    };
    for (name, value) in &opts.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| bad(format!("header name {name:?}: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| bad(format!("header value {value:?}: {e}")))?;
        request.headers_mut().append(name, value);
    }
    if !opts.subprotocols.is_empty() {
        let joined = opts.subprotocols.join(", ");
        let value = HeaderValue::from_str(&joined)
            .map_err(|e| bad(format!("Sec-WebSocket-Protocol {joined:?}: {e}")))?;
        request
            .headers_mut()
            .insert("sec-websocket-protocol", value);
    }

    let stream =
        super::tls::dial(&opts.url, &uri, secure, opts.insecure, opts.connect_timeout).await?;
    upgrade(request, stream, opts).await
}

/// The opening handshake over an open stream (TCP, or TLS over it); then the pump runs.
async fn upgrade<S>(
    request: tokio_tungstenite::tungstenite::handshake::client::Request,
    stream: S,
    opts: &WsOptions,
) -> Result<Connection, TransportError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let budget_ms = opts.connect_timeout.as_millis() as u64;
    let asked = std::time::Instant::now();
    let (ws, _response) = tokio::time::timeout(
        opts.connect_timeout,
        tokio_tungstenite::client_async_with_config(
            request,
            stream,
            Some(ws_config(opts.max_frame)),
        ),
    )
    .await
    .map_err(|_| TransportError::Timeout(budget_ms))?
    .map_err(|e| match e {
        WsError::Http(response) => TransportError::Rejected {
            status: response.status().as_u16(),
        },
        other => TransportError::Protocol(format!("WebSocket upgrade failed: {other}")),
    })?;

    let (inbox, commands, parts) = Connection::channels();
    let took = asked.elapsed();
    let task = tokio::spawn(pump(ws, inbox, commands, opts.max_frame, None));
    Ok(Connection::from_parts(parts, task)
        .pipelined()
        .pinging()
        .opened_in(took))
}

/// What a client asked for when it opened a WebSocket to wireprobe (the server side).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opened {
    /// Where the client connected from.
    pub peer: Option<std::net::SocketAddr>,
    /// The request target: path and query (`/haip?token=...`).
    pub path: String,
    /// The request's headers, names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
}

impl Opened {
    /// What `request`, which came from `peer`, asked for.
    pub fn of<B>(peer: Option<std::net::SocketAddr>, request: &hyper::Request<B>) -> Self {
        Opened {
            peer,
            path: request.uri().path_and_query().map_or_else(
                || request.uri().path().to_owned(),
                |p| p.as_str().to_owned(),
            ),
            headers: request
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
        }
    }
}

/// The subprotocol an upgrade selects: the first the client offered. A client that offers
/// some fails an upgrade that selects none; what was offered stays in the request's headers,
/// for the protocol to judge.
fn first_subprotocol(headers: &hyper::HeaderMap) -> Option<HeaderValue> {
    headers
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .and_then(|p| HeaderValue::from_str(p).ok())
}

/// Completes the opening handshake of a client that connected to wireprobe over `tcp` (the
/// server side) and returns the live [`Connection`] with what the client asked for. A client
/// that does not complete the upgrade within `timeout` is [`TransportError::Timeout`]; one
/// that sends no valid upgrade request is [`TransportError::Protocol`].
// The handshake callback's error type is tungstenite's (an HTTP response), large or not.
#[allow(clippy::result_large_err)]
pub async fn accept(
    tcp: TcpStream,
    max_frame: usize,
    timeout: Duration,
    refusal: Option<Refusal>,
) -> Result<(Connection, Opened), TransportError> {
    let _ = tcp.set_nodelay(true);
    let peer = tcp.peer_addr().ok();
    let mut opened = Opened {
        peer,
        ..Opened::default()
    };
    let record =
        |request: &tokio_tungstenite::tungstenite::handshake::server::Request,
         mut response: tokio_tungstenite::tungstenite::handshake::server::Response| {
            opened = Opened::of(peer, request);
            if let Some(first) = first_subprotocol(request.headers()) {
                response
                    .headers_mut()
                    .insert("sec-websocket-protocol", first);
            }
            Ok(response)
        };
    let ws = tokio::time::timeout(
        timeout,
        tokio_tungstenite::accept_hdr_async_with_config(tcp, record, Some(ws_config(max_frame))),
    )
    .await
    .map_err(|_| TransportError::Timeout(timeout.as_millis() as u64))?
    .map_err(|e| TransportError::Protocol(format!("WebSocket upgrade failed: {e}")))?;
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(pump(ws, inbox, commands, max_frame, refusal));
    Ok((
        Connection::from_parts(parts, task).pipelined().pinging(),
        opened,
    ))
}

/// What a served socket refuses (the binding wireprobe plays closes on it): for a text frame
/// the peer sent, the close status and reason to close with; `None` takes it.
pub type Refusal = std::sync::Arc<dyn Fn(&str) -> Option<(u16, String)> + Send + Sync>;

/// The `101 Switching Protocols` answer to a WebSocket upgrade request, or `None` when
/// `req` is not one. It selects the first subprotocol offered, as [`accept`] does. Serve the
/// socket once `hyper::upgrade::on(req)` resolves.
pub fn switching_protocols<B, R: Default>(req: &hyper::Request<B>) -> Option<hyper::Response<R>> {
    use hyper::header::{CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, UPGRADE};
    let wants_ws = req
        .headers()
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let key = req.headers().get(SEC_WEBSOCKET_KEY).filter(|_| wants_ws)?;
    let accept = HeaderValue::from_str(
        &tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes()),
    )
    .ok()?;
    let protocol = first_subprotocol(req.headers());
    let mut resp = hyper::Response::new(R::default());
    *resp.status_mut() = hyper::StatusCode::SWITCHING_PROTOCOLS;
    let headers = resp.headers_mut();
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
    if let Some(protocol) = protocol {
        headers.insert("sec-websocket-protocol", protocol);
    }
    Some(resp)
}

/// The server side of a WebSocket whose upgrade hyper completed: the same bounded
/// [`Connection`] as [`accept`] gives.
pub async fn over_upgraded(
    upgraded: hyper::upgrade::Upgraded,
    max_frame: usize,
    refusal: Option<Refusal>,
) -> Connection {
    let ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
        hyper_util::rt::TokioIo::new(upgraded),
        tokio_tungstenite::tungstenite::protocol::Role::Server,
        Some(ws_config(max_frame)),
    )
    .await;
    let (inbox, commands, parts) = Connection::channels();
    let task = tokio::spawn(pump(ws, inbox, commands, max_frame, refusal));
    Connection::from_parts(parts, task).pipelined().pinging()
}

/// Answers `req` when it asks for a WebSocket: `101 Switching Protocols` (see
/// [`switching_protocols`]), the socket handed to `serve` as a [`Connection`] once hyper has
/// upgraded it, with what the client asked for. `None` when `req` is not an upgrade.
pub fn answer_upgrade<B, R, F, Fut>(
    req: &mut hyper::Request<B>,
    peer: Option<std::net::SocketAddr>,
    max_frame: usize,
    refusal: Option<Refusal>,
    serve: F,
) -> Option<hyper::Response<R>>
where
    R: Default,
    F: FnOnce(Connection, Opened) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let resp = switching_protocols(req)?;
    let opened = Opened::of(peer, req);
    let on_upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(upgraded) = on_upgrade.await {
            serve(over_upgraded(upgraded, max_frame, refusal).await, opened).await;
        }
    });
    Some(resp)
}

/// Frame limits, and a read buffer sized for speed: tungstenite zero-fills its whole read
/// buffer before every read, and the 128 KiB default made memset a tenth of a fuzzing run's
/// CPU. Frames larger than the buffer still arrive whole.
fn ws_config(max_frame: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .max_message_size(Some(max_frame))
        .max_frame_size(Some(max_frame))
}

/// Runs the socket: reads into the inbox and writes what the runner commands, concurrently, so
/// a target that stops reading cannot stop us from seeing what it sends. The writes are
/// pipelined ([`Connection::pipelined`]). A frame `refusal` refuses is passed on, then the
/// socket closes with its status (after the frames already handed over).
async fn pump<S>(
    ws: tokio_tungstenite::WebSocketStream<S>,
    inbox: Inbox,
    mut commands: tokio::sync::mpsc::Receiver<Command>,
    limit: usize,
    refusal: Option<Refusal>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = ws.split();
    let pings = Pings::new();
    let (refuse_tx, mut refused) = tokio::sync::mpsc::channel::<(u16, String)>(1);
    let reader = async {
        let mut ending = Ending::Other;
        loop {
            let observed = match stream.next().await {
                Some(Ok(Message::Text(text))) => Received::Frame(Frame::Text(text.to_string())),
                Some(Ok(Message::Binary(bytes))) => Received::Frame(Frame::Binary(bytes.to_vec())),
                Some(Ok(Message::Pong(payload))) => match pings.answered(&payload) {
                    Some(took) => Received::RoundTrip(took),
                    // Unasked (RFC 6455 lets a peer send one as a heartbeat): nothing to us.
                    None => continue,
                },
                Some(Ok(Message::Ping(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(frame))) => {
                    ending = Ending::PeerClosed;
                    Received::Closed {
                        code: frame.as_ref().map(|f| u16::from(f.code)),
                        reason: frame.map(|f| f.reason.to_string()).unwrap_or_default(),
                    }
                }
                Some(Err(e)) => {
                    if matches!(e, WsError::Utf8(_)) {
                        ending = Ending::NotUtf8;
                    }
                    Received::Failed(map_read_error(e, limit))
                }
                None => Received::Closed {
                    code: None,
                    reason: DROPPED.into(),
                },
            };
            let refused = match (&observed, &refusal) {
                (Received::Frame(Frame::Text(text)), Some(refusal)) => refusal(text),
                _ => None,
            };
            let last = observed.is_terminal();
            if !inbox.push(observed).await || last {
                return ending;
            }
            // The frame is passed on, then what we did about it, then the close goes out.
            if let Some((code, why)) = refused {
                let said = format!("wireprobe closed the WebSocket with {code}: {why}");
                if !inbox.push(Received::Notice(said)).await {
                    return ending;
                }
                let _ = refuse_tx.try_send((code, why));
            }
        }
    };
    let writer = async {
        // Once a write failed, every later one fails the same way (the connection's sends are
        // pipelined: the runner learns of a failure at its next send).
        let mut broken: Option<TransportError> = None;
        let mut batch = Vec::new();
        'commands: loop {
            let first = tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => command,
                    None => break 'commands,
                },
                Some(how) = refused.recv() => Command::Close(Some(how)),
            };
            // Everything queued behind it goes out in the same write.
            let mut next = Some(first);
            while let Some(command) = next.take() {
                match command {
                    Command::Send(out, done) => match (&broken, super::frame_only(out)) {
                        (Some(e), _) => drop(done.send(Err(e.clone()))),
                        (None, Err(e)) => drop(done.send(Err(e))),
                        (None, Ok(frame)) => {
                            let fed = sink.feed(to_message(frame)).await;
                            batch.push((done, fed.map_err(map_write_error)));
                        }
                    },
                    // A failed write shows in the reader's end of the connection.
                    Command::Ping => {
                        let _ = sink.feed(Message::Ping(pings.ask().into())).await;
                    }
                    Command::Close(how) => {
                        confirm(&mut batch, sink.flush().await, &mut broken);
                        // A normal closure says so (1000), as the transcript records it: a peer
                        // can tell it from a connection that dropped.
                        let frame = match how {
                            Some((code, reason)) => close_frame(code, reason),
                            None => normal_closure(),
                        };
                        let _ = sink.send(Message::Close(Some(frame))).await;
                        break 'commands;
                    }
                }
                next = commands.try_recv().ok();
            }
            confirm(&mut batch, sink.flush().await, &mut broken);
        }
        // Keep the reader running until the target answers the close or the runner drops us.
        std::future::pending::<()>().await;
    };
    let ending = tokio::select! {
        ending = reader => ending,
        _ = writer => Ending::Other,
    };
    // What ended the reading is answered as RFC 6455 has an endpoint answer it: a close the
    // peer sent is echoed (tungstenite queued the echo; a flush sends it), a text frame that
    // is not UTF-8 fails the connection with 1007 (§8.1).
    let answer = async {
        match ending {
            Ending::PeerClosed => sink.flush().await,
            Ending::NotUtf8 => {
                let frame = close_frame(1007, "text frame is not UTF-8".into());
                sink.send(Message::Close(Some(frame))).await
            }
            Ending::Other => Ok(()),
        }
    };
    let _ = tokio::time::timeout(CLOSE_ANSWER, answer).await;
}

/// What ended a socket's reading, as far as the answer owed to it goes.
enum Ending {
    PeerClosed,
    NotUtf8,
    Other,
}

/// How long the answer to a close or to a frame that fails the connection may take to write.
const CLOSE_ANSWER: Duration = Duration::from_secs(1);

/// The pings a connection asks for ([`Connection::ping`]): each carries this connection's
/// random nonce and when it went out, so its pong says how long it took without any state
/// shared between the pump's writer and reader, and a pong the target made up cannot pass for
/// one (it would have to know the nonce).
struct Pings {
    nonce: [u8; 8],
    epoch: std::time::Instant,
}

impl Pings {
    fn new() -> Self {
        Pings {
            nonce: uuid::Uuid::new_v4().as_u64_pair().0.to_be_bytes(),
            epoch: std::time::Instant::now(),
        }
    }

    /// The payload of a ping going out now.
    fn ask(&self) -> Vec<u8> {
        let sent = self.epoch.elapsed().as_nanos() as u64;
        [self.nonce, sent.to_be_bytes()].concat()
    }

    /// How long ago the ping a pong with `payload` answers went out, if it answers one of ours.
    fn answered(&self, payload: &[u8]) -> Option<Duration> {
        let (nonce, sent) = payload.split_first_chunk::<8>()?;
        let sent: [u8; 8] = sent.try_into().ok()?;
        (*nonce == self.nonce).then(|| {
            let sent = Duration::from_nanos(u64::from_be_bytes(sent));
            self.epoch.elapsed().saturating_sub(sent)
        })
    }
}

/// Where the pump reports a write's outcome.
type WriteDone = tokio::sync::oneshot::Sender<Result<(), TransportError>>;

/// Reports the outcome of each write in `batch` once they were flushed with `flushed`, and
/// remembers the first failure for the writes after them.
fn confirm(
    batch: &mut Vec<(WriteDone, Result<(), TransportError>)>,
    flushed: Result<(), WsError>,
    broken: &mut Option<TransportError>,
) {
    let flushed = flushed.map_err(map_write_error);
    for (done, fed) in batch.drain(..) {
        let result = fed.and(flushed.clone());
        if let Err(e) = &result {
            broken.get_or_insert_with(|| e.clone());
        }
        let _ = done.send(result);
    }
}

fn normal_closure() -> tokio_tungstenite::tungstenite::protocol::CloseFrame {
    tokio_tungstenite::tungstenite::protocol::CloseFrame {
        code: tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Normal,
        reason: "".into(),
    }
}

/// A close frame with `code` and `reason` (cut to what a close frame holds: 123 bytes).
fn close_frame(
    code: u16,
    mut reason: String,
) -> tokio_tungstenite::tungstenite::protocol::CloseFrame {
    let mut cut = reason.len().min(123);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    reason.truncate(cut);
    tokio_tungstenite::tungstenite::protocol::CloseFrame {
        code: code.into(),
        reason: reason.into(),
    }
}

/// How a connection that ended without a close frame is reported.
pub const DROPPED: &str = "connection dropped without a close frame";

/// True when `received` says the connection dropped (no close frame, or a failed read), as a
/// network failure ends one; a close frame, with or without a code, is a closure.
pub fn dropped(received: &Received) -> bool {
    match received {
        Received::Closed { code: None, reason } => reason == DROPPED,
        Received::Failed(_) => true,
        _ => false,
    }
}

fn to_message(frame: Frame) -> Message {
    match frame {
        Frame::Text(text) => Message::text(text),
        Frame::Binary(bytes) => Message::binary(bytes),
        Frame::RawText(bytes) => {
            Message::Frame(WsFrame::message(bytes, OpCode::Data(Data::Text), true))
        }
    }
}

/// A write that failed because the peer had gone is [`TransportError::Closed`]: the target
/// ended the connection, which the runner judges; anything else is a transport error.
fn map_write_error(e: WsError) -> TransportError {
    match e {
        WsError::ConnectionClosed
        | WsError::AlreadyClosed
        | WsError::Io(_)
        | WsError::Protocol(ProtocolError::SendAfterClosing) => TransportError::Closed,
        other => TransportError::Protocol(format!("send failed: {other}")),
    }
}

fn map_read_error(e: WsError, limit: usize) -> TransportError {
    match e {
        WsError::Capacity(CapacityError::MessageTooLong { size, .. }) => {
            TransportError::FrameTooLarge { size, limit }
        }
        WsError::Utf8(detail) => TransportError::Protocol(format!(
            "the target sent invalid UTF-8 in a text frame: {detail}"
        )),
        WsError::ConnectionClosed | WsError::AlreadyClosed => TransportError::Closed,
        other => TransportError::Protocol(other.to_string()),
    }
}

#[cfg(test)]
#[path = "websocket_tests.rs"]
mod tests;
