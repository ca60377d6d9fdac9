//! The one conversation a server hosts: its event hub, input queue, pending interactive
//! requests and the running turn's interrupt switch. HTTP and WebSocket both hand client
//! events to [`Session::handle`], so the two bindings behave alike.

use super::envelope::{AskKind, ClientEvent};
use super::hub::Hub;
use super::Config;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, oneshot, watch};

/// Inputs waiting for their turn; more are refused (HTTP 429) rather than buffered.
pub const INPUT_QUEUE: usize = 64;

/// What became of a client event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An input was queued (or, stalled, swallowed) or an interrupt taken: 202.
    Accepted,
    /// A response reached its waiting request: 200.
    Delivered,
    /// A response names no pending request: 404.
    UnknownId,
    /// The input queue is full: 429.
    Busy,
    /// `busy-409`: a turn runs, and this agent takes no input until it ends: 409.
    Conflict,
}

/// A pending interactive request: what it asks and where its answer goes.
type Pending = HashMap<String, (AskKind, oneshot::Sender<Map<String, Value>>)>;

/// See the module doc.
pub struct Session {
    pub config: Config,
    pub hub: Hub,
    /// The conversation's id (one per server).
    pub conversation_id: String,
    inputs: mpsc::Sender<String>,
    pending: Mutex<Pending>,
    /// The running turn's interrupt switch; `None` between turns.
    running: Mutex<Option<watch::Sender<bool>>>,
    /// `stalls-after-bad-input`: set by the first invalid input.
    stalled: AtomicBool,
    counter: AtomicU64,
    /// Turns true when the server stops; every task of the server watches it.
    pub shutdown: watch::Receiver<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// A session and the receiving end of its input queue (for the agent task).
    pub fn new(
        config: Config,
        shutdown: watch::Receiver<bool>,
    ) -> (Session, mpsc::Receiver<String>) {
        let (inputs, rx) = mpsc::channel(INPUT_QUEUE);
        // The conversation takes the own-ids counter's first number.
        let conversation_id = if config.variants.has("own-ids") {
            "conv_1".to_owned()
        } else {
            uuid::Uuid::new_v4().to_string()
        };
        let session = Session {
            hub: Hub::new(config.history),
            config,
            conversation_id,
            inputs,
            pending: Mutex::new(HashMap::new()),
            running: Mutex::new(None),
            stalled: AtomicBool::new(false),
            counter: AtomicU64::new(1),
            shutdown,
        };
        (session, rx)
    }

    /// A fresh id: a UUID, or `KIND_N` in the `own-ids` variant (one counter for all kinds,
    /// so ids never repeat across kinds either).
    pub fn fresh_id(&self, kind: &str) -> String {
        if self.config.variants.has("own-ids") {
            let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
            format!("{kind}_{n}")
        } else {
            uuid::Uuid::new_v4().to_string()
        }
    }

    /// Handles a valid client event from either binding.
    pub fn handle(&self, event: ClientEvent) -> Outcome {
        match event {
            ClientEvent::Input(text) => {
                if self.stalled.load(Ordering::SeqCst) {
                    return Outcome::Accepted;
                }
                let running = lock(&self.running).is_some();
                if self.config.variants.has("busy-409")
                    && (running || self.inputs.capacity() < INPUT_QUEUE)
                {
                    return Outcome::Conflict;
                }
                match self.inputs.try_send(text) {
                    Ok(()) => Outcome::Accepted,
                    Err(_) => Outcome::Busy,
                }
            }
            ClientEvent::Response { kind, id, body } => self.deliver(kind, &id, body),
            ClientEvent::Interrupt => {
                if !self.config.faults.has("interrupt-ignored") {
                    if let Some(turn) = lock(&self.running).as_ref() {
                        let _ = turn.send(true);
                    }
                }
                Outcome::Accepted
            }
        }
    }

    /// Notes an invalid client input (for `stalls-after-bad-input`).
    pub fn rejected(&self) {
        if self.config.faults.has("stalls-after-bad-input") {
            self.stalled.store(true, Ordering::SeqCst);
        }
    }

    fn deliver(&self, kind: AskKind, id: &str, body: Map<String, Value>) -> Outcome {
        let mut pending = lock(&self.pending);
        let matches = pending.get(id).is_some_and(|(k, _)| *k == kind);
        if !matches {
            return if self.config.faults.has("unknown-response-200") {
                Outcome::Delivered
            } else {
                Outcome::UnknownId
            };
        }
        // The fault takes the answer (200) but keeps the request waiting, so the turn only
        // goes on when its ask_timeout runs out.
        if self.config.faults.has("ignores-clarification")
            && matches!(kind, AskKind::Clarification | AskKind::Continuation)
        {
            return Outcome::Delivered;
        }
        if let Some((_, answer)) = pending.remove(id) {
            let _ = answer.send(body);
        }
        Outcome::Delivered
    }

    /// Registers an interactive request; its answer arrives on the receiver. The guard
    /// withdraws it when the turn stops waiting (answered, timed out or interrupted).
    pub fn ask(
        self: &Arc<Self>,
        kind: AskKind,
        id: &str,
    ) -> (AskGuard, oneshot::Receiver<Map<String, Value>>) {
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.to_owned(), (kind, tx));
        let guard = AskGuard {
            session: self.clone(),
            id: id.to_owned(),
        };
        (guard, rx)
    }

    /// Marks a turn as running; interrupts reach it through the returned receiver.
    pub fn begin_turn(&self) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        *lock(&self.running) = Some(tx);
        rx
    }

    /// Marks the turn as over: a later interrupt finds no turn and is ignored.
    pub fn end_turn(&self) {
        *lock(&self.running) = None;
    }
}

/// Withdraws a pending request on drop.
pub struct AskGuard {
    session: Arc<Session>,
    id: String,
}

impl Drop for AskGuard {
    fn drop(&mut self) {
        lock(&self.session.pending).remove(&self.id);
    }
}

/// Resolves once the switch is on (a shutdown, an interrupt); never, if its sender is gone
/// without turning it on. Holds no borrow of the value, so it fits a `Send` select.
pub async fn switched_on(switch: &mut watch::Receiver<bool>) {
    if switch.wait_for(|&on| on).await.is_err() {
        std::future::pending::<()>().await;
    }
}
