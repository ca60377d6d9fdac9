use super::*;

#[test]
fn an_empty_path_becomes_root() {
    assert_eq!(with_root_path("ws://h:1"), "ws://h:1/");
    assert_eq!(with_root_path("ws://h:1?token=t"), "ws://h:1/?token=t");
    assert_eq!(with_root_path("ws://h:1/haip?x=1"), "ws://h:1/haip?x=1");
    assert_eq!(with_root_path("ws://h:1/"), "ws://h:1/");
    assert_eq!(with_root_path("not a url"), "not a url");
}

/// Both ends are wireprobe's: a client connection to an accepting server, frames both ways.
#[tokio::test]
async fn a_client_that_connects_is_accepted_with_what_it_asked_for() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        accept(tcp, 1024, Duration::from_secs(5), None).await
    });
    let mut opts = WsOptions::new(format!("ws://{addr}/haip?token=t%20t"));
    opts.subprotocols = vec!["haip.v1".into()];
    let mut client = connect(&opts).await.expect("connects");
    let soon = || tokio::time::Instant::now() + Duration::from_secs(5);
    let (mut served, opened) = server.await.expect("joins").expect("accepts");
    assert_eq!(opened.path, "/haip?token=t%20t");
    assert!(opened
        .headers
        .iter()
        .any(|(k, v)| k == "sec-websocket-protocol" && v == "haip.v1"));
    client
        .send(Frame::Text("hello".into()), soon())
        .await
        .expect("sends");
    let got = served.recv(soon()).await;
    assert!(
        matches!(&got, Some((Received::Frame(Frame::Text(t)), _)) if t == "hello"),
        "{got:?}"
    );
    // Over the limit: the server side refuses the frame as the client side does.
    client
        .send(Frame::Text("x".repeat(2048)), soon())
        .await
        .expect("sends");
    let got = served.recv(soon()).await;
    assert!(
        matches!(
            got,
            Some((Received::Failed(TransportError::FrameTooLarge { .. }), _))
        ),
        "{got:?}"
    );
}

#[tokio::test]
async fn a_peer_that_never_upgrades_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let _silent = TcpStream::connect(addr).await.expect("tcp");
    let (tcp, _) = listener.accept().await.expect("accept");
    let result = accept(tcp, 1024, Duration::from_millis(100), None).await;
    assert!(
        matches!(result, Err(TransportError::Timeout(100))),
        "{:?}",
        result.err()
    );
}
