//! The proxy over implementations unlike ours: every variant of a reference server (a legal
//! behaviour the reference does not show by default) passes through the proxy with no rule
//! broken on the server's side, the reference client (or a plain client) playing; and UAE
//! both ways, the Web UI over a WebSocket and the agent's stdio to its executor.

use super::http::{agui_session, hpd_session, HELLO};
use super::{broken, client_session, leaving, serving, stdio_session};
use wireprobe::reference;
use wireprobe::results::CaseResult;
use wireprobe::rules::Level;
use wireprobe::transcript::Direction;

/// `None` (the reference's defaults), then each of `protocol`'s server variants.
fn each_variant(protocol: &str) -> Vec<Option<&'static str>> {
    let variants = reference::get(protocol).expect("a reference").variants;
    std::iter::once(None)
        .chain(variants.iter().map(|v| Some(v.name)))
        .collect()
}

/// Nothing the server did broke a must or a should (an info rule records what the spec
/// leaves open), and nothing failed or warned.
fn server_kept_the_rules(case: &CaseResult, what: &str) {
    let server: Vec<String> = case
        .violations
        .iter()
        .filter(|v| v.side == Some(Direction::Server) && v.level != Level::Info)
        .map(|v| v.rule.to_string())
        .collect();
    assert!(server.is_empty(), "{what}: {server:?} {case:#?}");
    assert!(!case.verdict.is_failing(true), "{what}: {case:#?}");
}

#[tokio::test]
async fn websocket_servers_pass_through_the_proxy_in_every_variant() {
    for protocol in ["haip", "uae"] {
        for variant in each_variant(protocol) {
            let server = serving(&[], variant.as_slice());
            let case = client_session(protocol, server, leaving(&[])).await;
            server_kept_the_rules(&case, &format!("{protocol} --variant {variant:?}"));
        }
    }
}

#[tokio::test]
async fn http_servers_pass_through_the_proxy_in_every_variant() {
    for variant in each_variant("hpd") {
        let case = hpd_session(serving(&[], variant.as_slice()), &[HELLO]).await;
        server_kept_the_rules(&case, &format!("hpd --variant {variant:?}"));
    }
    for variant in each_variant("agui") {
        for accept in ["text/event-stream", "application/vnd.ag-ui.event+proto"] {
            let case = agui_session(serving(&[], variant.as_slice()), accept).await;
            server_kept_the_rules(&case, &format!("agui --variant {variant:?} ({accept})"));
        }
    }
}

/// UAE's Web UI and agent through the proxy: a correct pair passes, an agent's fault is the
/// agent's rule, over the WebSocket and (the agent calling its executor) over stdio.
#[tokio::test]
async fn uae_is_judged_through_the_proxy_over_websocket_and_stdio() {
    let case = client_session("uae", serving(&["session-drift"], &[]), leaving(&[])).await;
    assert_eq!(
        broken(&case)
            .into_iter()
            .filter(|(_, side)| *side == Direction::Server)
            .collect::<Vec<_>>(),
        [("UAE-SES-001".to_owned(), Direction::Server)],
        "{case:#?}"
    );
    let case = stdio_session("uae", "--role executor", &[], &[]).await;
    server_kept_the_rules(&case, "uae executor over stdio");
    let case = stdio_session("uae", "--role executor", &["two-results"], &[]).await;
    assert_eq!(
        broken(&case),
        [("UAE-RES-001".to_owned(), Direction::Server)],
        "{case:#?}"
    );
    let case = stdio_session("uae", "--role executor", &[], &["call-without-tool"]).await;
    assert_eq!(
        broken(&case),
        [("UAE-CALL-001".to_owned(), Direction::Client)],
        "{case:#?}"
    );
}
