//! The listener every server wireprobe hosts stands on (the reference targets): bound once,
//! each TCP connection it accepts handed to the server, until it is stopped or dropped. A
//! server over HTTP ([`serve_http`]) has its connections end with the listener, so a stopped
//! target leaves no socket open behind it.

use hyper::body::Incoming;
use hyper::{Request, Response};
use std::future::Future;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A bound listener accepting in a task of its own; dropping it stops it, and with it every
/// connection served through [`serve_http`].
pub struct Listening {
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Whether the listener a connection came from has stopped (see [`Stopped::wait`]).
#[derive(Clone)]
pub struct Stopped(watch::Receiver<bool>);

impl Stopped {
    /// Resolves once the listener stops (at once when it has).
    pub async fn wait(&mut self) {
        // An error means the sender is gone: stopped as well.
        let _ = self.0.wait_for(|stopped| *stopped).await;
    }
}

impl Listening {
    /// Runs until the accept loop ends (the process is interrupted).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.task.abort();
    }
}

/// Binds `addr`, then hands each connection accepted to `on_tcp` with the listener's stop
/// signal (a failed accept is passed over). What `on_tcp` holds lives as long as the listener.
pub async fn accept_each<F>(addr: SocketAddr, mut on_tcp: F) -> std::io::Result<Listening>
where
    F: FnMut(TcpStream, Stopped) + Send + 'static,
{
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let mut until = Stopped(stopped.clone());
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = until.wait() => break,
                accepted = listener.accept() => {
                    if let Ok((tcp, _)) = accepted {
                        on_tcp(tcp, Stopped(stopped.clone()));
                    }
                }
            }
        }
    });
    Ok(Listening { addr, stop, task })
}

/// Binds `addr` and serves the HTTP/1 requests of every connection with `handle` (upgrades
/// allowed); each connection ends when the listener stops.
pub async fn serve_http<B, F, Fut>(addr: SocketAddr, handle: F) -> std::io::Result<Listening>
where
    F: Fn(Option<SocketAddr>, Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let handle = std::sync::Arc::new(handle);
    accept_each(addr, move |tcp, mut stopped| {
        let handle = handle.clone();
        let until = async move { stopped.wait().await };
        super::http_serve::serve(tcp, move |peer, req| handle(peer, req), until);
    })
    .await
}
