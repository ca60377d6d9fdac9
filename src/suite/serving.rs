//! The server side of a case that judges a client: a loopback listener of the case's own, the
//! client under test started against it (`{url}`, `{token}`, `{tmp}` expanded, and given as
//! `WIREPROBE_URL` and `WIREPROBE_TOKEN`), and each connection it opens accepted over the
//! run's transport. What the client writes to stdout and stderr is kept for the transcript.

use crate::protocol::{HttpRoutes, Protocol};

use crate::transport::process::{self, Launched, OutputLine};
use crate::transport::relay;
use crate::transport::socketio::server::{EioServer, ServerOptions};
use crate::transport::sse_server::{refusal_of, Responder, SiteOptions, SseServer};
use crate::transport::websocket::{self, Opened};
use crate::transport::TransportKind;
use crate::transport::{Connection, TransportError};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Where a case takes the client's connections from.
#[derive(Clone)]
enum Listening {
    /// A loopback port of the case's own, for the client it starts.
    Own(Arc<TcpListener>),
    /// The run's listener, which a harness's connections reach one case at a time.
    Shared(super::config::SharedListener),
}

impl Listening {
    async fn accept(&self) -> std::io::Result<TcpStream> {
        match self {
            Listening::Own(own) => own.accept().await.map(|(tcp, _)| tcp),
            Listening::Shared(shared) => shared.lock().await.accept().await.map(|(tcp, _)| tcp),
        }
    }
}

/// A server that takes a session over several TCP connections: Socket.IO (a polling client
/// opens several per session), or the SSE + HTTP binding (a stream and its POSTs).
enum Site {
    SocketIo(Arc<EioServer>),
    Sse(Arc<SseServer>),
}

impl Site {
    fn serve_tcp(&self, tcp: TcpStream) {
        match self {
            Site::SocketIo(server) => server.serve_tcp(tcp),
            Site::Sse(server) => server.serve_tcp(tcp),
        }
    }

    async fn accept(&self, timeout: Duration) -> Result<(Connection, Opened), TransportError> {
        match self {
            Site::SocketIo(server) => server.accept(timeout).await,
            Site::Sse(server) => server.accept(timeout).await,
        }
    }
}

/// The case's site, with every TCP connection that arrives handed to it by a task stopped
/// with the case.
struct FedSite {
    site: Arc<Site>,
    feed: JoinHandle<()>,
}

impl Drop for FedSite {
    fn drop(&mut self) {
        self.feed.abort();
    }
}

/// How long a client the case started may take to connect the first time, at least: a
/// process starting on a busy machine (an interpreter loading its modules) can take longer
/// than a step's budget, which says nothing about the protocol.
const START_UP: Duration = Duration::from_secs(10);
/// How often a starting client is looked at while it has not connected: one that exited is
/// waited for no longer.
const EXIT_POLL: Duration = Duration::from_millis(100);

/// How often the served event stream carries a heartbeat comment.
const HEARTBEAT: Duration = Duration::from_millis(500);
/// The reconnection delay the served event stream asks for: short, so a case does not wait.
const RETRY_MS: u64 = 200;
/// Events kept for a client that resumes the stream.
const HISTORY: usize = 1024;

/// A case's listener and the client started against it.
pub(super) struct Serving {
    listener: Listening,
    transport: TransportKind,
    /// The binding's routes and answers to POSTs (SSE + HTTP).
    routes: Option<HttpRoutes>,
    responder: Arc<dyn Responder>,
    /// Started at the first accept of a Socket.IO or SSE + HTTP case.
    site: Option<FedSite>,
    /// What `{url}` becomes: where the client connects.
    url: String,
    /// What `{agent}` becomes: the command a host runs as its agent (stdio protocols).
    agent: String,
    launched: Option<Launched>,
    /// The client has connected once: it started.
    connected: bool,
    /// The connection just accepted is the first of a client this case started: its hello
    /// (a Socket.IO CONNECT) is still part of its start-up.
    first_of_launched: bool,
    /// The token the client was handed when it started: every connection it opens is judged
    /// on presenting that one (a token minted again for a later step would differ).
    pub(super) handed: Option<String>,
}

