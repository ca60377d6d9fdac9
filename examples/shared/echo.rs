#![allow(dead_code)] // each benchmark uses part of it

//! What the benchmarks measure against: a bare tokio-tungstenite server echoing every text
//! message, and clients that send one message and wait for it to come back.

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// How the echo's WebSocket is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settings {
    /// tokio-tungstenite's defaults, as a bare echo is written.
    Default,
    /// With the read buffer wireprobe's own WebSocket transport uses: tungstenite zero-fills
    /// its whole read buffer before every read, and its 128 KiB default costs the echo about
    /// a sixth of its CPU.
    WireprobeReadBuffer,
}

impl Settings {
    fn config(self) -> Option<WebSocketConfig> {
        match self {
            Settings::Default => None,
            Settings::WireprobeReadBuffer => Some(
                WebSocketConfig::default()
                    .read_buffer_size(wireprobe::transport::websocket::READ_BUFFER),
            ),
        }
    }
}

/// Starts the echo server on a free loopback port.
pub async fn server() -> std::io::Result<SocketAddr> {
    server_with(Settings::Default).await
}

/// [`server`], set up as `settings` says.
pub async fn server_with(settings: Settings) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = tcp.set_nodelay(true);
                let accepted = tokio_tungstenite::accept_async_with_config(tcp, settings.config());
                let Ok(mut ws) = accepted.await else {
                    return;
                };
                while let Some(Ok(msg)) = ws.next().await {
                    if msg.is_text() && ws.send(msg).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    Ok(addr)
}

/// The `n`th message (from 0) a benchmark's connection sends.
pub type Messages = fn(u64) -> String;

/// Messages per second echoed through `addr` for `span`, `jobs` connections each sending
/// `message(0)`, `message(1)`, … and waiting for each to come back.
pub async fn rate(addr: SocketAddr, span: Duration, jobs: usize, message: Messages) -> f64 {
    rate_with(addr, span, jobs, Settings::Default, message).await
}

/// [`rate`], the clients set up as `settings` says.
pub async fn rate_with(
    addr: SocketAddr,
    span: Duration,
    jobs: usize,
    settings: Settings,
    message: Messages,
) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + span;
    let mut clients = Vec::new();
    for _ in 0..jobs {
        let count = count.clone();
        clients.push(tokio::spawn(async move {
            let url = format!("ws://{addr}/");
            let connecting =
                tokio_tungstenite::connect_async_with_config(url, settings.config(), false);
            let Ok((mut ws, _)) = connecting.await else {
                return;
            };
            let mut n = 0;
            while Instant::now() < deadline {
                n += 1;
                if ws.send(Message::text(message(n - 1))).await.is_err() {
                    return;
                }
                match ws.next().await {
                    Some(Ok(_)) => count.fetch_add(1, Ordering::Relaxed),
                    _ => return,
                };
            }
        }));
    }
    let started = Instant::now();
    for c in clients {
        let _ = c.await;
    }
    count.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// Messages per second echoed through `addr` for `span`, `jobs` connections each keeping
/// `window` of its messages in flight (a stream of events, as an agent streams its answer,
/// rather than one message waiting for the last).
pub async fn windowed_rate(
    addr: SocketAddr,
    span: Duration,
    jobs: usize,
    window: usize,
    message: Messages,
) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = tokio::time::Instant::now() + span;
    let mut clients = Vec::new();
    for _ in 0..jobs {
        let count = count.clone();
        clients.push(tokio::spawn(async move {
            let url = format!("ws://{addr}/");
            let Ok((ws, _)) = tokio_tungstenite::connect_async(url).await else {
                return;
            };
            let (mut tx, mut rx) = ws.split();
            let room = Arc::new(tokio::sync::Semaphore::new(window));
            let sending = room.clone();
            let sender = async move {
                let mut n = 0;
                while let Ok(Ok(permit)) =
                    tokio::time::timeout_at(deadline, sending.acquire()).await
                {
                    permit.forget();
                    n += 1;
                    if tx.send(Message::text(message(n - 1))).await.is_err() {
                        return;
                    }
                }
            };
            let receiver = async move {
                while let Ok(Some(Ok(_))) = tokio::time::timeout_at(deadline, rx.next()).await {
                    count.fetch_add(1, Ordering::Relaxed);
                    room.add_permits(1);
                }
            };
            tokio::join!(sender, receiver);
        }));
    }
    let started = Instant::now();
    for c in clients {
        let _ = c.await;
    }
    count.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// Round-trip times of `count` messages, one at a time on one connection through `addr`.
pub async fn round_trips(addr: SocketAddr, count: usize, message: Messages) -> Vec<Duration> {
    let url = format!("ws://{addr}/");
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await else {
        return Vec::new();
    };
    let mut times = Vec::with_capacity(count);
    for n in 0..count {
        let text = message(n as u64);
        let sent = Instant::now();
        if ws.send(Message::text(text)).await.is_err() {
            break;
        }
        match ws.next().await {
            Some(Ok(_)) => times.push(sent.elapsed()),
            _ => break,
        }
    }
    let _ = ws.close(None).await;
    times
}
