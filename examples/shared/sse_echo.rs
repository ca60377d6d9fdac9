#![allow(dead_code)] // each benchmark uses part of it

//! What HTTP + SSE benchmarks measure against: a bare hyper server where each client holds an
//! SSE stream (`GET /stream/ID`) and posts (`POST /inputs/ID`); every body posted comes back
//! on that client's stream as one event, or as `answers` events written together (the shape of
//! an agent's turn, which answers one input with several). Clients post one message and wait
//! for all its events.

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

type Streams = Arc<Mutex<HashMap<String, mpsc::Sender<Bytes>>>>;
type Body = BoxBody<Bytes, Infallible>;

/// Starts the server on a free loopback port, answering each POST with `answers` events (at
/// least one), all in one chunk.
pub async fn server(answers: usize) -> std::io::Result<SocketAddr> {
    let answers = answers.max(1);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let streams = Streams::default();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let streams = streams.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req| answer(req, streams.clone(), answers));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

async fn answer(
    req: Request<Incoming>,
    streams: Streams,
    answers: usize,
) -> Result<Response<Body>, Infallible> {
    let id = req.uri().path().rsplit('/').next().unwrap_or("").to_owned();
    if req.method() == Method::GET {
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        if let Ok(mut all) = streams.lock() {
            all.insert(id, tx);
        }
        let events = futures_util::stream::unfold(rx, |mut rx| async move {
            let chunk = rx.recv().await?;
            Some((Ok::<_, Infallible>(Frame::data(chunk)), rx))
        });
        let mut resp = Response::new(BodyExt::boxed(StreamBody::new(events)));
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        return Ok(resp);
    }
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let tx = streams.lock().ok().and_then(|all| all.get(&id).cloned());
    if let Some(tx) = tx {
        let mut events = Vec::with_capacity(answers * (body.len() + 8));
        for _ in 0..answers {
            events.extend_from_slice(b"data: ");
            events.extend_from_slice(&body);
            events.extend_from_slice(b"\n\n");
        }
        let _ = tx.send(Bytes::from(events)).await;
    }
    let mut resp = Response::new(Empty::new().boxed());
    *resp.status_mut() = StatusCode::ACCEPTED;
    Ok(resp)
}

/// POSTs per second through `addr` (a [`server`] answering each with `answers` events) for
/// `span`, `jobs` clients each posting `message` and reading all its events back from its
/// stream before posting the next.
pub async fn rate(
    addr: SocketAddr,
    span: Duration,
    jobs: usize,
    message: &'static str,
    answers: usize,
) -> f64 {
    let answers = answers.max(1);
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + span;
    let client = reqwest::Client::new();
    let mut clients = Vec::new();
    for job in 0..jobs {
        let (count, client) = (count.clone(), client.clone());
        clients.push(tokio::spawn(async move {
            let Ok(stream) = client
                .get(format!("http://{addr}/stream/{job}"))
                .send()
                .await
            else {
                return;
            };
            let mut stream = stream.bytes_stream();
            let mut pending = Vec::new();
            while Instant::now() < deadline {
                let posted = client
                    .post(format!("http://{addr}/inputs/{job}"))
                    .body(message)
                    .send()
                    .await;
                if posted.is_err() {
                    return;
                }
                // Each event is whole at its blank line.
                for _ in 0..answers {
                    loop {
                        if let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
                            pending.drain(..end + 2);
                            break;
                        }
                        match stream.next().await {
                            Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                            _ => return,
                        }
                    }
                }
                count.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for c in clients {
        let _ = c.await;
    }
    count.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}
