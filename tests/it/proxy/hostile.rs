//! Hostile upstreams over HTTP: an answer that floods its events, and one that never ends.
//! The proxy forwards at the client's pace (it never reads far ahead of what the client
//! took), lets the upstream go when the client leaves, and a proxy stopped mid-answer still
//! reports the connection with what passed.

use super::{proxy_until, LIMIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use wireprobe::transcript::Direction;

/// One AG-UI event as an SSE event.
const EVENT: &[u8] = b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n";

/// An upstream answering its first request with an event stream: `first` once, then `more`
/// forever as fast as it can be written (nothing, when `more` is empty); sends on `gone`
/// when a write fails (its client let the connection go).
async fn streaming_upstream(
    first: &'static [u8],
    more: &'static [u8],
) -> (String, oneshot::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (gone_tx, gone) = oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut tcp, _)) = listener.accept().await else {
            return;
        };
        // The request's head and body: read what comes, without waiting on its length.
        let mut buf = vec![0u8; 64 * 1024];
        let _ = tcp.read(&mut buf).await;
        let head =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let mut wrote = tcp.write_all(head).await.and(tcp.write_all(first).await);
        while wrote.is_ok() {
            match more.is_empty() {
                true => std::future::pending::<()>().await,
                false => wrote = tcp.write_all(more).await,
            }
        }
        let _ = gone_tx.send(());
    });
    (format!("http://{addr}/"), gone)
}

fn post(addr: std::net::SocketAddr) -> reqwest::RequestBuilder {
    let input = r#"{"threadId":"t","runId":"r","messages":[]}"#;
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client")
        .post(format!("http://{addr}/"))
        .header("accept", "text/event-stream")
        .header("content-type", "application/json")
        .body(input)
}

#[tokio::test]
async fn a_flooding_answer_goes_at_the_clients_pace_and_ends_when_the_client_leaves() {
    let (upstream, gone) = streaming_upstream(EVENT, EVENT).await;
    let (addr, proxy) = proxy_until("agui", &upstream, true, tokio::time::sleep(LIMIT)).await;
    let client = async {
        let mut answer = post(addr).send().await.expect("answered");
        let mut read = 0;
        while read < 4 << 20 {
            let chunk = answer.chunk().await.expect("reads").expect("more");
            read += chunk.len();
        }
        // Leaves mid-answer: the response is dropped here.
    };
    let (carried, ()) = tokio::time::timeout(LIMIT, async { tokio::join!(proxy, client) })
        .await
        .expect("the proxy ends once its client left");
    tokio::time::timeout(LIMIT, gone)
        .await
        .expect("the upstream is let go, not read on")
        .expect("the upstream says so");
    assert_eq!(carried.cases.len(), 1, "{:#?}", carried.cases);
    let case = &carried.cases[0];
    let events = case
        .transcript
        .iter()
        .filter(|e| e.from == Direction::Server && e.event().is_some())
        .count();
    assert!(events > 100, "the flood was judged as it passed: {events}");
}

#[tokio::test]
async fn a_proxy_stopped_during_an_answer_that_never_ends_reports_what_passed() {
    let (upstream, _gone) = streaming_upstream(EVENT, b"").await;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (addr, proxy) = proxy_until("agui", &upstream, true, async {
        let _ = stop_rx.await;
    })
    .await;
    let client = async {
        let mut answer = post(addr).send().await.expect("answered");
        let chunk = answer
            .chunk()
            .await
            .expect("reads")
            .expect("the first event");
        assert_eq!(&chunk[..], EVENT);
        // The answer is still open: the proxy is stopped now, as at SIGINT.
        let _ = stop_tx.send(());
        answer
    };
    let (carried, _answer) = tokio::time::timeout(LIMIT, async { tokio::join!(proxy, client) })
        .await
        .expect("the proxy ends when stopped, whatever is in flight");
    assert_eq!(carried.cases.len(), 1, "{:#?}", carried.cases);
    let case = &carried.cases[0];
    let types: Vec<_> = case
        .transcript
        .iter()
        .filter(|e| e.from == Direction::Server)
        .filter_map(|e| e.event()?.get("type")?.as_str().map(str::to_owned))
        .collect();
    assert_eq!(types, ["RUN_STARTED"], "{case:#?}");
}