/// Why the client under test could not be served.
#[derive(Debug, thiserror::Error)]
pub(super) enum ServingError {
    #[error("cannot listen on loopback for the client: {0}")]
    Listen(std::io::Error),
    #[error("{0}")]
    Launch(TransportError),
    #[error("{protocol} cannot serve a client over {transport} yet")]
    Unsupported {
        protocol: &'static str,
        transport: &'static str,
    },
    #[error("the client did not connect within {waited_ms} ms{exited}")]
    NoConnection { waited_ms: u64, exited: String },
    #[error("the client's connection failed: {0}")]
    Accept(TransportError),
}

impl Serving {
    /// Listens for a client of `protocol` over `transport`: on the run's listener when a
    /// harness starts the client (`shared`), else on a free loopback port.
    pub(super) async fn bind(
        protocol: &dyn Protocol,
        transport: TransportKind,
        shared: Option<&super::config::SharedListener>,
    ) -> Result<Serving, ServingError> {
        let unsupported = || ServingError::Unsupported {
            protocol: protocol.id(),
            transport: transport.name(),
        };
        match transport {
            TransportKind::WebSocket | TransportKind::SocketIo | TransportKind::Stdio => {}
            TransportKind::Sse if protocol.http_routes().is_some() => {}
            // An answer in frames, when the binding has a framed media type.
            TransportKind::Protobuf
                if protocol.http_routes().is_some_and(|r| !r.framed.is_empty()) => {}
            TransportKind::Sse | TransportKind::Protobuf => return Err(unsupported()),
        }
        let (listener, addr) = match shared {
            Some(shared) => {
                let addr = shared.lock().await.local_addr();
                (Listening::Shared(shared.clone()), addr)
            }
            None => {
                let own = TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(ServingError::Listen)?;
                let addr = own.local_addr();
                (Listening::Own(Arc::new(own)), addr)
            }
        };
        let addr = addr.map_err(ServingError::Listen)?;
        let url = client_address(protocol, transport, &addr.to_string());
        let agent = relay_command(&addr.to_string());
        Ok(Serving {
            listener,
            transport,
            agent,
            routes: protocol.http_routes(),
            responder: protocol.responder().unwrap_or_else(|| Arc::new(AcceptAll)),
            site: None,
            url,
            launched: None,
            connected: false,
            first_of_launched: false,
            handed: None,
        })
    }

    /// Starts the client under test, `command` with `{url}`, `{token}` and `{tmp}` expanded.
    pub(super) fn launch(
        &mut self,
        command: &[String],
        token: Option<&str>,
        tmp: &Path,
        cwd: Option<&Path>,
    ) -> Result<(), ServingError> {
        self.handed = token.map(str::to_owned);
        let token = token.unwrap_or("");
        let argv: Vec<String> = crate::transport::stdio::expand_tmp(command, tmp)
            .into_iter()
            .map(|a| {
                a.replace("{url}", &self.url)
                    .replace("{token}", token)
                    .replace("{agent}", &self.agent)
            })
            .collect();
        let env = [
            ("WIREPROBE_URL".to_owned(), self.url.clone()),
            ("WIREPROBE_TOKEN".to_owned(), token.to_owned()),
            ("WIREPROBE_AGENT".to_owned(), self.agent.clone()),
        ];
        let launched = process::launch(&argv, &env, cwd).map_err(ServingError::Launch)?;
        self.launched = Some(launched);
        Ok(())
    }

