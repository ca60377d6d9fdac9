//! The HPD reference target over its real bindings: HTTP routes, the SSE stream (read with a
//! real SSE parser) and the WebSocket. Every wait is bounded.

use futures_util::{SinkExt, Stream, StreamExt};
use serde_json::{json, Value};
use sse_stream::{Sse, SseStream};
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use wireprobe::reference::hpd::{start_with, Config};
use wireprobe::reference::{RunningTarget, ServeOptions};

const WAIT: Duration = Duration::from_secs(5);

async fn target(faults: &[&str], variants: &[&str]) -> RunningTarget {
    let opts = ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        ..ServeOptions::default()
    };
    let mut config = Config::new(&opts).expect("known switches");
    config.ask_timeout = Duration::from_millis(1500);
    config.heartbeat = Duration::from_millis(300);
    start_with(SocketAddr::from(([127, 0, 0, 1], 0)), config, "/hpd")
        .await
        .expect("target starts")
}

type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// An SSE subscription, optionally resuming (`after` as a query or a Last-Event-ID header).
async fn subscribe(url: &str, after: Option<u64>, header: bool) -> Events {
    let client = reqwest::Client::new();
    let mut req = client.get(format!("{url}/events/live"));
    match (after, header) {
        (Some(n), true) => req = req.header("Last-Event-ID", n.to_string()),
        (Some(n), false) => req = req.query(&[("after", n)]),
        (None, _) => {}
    }
    let resp = timeout(WAIT, req.send()).await.unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    Box::pin(SseStream::from_bytes_stream(resp.bytes_stream()))
}

/// The next event (id, envelope), skipping comments and field-only blocks.
async fn next_event(events: &mut Events) -> (Option<String>, Value) {
    loop {
        let sse = timeout(WAIT, events.next())
            .await
            .expect("an event in time")
            .expect("stream open")
            .expect("valid SSE");
        if let Some(data) = sse.data {
            return (sse.id, serde_json::from_str(&data).expect("JSON data"));
        }
    }
}

/// Events up to and including the first of type `last`.
async fn until(events: &mut Events, last: &str) -> Vec<(Option<String>, Value)> {
    let mut got = Vec::new();
    loop {
        let (id, ev) = next_event(events).await;
        let done = ev["type"] == last;
        got.push((id, ev));
        if done {
            return got;
        }
    }
}

