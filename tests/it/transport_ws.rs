//! The WebSocket transport against a real local server: round trips, malformed frames out,
//! close codes and reasons in, the frame-size cap, headers and subprotocols at the upgrade.

use futures_util::{SinkExt, StreamExt};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use wireprobe::transport::websocket::{self, WsOptions};
use wireprobe::transport::{Frame, Received, TransportError};

/// What the server saw: its reading of each frame, and the upgrade request's headers.
type Seen = Arc<Mutex<Vec<String>>>;

/// A server that records what it reads and answers "close" with close code 4001.
async fn server() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/path?x=1", listener.local_addr().expect("addr"));
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let header_log = log.clone();
                #[allow(clippy::result_large_err)] // tungstenite's callback signature
                let callback = move |req: &Request, mut resp: Response| {
                    for (k, v) in req.headers() {
                        header_log
                            .lock()
                            .unwrap()
                            .push(format!("header {k}: {}", v.to_str().unwrap_or("?")));
                    }
                    if let Some(p) = req.headers().get("sec-websocket-protocol") {
                        resp.headers_mut()
                            .insert("sec-websocket-protocol", p.clone());
                    }
                    Ok(resp)
                };
                let Ok(ws) = tokio_tungstenite::accept_hdr_async(tcp, callback).await else {
                    return;
                };
                let (mut tx, mut rx) = ws.split();
                while let Some(msg) = rx.next().await {
                    match msg {
                        Ok(Message::Text(t)) if t.as_str() == "close" => {
                            let frame = CloseFrame {
                                code: CloseCode::Library(4001),
                                reason: "bye now".into(),
                            };
                            let _ = tx.send(Message::Close(Some(frame))).await;
                        }
                        // A pong nobody asked for (RFC 6455 lets a peer send one).
                        Ok(Message::Text(t)) if t.as_str() == "pong-me" => {
                            let _ = tx.send(Message::Pong("unasked".into())).await;
                            let _ = tx.send(Message::text("echo pong-me")).await;
                        }
                        Ok(Message::Text(t)) => {
                            log.lock().unwrap().push(format!("text {t}"));
                            let _ = tx.send(Message::text(format!("echo {t}"))).await;
                        }
                        Ok(Message::Binary(b)) => {
                            log.lock().unwrap().push(format!("binary {}", b.len()));
                            let _ = tx.send(Message::binary(b)).await;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            log.lock().unwrap().push(format!("error {e}"));
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, seen)
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[tokio::test]
async fn frames_round_trip_and_headers_reach_the_upgrade() {
    let (url, seen) = server().await;
    let mut opts = WsOptions::new(url);
    opts.headers.push(("X-Probe".into(), "yes".into()));
    opts.subprotocols.push("bearer-token-123".into());
    let mut conn = websocket::connect(&opts).await.expect("connects");
    conn.send(Frame::Text("hello".into()), soon())
        .await
        .expect("send text");
    match conn.recv(soon()).await {
        Some((Received::Frame(Frame::Text(t)), _)) => assert_eq!(t, "echo hello"),
        other => panic!("unexpected {other:?}"),
    }
    conn.send(Frame::Binary(vec![1, 2, 3]), soon())
        .await
        .expect("send binary");
    match conn.recv(soon()).await {
        Some((Received::Frame(Frame::Binary(b)), _)) => assert_eq!(b, vec![1, 2, 3]),
        other => panic!("unexpected {other:?}"),
    }
    let log = seen.lock().unwrap().join("\n");
    assert!(log.contains("header x-probe: yes"), "{log}");
    assert!(
        log.contains("header sec-websocket-protocol: bearer-token-123"),
        "{log}"
    );
}

#[tokio::test]
async fn close_code_and_reason_are_observed() {
    let (url, _) = server().await;
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    conn.send(Frame::Text("close".into()), soon())
        .await
        .expect("send");
    match conn.recv(soon()).await {
        Some((Received::Closed { code, reason }, _)) => {
            assert_eq!(code, Some(4001));
            assert_eq!(reason, "bye now");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(conn.is_finished());
    assert!(conn.recv(soon()).await.is_none(), "nothing after the end");
}

#[tokio::test]
async fn invalid_utf8_text_frames_can_be_sent() {
    let (url, seen) = server().await;
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    conn.send(Frame::RawText(vec![0x7b, 0xff, 0xfe, 0x7d]), soon())
        .await
        .expect("send");
    // The server's WebSocket library refuses the frame: proof it went out as text, not UTF-8.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !seen.lock().unwrap().iter().any(|l| l.starts_with("error"))
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = seen.lock().unwrap().join("\n");
    assert!(log.to_lowercase().contains("utf"), "{log}");
}

#[tokio::test]
async fn frames_over_the_limit_end_the_connection_clearly() {
    let (url, _) = server().await;
    let mut opts = WsOptions::new(url);
    opts.max_frame = 1024;
    let mut conn = websocket::connect(&opts).await.expect("connects");
    conn.send(Frame::Binary(vec![7; 4096]), soon())
        .await
        .expect("send");
    match conn.recv(soon()).await {
        Some((Received::Failed(TransportError::FrameTooLarge { size, limit }), _)) => {
            assert!(size > 1024);
            assert_eq!(limit, 1024);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn connection_errors_are_classified() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let err = websocket::connect(&WsOptions::new(format!("ws://127.0.0.1:{port}/")))
        .await
        .err();
    assert!(matches!(err, Some(ref e) if e.is_unreachable()), "{err:?}");
    let err = websocket::connect(&WsOptions::new("http://127.0.0.1:1/"))
        .await
        .err();
    assert!(
        matches!(err, Some(TransportError::BadTarget { .. })),
        "{err:?}"
    );
}

/// A server that completes the upgrade by hand and then reports how many bytes its first read
/// of the socket took in.
async fn raw_server() -> (String, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/", listener.local_addr().expect("addr"));
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.expect("accept");
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            tcp.read_exact(&mut byte).await.expect("request");
            request.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&request);
        let key = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("sec-websocket-key: ")
                    .or(l.strip_prefix("Sec-WebSocket-Key: "))
            })
            .expect("key");
        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
        let answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        );
        tcp.write_all(answer.as_bytes()).await.expect("answer");
        let mut first = vec![0u8; 4096];
        let n = tcp.read(&mut first).await.expect("read");
        first.truncate(n);
        let _ = tx.send(first);
    });
    (url, rx)
}

