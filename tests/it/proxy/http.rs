//! The HTTP bindings through the proxy: HPD's stream and POST routes as one session, AG-UI's
//! POSTs each a session with their streamed (or protobuf) answers, Socket.IO's long-polling
//! joined with its upgrade by sid. The clients are plain HTTP clients that wait on protocol
//! structure (a turn's end, an answer's end, an Engine.IO packet), the servers the reference
//! targets.

use super::{broken, proxied, serving, LIMIT};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use wireprobe::reference::{self, ServeOptions};
use wireprobe::results::CaseResult;
use wireprobe::transcript::{Direction, Observation, Record};
use wireprobe::transport::sse::{self, Captured};
use wireprobe::verdict::Verdict;

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client")
}

async fn reference_server(protocol: &str, opts: &ServeOptions) -> reference::RunningTarget {
    reference::registry::start(protocol, "127.0.0.1:0".parse().expect("addr"), opts)
        .await
        .expect("the reference server starts")
}

fn the_case(carried: wireprobe::proxy::Carried) -> CaseResult {
    assert_eq!(carried.cases.len(), 1, "{:#?}", carried.cases);
    carried.cases.into_iter().next().expect("one case")
}

/// Items of `side` in the case's transcript that are events.
fn events_from(case: &CaseResult, side: Direction) -> Vec<Value> {
    case.transcript
        .iter()
        .filter(|e| e.from == side)
        .filter_map(|e| e.event().cloned())
        .collect()
}

