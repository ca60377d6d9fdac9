//! The HPD reference target: hosted agents over HTTP + SSE and WebSocket, one conversation
//! per route prefix (see [`conversations`]), each a scripted agent (`wireprobe:` directives),
//! with the faults in [`faults::FAULTS`] and the variants in [`variants::VARIANTS`].
//!
//! Routes live under a prefix; [`RunningTarget::url`] is `http://ADDR` followed by the
//! prefix, never with a trailing slash, so clients append `/inputs`, `/events/live`, ...

pub mod client;
mod conversations;
mod envelope;
mod event_faults;
mod http;
mod hub;
mod session;
mod sse;
mod turn;
mod ws;

pub mod faults;
pub mod variants;

use super::{serve_http, Faults, RunningTarget, ServeError, ServeOptions, Variants};
use conversations::Conversations;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Tunables of the reference target; the timings are parameters so tests can scale them.
#[derive(Debug, Clone)]
pub struct Config {
    pub faults: Faults,
    pub variants: Variants,
    /// How often an idle SSE stream gets a `: heartbeat` comment.
    pub heartbeat: Duration,
    /// How long a turn waits for a permission, clarification or continuation response (a
    /// permission not answered in time is denied).
    pub ask_timeout: Duration,
    /// Events kept for SSE resumption.
    pub history: usize,
    /// The id of the text block last started in any conversation of this server: the
    /// `shared-block-id` fault names its deltas by it, as an agent keeping it in one
    /// process-wide variable would.
    pub last_text_block: Arc<std::sync::Mutex<String>>,
}

impl Config {
    /// The defaults (15 s heartbeat, 30 s ask timeout, 1000 events) with `opts`' switches.
    pub fn new(opts: &ServeOptions) -> Result<Config, ServeError> {
        Ok(Config {
            faults: Faults::parse(faults::FAULTS, &opts.faults)?,
            variants: Variants::parse(variants::VARIANTS, &opts.variants)?,
            heartbeat: Duration::from_secs(15),
            ask_timeout: Duration::from_secs(30),
            history: 1000,
            last_text_block: Default::default(),
        })
    }
}

/// The HPD reference target, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::hpd::Hpd,
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
        leaves_when_answered: false,
    }),
};

/// Starts the target on `addr` with the defaults of [`Config::new`] and `opts.prefix`.
pub async fn start(addr: SocketAddr, opts: &ServeOptions) -> Result<RunningTarget, ServeError> {
    start_with(
        addr,
        Config::new(opts)?,
        opts.prefix.as_deref().unwrap_or(""),
    )
    .await
}

/// Starts the target on `addr` with `config`, its routes under `prefix` (`"agent"`,
/// `"/agent/"` and `"/agent"` are the same prefix; `""` serves at the root).
pub async fn start_with(
    addr: SocketAddr,
    config: Config,
    prefix: &str,
) -> Result<RunningTarget, ServeError> {
    let prefix = normalize(prefix);
    let (stop_all, shutdown) = watch::channel(false);
    let conversations = Arc::new(Conversations::new(config, prefix.clone(), shutdown.clone()));
    // Held by the handler, which the listener and each of its connections hold: once they have
    // all ended (a stopped listener ends its connections), every task of the server stops.
    let stop_all = StopAll(stop_all);
    let mut running = serve_http(addr, "http", move |_, req| {
        // Named here, so the handler captures it.
        let _held = &stop_all;
        http::route(conversations.clone(), req)
    })
    .await?;
    running.url = format!("http://{}{prefix}", running.addr);
    Ok(running)
}

/// `agent/` -> `/agent`; `` and `/` -> ``.
fn normalize(prefix: &str) -> String {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("/{trimmed}")
    }
}

/// Tells every task of a server to stop when dropped.
struct StopAll(watch::Sender<bool>);

impl Drop for StopAll {
    fn drop(&mut self) {
        let _ = self.0.send(true);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefixes_normalize() {
        assert_eq!(super::normalize(""), "");
        assert_eq!(super::normalize("/"), "");
        assert_eq!(super::normalize("agent/"), "/agent");
        assert_eq!(super::normalize("/a/b"), "/a/b");
    }
}