#[tokio::test]
async fn sends_queued_behind_each_other_go_out_together_in_order() {
    let (url, first_read) = raw_server().await;
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    for text in ["one", "two", "three"] {
        conn.send(Frame::Text(text.into()), soon())
            .await
            .expect("send");
    }
    let bytes = tokio::time::timeout(Duration::from_secs(5), first_read)
        .await
        .expect("the server read")
        .expect("bytes");
    // Each masked client frame: two header bytes, four mask bytes, the payload.
    let mut payloads = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() >= 6 {
        let len = usize::from(rest[1] & 0x7f);
        let (mask, payload) = (&rest[2..6], &rest[6..6 + len]);
        payloads.push(
            payload
                .iter()
                .enumerate()
                .map(|(i, b)| char::from(b ^ mask[i % 4]))
                .collect::<String>(),
        );
        rest = &rest[6 + len..];
    }
    assert_eq!(payloads, ["one", "two", "three"], "all three in one read");
}

#[tokio::test]
async fn a_write_that_failed_fails_a_later_send() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        // Upgrades, then goes away without a word.
        let ws = tokio_tungstenite::accept_async(tcp).await.expect("upgrade");
        drop(ws);
    });
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    let mut failed = None;
    for _ in 0..100 {
        match conn.send(Frame::Text("anyone?".into()), soon()).await {
            Ok(()) => tokio::time::sleep(Duration::from_millis(10)).await,
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    assert_eq!(failed, Some(TransportError::Closed));
    match conn.recv(soon()).await {
        Some((received, _)) => assert!(websocket::dropped(&received), "{received:?}"),
        None => panic!("the end is observed"),
    }
}

#[tokio::test]
async fn frames_handed_over_still_go_out_when_the_connection_is_dropped() {
    let (url, first_read) = raw_server().await;
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    conn.send(Frame::Text("last words".into()), soon())
        .await
        .expect("send");
    // Dropped as a network failure would drop it, right after the send returned.
    drop(conn);
    let bytes = tokio::time::timeout(Duration::from_secs(5), first_read)
        .await
        .expect("the server read")
        .expect("bytes");
    assert_eq!(bytes.len(), 6 + "last words".len(), "{bytes:?}");
}

/// The upgrade is one request the target answers: its time is the round trip a wait for the
/// target's answers adds (see `waits.rs`), here 100 ms each way through a delaying proxy.
#[tokio::test]
async fn the_upgrade_measures_the_round_trip() {
    let (url, _seen) = server().await;
    let addr: std::net::SocketAddr = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("a loopback address");
    let far = crate::common::distant::proxy(addr, std::time::Duration::from_millis(100)).await;
    let opts = WsOptions::new(format!("ws://{far}/"));
    let conn = websocket::connect(&opts).await.expect("connects");
    let took = conn.round_trip().expect("measured").as_millis();
    assert!((200..2000).contains(&took), "{took} ms");
}

/// A ping asked for is answered behind everything the target sent before it read it, and says
/// how long that took; a pong the target sent unasked says nothing.
#[tokio::test]
async fn a_ping_is_answered_behind_what_came_before_it() {
    let (url, _seen) = server().await;
    let mut conn = websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    conn.send(Frame::Text("pong-me".into()), soon())
        .await
        .expect("sent");
    conn.send(Frame::Text("a".into()), soon())
        .await
        .expect("sent");
    assert!(conn.ping(), "a WebSocket can ask for a pong");
    let mut got = Vec::new();
    while let Some((received, _)) = conn.recv(soon()).await {
        let last = matches!(received, Received::RoundTrip(_));
        got.push(received);
        if last {
            break;
        }
    }
    assert!(
        matches!(&got[..], [
            Received::Frame(Frame::Text(first)),
            Received::Frame(Frame::Text(second)),
            Received::RoundTrip(took),
        ] if first == "echo pong-me" && second == "echo a" && *took < Duration::from_secs(5)),
        "{got:?}"
    );
}