    /// Accepts the client's next connection within `timeout`: over Socket.IO, its next
    /// Engine.IO session. A client this case started and that has not connected yet is given
    /// [`START_UP`] at least, and stops being waited for once it exits.
    pub(super) async fn accept(
        &mut self,
        max_frame: usize,
        timeout: Duration,
    ) -> Result<(Connection, Opened), ServingError> {
        let started = tokio::time::Instant::now();
        let starting = self.launched.is_some() && !self.connected;
        let budget = match starting {
            true => timeout.max(START_UP),
            false => timeout,
        };
        loop {
            let left = budget.saturating_sub(started.elapsed());
            let slice = match starting {
                true => left.min(EXIT_POLL),
                false => left,
            };
            if let Some(accepted) = self.accept_within(max_frame, slice, timeout).await {
                self.connected |= accepted.is_ok();
                self.first_of_launched = starting && accepted.is_ok();
                return accepted;
            }
            let exited = self.launched.as_mut().and_then(Launched::exited);
            if exited.is_some() || started.elapsed() >= budget {
                let waited_ms = started.elapsed().as_millis() as u64;
                let exited = exited.map_or(String::new(), |s| format!(" (it exited: {s})"));
                return Err(ServingError::NoConnection { waited_ms, exited });
            }
        }
    }

    /// How long the client's hello on the connection just accepted may take: for the first
    /// connection of a client this case started, [`START_UP`] at least. A process scheduled
    /// late on a busy machine between its Engine.IO open and its CONNECT (seen in CI: over
    /// 3 s) is still starting, which says nothing about the protocol.
    pub(super) fn hello_budget(&self, timeout: Duration) -> Duration {
        match self.first_of_launched {
            true => timeout.max(START_UP),
            false => timeout,
        }
    }

    /// The client's next connection if one comes within `wait`; `None` when none did (the
    /// handshake after it has `timeout`).
    async fn accept_within(
        &mut self,
        max_frame: usize,
        wait: Duration,
        timeout: Duration,
    ) -> Option<Result<(Connection, Opened), ServingError>> {
        let sited = [
            TransportKind::SocketIo,
            TransportKind::Sse,
            TransportKind::Protobuf,
        ];
        if sited.contains(&self.transport) {
            let site = self.site(max_frame);
            match site.accept(wait).await {
                Err(TransportError::Timeout(_)) => None,
                other => Some(other.map_err(ServingError::Accept)),
            }
        } else {
            match tokio::time::timeout(wait, self.listener.accept()).await {
                Ok(Ok(tcp)) if self.transport == TransportKind::Stdio => {
                    let (conn, peer) = relay::accepted(tcp, max_frame);
                    let opened = Opened {
                        peer,
                        path: "the agent's stdio (relayed)".into(),
                        headers: Vec::new(),
                    };
                    Some(Ok((conn, opened)))
                }
                Ok(Ok(tcp)) => Some(
                    websocket::accept(
                        tcp,
                        max_frame,
                        timeout,
                        Some(refusal_of(self.responder.clone())),
                    )
                    .await
                    .map_err(ServingError::Accept),
                ),
                Ok(Err(e)) => Some(Err(ServingError::Listen(e))),
                Err(_) => None,
            }
        }
    }

    /// The case's site, fed from its listener from the first call on.
    fn site(&mut self, max_frame: usize) -> Arc<Site> {
        let listener = self.listener.clone();
        let transport = self.transport;
        // Over the protobuf binding an answer is framed when the POST admits the media type.
        let framed = transport == TransportKind::Protobuf;
        let opts = site_options(self.routes, self.responder.clone(), max_frame, framed);
        let fed = self.site.get_or_insert_with(|| {
            let site = Arc::new(match transport {
                TransportKind::Sse | TransportKind::Protobuf => {
                    Site::Sse(Arc::new(SseServer::new(opts)))
                }
                _ => Site::SocketIo(Arc::new(EioServer::new(ServerOptions::new(max_frame)))),
            });
            let feeding = site.clone();
            let feed = tokio::spawn(async move {
                while let Ok(tcp) = listener.accept().await {
                    feeding.serve_tcp(tcp);
                }
            });
            FedSite { site, feed }
        });
        fed.site.clone()
    }