fn types(events: &[(Option<String>, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn ids(events: &[(Option<String>, Value)]) -> Vec<u64> {
    events
        .iter()
        .map(|(id, _)| id.as_deref().expect("id").parse().expect("numeric id"))
        .collect()
}

async fn post(url: &str, route: &str, body: impl Into<reqwest::Body>) -> (u16, String) {
    let resp = timeout(
        WAIT,
        reqwest::Client::new()
            .post(format!("{url}/{route}"))
            .header("content-type", "application/json")
            .body(body)
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

async fn input(url: &str, text: &str) {
    let body = json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": text});
    assert_eq!(post(url, "inputs", body.to_string()).await.0, 202);
}

#[tokio::test]
async fn say_streams_one_turn_with_increasing_ids() {
    let t = target(&[], &[]).await;
    assert!(t.url.ends_with("/hpd"), "{}", t.url);
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: say hello wide world out there").await;
    let got = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    let kinds = types(&got);
    assert_eq!(
        kinds[..3],
        [
            "MESSAGE_TURN_STARTED",
            "AGENT_TURN_STARTED",
            "TEXT_MESSAGE_START"
        ]
    );
    assert_eq!(
        kinds[kinds.len() - 3..],
        [
            "TEXT_MESSAGE_END",
            "AGENT_TURN_FINISHED",
            "MESSAGE_TURN_FINISHED"
        ]
    );
    let text: String = got
        .iter()
        .filter(|(_, e)| e["type"] == "TEXT_DELTA")
        .map(|(_, e)| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "hello wide world out there");
    assert!(kinds.iter().filter(|k| *k == "TEXT_DELTA").count() > 1);
    let ids = ids(&got);
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    assert!(got.iter().all(|(_, e)| e["version"] == "1.0"));
    let (started, finished) = (&got[0].1, &got.last().unwrap().1);
    assert_eq!(started["messageTurnId"], finished["messageTurnId"]);
    assert!(finished["duration"].is_u64());
    // Nulls are omitted and names are camelCase: TEXT_MESSAGE_START has role, no nulls.
    assert_eq!(got[2].1["role"], "assistant");
}

#[tokio::test]
async fn invalid_requests_get_their_statuses() {
    let t = target(&[], &[]).await;
    for bad in [
        "nope",
        "[1]",
        r#"{"text":"no type"}"#,
        r#"{"type":"NOT_AN_EVENT"}"#,
        r#"{"type":"USER_TEXT_INPUT"}"#,
    ] {
        let (status, body) = post(&t.url, "inputs", bad).await;
        assert_eq!(status, 400, "{bad}");
        assert!(serde_json::from_str::<Value>(&body).is_ok_and(|v| v["error"].is_string()));
    }
    let unknown =
        json!({"type": "PERMISSION_RESPONSE", "permissionId": "nobody", "approved": true});
    assert_eq!(post(&t.url, "responses", unknown.to_string()).await.0, 404);
    let no_id = json!({"type": "PERMISSION_RESPONSE", "approved": true});
    assert_eq!(post(&t.url, "responses", no_id.to_string()).await.0, 400);
    assert_eq!(post(&t.url, "inputs", vec![b' '; 2 << 20]).await.0, 413);
    assert_eq!(post(&t.url, "nowhere", "{}").await.0, 404);
    let get = reqwest::get(format!("{}/inputs", t.url)).await.unwrap();
    assert_eq!(get.status(), 405);
    // The agent still answers after all that.
    let mut events = subscribe(&t.url, None, false).await;
    // `type` is read case-insensitively, as the framework does.
    let lower = json!({"type": "user_text_input", "text": "hello"});
    assert_eq!(post(&t.url, "inputs", lower.to_string()).await.0, 202);
    let got = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert!(types(&got).contains(&"TEXT_DELTA".to_owned()));
}

/// Runs `wireprobe: permission deploy`, answers it, and returns the turn's events.
async fn permission_turn(url: &str, approved: bool) -> (Value, Vec<(Option<String>, Value)>) {
    let mut events = subscribe(url, None, false).await;
    input(url, "wireprobe: permission deploy").await;
    let before = until(&mut events, "PERMISSION_REQUEST").await;
    let request = before.last().unwrap().1.clone();
    assert_eq!(request["functionName"], "deploy");
    assert!(!types(&before).contains(&"TOOL_CALL_START".to_owned()));
    let answer = json!({"type": "PERMISSION_RESPONSE", "permissionId": request["permissionId"],
        "approved": approved, "reason": "not today"});
    assert_eq!(post(url, "responses", answer.to_string()).await.0, 200);
    // Answered once: the id is no longer pending.
    assert_eq!(post(url, "responses", answer.to_string()).await.0, 404);
    (request, until(&mut events, "MESSAGE_TURN_FINISHED").await)
}

#[tokio::test]
async fn approved_permission_runs_the_call() {
    let t = target(&[], &[]).await;
    let (request, after) = permission_turn(&t.url, true).await;
    let approved = after
        .iter()
        .find(|(_, e)| e["type"] == "PERMISSION_APPROVED")
        .unwrap();
    assert_eq!(approved.1["permissionId"], request["permissionId"]);
    let call = &request["callId"];
    for ty in [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ] {
        assert!(
            after
                .iter()
                .any(|(_, e)| e["type"] == ty && &e["callId"] == call),
            "{ty}"
        );
    }
}

#[tokio::test]
async fn denied_permission_does_not_run() {
    let t = target(&[], &[]).await;
    let (request, after) = permission_turn(&t.url, false).await;
    let denied = after
        .iter()
        .find(|(_, e)| e["type"] == "PERMISSION_DENIED")
        .unwrap();
    assert_eq!(denied.1["permissionId"], request["permissionId"]);
    assert_eq!(denied.1["callId"], request["callId"]);
    assert_eq!(denied.1["reason"], "not today");
    assert!(!after
        .iter()
        .any(|(_, e)| e["callId"] == request["callId"] && e["type"] != "PERMISSION_DENIED"));
    assert!(types(&after).contains(&"TEXT_DELTA".to_owned()));
}

#[tokio::test]
async fn clarification_answer_resumes_the_turn() {
    let t = target(&[], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: clarify Which colour?").await;
    let request = until(&mut events, "CLARIFICATION_REQUEST")
        .await
        .pop()
        .unwrap()
        .1;
    assert_eq!(request["question"], "Which colour?");
    let answer = json!({"type": "CLARIFICATION_RESPONSE", "requestId": request["requestId"], "answer": "blue"});
    assert_eq!(post(&t.url, "responses", answer.to_string()).await.0, 200);
    let rest = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    let text: String = rest
        .iter()
        .filter(|(_, e)| e["type"] == "TEXT_DELTA")
        .map(|(_, e)| e["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("blue"), "{text}");
}

#[tokio::test]
async fn resume_delivers_exactly_the_missed_events() {
    let t = target(&[], &["sparse-ids"]).await;
    let mut first = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: tool add {\"a\":1}").await;
    let mut seen = ids(&until(&mut first, "MESSAGE_TURN_FINISHED").await);
    assert_eq!(seen[0], 1000);
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 7), "{seen:?}");
    for header in [false, true] {
        let mut resumed = subscribe(&t.url, Some(seen[2]), header).await;
        let mut replayed = Vec::new();
        for _ in 3..seen.len() {
            let (id, _) = next_event(&mut resumed).await;
            replayed.push(id.unwrap().parse::<u64>().unwrap());
        }
        assert_eq!(replayed, seen[3..], "header: {header}");
        // Live continues right after the replay: no gap, no repeat.
        input(&t.url, "wireprobe: say more").await;
        let (id, ev) = next_event(&mut resumed).await;
        assert_eq!(ev["type"], "MESSAGE_TURN_STARTED");
        let turn = until(&mut first, "MESSAGE_TURN_FINISHED").await;
        assert_eq!(id, turn[0].0);
        seen.extend(ids(&turn));
    }
}

#[tokio::test]
async fn interrupt_ends_a_slow_turn() {
    let t = target(&[], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: slow 5000").await;
    until(&mut events, "TEXT_DELTA").await;
    let asked = Instant::now();
    assert_eq!(post(&t.url, "interrupt", "").await.0, 202);
    let rest = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert!(asked.elapsed() < Duration::from_secs(1));
    let kinds = types(&rest);
    let tail = &kinds[kinds.len() - 3..];
    assert_eq!(
        tail,
        [
            "TEXT_MESSAGE_END",
            "AGENT_TURN_FINISHED",
            "MESSAGE_TURN_FINISHED"
        ]
    );
    // Nothing more of that turn: the next event belongs to the next turn.
    input(&t.url, "wireprobe: say next").await;
    assert_eq!(
        next_event(&mut events).await.1["type"],
        "MESSAGE_TURN_STARTED"
    );
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn ws(url: &str) -> Ws {
    let url = format!("{}/ws", url.replacen("http://", "ws://", 1));
    timeout(WAIT, tokio_tungstenite::connect_async(url))
        .await
        .unwrap()
        .unwrap()
        .0
}

/// The close code the server ends the socket with.
async fn close_code(socket: &mut Ws) -> CloseCode {
    loop {
        match timeout(WAIT, socket.next()).await.expect("a close in time") {
            Some(Ok(Message::Close(Some(frame)))) => return frame.code,
            Some(Ok(_)) => continue,
            other => panic!("no close frame: {other:?}"),
        }
    }
}

#[tokio::test]
async fn websocket_runs_turns_and_closes_on_bad_frames() {
    let t = target(&[], &[]).await;
    let mut socket = ws(&t.url).await;
    socket.send(Message::Ping(vec![1, 2].into())).await.unwrap();
    let input =
        json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": "wireprobe: say over ws"});
    socket.send(Message::text(input.to_string())).await.unwrap();
    let mut kinds = Vec::new();
    let mut ponged = false;
    while kinds.last().map(String::as_str) != Some("MESSAGE_TURN_FINISHED") {
        match timeout(WAIT, socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Text(text) => {
                let ev: Value = serde_json::from_str(text.as_str()).unwrap();
                assert_eq!(ev["version"], "1.0");
                kinds.push(ev["type"].as_str().unwrap().to_owned());
            }
            Message::Pong(_) => ponged = true,
            _ => {}
        }
    }
    assert!(ponged);
    assert_eq!(kinds[0], "MESSAGE_TURN_STARTED");
    // A response to an unknown id is ignored; the socket stays usable.
    let stray = json!({"type": "CLARIFICATION_RESPONSE", "requestId": "nobody", "answer": "x"});
    socket.send(Message::text(stray.to_string())).await.unwrap();
    socket.send(Message::text("{not json")).await.unwrap();
    assert_eq!(close_code(&mut socket).await, CloseCode::Invalid);

    let mut socket = ws(&t.url).await;
    socket.send(Message::binary(vec![0u8, 1])).await.unwrap();
    assert_eq!(close_code(&mut socket).await, CloseCode::Policy);

    let mut socket = ws(&t.url).await;
    socket.close(None).await.unwrap();
    let end = timeout(WAIT, socket.next()).await.unwrap();
    assert!(matches!(end, None | Some(Ok(Message::Close(_)))), "{end:?}");
}

#[tokio::test]
async fn faults_change_what_they_should() {
    let t = target(&["accepts-invalid-input", "missing-version"], &[]).await;
    assert_eq!(post(&t.url, "inputs", "nope").await.0, 202);
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: say hi").await;
    let got = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert!(got.iter().all(|(_, e)| e.get("version").is_none()));
    assert!(got.iter().all(|(_, e)| e["type"].is_string()));

    let t = target(&["stalls-after-bad-input"], &[]).await;
    assert_eq!(post(&t.url, "inputs", "nope").await.0, 400);
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: say hi").await;
    assert!(timeout(Duration::from_millis(400), next_event(&mut events))
        .await
        .is_err());
}

#[tokio::test]
async fn variants_stay_legal() {
    let t = target(
        &[],
        &["own-ids", "whole-text", "extra-fields", "chatty-stream"],
    )
    .await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: say one two three four five").await;
    let got = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    let kinds = types(&got);
    assert_eq!(kinds.iter().filter(|k| *k == "TEXT_DELTA").count(), 1);
    assert!(kinds.contains(&"STATE_SNAPSHOT".to_owned()));
    assert!(got[0].1["messageTurnId"]
        .as_str()
        .unwrap()
        .starts_with("turn_"));
    assert!(got.iter().all(|(_, e)| e["executionContext"]["depth"] == 0));
}

#[test]
fn every_fault_breaks_catalogued_rules() {
    let rules = include_str!("../../src/protocol/hpd/rules.rs");
    let faults = wireprobe::reference::get("hpd")
        .expect("hpd reference")
        .faults;
    assert_eq!(faults.len(), 30);
    for fault in faults {
        for rule in fault.breaks {
            assert!(
                rules.contains(&format!("rule!(\"{rule}\"")),
                "{}: {rule}",
                fault.name
            );
        }
    }
    assert_eq!(
        wireprobe::reference::get("hpd").map(|r| r.variants.len()),
        Some(13)
    );
}

/// Every event of one input's turn (until the stream stays quiet for 300 ms).
async fn quiet_turn(t: &RunningTarget, text: &str) -> Vec<(Option<String>, Value)> {
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, text).await;
    let mut got = Vec::new();
    while let Ok(event) = timeout(Duration::from_millis(300), next_event(&mut events)).await {
        got.push(event);
    }
    got
}

fn of<'a>(got: &'a [(Option<String>, Value)], ty: &str) -> Vec<&'a Value> {
    got.iter()
        .filter(|(_, e)| e["type"] == ty)
        .map(|(_, e)| e)
        .collect()
}

/// Each event-shape fault, on a tool turn, shows exactly its defect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_faults_show_their_defect() {
    type Check = fn(&[(Option<String>, Value)]) -> bool;
    let cases: [(&str, Check); 13] = [
        ("wrong-version", |g| {
            g.iter().all(|(_, e)| e["version"] == "2.0")
        }),
        ("lower-case-types", |g| {
            !of(g, "text_delta").is_empty() && of(g, "TEXT_DELTA").is_empty()
        }),
        ("snake-case-fields", |g| {
            g[0].1["message_turn_id"].is_string()
        }),
        ("null-fields", |g| {
            of(g, "MESSAGE_TURN_FINISHED")[0].get("usage") == Some(&Value::Null)
        }),
        ("turn-never-finished", |g| {
            of(g, "MESSAGE_TURN_FINISHED").is_empty() && of(g, "AGENT_TURN_FINISHED").len() == 2
        }),
        ("turn-id-drift", |g| {
            of(g, "MESSAGE_TURN_FINISHED")[0]["messageTurnId"] != g[0].1["messageTurnId"]
        }),
        ("agent-turn-unfinished", |g| {
            of(g, "AGENT_TURN_FINISHED").is_empty() && of(g, "MESSAGE_TURN_FINISHED").len() == 1
        }),
        ("delta-before-start", |g| {
            let kinds = types(g);
            let pos = |ty: &str| kinds.iter().position(|k| k == ty);
            pos("TEXT_DELTA") < pos("TEXT_MESSAGE_START")
        }),
        ("missing-end", |g| {
            of(g, "TEXT_MESSAGE_END").is_empty() && of(g, "MESSAGE_TURN_FINISHED").len() == 1
        }),
        ("wrong-call-id", |g| {
            of(g, "TOOL_CALL_START")[0]["callId"] != of(g, "TOOL_CALL_ARGS")[0]["callId"]
        }),
        ("bad-args-json", |g| {
            let args = of(g, "TOOL_CALL_ARGS")[0]["argsJson"]
                .as_str()
                .unwrap_or("");
            serde_json::from_str::<Value>(args).is_err()
        }),
        ("tool-without-result", |g| {
            of(g, "TOOL_CALL_RESULT").is_empty() && of(g, "TOOL_CALL_END").len() == 1
        }),
        ("non-monotonic-ids", |g| {
            ids(g).windows(2).any(|w| w[1] <= w[0])
        }),
    ];
    let runs = cases.iter().map(|(fault, check)| async move {
        let t = target(&[fault], &[]).await;
        let got = quiet_turn(&t, "wireprobe: tool add {\"a\":1}").await;
        assert!(!got.is_empty(), "{fault}: no events");
        assert!(check(&got), "{fault}: {:?}", types(&got));
    });
    futures_util::future::join_all(runs).await;
    // The same turn on a correct target passes every check's opposite where it applies.
    let t = target(&[], &[]).await;
    let got = quiet_turn(&t, "wireprobe: tool add {\"a\":1}").await;
    assert_eq!(
        types(&got),
        [
            "MESSAGE_TURN_STARTED",
            "AGENT_TURN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "AGENT_TURN_FINISHED",
            "AGENT_TURN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_DELTA",
            "TEXT_MESSAGE_END",
            "AGENT_TURN_FINISHED",
            "MESSAGE_TURN_FINISHED"
        ]
    );
    assert_eq!(of(&got, "TOOL_CALL_ARGS")[0]["argsJson"], r#"{"a":1}"#);
}

#[tokio::test]
async fn interaction_faults_show_their_defect() {
    // Denied, yet the call runs.
    let t = target(&["denied-permission-runs"], &[]).await;
    let (request, after) = permission_turn(&t.url, false).await;
    assert!(after
        .iter()
        .any(|(_, e)| e["type"] == "TOOL_CALL_RESULT" && e["callId"] == request["callId"]));
    // Answered, but no outcome event.
    let t = target(&["no-permission-outcome"], &[]).await;
    let (_, after) = permission_turn(&t.url, true).await;
    assert!(of(&after, "PERMISSION_APPROVED").is_empty());
    assert_eq!(of(&after, "TOOL_CALL_RESULT").len(), 1);
    // Unknown ids are "delivered".
    let t = target(&["unknown-response-200"], &[]).await;
    let stray = json!({"type": "CLARIFICATION_RESPONSE", "requestId": "nobody", "answer": "x"});
    assert_eq!(post(&t.url, "responses", stray.to_string()).await.0, 200);
    // An interrupt changes nothing: the slow turn streams on.
    let t = target(&["interrupt-ignored"], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: slow 400").await;
    until(&mut events, "TEXT_DELTA").await;
    assert_eq!(post(&t.url, "interrupt", "").await.0, 202);
    let rest = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert!(of(&rest, "TEXT_DELTA").len() > 3);
    // The whole history comes back on resume.
    let t = target(&["resume-from-start"], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: say hi").await;
    let all = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    let mut resumed = subscribe(&t.url, Some(ids(&all)[3]), true).await;
    assert_eq!(next_event(&mut resumed).await.0.as_deref(), Some("1"));
}

#[tokio::test]
async fn websocket_faults_keep_the_socket_open() {
    let t = target(&["no-1007", "accepts-binary"], &[]).await;
    let mut socket = ws(&t.url).await;
    socket.send(Message::text("{not json")).await.unwrap();
    socket.send(Message::binary(vec![1u8])).await.unwrap();
    let input = json!({"type": "USER_TEXT_INPUT", "text": "still here?"});
    socket.send(Message::text(input.to_string())).await.unwrap();
    let first = timeout(WAIT, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        first.to_text().unwrap().contains("MESSAGE_TURN_STARTED"),
        "{first:?}"
    );
}

#[tokio::test]
async fn clarification_fault_waits_out_the_timeout() {
    let t = target(&["ignores-clarification"], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: clarify Which?").await;
    let request = until(&mut events, "CLARIFICATION_REQUEST")
        .await
        .pop()
        .unwrap()
        .1;
    let answer = json!({"type": "CLARIFICATION_RESPONSE", "requestId": request["requestId"], "answer": "blue"});
    let asked = Instant::now();
    assert_eq!(post(&t.url, "responses", answer.to_string()).await.0, 200);
    let rest = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert!(asked.elapsed() > Duration::from_millis(1000));
    let text: String = of(&rest, "TEXT_DELTA")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(!text.contains("blue"), "{text}");
}

#[tokio::test]
async fn approved_continuation_runs_more_agent_turns() {
    let t = target(&[], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: continue 2").await;
    let before = until(&mut events, "CONTINUATION_REQUEST").await;
    assert_eq!(of(&before, "AGENT_TURN_FINISHED").len(), 2);
    let request = before.last().unwrap().1.clone();
    assert_eq!(request["currentIteration"], 2);
    let answer = json!({"type": "CONTINUATION_RESPONSE", "continuationId": request["continuationId"],
        "approved": true, "extensionAmount": 2});
    assert_eq!(post(&t.url, "responses", answer.to_string()).await.0, 200);
    let after = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    let iterations: Vec<&Value> = of(&after, "AGENT_TURN_STARTED")
        .iter()
        .map(|e| &e["iteration"])
        .collect();
    assert_eq!(iterations, [3, 4]);
}

#[tokio::test]
async fn interrupt_ends_a_turn_waiting_for_permission() {
    let t = target(&[], &[]).await;
    let mut events = subscribe(&t.url, None, false).await;
    input(&t.url, "wireprobe: permission deploy").await;
    until(&mut events, "PERMISSION_REQUEST").await;
    let stop = json!({"type": "INTERRUPTION_REQUEST", "reason": "user", "source": "User"});
    assert_eq!(post(&t.url, "interrupt", stop.to_string()).await.0, 202);
    let rest = until(&mut events, "MESSAGE_TURN_FINISHED").await;
    assert_eq!(
        types(&rest),
        ["AGENT_TURN_FINISHED", "MESSAGE_TURN_FINISHED"]
    );
    // Nothing waits any more: no turn is running, so another interrupt is ignored.
    assert_eq!(post(&t.url, "interrupt", "").await.0, 202);
}

#[tokio::test]
async fn idle_stream_gets_heartbeats() {
    let t = target(&[], &[]).await;
    let mut resp = reqwest::get(format!("{}/events/live", t.url))
        .await
        .unwrap();
    let chunk = timeout(WAIT, resp.chunk()).await.unwrap().unwrap().unwrap();
    assert_eq!(&chunk[..], b": heartbeat\n\n");
}

/// Opening an SSE + HTTP connection GETs the event stream once: its time is the round trip a
/// wait for the target's answers adds, here 100 ms each way through a delaying proxy.
#[tokio::test]
async fn opening_the_event_stream_measures_the_round_trip() {
    let target = target(&[], &[]).await;
    let far = crate::common::distant::proxy(target.addr, Duration::from_millis(100)).await;
    let opts = wireprobe::transport::sse::SseOptions {
        base: target
            .url
            .replace(&target.addr.to_string(), &far.to_string()),
        stream_path: Some("/events/live".into()),
        default_post_path: "/inputs".into(),
        headers: Vec::new(),
        max_frame: 1 << 20,
        timeout: Duration::from_secs(5),
        insecure: false,
        framed_types: Vec::new(),
    };
    let conn = wireprobe::transport::sse::connect(&opts)
        .await
        .expect("the stream opens");
    let took = conn.round_trip().expect("measured").as_millis();
    assert!((200..2000).contains(&took), "{took} ms");
}
