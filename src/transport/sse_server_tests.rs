//! The SSE + HTTP site against wireprobe's own SSE client and WebSocket client on loopback.

use super::*;
use crate::transport::sse::{self, SseOptions};
use crate::transport::websocket::WsOptions;
use std::sync::atomic::{AtomicUsize, Ordering};

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

/// Answers 400 to a body that is not JSON, 202 to anything else; counts what was sent.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Responder for Counting {
    fn sent(&self, _text: &str) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn status(&self, _route: &str, body: &[u8]) -> u16 {
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(_) => 202,
            Err(_) => 400,
        }
    }
}

async fn listening(responder: Arc<dyn Responder>) -> (Arc<SseServer>, SocketAddr) {
    listening_as(SiteOptions {
        stream_route: "/events/live".into(),
        ws_route: "/ws".into(),
        post_routes: vec!["/inputs".into(), "/responses".into()],
        posts_answer_with_stream: false,
        framed_answers: Vec::new(),
        max_frame: 1024,
        history: 16,
        heartbeat: Duration::from_millis(50),
        retry_ms: 100,
        responder,
    })
    .await
}

async fn listening_as(opts: SiteOptions) -> (Arc<SseServer>, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = Arc::new(SseServer::new(opts));
    let feeding = server.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            feeding.serve_tcp(tcp);
        }
    });
    (server, addr)
}

fn client_opts(addr: SocketAddr) -> SseOptions {
    SseOptions {
        base: format!("http://{addr}/agent"),
        stream_path: Some("/events/live".into()),
        default_post_path: "/inputs".into(),
        headers: Vec::new(),
        max_frame: 1024,
        timeout: Duration::from_secs(5),
        insecure: false,
        framed_types: Vec::new(),
    }
}

async fn next(conn: &mut Connection) -> Received {
    match conn.recv(soon()).await {
        Some((received, _)) => received,
        None => panic!("nothing arrived"),
    }
}

