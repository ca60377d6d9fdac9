//! TLS for `wss://` and `https://` targets: one rustls client configuration (ring, Mozilla's
//! roots bundled, so nothing depends on the machine's store) for every transport.
//!
//! `--insecure` accepts any certificate, for self-signed test deployments; the handshake's
//! signatures are still checked, so it is TLS with an unauthenticated peer, not plain text.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, OnceLock};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::local_ports::Tried;
use super::TransportError;

/// What `--insecure` adds to a certificate error, so the reader knows the way out.
pub const INSECURE_HINT: &str = "a self-signed test deployment? --insecure accepts its certificate";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client configuration: verifying against Mozilla's roots, or (`insecure`) accepting any
/// certificate. Built once per kind.
pub fn client_config(insecure: bool) -> Arc<ClientConfig> {
    static VERIFIED: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    static INSECURE: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    let cell = if insecure { &INSECURE } else { &VERIFIED };
    cell.get_or_init(|| Arc::new(build(insecure))).clone()
}

fn build(insecure: bool) -> ClientConfig {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        // ring supports every safe default version; this cannot fail for it.
        .unwrap_or_else(|_| unreachable!("ring supports TLS 1.2 and 1.3"));
    let mut config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// Runs the TLS handshake over `tcp` with `host` as the server name (a DNS name or an IP).
/// The error says why in words, with [`INSECURE_HINT`] when the certificate was the problem.
pub async fn connect(
    host: &str,
    tcp: TcpStream,
    insecure: bool,
) -> Result<TlsStream<TcpStream>, String> {
    let name = ServerName::try_from(host.to_owned())
        .map_err(|e| format!("{host:?} is not a TLS server name: {e}"))?;
    tokio_rustls::TlsConnector::from(client_config(insecure))
        .connect(name, tcp)
        .await
        .map_err(|e| describe(&e.to_string()))
}

/// A byte stream to a target, plain TCP or TLS over it.
pub trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}
pub type Stream = Box<dyn Io>;

/// Opens a stream to the host and port of `uri` (the scheme's default port when it names
/// none), with TLS when `secure`, within `timeout` for each step. `target` is what errors
/// name. TCP that cannot be opened (or not in time) and a TLS handshake that fails are
/// [`TransportError::Unreachable`]; a handshake that does not finish in time is
/// [`TransportError::Timeout`].
pub async fn dial(
    target: &str,
    uri: &hyper::Uri,
    secure: bool,
    insecure: bool,
    timeout: std::time::Duration,
) -> Result<Stream, TransportError> {
    // An IPv6 literal comes bracketed in the URI; TCP and TLS want the bare address.
    let host = uri
        .host()
        .ok_or_else(|| TransportError::BadTarget {
            target: target.to_owned(),
            reason: "no host".into(),
        })?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let unreachable = |reason: String| TransportError::Unreachable {
        target: target.to_owned(),
        reason,
    };
    let ms = timeout.as_millis() as u64;
    let deadline = std::time::Instant::now() + timeout;
    let opened = super::local_ports::retrying(deadline, || TcpStream::connect((host, port)));
    let tcp = match tokio::time::timeout(timeout, opened).await {
        Err(_) => return Err(unreachable(format!("TCP connect timed out after {ms} ms"))),
        Ok(Tried::Done(tcp)) => tcp.map_err(|e| unreachable(e.to_string()))?,
        Ok(Tried::RanOut(waited)) => return Err(super::local_ports::error(target.into(), waited)),
    };
    let _ = tcp.set_nodelay(true);
    if !secure {
        return Ok(Box::new(tcp));
    }
    let tls = tokio::time::timeout(timeout, connect(host, tcp, insecure))
        .await
        .map_err(|_| TransportError::Timeout(ms))?
        .map_err(unreachable)?;
    Ok(Box::new(tls))
}

/// A TLS failure in words, with a hint at the likely cause: a certificate refused (the way out
/// is `--insecure`), or a peer that does not speak TLS at all (it closed, or answered in plain
/// text).
pub fn describe(error: &str) -> String {
    let lower = error.to_ascii_lowercase();
    if lower.contains("certificate") {
        format!("TLS handshake failed: {error} ({INSECURE_HINT})")
    } else if lower.contains("eof") || lower.contains("corrupt message") {
        format!(
            "TLS handshake failed: {error} (does the target serve plain ws:// or http:// instead?)"
        )
    } else {
        format!("TLS handshake failed: {error}")
    }
}

/// `--insecure`: any certificate is accepted; signatures are checked as usual.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
