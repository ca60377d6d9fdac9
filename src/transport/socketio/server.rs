//! The server side of Engine.IO v4, for judging Socket.IO clients: a client may open with HTTP
//! long-polling and upgrade to WebSocket (what `socket.io-client` does by default) or open a
//! WebSocket at once, and either way the runner gets one [`Connection`] per Engine.IO session.
//!
//! As on the client side, only Engine.IO's own business is done here: the open packet, the
//! heartbeat (the server pings; a client that does not pong in time fails the connection), the
//! upgrade's probe, and the polling framing (packets joined by a record separator, binary as
//! `b` + base64). Every packet the client sends reaches the runner as the text of one Engine.IO
//! packet, and every frame the runner sends goes out as one packet, so a case can send packets
//! no server library would.

use super::super::http_serve::{self, Arrivals};
use super::super::websocket::{self, Opened};
use super::super::{
    next_of, query_param, Command, Connection, Frame, Inbox, Received, TransportError,
};
use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Engine.IO's separator between packets in one polling body.
const RECORD_SEPARATOR: char = '\u{1e}';
/// Packets held for a client that is not polling; past this, a send fails.
const MAX_HELD_PACKETS: usize = 1024;
/// New sessions waiting for the runner to take them; past this, a handshake gets 503.
const MAX_WAITING_SESSIONS: usize = 4;
/// Budget for one relayed send over the upgraded WebSocket.
const SEND_BUDGET: Duration = Duration::from_secs(30);

/// How the Engine.IO server behaves.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Largest packet, polling body or frame accepted from the client (`maxPayload`).
    pub max_frame: usize,
    /// How often the server pings.
    pub ping_interval: Duration,
    /// How long a pong may take.
    pub ping_timeout: Duration,
}

impl ServerOptions {
    /// Socket.IO's own defaults (25 s and 20 s).
    pub fn new(max_frame: usize) -> Self {
        ServerOptions {
            max_frame,
            ping_interval: Duration::from_secs(25),
            ping_timeout: Duration::from_secs(20),
        }
    }
}

type Body = Full<Bytes>;

/// What an HTTP request hands a session.
enum ToSession {
    /// A long-poll GET, answered with what the server has to send.
    Poll(oneshot::Sender<Response<Body>>),
    /// A POST's packets, and who to tell once every one of them has reached the runner: the
    /// POST is answered only then, so a client that goes on over the upgraded WebSocket once
    /// its POST is answered (as `socket.io-client` does) cannot overtake what it posted.
    Post(Bytes, oneshot::Sender<()>),
    /// A WebSocket opened with this session's id: the upgrade's probe runs over it.
    Upgrade(Connection),
}

/// State every HTTP connection of one server shares.
struct Shared {
    opts: ServerOptions,
    sessions: SyncMutex<HashMap<String, mpsc::Sender<ToSession>>>,
    arrivals: mpsc::Sender<(Connection, Opened)>,
}

/// An Engine.IO server: feed it the TCP connections that arrive ([`EioServer::serve_tcp`]),
/// take each new Engine.IO session with [`EioServer::accept`].
pub struct EioServer {
    shared: Arc<Shared>,
    arrivals: Arrivals,
}

