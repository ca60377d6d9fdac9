//! The Engine.IO server against real clients on loopback: wireprobe's own Socket.IO client
//! (a WebSocket at once), and raw HTTP long-polling that upgrades, as `socket.io-client` does.

use super::*;
use crate::transport::socketio;
use crate::transport::websocket::WsOptions;

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

/// A server on a loopback port, fed by a task that accepts.
async fn listening(opts: ServerOptions) -> (Arc<EioServer>, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = Arc::new(EioServer::new(opts));
    let feeding = server.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            feeding.serve_tcp(tcp);
        }
    });
    (server, addr)
}

async fn text_of(conn: &mut Connection) -> String {
    match conn.recv(soon()).await {
        Some((Received::Frame(Frame::Text(text)), _)) => text,
        other => panic!("expected a text frame, got {other:?}"),
    }
}

/// A session opened over HTTP long-polling, as `socket.io-client` opens one: the HTTP client
/// (its requests bounded), the session's polling URL, what the open packet said, and the
/// runner's end.
struct Polling {
    http: reqwest::Client,
    with_sid: String,
    info: socketio::packet::OpenInfo,
    served: Connection,
}

async fn polling_session(server: &EioServer, addr: SocketAddr) -> Polling {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .expect("client");
    let base = format!("http://{addr}/socket.io/?EIO=4&transport=polling");
    let open = http.get(&base).send().await.expect("handshake");
    let open = open.text().await.expect("body");
    let Ok(socketio::packet::EioPacket::Open(info)) = socketio::packet::parse_eio(&open) else {
        panic!("{open}");
    };
    let (served, _) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    let with_sid = format!("{base}&sid={}", info.sid);
    Polling {
        http,
        with_sid,
        info,
        served,
    }
}

/// The upgrade's WebSocket for session `sid`, its probe answered.
async fn probed(addr: SocketAddr, sid: &str) -> Connection {
    let ws_url = format!("ws://{addr}/socket.io/?EIO=4&transport=websocket&sid={sid}");
    let mut ws = crate::transport::websocket::connect(&WsOptions::new(ws_url))
        .await
        .expect("upgrades");
    ws.send(Frame::Text("2probe".into()), soon())
        .await
        .expect("probe");
    assert_eq!(text_of(&mut ws).await, "3probe");
    ws
}

#[tokio::test]
async fn a_websocket_client_gets_the_open_packet_and_frames_both_ways() {
    let (server, addr) = listening(ServerOptions::new(1024)).await;
    let client = tokio::spawn(socketio::connect(
        WsOptions::new(format!("http://{addr}/")),
        socketio::DEFAULT_PATH,
    ));
    let (mut served, opened) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    assert!(opened
        .path
        .starts_with("/socket.io/?EIO=4&transport=websocket"));
    let (mut client, info) = client.await.expect("joins").expect("connects");
    assert!(info.upgrades.is_empty());
    assert_eq!(info.max_payload, Some(1024));
    assert!(text_of(&mut client).await.starts_with('0'));
    client
        .send(Frame::Text("40".into()), soon())
        .await
        .expect("sends");
    assert_eq!(text_of(&mut served).await, "40");
    served
        .send(Frame::Text("40{\"sid\":\"s\"}".into()), soon())
        .await
        .expect("sends");
    assert_eq!(text_of(&mut client).await, "40{\"sid\":\"s\"}");
}

