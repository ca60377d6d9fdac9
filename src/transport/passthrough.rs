//! The forwarding half of `wireprobe proxy`: a listener whose clients' requests go to one
//! upstream unchanged, each client TCP connection over an upstream connection of its own.
//! A WebSocket upgrade the upstream accepts turns both connections into a byte relay: every
//! byte forwarded as it came, and a copy read by a [`WsTap`] per direction, whose messages
//! are handed to a [`TapSender`] for judging off the forwarding path. The requests a binding
//! judges ([`Grouping`]) are forwarded with their answers streamed back, a copy of each read
//! for the judge ([`body_tap`](super::body_tap)). It knows no protocol.

use super::body_tap::{pump, take_body, AnswerTap, ProxyBody, Pumped};
use super::exchange::{Body, HttpAnswer};
pub use super::exchanges::Grouping;
use super::exchanges::{client_items, judged_headers, AnswerShape, Book, Exchange, Held, Key};
use super::relayed::{copy_tapped, hand_over};
pub use super::relayed::{Peer, Relayed};
use super::tap::TapSender;
use super::tls::Stream;
use super::ws_tap::WsTap;
use super::{Received, TransportError};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

/// Where the proxy forwards to: `ws://`, `wss://`, `http://` or `https://` and an authority;
/// a path of its own is where a client asking for `/` is sent.
#[derive(Clone, Debug)]
pub struct Upstream {
    url: String,
    uri: Uri,
    secure: bool,
    authority: String,
    root: Option<String>,
}

