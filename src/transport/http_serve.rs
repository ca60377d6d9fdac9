//! What the servers wireprobe runs to judge a client share: the HTTP/1 requests of each TCP
//! connection served in a task of their own (upgrades allowed), and the client sessions they
//! open handed to whoever accepts them, bounded.

use super::websocket::Opened;
use super::{Connection, TransportError};
use hyper::body::Incoming;
use hyper::{Request, Response};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, Mutex};

/// Serves the requests of one TCP connection with `handle` (in a task of its own); a
/// request may upgrade the connection to a WebSocket.
pub(crate) fn serve_tcp<B, F, Fut>(tcp: TcpStream, handle: F)
where
    F: Fn(Option<SocketAddr>, Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    serve(tcp, handle, std::future::pending());
}

/// [`serve_tcp`], the connection ending when `until` resolves (its listener stopped).
pub(crate) fn serve<B, F, Fut>(
    tcp: TcpStream,
    handle: F,
    until: impl Future<Output = ()> + Send + 'static,
) where
    F: Fn(Option<SocketAddr>, Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let _ = tcp.set_nodelay(true);
    let peer = tcp.peer_addr().ok();
    let handle = std::sync::Arc::new(handle);
    tokio::spawn(async move {
        let svc = hyper::service::service_fn(move |req| {
            let handle = handle.clone();
            async move { Ok::<_, Infallible>(handle(peer, req).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
            .with_upgrades();
        tokio::select! {
            _ = conn => {}
            _ = until => {}
        }
    });
}

/// The client sessions a server opened and the runner has not taken yet.
pub(crate) struct Arrivals {
    rx: Mutex<mpsc::Receiver<(Connection, Opened)>>,
}

impl Arrivals {
    /// A queue of at most `waiting` sessions, and the sender a server announces them on
    /// (`try_send` fails when the queue is full: the server refuses the client).
    pub(crate) fn new(waiting: usize) -> (mpsc::Sender<(Connection, Opened)>, Arrivals) {
        let (tx, rx) = mpsc::channel(waiting);
        (tx, Arrivals { rx: Mutex::new(rx) })
    }

    /// The next session, within `timeout`.
    pub(crate) async fn accept(
        &self,
        timeout: Duration,
    ) -> Result<(Connection, Opened), TransportError> {
        let mut rx = self.rx.lock().await;
        match tokio::time::timeout(timeout, rx.recv()).await {
            Ok(Some(arrival)) => Ok(arrival),
            Ok(None) => Err(TransportError::Closed),
            Err(_) => Err(TransportError::Timeout(timeout.as_millis() as u64)),
        }
    }
}