#[tokio::test]
async fn a_polling_client_upgrades_and_keeps_what_was_held() {
    let (server, addr) = listening(ServerOptions::new(4096)).await;
    let Polling {
        http,
        with_sid,
        info,
        mut served,
    } = polling_session(&server, addr).await;
    assert_eq!(info.upgrades, vec!["websocket".to_owned()]);
    // Two packets in one POST arrive as two frames.
    let posted = http
        .post(&with_sid)
        .body("40\u{1e}42[\"message\",{}]")
        .send()
        .await
        .expect("post");
    assert_eq!(posted.text().await.expect("ok"), "ok");
    assert_eq!(text_of(&mut served).await, "40");
    assert_eq!(text_of(&mut served).await, "42[\"message\",{}]");
    // What the runner sends waits for the next poll, joined.
    for packet in ["40{\"sid\":\"x\"}", "42[\"event\",{}]"] {
        served
            .send(Frame::Text(packet.into()), soon())
            .await
            .expect("held");
    }
    let polled = http.get(&with_sid).send().await.expect("poll");
    assert_eq!(
        polled.text().await.expect("body"),
        "40{\"sid\":\"x\"}\u{1e}42[\"event\",{}]"
    );
    // An unknown session is refused as real servers refuse it.
    let unknown = http
        .get(with_sid.replace(&info.sid, "nope"))
        .send()
        .await
        .expect("answer");
    assert_eq!(unknown.status(), 400);
    // The upgrade: probe, then `5`; what the runner sent meanwhile goes over the WebSocket.
    let mut ws = probed(addr, &info.sid).await;
    served
        .send(Frame::Text("42[\"event\",1]".into()), soon())
        .await
        .expect("held");
    ws.send(Frame::Text("5".into()), soon())
        .await
        .expect("upgrade");
    assert_eq!(text_of(&mut ws).await, "42[\"event\",1]");
    ws.send(Frame::Text("42[\"message\",2]".into()), soon())
        .await
        .expect("sends");
    // The probe and `5` were the upgrade's business: the runner sees the client's next packet.
    assert_eq!(text_of(&mut served).await, "42[\"message\",2]");
}

/// `socket.io-client` sends the upgrade only once its last poll has come back, and holds every
/// packet it has to send till then. A poll that reached the server after the probe was
/// answered used to be parked until the runner next sent something: the client's answers
/// waited behind it, and a case waiting for them timed out.
#[tokio::test]
async fn a_poll_after_the_probe_comes_back_at_once_and_a_post_is_answered_once_taken() {
    let (server, addr) = listening(ServerOptions::new(4096)).await;
    let Polling {
        http,
        with_sid,
        info,
        mut served,
    } = polling_session(&server, addr).await;
    // Everything a POST carried is with the runner by the time the POST is answered, so
    // nothing the client sends next (over the WebSocket, say) can overtake it.
    let posted = http.post(&with_sid).body("40").send().await.expect("post");
    assert_eq!(posted.text().await.expect("ok"), "ok");
    let taken = served.recv(Instant::now()).await;
    assert!(
        matches!(&taken, Some((Received::Frame(Frame::Text(t)), _)) if t == "40"),
        "{taken:?}"
    );
    let mut ws = probed(addr, &info.sid).await;
    // The poll that was on its way: a noop at once, not parked.
    let polled = http.get(&with_sid).send().await.expect("answered at once");
    assert_eq!(polled.text().await.expect("body"), "6");
    ws.send(Frame::Text("5".into()), soon())
        .await
        .expect("upgrade");
    ws.send(Frame::Text("42[\"message\",1]".into()), soon())
        .await
        .expect("sends");
    assert_eq!(text_of(&mut served).await, "42[\"message\",1]");
    // Polling is over once upgraded.
    let late = http.get(&with_sid).send().await.expect("answered");
    assert_eq!(late.status(), 400);
}

#[tokio::test]
async fn a_client_that_never_pongs_fails_the_heartbeat() {
    let mut opts = ServerOptions::new(1024);
    opts.ping_interval = Duration::from_millis(50);
    opts.ping_timeout = Duration::from_millis(50);
    let (server, addr) = listening(opts).await;
    let url = format!("ws://{addr}/socket.io/?EIO=4&transport=websocket");
    // A raw WebSocket: wireprobe's Socket.IO client would answer the ping.
    let mut ws = crate::transport::websocket::connect(&WsOptions::new(url))
        .await
        .expect("connects");
    let (mut served, _) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    assert!(text_of(&mut ws).await.starts_with('0'));
    assert_eq!(text_of(&mut ws).await, "2");
    let ended = served.recv(soon()).await;
    assert!(
        matches!(&ended, Some((Received::Failed(TransportError::Protocol(m)), _)) if m.contains("missed heartbeat")),
        "{ended:?}"
    );
}

#[test]
fn polling_bodies_split_and_decode_binary() {
    let frames = packets_of("4hi\u{1e}bAQI=".as_bytes());
    assert_eq!(
        frames,
        vec![Frame::Text("4hi".into()), Frame::Binary(vec![1, 2])]
    );
    assert_eq!(polling_form(Frame::Binary(vec![1, 2])), b"bAQI=".to_vec());
    assert_eq!(query_param("EIO=4&sid=a&x", "sid"), Some("a"));
    assert_eq!(query_param("EIO=4&x", "x"), Some(""));
}
