//! `wireprobe proxy` between real clients and real servers on loopback: a reference client ↔
//! proxy ↔ reference server session shows no violation; a server fault is reported as exactly
//! its rules, on the server's side, a client fault as the client's; frames pass byte for byte;
//! a hostile peer stalls neither the other direction nor the proxy.

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use wireprobe::proxy::{carry, Carried, Plan};
use wireprobe::reference::{self, ClientOptions, ServeOptions};
use wireprobe::results::CaseResult;
use wireprobe::transcript::{Direction, Observation, Record};
use wireprobe::transport::passthrough::{PassOptions, Upstream};
use wireprobe::verdict::Verdict;

mod hostile;
mod http;
mod runner;
mod variants;

const LIMIT: Duration = Duration::from_secs(20);

fn pass_options() -> PassOptions {
    PassOptions {
        max_frame: 1 << 20,
        insecure: false,
        connect_timeout: Duration::from_secs(5),
        linger: Duration::from_millis(300),
    }
}

/// Runs the proxy in front of `upstream` until its first connection ends, while `client`
/// (given the proxy's address) plays; what the proxy judged.
async fn proxied<F, Fut>(protocol: &str, upstream: &str, client: F) -> Carried
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (addr, proxy) = proxy_until(protocol, upstream, true, tokio::time::sleep(LIMIT)).await;
    let (carried, ()) = tokio::join!(proxy, client(addr));
    carried
}

/// The proxy for `protocol` in front of `upstream`, keeping every transcript, until `stop`
/// resolves (or, when `once`, its first connection ends): where it listens, and what it
/// judged once it ends.
async fn proxy_until(
    protocol: &str,
    upstream: &str,
    once: bool,
    stop: impl std::future::Future<Output = ()>,
) -> (SocketAddr, impl std::future::Future<Output = Carried>) {
    let p = wireprobe::protocol::get(protocol).expect("a protocol");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    let plan = Plan {
        upstream: Upstream::parse(upstream).expect("an upstream URL"),
        pass: pass_options(),
        transcripts: wireprobe::report::Transcripts::All,
        once,
    };
    (addr, carry(p, listener, plan, stop, |_| {}))
}

/// The HAIP reference client (with `client_faults`) through the proxy to the reference
/// server (with `server_faults`): the connection's case.
async fn haip_session(server_faults: &[&str], client_faults: &[&str]) -> CaseResult {
    client_session("haip", serving(server_faults, &[]), leaving(client_faults)).await
}

/// A reference server's options: `faults` and `variants`.
fn serving(faults: &[&str], variants: &[&str]) -> ServeOptions {
    ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        ..ServeOptions::default()
    }
}

/// `protocol`'s reference client (`client`) through the proxy to its reference server
/// (`server`), over a WebSocket: the connection's case.
async fn client_session(protocol: &str, server: ServeOptions, client: ClientOptions) -> CaseResult {
    let running =
        reference::registry::start(protocol, "127.0.0.1:0".parse().expect("addr"), &server)
            .await
            .expect("the reference server starts");
    let dial = reference::get(protocol)
        .and_then(|r| r.client.as_ref())
        .expect("a reference client")
        .dial;
    let carried = proxied(protocol, &running.url, |addr| {
        let (server, client) = (&server, &client);
        async move {
            let url = format!("ws://{addr}/");
            let played = tokio::time::timeout(LIMIT, dial(&url, client)).await;
            assert!(
                matches!(played, Ok(Ok(_))),
                "the {protocol} client played ({server:?}, {client:?}): {played:?}"
            );
        }
    })
    .await;
    assert_eq!(carried.cases.len(), 1, "{:#?}", carried.cases);
    carried.cases.into_iter().next().expect("one case")
}

/// A reference client with `faults` that leaves once answered.
fn leaving(faults: &[&str]) -> ClientOptions {
    ClientOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        leave_when_answered: true,
        ..ClientOptions::default()
    }
}

/// The rules broken, each with the side that broke it.
fn broken(case: &CaseResult) -> Vec<(String, Direction)> {
    let mut rules: Vec<_> = case
        .violations
        .iter()
        .map(|v| (v.rule.to_string(), v.side.expect("a side")))
        .collect();
    rules.sort_by_key(|(rule, side)| (rule.clone(), *side == Direction::Client));
    rules.dedup();
    rules
}

#[tokio::test]
async fn a_correct_session_through_the_proxy_shows_no_violation() {
    let case = haip_session(&[], &[]).await;
    assert_eq!(case.verdict, Verdict::Pass, "{case:#?}");
    assert_eq!(case.id, "proxy.1");
    let from = |side| {
        case.transcript
            .iter()
            .filter(|e| e.from == side && e.event().is_some())
            .count()
    };
    assert!(
        from(Direction::Client) >= 3,
        "the HAI and the user's text: {case:#?}"
    );
    assert!(
        from(Direction::Server) >= 3,
        "the HAI and the run: {case:#?}"
    );
}