impl EioServer {
    pub fn new(opts: ServerOptions) -> Self {
        let (tx, arrivals) = Arrivals::new(MAX_WAITING_SESSIONS);
        EioServer {
            shared: Arc::new(Shared {
                opts,
                sessions: SyncMutex::new(HashMap::new()),
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

/// An Engine.IO error answer, in the shape real servers give (`{"code":N,"message":…}`).
fn refuse(status: StatusCode, code: u8, message: &str) -> Response<Body> {
    let body = serde_json::json!({"code": code, "message": message}).to_string();
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp
}

fn text_answer(body: impl Into<Bytes>) -> Response<Body> {
    let mut resp = Response::new(Full::new(body.into()));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=UTF-8"),
    );
    resp
}

async fn route(
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    mut req: Request<Incoming>,
) -> Response<Body> {
    let query = req.uri().query().unwrap_or("").to_owned();
    if query_param(&query, "EIO") != Some("4") {
        return refuse(StatusCode::BAD_REQUEST, 5, "Unsupported protocol version");
    }
    let websocket = match query_param(&query, "transport") {
        Some("polling") => false,
        Some("websocket") => true,
        _ => return refuse(StatusCode::BAD_REQUEST, 0, "Transport unknown"),
    };
    let Some(sid) = query_param(&query, "sid").map(str::to_owned) else {
        return open_session(shared, peer, req, websocket).await;
    };
    let session = shared
        .sessions
        .lock()
        .ok()
        .and_then(|s| s.get(&sid).cloned());
    let Some(session) = session else {
        return refuse(StatusCode::BAD_REQUEST, 1, "Session ID unknown");
    };
    if websocket {
        let max_frame = shared.opts.max_frame;
        let upgraded =
            websocket::answer_upgrade(&mut req, peer, max_frame, None, |conn, _| async move {
                let _ = session.send(ToSession::Upgrade(conn)).await;
            });
        return upgraded.unwrap_or_else(|| refuse(StatusCode::BAD_REQUEST, 3, "Bad request"));
    }
    match *req.method() {
        Method::GET => {
            let (tx, rx) = oneshot::channel();
            if session.send(ToSession::Poll(tx)).await.is_err() {
                return refuse(StatusCode::BAD_REQUEST, 1, "Session ID unknown");
            }
            rx.await
                .unwrap_or_else(|_| refuse(StatusCode::BAD_REQUEST, 1, "Session ID unknown"))
        }
        Method::POST => {
            let limit = shared.opts.max_frame;
            let body = match Limited::new(req.into_body(), limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return refuse(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        3,
                        "Payload too large or unreadable",
                    )
                }
            };
            let (taken, all_taken) = oneshot::channel();
            if session.send(ToSession::Post(body, taken)).await.is_err() || all_taken.await.is_err()
            {
                return refuse(StatusCode::BAD_REQUEST, 1, "Session ID unknown");
            }
            text_answer("ok")
        }
        _ => refuse(StatusCode::BAD_REQUEST, 2, "Bad handshake method"),
    }
}

/// A handshake: a new session, polling or over a WebSocket opened at once.
async fn open_session(
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    mut req: Request<Incoming>,
    websocket: bool,
) -> Response<Body> {
    if !websocket && req.method() != Method::GET {
        return refuse(StatusCode::BAD_REQUEST, 2, "Bad handshake method");
    }
    let sid = uuid::Uuid::new_v4().simple().to_string();
    let open = |upgrades: &[&str]| {
        format!(
            "0{}",
            serde_json::json!({
                "sid": sid,
                "upgrades": upgrades,
                "pingInterval": shared.opts.ping_interval.as_millis() as u64,
                "pingTimeout": shared.opts.ping_timeout.as_millis() as u64,
                "maxPayload": shared.opts.max_frame,
            })
        )
    };
    let (tx, requests) = mpsc::channel(16);
    let (inbox, commands, parts) = Connection::channels();
    if websocket {
        let open = open(&[]);
        let max_frame = shared.opts.max_frame;
        let upgraded = websocket::answer_upgrade(
            &mut req,
            peer,
            max_frame,
            None,
            |mut ws, opened| async move {
                if ws
                    .send(Frame::Text(open), Instant::now() + SEND_BUDGET)
                    .await
                    .is_err()
                {
                    return;
                }
                let engine = Engine::new(shared.clone(), sid, inbox, commands, requests, Some(ws));
                register(&shared, &engine.sid, tx);
                let task = tokio::spawn(engine.run());
                let _ = shared
                    .arrivals
                    .try_send((Connection::from_parts(parts, task), opened));
            },
        );
        return upgraded.unwrap_or_else(|| refuse(StatusCode::BAD_REQUEST, 3, "Bad request"));
    }
    let opened = Opened::of(peer, &req);
    let open = open(&["websocket"]);
    let engine = Engine::new(shared.clone(), sid.clone(), inbox, commands, requests, None);
    register(&shared, &sid, tx);
    let task = tokio::spawn(engine.run());
    if shared
        .arrivals
        .try_send((Connection::from_parts(parts, task), opened))
        .is_err()
    {
        forget(&shared, &sid);
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            0,
            "Too many waiting sessions",
        );
    }
    text_answer(open)
}

fn register(shared: &Shared, sid: &str, tx: mpsc::Sender<ToSession>) {
    if let Ok(mut sessions) = shared.sessions.lock() {
        sessions.insert(sid.to_owned(), tx);
    }
}

fn forget(shared: &Shared, sid: &str) {
    if let Ok(mut sessions) = shared.sessions.lock() {
        sessions.remove(sid);
    }
}

/// One packet as polling carries it: text as is, binary as `b` + base64.
fn polling_form(frame: Frame) -> Vec<u8> {
    match frame {
        Frame::Text(text) => text.into_bytes(),
        Frame::RawText(bytes) => bytes,
        Frame::Binary(bytes) => {
            let mut out = b"b".to_vec();
            out.extend(
                base64::engine::general_purpose::STANDARD
                    .encode(bytes)
                    .into_bytes(),
            );
            out
        }
    }
}

/// The packets of a polling body (`b`-prefixed ones decoded to binary).
pub(in crate::transport) fn packets_of(body: &[u8]) -> Vec<Frame> {
    let text = String::from_utf8_lossy(body);
    text.split(RECORD_SEPARATOR)
        .map(|packet| match packet.strip_prefix('b') {
            Some(encoded) => match base64::engine::general_purpose::STANDARD.decode(encoded) {
                Ok(bytes) => Frame::Binary(bytes),
                Err(_) => Frame::Text(packet.to_owned()),
            },
            None => Frame::Text(packet.to_owned()),
        })
        .collect()
}

/// One Engine.IO session's task: the runner's end on one side, polling requests or the
/// upgraded WebSocket on the other.
struct Engine {
    shared: Arc<Shared>,
    sid: String,
    inbox: Inbox,
    commands: mpsc::Receiver<Command>,
    requests: mpsc::Receiver<ToSession>,
    /// The WebSocket, once the session runs over one.
    ws: Option<Connection>,
    /// A WebSocket in the middle of the upgrade's probe, if one is.
    probe: Probe,
    /// Packets for a polling client, oldest first.
    held: VecDeque<Frame>,
    /// The long-poll GET waiting for packets.
    parked: Option<oneshot::Sender<Response<Body>>>,
    next_ping: Instant,
    /// When the pong to the last ping is due, while one is awaited.
    pong_due: Option<Instant>,
}

/// How the session ended, pushed to the runner.
enum Ended {
    /// The runner closed it or went away: nothing to report.
    Quietly,
    Observed(Received),
}

impl Engine {
    fn new(
        shared: Arc<Shared>,
        sid: String,
        inbox: Inbox,
        commands: mpsc::Receiver<Command>,
        requests: mpsc::Receiver<ToSession>,
        ws: Option<Connection>,
    ) -> Self {
        let next_ping = Instant::now() + shared.opts.ping_interval;
        Engine {
            shared,
            sid,
            inbox,
            commands,
            requests,
            ws,
            probe: Probe::None,
            held: VecDeque::new(),
            parked: None,
            next_ping,
            pong_due: None,
        }
    }

    async fn run(mut self) {
        let ended = self.serve().await;
        forget(&self.shared, &self.sid);
        if let Some(poll) = self.parked.take() {
            let _ = poll.send(text_answer("1"));
        }
        if let Ended::Observed(received) = ended {
            self.inbox.push(received).await;
        }
        if let Some(ws) = self.ws.take() {
            ws.close().await;
        }
    }

    async fn serve(&mut self) -> Ended {
        loop {
            let wake = self.pong_due.unwrap_or(self.next_ping);
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(Command::Send(out, done)) => {
                        let result = match super::super::frame_only(out) {
                            Ok(frame) => self.send(frame).await,
                            Err(e) => Err(e),
                        };
                        let _ = done.send(result);
                    }
                    // Not a pinging connection: never asked.
                    Some(Command::Ping) => {}
                    Some(Command::Close(_)) | None => {
                        let _ = self.send(Frame::Text("1".into())).await;
                        return Ended::Quietly;
                    }
                },
                request = self.requests.recv() => match request {
                    Some(ToSession::Poll(answer)) => self.poll(answer),
                    Some(ToSession::Post(body, taken)) => {
                        for frame in packets_of(&body) {
                            if let Some(ended) = self.take_packet(frame).await {
                                return ended;
                            }
                        }
                        let _ = taken.send(());
                    }
                    Some(ToSession::Upgrade(conn)) => self.probe = Probe::Sent(conn),
                    None => return Ended::Quietly,
                },
                got = next_of(self.probe.connection()) => self.probing(got).await,
                got = next_of(self.ws.as_mut()) => {
                    if let Some(ended) = self.over_websocket(got).await {
                        return ended;
                    }
                }
                _ = tokio::time::sleep_until(wake) => {
                    if self.pong_due.is_some() {
                        let missed = TransportError::Protocol(format!(
                            "missed heartbeat: the client did not answer the server's ping within {} ms (pingTimeout)",
                            self.shared.opts.ping_timeout.as_millis()
                        ));
                        return Ended::Observed(Received::Failed(missed));
                    }
                    self.next_ping = Instant::now() + self.shared.opts.ping_interval;
                    self.pong_due = Some(Instant::now() + self.shared.opts.ping_timeout);
                    let _ = self.send(Frame::Text("2".into())).await;
                }
            }
        }
    }

