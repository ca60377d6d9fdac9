//! A messaging burst: typing_start, each message_sent awaiting its confirmation (or the
//! timeout), typing_end; aborted by a new triggering event.

use super::{Config, Shared};
use serde_json::json;
use socketioxide::extract::SocketRef;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A running burst, as the connection sees it.
pub struct Burst {
    id: String,
    confirmations: mpsc::UnboundedSender<u64>,
    abort: oneshot::Sender<()>,
}

impl Burst {
    /// Starts sending `messages`; the burst clears itself from `state` when it ends.
    pub fn start(s: SocketRef, messages: Vec<String>, config: Arc<Config>, state: Shared) -> Burst {
        let id = uuid::Uuid::new_v4().to_string();
        let (confirm_tx, confirm_rx) = mpsc::unbounded_channel();
        let (abort_tx, abort_rx) = oneshot::channel();
        tokio::spawn(run(
            s,
            id.clone(),
            messages,
            config,
            state,
            confirm_rx,
            abort_rx,
        ));
        Burst {
            id,
            confirmations: confirm_tx,
            abort: abort_tx,
        }
    }

    /// The toolCallId of the burst's messages.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn confirm(&self, index: u64) {
        let _ = self.confirmations.send(index);
    }

    pub fn abort(self) {
        let _ = self.abort.send(());
    }
}

/// Emits a messaging event; `bare` (the variant `messaging-without-call-id`) leaves out the
/// toolCallId the spec makes optional.
fn messaging(s: &SocketRef, body: serde_json::Value, bare: bool) {
    let mut event = json!({"type": "messaging"});
    if let (Some(e), Some(b)) = (event.as_object_mut(), body.as_object()) {
        e.extend(b.clone());
        if bare {
            e.remove("toolCallId");
        }
    }
    s.emit("event", &event).ok();
}

async fn run(
    s: SocketRef,
    id: String,
    messages: Vec<String>,
    config: Arc<Config>,
    state: Shared,
    mut confirmations: mpsc::UnboundedReceiver<u64>,
    mut abort: oneshot::Receiver<()>,
) {
    let f = &config.faults;
    let bare = config.variants.has("messaging-without-call-id");
    let count = messages.len() as u64;
    let sent = |i: u64, text: &str| {
        let index = if f.has("bad-message-index") { count } else { i };
        json!({"event": "message_sent", "toolCallId": id, "message": text, "messageIndex": index, "messageCount": count})
    };
    let mut early = None;
    if f.has("message-before-typing") && count > 0 {
        messaging(&s, sent(0, &messages[0]), bare);
        early = Some(0);
    }
    messaging(&s, json!({"event": "typing_start", "toolCallId": id}), bare);
    for (i, text) in messages.iter().enumerate() {
        let i = i as u64;
        if early != Some(i) {
            messaging(&s, sent(i, text), bare);
        }
        if f.has("no-confirmation-wait") {
            continue;
        }
        let wait = async {
            while let Some(index) = confirmations.recv().await {
                if index == i {
                    return;
                }
            }
            std::future::pending::<()>().await
        };
        let timeout = if f.has("never-proceeds") {
            std::time::Duration::MAX
        } else {
            config.confirm_timeout
        };
        tokio::select! {
            _ = &mut abort => {
                if !f.has("no-typing-end-on-abort") {
                    messaging(&s, json!({"event": "typing_end", "toolCallId": id, "reason": "canceled"}), bare);
                }
                return;
            }
            _ = wait => {}
            _ = sleep(timeout) => {}
        }
    }
    messaging(&s, json!({"event": "typing_end", "toolCallId": id}), bare);
    if let Ok(mut st) = state.lock() {
        if st.burst.as_ref().is_some_and(|b| b.id == id) {
            st.burst = None;
        }
    }
}

/// Sleeps for `d`, or forever when `d` is too long to represent as a deadline.
async fn sleep(d: std::time::Duration) {
    match tokio::time::Instant::now().checked_add(d) {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