/// Faults a plain session shows, and the rules each breaks (every other rule passes).
const SERVER_FAULTS: &[(&str, &[&str])] = &[
    ("hai-not-first", &["HAIP-HS-001"]),
    ("seq-skips", &["HAIP-SEQ-001"]),
    ("ack-beyond", &["HAIP-SEQ-002"]),
    ("bad-run-status", &["HAIP-RUN-007"]),
    ("extra-envelope-field", &["HAIP-ENV-005"]),
    ("run-finished-twice", &["HAIP-RUN-001"]),
    ("text-part-before-start", &["HAIP-TEXT-001"]),
];

const CLIENT_FAULTS: &[(&str, &[&str])] = &[
    ("ping-before-hai", &["HAIP-HS-001"]),
    ("hai-without-accept-events", &["HAIP-HS-002"]),
];

#[tokio::test]
async fn a_server_fault_is_reported_as_its_rules_on_the_server_side() {
    for (fault, rules) in SERVER_FAULTS {
        let case = haip_session(&[fault], &[]).await;
        let want: Vec<_> = rules
            .iter()
            .map(|r| (r.to_string(), Direction::Server))
            .collect();
        assert_eq!(broken(&case), want, "--fault {fault}");
    }
}

#[tokio::test]
async fn a_client_fault_is_reported_as_its_rules_on_the_client_side() {
    for (fault, rules) in CLIENT_FAULTS {
        let case = haip_session(&[], &[fault]).await;
        let want: Vec<_> = rules
            .iter()
            .map(|r| (r.to_string(), Direction::Client))
            .collect();
        assert_eq!(broken(&case), want, "client --fault {fault}");
    }
}

/// A WebSocket server that echoes every message and answers a close with the same code
/// and reason.
async fn echo_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                while let Some(Ok(message)) = ws.next().await {
                    // tungstenite answers a close with its code and reason by itself.
                    if message.is_close() {
                        let _ = ws.flush().await;
                    } else if ws.send(message).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("ws://{addr}/")
}

