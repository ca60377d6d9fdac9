//! `wss://` and `https://` targets: the reference targets behind a TLS terminator made here,
//! with a self-signed certificate (rcgen) the test generates. `--insecure` accepts it; without
//! it the run stops in one line that names the certificate and the flag (exit 3).

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use wireprobe::reference::{self, RunningTarget, ServeOptions};

/// Accepts TLS on a port of its own and relays each connection's plain bytes to `upstream`.
async fn tls_terminator(upstream: SocketAddr) -> SocketAddr {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
            .expect("self-signed certificate");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let chain = vec![CertificateDer::from(certified.cert.der().to_vec())];
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to relay.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    addr
}

/// The reference target of `protocol`, and its URL over TLS (`ws`→`wss`, `http`→`https`).
async fn behind_tls(protocol: &str) -> (RunningTarget, String) {
    let target = reference::start(
        protocol,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        &ServeOptions::default(),
    )
    .await
    .expect("reference starts");
    let tls = tls_terminator(target.addr).await;
    let url = target
        .url
        .replacen("ws://", "wss://", 1)
        .replacen("http://", "https://", 1)
        .replacen(&target.addr.to_string(), &tls.to_string(), 1);
    (target, url)
}

async fn wireprobe(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(args)
        .output()
        .await
        .expect("wireprobe runs")
}

/// `run` refuses the self-signed certificate in one line naming it and `--insecure` (exit 3),
/// and with `--insecure` passes the selected cases.
async fn refused_then_accepted_with_insecure(run: &[&str]) {
    let refused = wireprobe(run).await;
    assert_eq!(refused.status.code(), Some(3), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("certificate") && said.contains("--insecure"),
        "{said}"
    );

    let insecure = wireprobe(&[run, &["--insecure"]].concat()).await;
    assert_eq!(insecure.status.code(), Some(0), "{insecure:?}");
    let said = String::from_utf8_lossy(&insecure.stdout);
    assert!(
        said.contains("0 fail") && !said.contains(" 0 pass"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wss_target_with_a_self_signed_certificate() {
    let (target, url) = behind_tls("haip").await;
    assert!(url.starts_with("wss://127.0.0.1:"), "{url}");
    // wss:// to a server that does not speak TLS: one line that says what it likely is.
    let plain = format!("wss://{}/", target.addr);
    let out = wireprobe(&["run", "haip", "--target", &plain]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("plain ws:// or http://"));
    refused_then_accepted_with_insecure(&[
        "run",
        "haip",
        "--target",
        &url,
        "--case",
        "haip.ping.*",
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_target_with_a_self_signed_certificate() {
    let (_target, url) = behind_tls("hpd").await;
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let run = [
        "run",
        "hpd",
        "--target",
        &url,
        "--transport",
        "sse",
        "--case",
        "hpd.envelope.*",
    ];
    refused_then_accepted_with_insecure(&run).await;
}