impl Upstream {
    pub fn parse(url: &str) -> Result<Upstream, TransportError> {
        let bad = |reason: String| TransportError::BadTarget {
            target: url.to_owned(),
            reason,
        };
        let uri: Uri = url.parse().map_err(|e| bad(format!("{e}")))?;
        let secure = match uri.scheme_str() {
            Some("ws" | "http") => false,
            Some("wss" | "https") => true,
            other => {
                return Err(bad(format!(
                    "unsupported scheme {}; use ws://, wss://, http:// or https://",
                    crate::show::quoted_or_none(other)
                )))
            }
        };
        let authority = uri
            .authority()
            .ok_or_else(|| bad("no host".into()))?
            .as_str()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_owned();
        let root = uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .filter(|p| p != "/" && !p.is_empty());
        Ok(Upstream {
            url: url.to_owned(),
            uri,
            secure,
            authority,
            root,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The request target upstream for what a client asked for: as it came, except that `/`
    /// (with or without a query) goes to the upstream URL's own path, the queries joined.
    pub fn target_for(&self, asked: &str) -> String {
        let (path, query) = asked.split_once('?').unwrap_or((asked, ""));
        match (&self.root, path) {
            (Some(root), "/" | "") if query.is_empty() => root.clone(),
            (Some(root), "/" | "") => {
                let sep = if root.contains('?') { '&' } else { '?' };
                format!("{root}{sep}{query}")
            }
            _ if asked.is_empty() => "/".into(),
            _ => asked.to_owned(),
        }
    }

    /// Opens a connection to the upstream (TLS for `wss://` and `https://`).
    pub async fn dial(&self, insecure: bool, timeout: Duration) -> Result<Stream, TransportError> {
        super::tls::dial(&self.url, &self.uri, self.secure, insecure, timeout).await
    }
}

/// How the relay behaves.
#[derive(Clone, Debug)]
pub struct PassOptions {
    /// Largest message judged; longer ones are forwarded and reported as too large.
    pub max_frame: usize,
    /// Accept any certificate from a `wss://`/`https://` upstream.
    pub insecure: bool,
    /// Budget for reaching the upstream.
    pub connect_timeout: Duration,
    /// How long one direction may go on after the other ended before both are closed, and
    /// how long a session spread over HTTP requests stays open with none in flight.
    pub linger: Duration,
}

/// What every connection's requests share.
struct Shared {
    upstream: Upstream,
    opts: PassOptions,
    grouping: Grouping,
    book: Arc<Book>,
}

/// Accepts clients on `listener` and forwards each to the upstream until the task running
/// it is dropped; the requests that are not upgrades are judged as `grouping` says.
pub async fn serve(
    listener: TcpListener,
    upstream: Upstream,
    opts: PassOptions,
    grouping: Grouping,
    tap: TapSender<Relayed>,
) {
    let book = Book::new(tap, opts.linger);
    let shared = Arc::new(Shared {
        upstream,
        opts,
        grouping,
        book,
    });
    // Every connection's task lives in this set: dropping the proxy drops them all.
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let Ok((tcp, peer)) = accepted else {
            // Out of descriptors, say: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let conn = Arc::new(ClientConn {
            shared: shared.clone(),
            peer: Some(peer),
            sender: Mutex::new(None),
            relay: std::sync::Mutex::new(None),
        });
        tasks.spawn(conn.serve(tcp));
    }
}

/// The byte relay of an upgraded connection, run once the upgrade's answer has gone out.
type RelayTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// One client TCP connection and its upstream connection.
struct ClientConn {
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    /// The upstream connection, dialled at the first request.
    sender: Mutex<Option<SendRequest<ProxyBody>>>,
    /// The byte relay an upgrade starts.
    relay: std::sync::Mutex<Option<RelayTask>>,
}

type Answer = Response<ProxyBody>;

impl ClientConn {
    async fn serve(self: Arc<Self>, tcp: TcpStream) {
        let me = self.clone();
        let svc = hyper::service::service_fn(move |req| {
            let me = me.clone();
            async move { Ok::<_, std::convert::Infallible>(me.forward(req).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .preserve_header_case(true)
            .serve_connection(TokioIo::new(tcp), svc)
            .with_upgrades()
            .await;
        let relay = self.relay.lock().ok().and_then(|mut r| r.take());
        if let Some(relay) = relay {
            relay.await;
        }
    }

    fn tap(&self) -> &TapSender<Relayed> {
        self.shared.book.tap()
    }

    /// Forwards one request and hands back the upstream's answer.
    async fn forward(self: &Arc<Self>, mut req: Request<Incoming>) -> Answer {
        let asked = req
            .uri()
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let target = self.shared.upstream.target_for(&asked);
        match target.parse::<Uri>() {
            Ok(uri) => *req.uri_mut() = uri,
            Err(e) => {
                let why = format!("the path {asked:?} cannot be forwarded: {e}");
                return own_answer(StatusCode::BAD_REQUEST, &why);
            }
        }
        if let Ok(host) = HeaderValue::from_str(&self.shared.upstream.authority) {
            req.headers_mut().insert(HOST, host);
        }
        if req.headers().contains_key(hyper::header::UPGRADE) {
            return self.forward_upgrade(req, &target).await;
        }
        let from = || super::sse_server::stream_from(&req);
        let root = self.shared.upstream.uri.path();
        match self
            .shared
            .grouping
            .exchange(req.method(), &target, root, from)
        {
            Some(exchange) => self.forward_exchange(req, &target, exchange).await,
            None => match self.send(req.map(BodyExt::boxed)).await {
                Ok(answer) => answer.map(BodyExt::boxed),
                Err(e) => own_answer(StatusCode::BAD_GATEWAY, &e.to_string()),
            },
        }
    }

    /// The URL a session opened by a request for `target` is known by.
    fn url(&self, websocket: bool, target: &str) -> String {
        let scheme = match (websocket, self.shared.upstream.secure) {
            (true, false) => "ws",
            (true, true) => "wss",
            (false, false) => "http",
            (false, true) => "https",
        };
        format!("{scheme}://{}{target}", self.shared.upstream.authority)
    }

    /// Forwards a WebSocket upgrade; accepted, both connections become a byte relay.
    async fn forward_upgrade(self: &Arc<Self>, mut req: Request<Incoming>, target: &str) -> Answer {
        let key = self.shared.grouping.upgrade_key(target);
        let url = self.url(true, target);
        let held = self.shared.book.join(&key, self.peer, &url).await;
        let conn = held.conn;
        // Compressed frames could not be read: no extension is offered upstream.
        req.headers_mut().remove("sec-websocket-extensions");
        let client_upgrade = hyper::upgrade::on(&mut req);
        let mut answer = match self.send(req.map(BodyExt::boxed)).await {
            Ok(answer) => answer,
            Err(e) => return self.refuse(held, e).await,
        };
        if answer.status() != StatusCode::SWITCHING_PROTOCOLS {
            let status = answer.status().as_u16();
            let refused = Received::Failed(TransportError::Rejected { status });
            self.item(conn, Peer::Upstream, refused).await;
            self.shared.book.leave(held).await;
            return answer.map(BodyExt::boxed);
        }
        let upstream_upgrade = hyper::upgrade::on(&mut answer);
        let me = self.clone();
        let relay: RelayTask = Box::pin(async move {
            match tokio::try_join!(client_upgrade, upstream_upgrade) {
                Ok((client, upstream)) => {
                    me.relay_bytes(conn, TokioIo::new(client), TokioIo::new(upstream))
                        .await
                }
                Err(e) => {
                    let why = format!("the upgrade did not complete: {e}");
                    me.item(
                        conn,
                        Peer::Upstream,
                        Received::Failed(TransportError::Protocol(why)),
                    )
                    .await;
                }
            }
            me.shared.book.leave(held).await;
        });
        if let Ok(mut slot) = self.relay.lock() {
            *slot = Some(relay);
        }
        answer.map(BodyExt::boxed)
    }

    /// Forwards a request the binding judges: the client's item handed over before it goes,
    /// the answer streamed back with a copy read for the judge.
    async fn forward_exchange(
        self: &Arc<Self>,
        req: Request<Incoming>,
        target: &str,
        exchange: Exchange,
    ) -> Answer {
        let url = self.url(false, target);
        let mut held = self.shared.book.join(&exchange.key, self.peer, &url).await;
        let conn = held.conn;
        let max = self.shared.opts.max_frame;
        let method = req.method().to_string();
        let (parts, body) = req.into_parts();
        let taken = match take_body(body, max).await {
            Ok(taken) => taken,
            Err(e) => {
                let why = format!("the request body failed: {e}");
                self.item(conn, Peer::Client, Received::Notice(why.clone()))
                    .await;
                self.shared.book.leave(held).await;
                return own_answer(StatusCode::BAD_REQUEST, &why);
            }
        };
        let headers = judged_headers(&parts.headers);
        for item in client_items(&exchange, &taken.bytes, taken.whole, max, headers) {
            self.item(conn, Peer::Client, item).await;
        }
        let answer = match self.send(Request::from_parts(parts, taken.body)).await {
            Ok(answer) => answer,
            Err(e) => return self.refuse(held, e).await,
        };
        let status = answer.status().as_u16();
        let content_type = answer
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let head = HttpAnswer {
            method,
            path: exchange.route.clone(),
            status,
            content_type,
            body: Body::Empty,
        };
        let shape = AnswerShape::of(&exchange.kind, &head, self.shared.grouping.framed());
        if let Some(item) = shape.at_head(&head) {
            self.item(conn, Peer::Upstream, item).await;
        }
        let (parts, body) = answer.into_parts();
        if exchange.key == Key::Opening {
            // The client learns the session's name from this answer and names it in its next
            // request at once: the name is known before the answer goes on.
            let taken = match take_body(body, max).await {
                Ok(taken) => taken,
                Err(e) => {
                    let e = TransportError::Protocol(format!("the answer's body failed: {e}"));
                    return self.refuse(held, e).await;
                }
            };
            let pumped = Pumped::taken(&taken);
            if let Some(sid) = shape.opened_sid(&pumped) {
                self.shared.book.name(&mut held, &sid).await;
            }
            self.answered(held, shape, head, pumped).await;
            return Response::from_parts(parts, taken.body);
        }
        let to = AnswerTap {
            tap: self.tap().clone(),
            conn,
        };
        let (body, pumping) = pump(body, shape.reading(max), to);
        let me = self.clone();
        tokio::spawn(async move {
            let pumped = pumping.await;
            me.answered(held, shape, head, pumped).await;
        });
        Response::from_parts(parts, body)
    }

    /// The answer `head` of `shape` has ended as `pumped` says: the judge gets its end, and
    /// the session is let go.
    async fn answered(&self, held: Held, shape: AnswerShape, head: HttpAnswer, pumped: Pumped) {
        for (from, item) in shape.at_end(head, pumped) {
            self.item(held.conn, from, item).await;
        }
        self.shared.book.leave(held).await;
    }

    /// Sends `req` over this connection's upstream connection, dialling it first if needed.
    async fn send(&self, req: Request<ProxyBody>) -> Result<Response<Incoming>, TransportError> {
        let mut sender = self.sender.lock().await;
        if sender.as_ref().is_none_or(|s| s.is_closed()) {
            let opts = &self.shared.opts;
            let io = self
                .shared
                .upstream
                .dial(opts.insecure, opts.connect_timeout)
                .await?;
            let (tx, conn) = hyper::client::conn::http1::Builder::new()
                .preserve_header_case(true)
                .handshake(TokioIo::new(io))
                .await
                .map_err(|e| TransportError::Protocol(format!("upstream HTTP: {e}")))?;
            tokio::spawn(conn.with_upgrades());
            *sender = Some(tx);
        }
        let Some(tx) = sender.as_mut() else {
            return Err(TransportError::Closed);
        };
        tx.ready()
            .await
            .map_err(|e| TransportError::Protocol(format!("upstream HTTP: {e}")))?;
        tx.send_request(req)
            .await
            .map_err(|e| TransportError::Protocol(format!("upstream HTTP: {e}")))
    }

    /// The proxy's own answer when the upstream gave none: the session is told why, and let
    /// go. Only an upstream that could not be reached makes the session an `error`.
    async fn refuse(&self, held: Held, error: TransportError) -> Answer {
        let why = error.to_string();
        self.item(held.conn, Peer::Upstream, Received::Failed(error))
            .await;
        self.shared.book.leave(held).await;
        own_answer(StatusCode::BAD_GATEWAY, &why)
    }

    async fn item(&self, conn: usize, from: Peer, received: Received) {
        hand_over(self.tap(), conn, from, received, Instant::now()).await;
    }

    /// Relays bytes both ways until both directions end (or one ended `linger` ago).
    async fn relay_bytes<C, U>(&self, conn: usize, client: C, upstream: U)
    where
        C: AsyncRead + AsyncWrite + Unpin + Send,
        U: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let (client_rx, client_tx) = tokio::io::split(client);
        let (upstream_rx, upstream_tx) = tokio::io::split(upstream);
        let tap = self.tap();
        let frames = || WsTap::new(self.shared.opts.max_frame);
        let up = copy_tapped(client_rx, upstream_tx, frames(), conn, Peer::Client, tap);
        let down = copy_tapped(upstream_rx, client_tx, frames(), conn, Peer::Upstream, tap);
        tokio::pin!(up, down);
        let linger = self.shared.opts.linger;
        tokio::select! {
            _ = &mut up => { let _ = tokio::time::timeout(linger, down).await; }
            _ = &mut down => { let _ = tokio::time::timeout(linger, up).await; }
        }
    }
}

/// An answer of the proxy's own (the upstream gave none).
fn own_answer(status: StatusCode, why: &str) -> Answer {
    let body = Full::new(Bytes::from(format!("wireprobe proxy: {why}\n")));
    let mut answer = Response::new(body.map_err(|never| match never {}).boxed());
    *answer.status_mut() = status;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_asking_for_the_root_reaches_the_upstream_path() {
        let up = Upstream::parse("ws://127.0.0.1:9000/haip?v=1").expect("parses");
        assert_eq!(up.target_for("/"), "/haip?v=1");
        assert_eq!(up.target_for("/?token=a"), "/haip?v=1&token=a");
        assert_eq!(up.target_for("/other?x"), "/other?x");
        let bare = Upstream::parse("ws://127.0.0.1:9000").expect("parses");
        assert_eq!(bare.target_for("/?token=a"), "/?token=a");
        assert!(Upstream::parse("ftp://x").is_err());
    }
}