    /// What the upgraded WebSocket observed.
    async fn over_websocket(
        &mut self,
        got: Option<(Received, std::time::Instant)>,
    ) -> Option<Ended> {
        match got? {
            (Received::Frame(frame), _) => self.take_packet(frame).await,
            (other, _) if other.is_terminal() => Some(Ended::Observed(other)),
            (other, _) => (!self.inbox.push(other).await).then_some(Ended::Quietly),
        }
    }

    /// One packet from the client: heartbeat and close noted, and every packet passed on.
    async fn take_packet(&mut self, frame: Frame) -> Option<Ended> {
        let close = matches!(&frame, Frame::Text(t) if t == "1");
        if matches!(&frame, Frame::Text(t) if t.starts_with('3')) {
            self.pong_due = None;
        }
        if !self.inbox.push(Received::Frame(frame)).await {
            return Some(Ended::Quietly);
        }
        close.then(|| {
            Ended::Observed(Received::Closed {
                code: None,
                reason: "the client sent an Engine.IO close packet".into(),
            })
        })
    }

    /// Sends over the WebSocket once upgraded, else holds the packet for the next poll.
    async fn send(&mut self, frame: Frame) -> Result<(), TransportError> {
        if let Some(ws) = self.ws.as_mut() {
            return ws.send(frame, Instant::now() + SEND_BUDGET).await;
        }
        if self.held.len() >= MAX_HELD_PACKETS {
            return Err(TransportError::Protocol(format!(
                "the client stopped polling: {MAX_HELD_PACKETS} packets wait for it"
            )));
        }
        self.held.push_back(frame);
        if let Some(poll) = self.parked.take() {
            self.poll(poll);
        }
        Ok(())
    }

