//! The conversations a server hosts, one per route prefix: `/agent/inputs` and
//! `/agent/x/inputs` are two agents. A deployment with one agent has one prefix; the
//! per-prefix agents let a test run its cases side by side (`--target http://…/{case}`).

use super::session::Session;
use super::{turn, Config};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Most conversations kept; the one used longest ago is dropped for a new one.
pub const MAX_CONVERSATIONS: usize = 256;

struct Live {
    session: Arc<Session>,
    used: u64,
    stop: watch::Sender<bool>,
}

/// See the module doc.
pub struct Conversations {
    config: Config,
    /// The configured prefix: every conversation's prefix starts with it.
    prefix: String,
    shutdown: watch::Receiver<bool>,
    /// By prefix: the session, when it was last used, and the switch that stops it.
    live: Mutex<HashMap<String, Live>>,
    uses: std::sync::atomic::AtomicU64,
}

impl Conversations {
    pub fn new(config: Config, prefix: String, shutdown: watch::Receiver<bool>) -> Self {
        Conversations {
            config,
            prefix,
            shutdown,
            live: Mutex::new(HashMap::new()),
            uses: Default::default(),
        }
    }

    /// The conversation a request path belongs to, with the route it names (`/inputs`), or
    /// `None` when the path is not under the prefix.
    pub fn find(&self, path: &str) -> Option<(Arc<Session>, String)> {
        let under = path.strip_prefix(&self.prefix)?;
        let route_at = ROUTES
            .iter()
            .filter_map(|r| under.strip_suffix(r).map(|scope| (scope, *r)))
            .find(|(scope, _)| scope.is_empty() || scope.starts_with('/'));
        // Not a route: a 404 from the main conversation's point of view.
        let (scope, route) = route_at.unwrap_or_default();
        let key = format!("{}{scope}", self.prefix);
        Some((self.session(&key), route.to_owned()))
    }

    fn session(&self, key: &str) -> Arc<Session> {
        let tick = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = live.get_mut(key) {
            found.used = tick;
            return found.session.clone();
        }
        if live.len() >= MAX_CONVERSATIONS {
            let oldest = live
                .iter()
                .min_by_key(|(_, l)| l.used)
                .map(|(k, _)| k.clone());
            if let Some(evicted) = oldest.and_then(|k| live.remove(&k)) {
                let _ = evicted.stop.send(true);
            }
        }
        // The conversation stops with the server, or alone when it is evicted.
        let (stop, stopped) = watch::channel(false);
        let mut server = self.shutdown.clone();
        let forward = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = super::session::switched_on(&mut server) => { let _ = forward.send(true); }
                _ = forward.closed() => {}
            }
        });
        let (session, inputs) = Session::new(self.config.clone(), stopped);
        let session = Arc::new(session);
        tokio::spawn(turn::run_agent(session.clone(), inputs));
        live.insert(
            key.to_owned(),
            Live {
                session: session.clone(),
                used: tick,
                stop,
            },
        );
        session
    }
}

/// The routes under a conversation's prefix.
const ROUTES: [&str; 5] = ["/inputs", "/events/live", "/responses", "/interrupt", "/ws"];