    /// What the client has written since the last call.
    pub(super) fn output(&mut self) -> Vec<OutputLine> {
        self.launched
            .as_mut()
            .map(Launched::new_lines)
            .unwrap_or_default()
    }

    /// Stops the client (its whole process group): what it wrote last.
    pub(super) async fn stop(mut self) -> Vec<OutputLine> {
        match self.launched.take() {
            Some(launched) => launched.stop().await,
            None => Vec::new(),
        }
    }
}

/// Where a client of `protocol` over `transport` is told to connect when wireprobe serves at
/// `addr` (`{url}`): the protocol's own route for its transport (HPD's WebSocket is `/ws`
/// under the base), else the root; for a stdio protocol, the address `{agent}` relays to.
pub fn client_address(protocol: &dyn Protocol, transport: TransportKind, addr: &str) -> String {
    match transport {
        TransportKind::WebSocket => {
            let at = protocol.endpoint(transport, &format!("http://{addr}"));
            match at.strip_prefix("http://") {
                Some(rest) => format!("ws://{rest}/"),
                None => at,
            }
        }
        // The routes are appended by the client: no trailing slash.
        TransportKind::Sse | TransportKind::Protobuf => format!("http://{addr}"),
        TransportKind::Stdio => format!("tcp://{addr}"),
        TransportKind::SocketIo => format!("http://{addr}/"),
    }
}

/// Where the request that opened a client's connection carried `token`: a `token` query
/// parameter, an entry of `Sec-WebSocket-Protocol`, or `Authorization: Bearer`.
pub(super) fn presented_at(opened: &Opened, token: &str) -> Option<&'static str> {
    let query = opened.path.split_once('?').map_or("", |(_, q)| q);
    let in_query = query.split('&').any(|pair| {
        pair.strip_prefix("token=")
            .is_some_and(|v| crate::transport::query_unescape(v) == token)
    });
    let header = |name: &'static str| {
        opened
            .headers
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let in_subprotocol = header("sec-websocket-protocol")
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == token);
    let in_header = header("authorization").any(|v| v.trim() == format!("Bearer {token}"));
    match (in_query, in_subprotocol, in_header) {
        (true, _, _) => Some("query"),
        (_, true, _) => Some("subprotocol"),
        (_, _, true) => Some("header"),
        _ => None,
    }
}

/// The command line a host runs as its agent: this wireprobe, relaying the agent's stdin and
/// stdout to `addr` (quoted when its path has spaces, as a shell would need it).
pub fn relay_command(addr: &str) -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "wireprobe".into());
    let exe = match exe.contains(char::is_whitespace) {
        true => format!("'{exe}'"),
        false => exe,
    };
    format!("{exe} relay {addr}")
}

/// The SSE + HTTP site a binding describes (its routes, its answers to POSTs).
fn site_options(
    routes: Option<HttpRoutes>,
    responder: Arc<dyn Responder>,
    max_frame: usize,
    framed: bool,
) -> SiteOptions {
    SiteOptions {
        stream_route: routes.and_then(|r| r.stream).unwrap_or("/").to_owned(),
        ws_route: routes.map_or("/ws", |r| r.ws).to_owned(),
        post_routes: routes
            .map(|r| r.posts.iter().map(|p| p.to_string()).collect())
            .unwrap_or_default(),
        // A binding with no standing stream answers each POST with one (AG-UI).
        posts_answer_with_stream: routes.is_some_and(|r| r.stream.is_none()),
        framed_answers: match (framed, routes) {
            (true, Some(r)) => r.framed.iter().map(|m| m.to_string()).collect(),
            _ => Vec::new(),
        },
        max_frame,
        history: HISTORY,
        heartbeat: HEARTBEAT,
        retry_ms: RETRY_MS,
        responder,
    }
}

/// Answers every POST 202: for a protocol that names no answers of its own.
struct AcceptAll;

impl Responder for AcceptAll {
    fn sent(&self, _text: &str) {}
    fn status(&self, _route: &str, _body: &[u8]) -> u16 {
        202
    }
}