/// An HPD UI: subscribes, posts `bodies` to the inputs route, and reads the stream until a
/// turn ends; the events it read.
async fn hpd_ui(base: String, bodies: Vec<String>) -> Vec<Value> {
    let http = http();
    let stream = http
        .get(format!("{base}/events/live"))
        .send()
        .await
        .expect("the stream opens");
    for body in bodies {
        http.post(format!("{base}/inputs"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("the POST is answered");
    }
    let mut events = Box::pin(sse::events(stream, 1 << 20));
    let mut read = Vec::new();
    while let Some(captured) = events.next().await {
        let Captured::Event { data, .. } = captured else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        let ended = matches!(
            event["type"].as_str(),
            Some("MESSAGE_TURN_FINISHED" | "MESSAGE_TURN_ERROR")
        );
        read.push(event);
        if ended {
            break;
        }
    }
    read
}

pub(super) async fn hpd_session(server: ServeOptions, bodies: &[&str]) -> CaseResult {
    let server = reference_server("hpd", &server).await;
    let bodies: Vec<String> = bodies.iter().map(|b| b.to_string()).collect();
    let mut seen = Vec::new();
    let carried = proxied("hpd", &server.url, |addr| {
        let seen = &mut seen;
        async move {
            let ui = hpd_ui(format!("http://{addr}"), bodies);
            *seen = tokio::time::timeout(LIMIT, ui).await.expect("a turn ends");
        }
    })
    .await;
    let case = the_case(carried);
    // What the UI read is what the proxy judged the agent to have sent, in order.
    let judged = events_from(&case, Direction::Server);
    assert_eq!(judged[..seen.len()], seen[..], "{case:#?}");
    case
}

pub(super) const HELLO: &str = r#"{"version":"1.0","type":"USER_TEXT_INPUT","text":"hello"}"#;

#[tokio::test]
async fn an_hpd_stream_and_its_posts_are_one_session_judged_on_both_sides() {
    let case = hpd_session(serving(&[], &[]), &[HELLO]).await;
    assert_eq!(
        (broken(&case), case.verdict),
        (vec![], Verdict::Pass),
        "{case:#?}"
    );
    let posted = case.transcript.iter().any(|e| {
        e.from == Direction::Client
            && matches!(&e.record, Record::Observed(Observation::Post { path, .. }) if path == "/inputs")
    });
    assert!(posted, "the input is the client's item: {case:#?}");
    for (fault, want) in [
        ("missing-end", "HPD-STREAM-002"),
        ("turn-id-drift", "HPD-TURN-002"),
        ("delta-before-start", "HPD-STREAM-001"),
    ] {
        let case = hpd_session(serving(&[fault], &[]), &[HELLO]).await;
        assert_eq!(
            broken(&case),
            [(want.to_owned(), Direction::Server)],
            "--fault {fault}"
        );
    }
    // A UI posting a body that is not JSON breaks the envelope rule itself; the agent's 400
    // is what the spec asks.
    let case = hpd_session(serving(&[], &[]), &["{\"type\": ", HELLO]).await;
    assert_eq!(
        broken(&case),
        [("HPD-ENV-001".to_owned(), Direction::Client)],
        "{case:#?}"
    );
}

/// An AG-UI client: one run POSTed with `accept`, its answer read to the end.
pub(super) async fn agui_session(server: ServeOptions, accept: &str) -> CaseResult {
    let server = reference_server("agui", &server).await;
    let accept = accept.to_owned();
    let carried = proxied("agui", &server.url, |addr| async move {
        let input = json!({
            "threadId": "thread-1",
            "runId": "run-1",
            "protocolVersion": "1.1",
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": [{"id": "m-1", "role": "user", "content": "Hello."}],
        });
        let answer = http()
            .post(format!("http://{addr}/"))
            .header("accept", accept)
            .header("content-type", "application/json")
            .body(input.to_string())
            .send()
            .await
            .expect("the run is answered");
        tokio::time::timeout(LIMIT, answer.bytes())
            .await
            .expect("the answer ends")
            .expect("the answer is read");
    })
    .await;
    the_case(carried)
}

#[tokio::test]
async fn each_agui_run_is_a_session_its_answer_judged_as_sse_or_protobuf() {
    for accept in ["text/event-stream", "application/vnd.ag-ui.event+proto"] {
        let case = agui_session(serving(&[], &[]), accept).await;
        assert_eq!(
            (broken(&case), case.verdict),
            (vec![], Verdict::Pass),
            "{case:#?}"
        );
        let types: Vec<_> = events_from(&case, Direction::Server)
            .iter()
            .filter_map(|e| e["type"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(
            (types.first(), types.last()),
            (Some(&"RUN_STARTED".into()), Some(&"RUN_FINISHED".into())),
            "{accept}: the run's events, decoded: {case:#?}"
        );
    }
    for (fault, want) in [
        ("leaves-message-open", "AGUI-RUN-004"),
        ("event-after-finish", "AGUI-RUN-002"),
        ("double-start", "AGUI-STR-001"),
        ("truncates", "AGUI-RUN-005"),
    ] {
        let case = agui_session(serving(&[fault], &[]), "text/event-stream").await;
        assert_eq!(
            broken(&case),
            [(want.to_owned(), Direction::Server)],
            "--fault {fault}"
        );
    }
}

/// The packets of an Engine.IO polling body.
fn packets(body: &str) -> Vec<String> {
    body.split('\u{1e}').map(str::to_owned).collect()
}

#[tokio::test]
async fn socket_io_polling_and_its_upgrade_are_one_session_by_sid() {
    let server = reference_server("huma", &ServeOptions::default()).await;
    let carried = proxied("huma", &server.url, |addr| async move {
        let http = http();
        let base = format!("http://{addr}/socket.io/?EIO=4&transport=polling");
        let open = http.get(&base).send().await.expect("a handshake");
        let open = open.text().await.expect("its body");
        let open: Value = serde_json::from_str(&open[1..]).expect("an open packet");
        let sid = open["sid"].as_str().expect("a sid").to_owned();
        let polling = format!("{base}&sid={sid}");
        let sent = http
            .post(&polling)
            .body("40")
            .send()
            .await
            .expect("CONNECT");
        assert!(sent.status().is_success());
        let got = http.get(&polling).send().await.expect("a poll");
        let got = packets(&got.text().await.expect("its body"));
        assert!(
            got.iter().any(|p| p.starts_with("40")),
            "CONNECT answered: {got:?}"
        );
        let ws = format!("ws://{addr}/socket.io/?EIO=4&transport=websocket&sid={sid}");
        let (mut ws, _) = tokio_tungstenite::connect_async(ws)
            .await
            .expect("the upgrade");
        ws.send("2probe".into()).await.expect("probe");
        loop {
            let msg = ws.next().await.expect("an answer").expect("a frame");
            if msg.to_text().is_ok_and(|t| t == "3probe") {
                break;
            }
        }
        ws.send("5".into()).await.expect("upgrade");
        ws.close(None).await.expect("closes");
        while ws.next().await.is_some() {}
    })
    .await;
    let case = the_case(carried);
    assert_eq!(
        (broken(&case), case.verdict),
        (vec![], Verdict::Pass),
        "{case:#?}"
    );
    let texts = |side| -> Vec<String> {
        case.transcript
            .iter()
            .filter(|e| e.from == side)
            .filter_map(|e| match &e.record {
                Record::Observed(Observation::Text { text, .. }) => Some(text.clone()),
                // A packet that happens to be JSON text (`40`) is kept as it parsed.
                Record::Event { event, .. } => Some(event.to_string()),
                _ => None,
            })
            .collect()
    };
    let (client, server) = (texts(Direction::Client), texts(Direction::Server));
    for want in ["40", "2probe", "5"] {
        assert!(client.iter().any(|t| t == want), "{want}: {client:?}");
    }
    assert!(server.iter().any(|t| t.starts_with("0{")), "{server:?}");
    assert!(server.iter().any(|t| t == "3probe"), "{server:?}");
}

/// An HPD UI over the hosted WebSocket: sends `frames`, reads until a turn ends, closes.
async fn hpd_ws_session(server: ServeOptions, frames: &[&str]) -> CaseResult {
    let server = reference_server("hpd", &server).await;
    let frames: Vec<String> = frames.iter().map(|f| f.to_string()).collect();
    let carried = proxied("hpd", &server.url, |addr| async move {
        let url = format!("ws://{addr}/ws");
        let (mut ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the upgrade");
        for frame in frames {
            ws.send(frame.into()).await.expect("sends");
        }
        let turn_ended = async {
            while let Some(Ok(msg)) = ws.next().await {
                let Ok(event) = serde_json::from_str::<Value>(msg.to_text().unwrap_or("")) else {
                    continue;
                };
                if matches!(
                    event["type"].as_str(),
                    Some("MESSAGE_TURN_FINISHED" | "MESSAGE_TURN_ERROR")
                ) {
                    break;
                }
            }
        };
        tokio::time::timeout(LIMIT, turn_ended)
            .await
            .expect("a turn ends");
        ws.close(None).await.expect("closes");
        while ws.next().await.is_some() {}
    })
    .await;
    the_case(carried)
}

#[tokio::test]
async fn hpds_hosted_websocket_is_judged_through_the_proxy() {
    let case = hpd_ws_session(serving(&[], &[]), &[HELLO]).await;
    assert_eq!(
        (broken(&case), case.verdict),
        (vec![], Verdict::Pass),
        "{case:#?}"
    );
    let case = hpd_ws_session(serving(&["missing-end"], &[]), &[HELLO]).await;
    assert_eq!(
        broken(&case),
        [("HPD-STREAM-002".to_owned(), Direction::Server)],
        "{case:#?}"
    );
}