#[tokio::test]
async fn frames_pass_unchanged_and_are_recorded_as_they_passed() {
    let upstream = echo_server().await;
    let sent = vec![
        Message::text(r#"{"type":"HAI","payload":{}}"#),
        Message::binary(vec![0u8, 1, 2, 255]),
        Message::text("not json ✓"),
        Message::binary(vec![7u8; 100_000]),
    ];
    let close = CloseFrame {
        code: CloseCode::Library(4321),
        reason: "bye now".into(),
    };
    let expected = sent.clone();
    let carried = proxied("haip", &upstream, |addr| async move {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/"))
            .await
            .expect("connects through the proxy");
        for m in &expected {
            ws.send(m.clone()).await.expect("sends");
            let echoed = ws.next().await.expect("an echo").expect("readable");
            assert_eq!(&echoed, m, "the same opcode and bytes came back");
        }
        ws.close(Some(close)).await.expect("closes");
        let answer = ws.next().await.expect("a close").expect("readable");
        match answer {
            Message::Close(Some(f)) => {
                assert_eq!(u16::from(f.code), 4321);
                assert_eq!(f.reason, "bye now");
            }
            other => panic!("not the close: {other:?}"),
        }
    })
    .await;
    let case = &carried.cases[0];
    // Each side's items, in order: the connect, four messages each way, the closes.
    let side = |d: Direction| -> Vec<&Record> {
        case.transcript
            .iter()
            .filter(|e| e.from == d)
            .map(|e| &e.record)
            .collect()
    };
    let (client, server) = (side(Direction::Client), side(Direction::Server));
    assert!(matches!(
        client[0],
        Record::Observed(Observation::Connect { .. })
    ));
    assert_eq!(
        &client[1..5],
        &server[..4],
        "the echo recorded as what was sent"
    );
    assert!(matches!(
        client[2],
        Record::Observed(Observation::Binary { len: 4, .. })
    ));
    assert!(matches!(
        client[3],
        Record::Observed(Observation::Text { .. })
    ));
    for closes in [client[5], server[4]] {
        assert!(
            matches!(closes, Record::Observed(Observation::Close { code: Some(4321), reason }) if reason == "bye now"),
            "{closes:?}"
        );
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_does_not_stall_what_it_sends() {
    // The upstream floods the client, which never reads, while the client's own frames must
    // still arrive upstream.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (got_tx, got_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("a connection");
        let ws = tokio_tungstenite::accept_async(tcp)
            .await
            .expect("upgrades");
        let (mut sink, mut stream) = ws.split();
        tokio::spawn(async move {
            let flood = Message::text("x".repeat(64 * 1024));
            while sink.send(flood.clone()).await.is_ok() {}
        });
        let mut count = 0;
        while let Some(Ok(Message::Text(_))) = stream.next().await {
            count += 1;
            if count == 50 {
                let _ = got_tx.send(count);
                break;
            }
        }
    });
    let upstream = format!("ws://{addr}/");
    let carried = proxied("haip", &upstream, |proxy| async move {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{proxy}/"))
            .await
            .expect("connects");
        let (mut sink, _never_read) = ws.split();
        for i in 0..50 {
            sink.send(Message::text(format!("{{\"n\":{i}}}")))
                .await
                .expect("sends");
        }
        let got = tokio::time::timeout(LIMIT, got_rx).await;
        assert!(
            matches!(got, Ok(Ok(50))),
            "the upstream got all 50: {got:?}"
        );
        // Leaving ends the session: the flood has nowhere to go.
        drop(sink);
    })
    .await;
    assert_eq!(carried.cases.len(), 1);
}

#[tokio::test]
async fn garbage_after_the_upgrade_is_forwarded_and_judged_as_broken_framing() {
    let upstream = echo_server().await;
    let carried = proxied("haip", &upstream, |addr| async move {
        let mut tcp = TcpStream::connect(addr).await.expect("connects");
        let upgrade = format!(
            "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(upgrade.as_bytes()).await.expect("writes");
        let mut head = vec![0u8; 4096];
        let n = tcp.read(&mut head).await.expect("reads");
        assert!(
            head[..n].starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head[..n])
        );
        // Reserved opcode 3, unmasked: no frame a client may send.
        tcp.write_all(&[0x83, 0x02, b'h', b'i'])
            .await
            .expect("writes");
        // The upstream gives up on the connection; so does the proxy.
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(LIMIT, tcp.read_to_end(&mut rest)).await;
    })
    .await;
    let case = &carried.cases[0];
    assert!(
        case.transcript.iter().any(|e| e.from == Direction::Client
            && matches!(&e.record, Record::Observed(Observation::Error { message }) if message.contains("reserved opcode"))),
        "{case:#?}"
    );
}

#[tokio::test]
async fn an_upstream_that_is_gone_makes_the_connection_an_error() {
    // A port nothing listens on: bound, then let go.
    let gone = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let upstream = format!("ws://{}/", gone.local_addr().expect("an address"));
    drop(gone);
    let carried = proxied("haip", &upstream, |addr| async move {
        let refused = tokio_tungstenite::connect_async(format!("ws://{addr}/")).await;
        assert!(
            refused.is_err(),
            "the proxy cannot upgrade what it cannot reach"
        );
    })
    .await;
    assert!(carried.never_reached);
    assert_eq!(
        carried.cases[0].verdict,
        Verdict::Error,
        "{:#?}",
        carried.cases
    );
}

/// The Nuum reference host starting `wireprobe proxy nuum -- wireprobe serve nuum --stdio` as
/// its agent: the session's case in the report the proxy wrote.
async fn nuum_session(server_faults: &[&str], client_faults: &[&str]) -> CaseResult {
    stdio_session("nuum", "", server_faults, client_faults).await
}

/// `protocol`'s reference client starting `wireprobe proxy PROTOCOL -- wireprobe serve
/// PROTOCOL --stdio SERVE_ARGS` (with `server_faults`) as the program it talks to: the
/// session's case in the report the proxy wrote.
async fn stdio_session(
    protocol: &str,
    serve_args: &str,
    server_faults: &[&str],
    client_faults: &[&str],
) -> CaseResult {
    let bin = env!("CARGO_BIN_EXE_wireprobe");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("proxy.json");
    let mut agent = format!("{bin} serve {protocol} --stdio {serve_args}");
    for fault in server_faults {
        agent.push_str(&format!(" --fault {fault}"));
    }
    let command = format!(
        "{bin} proxy {protocol} --transcripts all --report json={} -- {agent}",
        report.display()
    );
    let host = reference::get(protocol)
        .and_then(|r| r.client.as_ref())
        .expect("a reference client");
    let played = tokio::time::timeout(LIMIT, (host.dial)(&command, &leaving(client_faults))).await;
    assert!(matches!(played, Ok(Ok(_))), "the host played: {played:?}");
    let text = std::fs::read_to_string(&report).expect("the proxy wrote its report");
    let report: wireprobe::report::Report = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(report.cases.len(), 1, "{:#?}", report.cases);
    report.cases.into_iter().next().expect("one case")
}

#[tokio::test]
async fn the_stdio_form_stands_in_for_a_nuum_agent_and_judges_both_sides() {
    let case = nuum_session(&[], &[]).await;
    assert_eq!(
        (broken(&case), case.verdict),
        (vec![], Verdict::Pass),
        "a correct host and agent"
    );
    for (fault, want) in [
        ("init-twice", "NUUM-INIT-001"),
        ("double-result", "NUUM-RES-001"),
        ("session-id-drift", "NUUM-SID-001"),
    ] {
        let case = nuum_session(&[fault], &[]).await;
        assert_eq!(
            broken(&case),
            [(want.to_owned(), Direction::Server)],
            "agent --fault {fault}"
        );
    }
    for (fault, want) in [
        ("not-json", "NUUM-HOST-002"),
        ("unknown-action", "NUUM-HOST-001"),
    ] {
        let case = nuum_session(&[], &[fault]).await;
        assert_eq!(
            broken(&case),
            [(want.to_owned(), Direction::Client)],
            "host --fault {fault}"
        );
    }
}