    /// A long-poll: answered at once with what is held, else parked until there is some. A
    /// second poll while one is parked releases the first with a noop, and so does the
    /// probe. Once upgraded, polling is over: a poll is refused, as Engine.IO servers do.
    fn poll(&mut self, answer: oneshot::Sender<Response<Body>>) {
        if self.ws.is_some() {
            let _ = answer.send(refuse(StatusCode::BAD_REQUEST, 3, "Bad request"));
            return;
        }
        if self.held.is_empty() && matches!(self.probe, Probe::Answered(_)) {
            // A poll that was on its way when the probe was answered: parked, it would hold
            // the client's upgrade (and everything it has to send) until we next had a
            // packet for it.
            let _ = answer.send(text_answer("6"));
            return;
        }
        if self.held.is_empty() {
            if let Some(earlier) = self.parked.replace(answer) {
                let _ = earlier.send(text_answer("6"));
            }
            return;
        }
        let mut body = Vec::new();
        for (i, packet) in self.held.drain(..).enumerate() {
            if i > 0 {
                body.extend(RECORD_SEPARATOR.to_string().into_bytes());
            }
            body.extend(polling_form(packet));
        }
        let _ = answer.send(text_answer(body));
    }

    /// The upgrade: `2probe` is answered `3probe` (and a parked poll released with a noop);
    /// `5` moves the session onto the WebSocket with everything still held.
    async fn probing(&mut self, got: Option<(Received, std::time::Instant)>) {
        let Some(probe) = self.probe.connection() else {
            return;
        };
        match got {
            Some((Received::Frame(Frame::Text(text)), _)) if text == "2probe" => {
                let _ = probe
                    .send(Frame::Text("3probe".into()), Instant::now() + SEND_BUDGET)
                    .await;
                self.probe = self.probe.take().answered();
                if let Some(poll) = self.parked.take() {
                    let _ = poll.send(text_answer("6"));
                }
            }
            Some((Received::Frame(Frame::Text(text)), _)) if text == "5" => {
                self.ws = self.probe.take().into_connection();
                let held: Vec<Frame> = self.held.drain(..).collect();
                for frame in held {
                    let _ = self.send(frame).await;
                }
            }
            // Anything else on a probing socket ends the attempt; polling goes on.
            _ => self.probe = Probe::None,
        }
    }
}

/// Where the upgrade's probe stands.
enum Probe {
    None,
    /// The client opened a WebSocket to probe it; `2probe` has not come yet.
    Sent(Connection),
    /// The probe was answered: the client is pausing its polling to move over, and waits for
    /// its last poll to come back before it sends the upgrade (and, till then, holds every
    /// packet it has to send). No poll may be parked from here on.
    Answered(Connection),
}

impl Probe {
    fn connection(&mut self) -> Option<&mut Connection> {
        match self {
            Probe::None => None,
            Probe::Sent(conn) | Probe::Answered(conn) => Some(conn),
        }
    }

    fn take(&mut self) -> Probe {
        std::mem::replace(self, Probe::None)
    }

    fn answered(self) -> Probe {
        match self {
            Probe::Sent(conn) => Probe::Answered(conn),
            other => other,
        }
    }

    fn into_connection(self) -> Option<Connection> {
        match self {
            Probe::None => None,
            Probe::Sent(conn) | Probe::Answered(conn) => Some(conn),
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
