//! The HAIP reference target: a correct HAIP agent server over WebSocket with a scripted
//! agent (`wireprobe:` directives) and the faults in [`faults::FAULTS`].

mod agent;
pub mod client;
mod conn;
mod event_faults;
pub mod faults;
mod outbox;
pub mod variants;

use super::http_body::{json_response, upgrade_required};
use super::{serve_http, Faults, RunningTarget, ServeError, ServeOptions, Variants};
use crate::auth::{self, TokenError};
use crate::transport::websocket::answer_upgrade;
use hyper::StatusCode;
use outbox::SessionStore;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Tunables of the reference target. Timings the spec fixes are parameters so tests can
/// scale them.
#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
    pub variants: Variants,
    pub jwt_secret: Option<String>,
    /// Messages kept for replay (the spec's minimum is 1000).
    pub replay_window: usize,
    /// How long a gap may stay open before REPLAY_REQUEST (the spec's 500 ms).
    pub gap_wait: Duration,
    pub max_concurrent_runs: usize,
    /// Credit granted to the client on each channel.
    pub initial_credit_messages: u64,
    pub initial_credit_bytes: u64,
    /// A channel idle this long with half its credit used gets a FLOW_UPDATE.
    pub credit_refill_idle: Duration,
    /// No ERROR sent yet by this server, on any connection (the `slow-first-error` variant).
    pub no_error_yet: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Config {
    pub fn new(opts: &ServeOptions) -> Result<Config, ServeError> {
        let faults = Faults::parse(faults::FAULTS, &opts.faults)?;
        let replay_window = if faults.has("small-replay-window") {
            100
        } else {
            1000
        };
        let variants = Variants::parse(variants::VARIANTS, &opts.variants)?;
        let initial_credit_messages = if variants.has("little-credit") { 8 } else { 64 };
        Ok(Config {
            faults,
            variants,
            jwt_secret: opts.jwt_secret.clone(),
            replay_window,
            gap_wait: Duration::from_millis(500),
            max_concurrent_runs: 2,
            initial_credit_messages,
            initial_credit_bytes: 1 << 20,
            credit_refill_idle: Duration::from_millis(1000),
            no_error_yet: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }
}

impl Config {
    /// A fresh UUID for an id the target makes up (upper-case hex in the `upper-case-ids`
    /// variant: the schema's pattern allows both cases).
    pub fn fresh_id(&self) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        if self.variants.has("upper-case-ids") {
            id.to_uppercase()
        } else {
            id
        }
    }
}

/// The HAIP reference target, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::haip::Haip,
    faults: faults::FAULTS,
    variants: variants::VARIANTS,
    listen: Some(|addr, opts| Box::pin(start(addr, opts))),
    stdio: None,
    keeps_database: false,
    client: Some(crate::reference::ReferenceClient {
        faults: faults::CLIENT_FAULTS,
        variants: variants::CLIENT_VARIANTS,
        dial: |url, opts| Box::pin(client::run(url, opts)),
        tools: &[],
        slow_tools: &[],
        leaves_when_answered: true,
    }),
};

/// Starts the target on `addr`.
pub async fn start(addr: SocketAddr, opts: &ServeOptions) -> Result<RunningTarget, ServeError> {
    let config = Arc::new(Config::new(opts)?);
    let store = SessionStore::default();
    serve_http(addr, "ws", move |peer, mut req| {
        let answered = match authorized(&config, &req) {
            false => Some(json_response(
                StatusCode::UNAUTHORIZED,
                json!({"error": "invalid or missing bearer token"}),
            )),
            true => {
                let (config, store) = (config.clone(), store.clone());
                answer_upgrade(&mut req, peer, MAX_FRAME, None, |socket, _| {
                    conn::Conn::new(config, store, socket).run()
                })
            }
        };
        async move { answered.unwrap_or_else(|| upgrade_required("this target")) }
    })
    .await
}

/// The largest frame or message a client may send: tungstenite's default frame limit (16 MiB),
/// which the target kept before it stood on the transport.
const MAX_FRAME: usize = 16 << 20;

/// Whether the bearer token of a WebSocket upgrade lets the client in (a refusal is an HTTP
/// 401). The token is the query's `token`, else the `Authorization` header's bearer, else the
/// first subprotocol offered.
fn authorized<B>(config: &Config, req: &hyper::Request<B>) -> bool {
    let Some(secret) = config.jwt_secret.as_deref() else {
        return true;
    };
    let offered = req
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map(str::to_owned);
    let f = &config.faults;
    let query_token = (!f.has("auth-query-ignored"))
        .then(|| req.uri().query().and_then(token_from_query))
        .flatten();
    let bearer = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let token = query_token.or(bearer).or(offered);
    let verdict = match token {
        None => Err(TokenError::Missing),
        Some(t) => auth::verify_hs256(&t, secret.as_bytes(), auth::now_secs()).map(|_| ()),
    };
    match verdict {
        Ok(()) => true,
        Err(TokenError::Missing) => f.has("auth-optional"),
        Err(TokenError::Malformed) => f.has("auth-accepts-garbage"),
        Err(TokenError::Signature | TokenError::Algorithm(_)) => f.has("auth-ignores-signature"),
        Err(TokenError::Expired) => f.has("token-expiry"),
        Err(TokenError::NotYetValid) => f.has("auth-ignores-iat"),
    }
}

fn token_from_query(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let value = pair.strip_prefix("token=")?;
        Some(percent_decode(value))
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