#[tokio::test]
async fn a_client_subscribes_posts_and_resumes_where_it_left_off() {
    let responder = Arc::new(Counting::default());
    let (server, addr) = listening(responder.clone()).await;
    let mut client = sse::connect(&client_opts(addr)).await.expect("subscribes");
    let (mut served, opened) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    assert_eq!(opened.path, "/agent/events/live");
    assert!(matches!(
        next(&mut served).await,
        Received::Subscribed(StreamFrom::Live)
    ));
    for text in [r#"{"n":1}"#, r#"{"n":2}"#] {
        served
            .send(Frame::Text(text.into()), soon())
            .await
            .expect("sends");
    }
    for want in ["1", "2"] {
        match next(&mut client).await {
            Received::SseEvent { meta, .. } => assert_eq!(meta.id.as_deref(), Some(want)),
            other => panic!("expected event {want}, got {other:?}"),
        }
    }
    assert_eq!(responder.0.load(Ordering::SeqCst), 2);

    // A POST is answered as the responder says, and reaches the runner with its status.
    client
        .send(Frame::Text("not json".into()), soon())
        .await
        .expect("posts");
    match next(&mut client).await {
        Received::Http(answer) => assert_eq!(answer.status, 400),
        other => panic!("expected an answer, got {other:?}"),
    }
    match next(&mut served).await {
        Received::Posted {
            path, status, body, ..
        } => {
            assert_eq!((path.as_str(), status), ("/inputs", Some(400)));
            assert_eq!(body, Body::Text("not json".into()));
        }
        other => panic!("expected the POST, got {other:?}"),
    }

    // The client reopens after the first event it saw: the rest is replayed, then live.
    let resume = Outgoing::Stream(Some(StreamFrom::LastEventId("1".into())));
    client.send(resume, soon()).await.expect("reopens");
    assert!(matches!(
        next(&mut served).await,
        Received::Subscribed(StreamFrom::LastEventId(n)) if n == "1"
    ));
    served
        .send(Frame::Text(r#"{"n":3}"#.into()), soon())
        .await
        .expect("sends");
    let mut ids = Vec::new();
    while ids.len() < 2 {
        match next(&mut client).await {
            Received::SseEvent { meta, .. } => ids.push(meta.id.unwrap_or_default()),
            Received::StreamOpened(_) => {}
            other => panic!("expected the replay, got {other:?}"),
        }
    }
    assert_eq!(ids, ["2", "3"]);

    // Dropping the stream ends it for the client.
    served
        .send(Outgoing::Stream(None), soon())
        .await
        .expect("drops");
    assert!(next(&mut client).await.is_terminal());
}

#[tokio::test]
async fn a_websocket_client_gets_frames_and_its_end_ends_the_session() {
    let (server, addr) = listening(Arc::new(Counting::default())).await;
    let mut client = websocket::connect(&WsOptions::new(format!("ws://{addr}/ws")))
        .await
        .expect("connects");
    let (mut served, _) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    client
        .send(Frame::Text("up".into()), soon())
        .await
        .expect("sends");
    // The upgrade reaches the session's task just after the request: the first frame waits.
    assert!(matches!(next(&mut served).await, Received::Frame(Frame::Text(t)) if t == "up"));
    served
        .send(Frame::Text("down".into()), soon())
        .await
        .expect("sends");
    assert!(matches!(next(&mut client).await, Received::Frame(Frame::Text(t)) if t == "down"));
    client.close().await;
    assert!(next(&mut served).await.is_terminal());
    // The next client is the next session.
    let _again = websocket::connect(&WsOptions::new(format!("ws://{addr}/ws")))
        .await
        .expect("connects");
    assert!(server.accept(Duration::from_secs(5)).await.is_ok());
}

#[tokio::test]
async fn a_request_for_no_route_is_a_404_the_runner_hears_of() {
    let (server, addr) = listening(Arc::new(Counting::default())).await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let answer = http
        .get(format!("http://{addr}/nowhere"))
        .send()
        .await
        .expect("answers");
    assert_eq!(answer.status().as_u16(), 404);
    let (mut served, _) = server
        .accept(Duration::from_secs(5))
        .await
        .expect("a session");
    assert!(matches!(next(&mut served).await, Received::Notice(n) if n.contains("/nowhere")));
}

/// AG-UI's binding: no standing stream, each POST answered with the events of its run, and
/// the runner ending the answer ends the run.
#[tokio::test]
async fn each_post_is_answered_with_a_stream_of_its_own_when_the_binding_keeps_none() {
    let (server, addr) = listening_as(SiteOptions {
        stream_route: "/".into(),
        ws_route: "/ws".into(),
        post_routes: vec!["/agent".into()],
        posts_answer_with_stream: true,
        framed_answers: Vec::new(),
        max_frame: 1024,
        history: 16,
        heartbeat: Duration::from_secs(60),
        retry_ms: 100,
        responder: Arc::new(Counting::default()),
    })
    .await;
    let mut opts = client_opts(addr);
    opts.stream_path = None;
    opts.default_post_path = String::new();
    opts.headers = vec![("accept".into(), "text/event-stream".into())];
    let mut client = sse::connect(&opts).await.expect("connects");
    let mut served = None;
    for run in ["1", "2"] {
        let input = format!(r#"{{"runId":"{run}"}}"#);
        client
            .send(Frame::Text(input.clone()), soon())
            .await
            .expect("posts");
        let served = match served.as_mut() {
            Some(served) => served,
            None => {
                let (conn, _) = server
                    .accept(Duration::from_secs(5))
                    .await
                    .expect("a session");
                served.insert(conn)
            }
        };
        match next(served).await {
            Received::Posted {
                path,
                body,
                headers,
                ..
            } => {
                assert_eq!(path, "/agent");
                assert_eq!(body, Body::of_bytes(input.as_bytes()));
                assert!(headers.contains(&("accept".into(), "text/event-stream".into())));
            }
            other => panic!("expected the POST, got {other:?}"),
        }
        let event = format!(r#"{{"type":"RUN_STARTED","runId":"{run}"}}"#);
        served
            .send(Frame::Text(event.clone()), soon())
            .await
            .expect("sends");
        served
            .send(Outgoing::Stream(None), soon())
            .await
            .expect("ends the answer");
        // Only this run's event: nothing of the run before is replayed.
        let mut events = Vec::new();
        loop {
            match next(&mut client).await {
                Received::SseEvent { data, .. } => events.push(data),
                Received::AnswerEnded { error, .. } => {
                    assert_eq!(error, None);
                    break;
                }
                Received::Http(answer) => assert_eq!(answer.status, 200),
                other => panic!("expected run {run}'s answer, got {other:?}"),
            }
        }
        assert_eq!(events, [event]);
    }
}
