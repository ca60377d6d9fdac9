//! The forwarding half of `wireprobe proxy`: a listener whose clients' requests go to one
//! upstream unchanged, each client TCP connection over an upstream connection of its own.
//! A WebSocket upgrade the upstream accepts turns both connections into a byte relay: every
//! byte forwarded as it came, and a copy read by a [`WsTap`] per direction, whose messages
//! are handed to a [`TapSender`] for judging off the forwarding path. It knows no protocol.

use super::relayed::{copy_tapped, hand_over};
pub use super::relayed::{Peer, Relayed};
use super::tap::TapSender;
use super::tls::Stream;
use super::ws_tap::WsTap;
use super::{Received, TransportError};
use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// How long one direction may go on after the other ended before both are closed.
    pub linger: Duration,
}

/// What every connection's requests share.
struct Shared {
    upstream: Upstream,
    opts: PassOptions,
    tap: TapSender<Relayed>,
    sessions: AtomicUsize,
}

/// Accepts clients on `listener` and forwards each to the upstream until the task running
/// it is dropped.
pub async fn serve(
    listener: TcpListener,
    upstream: Upstream,
    opts: PassOptions,
    tap: TapSender<Relayed>,
) {
    let shared = Arc::new(Shared {
        upstream,
        opts,
        tap,
        sessions: AtomicUsize::new(0),
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
    sender: Mutex<Option<SendRequest<Incoming>>>,
    /// The byte relay an upgrade starts.
    relay: std::sync::Mutex<Option<RelayTask>>,
}

type Answer = Response<Either<Incoming, Full<Bytes>>>;

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

    /// Forwards one request and hands back the upstream's answer.
    async fn forward(self: &Arc<Self>, mut req: Request<Incoming>) -> Answer {
        let asked = req
            .uri()
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let upgrade = req.headers().contains_key(hyper::header::UPGRADE);
        let session = upgrade.then(|| self.shared.sessions.fetch_add(1, Ordering::Relaxed) + 1);
        if let Some(conn) = session {
            self.shared
                .tap
                .send(
                    Relayed::Opened {
                        conn,
                        peer: self.peer,
                        target: asked.clone(),
                    },
                    0,
                )
                .await;
        }
        let target = self.shared.upstream.target_for(&asked);
        match target.parse::<Uri>() {
            Ok(uri) => *req.uri_mut() = uri,
            Err(e) => {
                return self
                    .refuse(session, StatusCode::BAD_REQUEST, e.to_string())
                    .await
            }
        }
        if let Ok(host) = HeaderValue::from_str(&self.shared.upstream.authority) {
            req.headers_mut().insert(HOST, host);
        }
        // Compressed frames could not be read: no extension is offered upstream.
        req.headers_mut().remove("sec-websocket-extensions");
        let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
        let mut answer = match self.send(req).await {
            Ok(answer) => answer,
            Err(e) => {
                return self
                    .refuse(session, StatusCode::BAD_GATEWAY, e.to_string())
                    .await
            }
        };
        let (Some(conn), Some(client_upgrade)) = (session, client_upgrade) else {
            return answer.map(Either::Left);
        };
        if answer.status() != StatusCode::SWITCHING_PROTOCOLS {
            let status = answer.status().as_u16();
            self.item(
                conn,
                Peer::Upstream,
                Received::Failed(TransportError::Rejected { status }),
            )
            .await;
            self.ended(conn).await;
            return answer.map(Either::Left);
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
            me.ended(conn).await;
        });
        if let Ok(mut slot) = self.relay.lock() {
            *slot = Some(relay);
        }
        answer.map(Either::Left)
    }

    /// Sends `req` over this connection's upstream connection, dialling it first if needed.
    async fn send(&self, req: Request<Incoming>) -> Result<Response<Incoming>, TransportError> {
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

    /// The proxy's own answer when the upstream could not give one: the session, if any, is
    /// told why and ends.
    async fn refuse(&self, session: Option<usize>, status: StatusCode, why: String) -> Answer {
        if let Some(conn) = session {
            let error = TransportError::Unreachable {
                target: self.shared.upstream.url.clone(),
                reason: why.clone(),
            };
            self.item(conn, Peer::Upstream, Received::Failed(error))
                .await;
            self.ended(conn).await;
        }
        let mut answer = Response::new(Either::Right(Full::new(Bytes::from(format!(
            "wireprobe proxy: {why}\n"
        )))));
        *answer.status_mut() = status;
        answer
    }

    async fn item(&self, conn: usize, from: Peer, received: Received) {
        hand_over(&self.shared.tap, conn, from, received, Instant::now()).await;
    }

    async fn ended(&self, conn: usize) {
        self.shared.tap.send(Relayed::Ended { conn }, 0).await;
    }

    /// Relays bytes both ways until both directions end (or one ended `linger` ago).
    async fn relay_bytes<C, U>(&self, conn: usize, client: C, upstream: U)
    where
        C: AsyncRead + AsyncWrite + Unpin + Send,
        U: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let (client_rx, client_tx) = tokio::io::split(client);
        let (upstream_rx, upstream_tx) = tokio::io::split(upstream);
        let tap = &self.shared.tap;
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
