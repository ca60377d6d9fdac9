//! The Socket.IO transport and codec against a real Socket.IO server (socketioxide, in
//! process) and against peers that are not quite Socket.IO.

use crate::common;

use common::{next_sio, soon};
use std::net::SocketAddr;
use wireprobe::reference::{self, RunningTarget};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use socketioxide::extract::{Data, SocketRef};
use socketioxide::SocketIo;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::time::Instant;
use wireprobe::transport::socketio::packet::{SioKind, SioPacket};
use wireprobe::transport::socketio::{self, DEFAULT_PATH};
use wireprobe::transport::websocket::WsOptions;
use wireprobe::transport::{Frame, Received, TransportError};

/// A socketioxide server that greets with the auth payload and echoes `message` as `event`,
/// pinging every 150 ms.
async fn socketioxide_server() -> (RunningTarget, String) {
    let builder = SocketIo::builder()
        .ping_interval(Duration::from_millis(150))
        .ping_timeout(Duration::from_millis(150));
    let target = reference::start_socketio(SocketAddr::from(([127, 0, 0, 1], 0)), builder, |io| {
        io.ns("/", async |s: SocketRef, Data(auth): Data<Value>| {
            s.emit("hello", &auth).ok();
            s.on("message", async |s: SocketRef, Data::<Value>(d)| {
                s.emit("event", &d).ok();
            });
        });
    })
    .await
    .expect("server starts");
    let url = target.url.clone();
    (target, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_emits_and_survives_server_pings() {
    let (_server, url) = socketioxide_server().await;
    let (mut conn, info) = socketio::connect(WsOptions::new(url), DEFAULT_PATH)
        .await
        .expect("connects");
    assert_eq!(info.ping_interval, 150);
    let connect = SioPacket::new(SioKind::Connect, "/", Some(json!({"token": "t-1"})));
    conn.send(Frame::Text(connect.to_frame_text()), soon())
        .await
        .expect("send CONNECT");
    let reply = next_sio(&mut conn).await;
    assert_eq!(reply.kind, SioKind::Connect);
    assert!(
        reply.data.as_ref().and_then(|d| d.get("sid")).is_some(),
        "{reply:?}"
    );
    let hello = next_sio(&mut conn).await;
    assert_eq!(
        hello.event_parts().map(|(n, a)| (n.to_owned(), a.to_vec())),
        Some(("hello".into(), vec![json!({"token": "t-1"})]))
    );

    // Several heartbeats pass; the server would drop us if the transport did not answer pings.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let msg = SioPacket::event(
        "/",
        "message",
        vec![json!({"type": "context-update", "n": 1})],
    );
    conn.send(Frame::Text(msg.to_frame_text()), soon())
        .await
        .expect("send event");
    let echo = next_sio(&mut conn).await;
    assert_eq!(
        echo.event_parts().map(|(n, _)| n.to_owned()),
        Some("event".into())
    );
    assert_eq!(echo.data.unwrap()[1]["n"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_namespace_is_a_connect_error() {
    let (_server, url) = socketioxide_server().await;
    let (mut conn, _) = socketio::connect(WsOptions::new(url), DEFAULT_PATH)
        .await
        .expect("connects");
    conn.send(Frame::Text("40/nowhere,".into()), soon())
        .await
        .expect("send");
    let reply = next_sio(&mut conn).await;
    assert_eq!(
        (reply.kind, reply.namespace.as_str()),
        (SioKind::ConnectError, "/nowhere")
    );
}

/// A WebSocket server that sends `first` (if any) and then nothing at all.
async fn raw_ws_server(first: Option<&'static str>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                let (mut tx, mut rx) = ws.split();
                if let Some(text) = first {
                    let _ = tx
                        .send(tokio_tungstenite::tungstenite::Message::text(text))
                        .await;
                }
                while rx.next().await.is_some() {}
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn missed_heartbeat_is_reported() {
    let url = raw_ws_server(Some(
        r#"0{"sid":"s","upgrades":[],"pingInterval":100,"pingTimeout":100,"maxPayload":1000}"#,
    ))
    .await;
    let (mut conn, _) = socketio::connect(WsOptions::new(url), DEFAULT_PATH)
        .await
        .expect("connects");
    let started = Instant::now();
    loop {
        match conn.recv(soon()).await {
            Some((Received::Frame(_), _)) => continue,
            Some((Received::Failed(TransportError::Protocol(why)), _)) => {
                assert!(why.contains("missed heartbeat"), "{why}");
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn servers_that_are_not_socket_io_are_unreachable() {
    let url = raw_ws_server(Some("hello, I am a chat server")).await;
    let err = socketio::connect(WsOptions::new(url), DEFAULT_PATH)
        .await
        .err()
        .expect("refused");
    assert!(
        err.is_unreachable() && err.to_string().contains("not a Socket.IO server"),
        "{err}"
    );

    // A plain HTTP server without the Engine.IO path.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let _ = tcp
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    let err = socketio::connect(WsOptions::new(format!("http://{addr}")), DEFAULT_PATH)
        .await
        .err()
        .expect("refused");
    assert!(
        err.is_unreachable() && err.to_string().contains("404"),
        "{err}"
    );

    // A WebSocket server that never sends the open packet: reachable, but not answering.
    let url = raw_ws_server(None).await;
    let mut opts = WsOptions::new(url);
    opts.connect_timeout = Duration::from_millis(300);
    let err = socketio::connect(opts, DEFAULT_PATH)
        .await
        .err()
        .expect("times out");
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
}
