#![allow(dead_code)] // each benchmark uses part of it

//! What the benchmarks measure against: a bare tokio-tungstenite server echoing every text
//! message, and clients that send one message and wait for it to come back.

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// Starts the echo server on a free loopback port.
pub async fn server() -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = tcp.set_nodelay(true);
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
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

/// Messages per second echoed through `addr` for `span`, `jobs` connections each sending
/// `payload` and waiting for it to come back.
pub async fn rate(addr: SocketAddr, span: Duration, jobs: usize, payload: &str) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + span;
    let mut clients = Vec::new();
    for _ in 0..jobs {
        let (count, payload) = (count.clone(), payload.to_owned());
        clients.push(tokio::spawn(async move {
            let url = format!("ws://{addr}/");
            let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await else {
                return;
            };
            while Instant::now() < deadline {
                if ws.send(Message::text(payload.clone())).await.is_err() {
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

/// Round-trip times of `count` messages, one at a time on one connection through `addr`.
pub async fn round_trips(addr: SocketAddr, count: usize, payload: &str) -> Vec<Duration> {
    let url = format!("ws://{addr}/");
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await else {
        return Vec::new();
    };
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let sent = Instant::now();
        if ws.send(Message::text(payload.to_owned())).await.is_err() {
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
