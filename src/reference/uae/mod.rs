//! The UAE reference target: a scripted agent or an API executor, one per connection, over
//! WebSocket text frames (`serve uae --listen ADDR`) or NDJSON on stdio (`serve uae --stdio`).

pub mod agent;
pub mod caller;
mod event_faults;
pub mod executor;
pub mod faults;
mod stamp;
pub mod ui;
pub mod variants;

use crate::ndjson::{AsyncLines, Line};
use crate::reference::http_body::upgrade_required;
use crate::reference::{
    serve_http, Faults, RunningTarget, ServeError, ServeOptions, StdioPipes, Variants,
};
use crate::transport::websocket;
use crate::transport::{Connection, Frame, Outgoing, Received};
use serde_json::{json, Value};
use stamp::Stamp;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::time::Instant;

/// The largest frame or line read from a client.
const MAX_INPUT: usize = 1 << 20;
/// How long the `slow` variant waits before each answer.
const SLOW: Duration = Duration::from_millis(150);

/// The part the target plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Agent,
    Executor,
}

impl Role {
    /// The role named `name` (`None`: the agent).
    pub fn parse(name: Option<&str>) -> Result<Role, ServeError> {
        match name {
            None | Some("agent") => Ok(Role::Agent),
            Some("executor") => Ok(Role::Executor),
            Some(other) => Err(ServeError::Unknown {
                kind: "role",
                name: other.to_owned(),
                known: crate::protocol::uae::ROLES.join(", "),
            }),
        }
    }
}

/// One connection's counterpart: what it sends for each thing it receives.
pub struct Peer {
    role: Role,
    stamp: Stamp,
    agent: agent::Agent,
    /// The `stalls-after-bad-input` fault has struck: nothing more is answered.
    stalled: bool,
}

impl Peer {
    pub fn new(role: Role, faults: Faults, variants: Variants) -> Peer {
        Peer {
            role,
            stamp: Stamp::new(faults, variants),
            agent: agent::Agent::default(),
            stalled: false,
        }
    }

    /// The lines (or frames) answering one received line (or text frame).
    pub fn handle(&mut self, text: &[u8]) -> Vec<String> {
        if self.stalled {
            return Vec::new();
        }
        let event: Option<Value> = serde_json::from_slice(text).ok();
        let answered = event.as_ref().and_then(|event| match self.role {
            Role::Agent => self.agent.handle(&mut self.stamp, event),
            Role::Executor => executor::handle(&mut self.stamp, event),
        });
        let events = match answered {
            Some(events) => events,
            None => {
                self.unusable();
                match self.stamp.variants().has("answers-unusable-input") && !self.stalled {
                    true => vec![self.refusal(event.as_ref())],
                    false => Vec::new(),
                }
            }
        };
        let stamp = &mut self.stamp;
        events
            .into_iter()
            .flat_map(|event| event_faults::on_event(stamp, event))
            .map(|event| event.to_string())
            .collect()
    }

    /// What the `answers-unusable-input` variant says to input it cannot use: whatever of
    /// the input's envelope it can read, and its own where the input had none.
    fn refusal(&mut self, input: Option<&Value>) -> Value {
        let field = |name: &str| input.and_then(|e| e.get(name)).and_then(Value::as_str);
        let session = field("session_id").unwrap_or("sess_default").to_owned();
        match self.role {
            Role::Executor => {
                let trace = match field("trace_id") {
                    Some(t) => t.to_owned(),
                    None => self.stamp.fresh("tr"),
                };
                let tool = input
                    .and_then(|e| e.pointer("/payload/tool"))
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let payload = json!({"ok": false, "result": null, "tool": tool,
                    "error": {"code": "INVALID_REQUEST", "message": "this is not a tool.call I can run"}});
                self.stamp
                    .event("tool.result", &session, Some(&trace), payload)
            }
            Role::Agent => {
                let payload = json!({"text": "I could not read that."});
                self.stamp
                    .event("assistant.message", &session, None, payload)
            }
        }
    }

    /// Input it cannot use (not JSON, not an event, a type it does not take, a binary frame):
    /// ignored, there being no error event in the protocol.
    pub fn unusable(&mut self) {
        self.stalled = self.stamp.faults().has("stalls-after-bad-input");
    }

    fn slow(&self) -> bool {
        self.stamp.variants().has("slow")
    }
}

/// The role, faults and variants of `opts`, checked.
fn parse(opts: &ServeOptions) -> Result<(Role, Faults, Variants), ServeError> {
    Ok((
        Role::parse(opts.role.as_deref())?,
        Faults::parse(faults::FAULTS, &opts.faults)?,
        Variants::parse(variants::VARIANTS, &opts.variants)?,
    ))
}

/// The UAE reference target, as [`crate::reference::registry`] lists it.
pub static REFERENCE: crate::reference::Reference = crate::reference::Reference {
    protocol: &crate::protocol::uae::Uae,
    faults: faults::FAULTS,
    variants: variants::VARIANTS,
    listen: Some(|addr, opts| Box::pin(start(addr, opts))),
    stdio: Some(stdio),
    keeps_database: false,
    client: Some(crate::reference::ReferenceClient {
        faults: faults::CLIENT_FAULTS,
        variants: variants::CLIENT_VARIANTS,
        dial: |target, opts| Box::pin(dial(target, opts)),
        tools: &[],
        slow_tools: &[],
        // The UI leaves at the agent's message, the caller once its calls are answered.
        leaves_when_answered: true,
    }),
};

/// The reference client for `target`: the Web UI facing an agent at a `ws://` URL, else the
/// agent that starts `target` as its executor and calls it over stdio.
async fn dial(
    target: &str,
    opts: &crate::reference::ClientOptions,
) -> Result<crate::reference::ClientEnd, ServeError> {
    match target.starts_with("ws://") || target.starts_with("wss://") {
        true => ui::run(target, opts).await,
        false => caller::run(target, opts).await,
    }
}

/// Starts the WebSocket target on `addr`; clients reach it at `ws://ADDR/`.
pub async fn start(addr: SocketAddr, opts: &ServeOptions) -> Result<RunningTarget, ServeError> {
    let (role, faults, variants) = parse(opts)?;
    serve_http(addr, "ws", move |peer_addr, mut req| {
        let peer = Peer::new(role, faults.clone(), variants.clone());
        let answered = websocket::answer_upgrade(&mut req, peer_addr, MAX_INPUT, None, {
            |socket, _| serve_socket(socket, peer)
        });
        async move { answered.unwrap_or_else(|| upgrade_required("this target")) }
    })
    .await
}

/// Serves one peer on its socket until it leaves, then closes it (waiting briefly for the
/// transport to answer the peer's close). A text frame that is not UTF-8 fails the connection
/// with 1007 (RFC 6455 §8.1), which the transport does.
async fn serve_socket(mut socket: Connection, mut peer: Peer) {
    let far = || Instant::now() + Duration::from_secs(24 * 3600);
    'reading: while let Some((received, _)) = socket.recv(far()).await {
        let answers = match received {
            Received::Frame(Frame::Text(text)) => peer.handle(text.as_bytes()),
            Received::Frame(Frame::Binary(_) | Frame::RawText(_)) => {
                peer.unusable();
                Vec::new()
            }
            received if received.is_terminal() => break,
            _ => continue,
        };
        if !answers.is_empty() && peer.slow() {
            tokio::time::sleep(SLOW).await;
        }
        for answer in answers {
            let sent = socket
                .send(Outgoing::Frame(Frame::Text(answer)), far())
                .await;
            if sent.is_err() {
                break 'reading;
            }
        }
    }
    socket.close().await;
}

fn stdio(pipes: StdioPipes, opts: &ServeOptions) -> crate::reference::entry::Started<'_, i32> {
    Box::pin(async move {
        serve_stdio(pipes.input, pipes.output, opts).await?;
        Ok(0)
    })
}

/// Serves one peer on `input` and `output` (NDJSON) until the input ends.
pub async fn serve_stdio(
    input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    opts: &ServeOptions,
) -> Result<(), ServeError> {
    let (role, faults, variants) = parse(opts)?;
    let mut peer = Peer::new(role, faults, variants);
    let mut lines = AsyncLines::new(BufReader::new(input), MAX_INPUT);
    loop {
        let answers = match lines.next().await {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::TooLong(_)) => {
                peer.unusable();
                continue;
            }
            Ok(Line::Complete) if lines.line().iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Complete) => peer.handle(lines.line()),
        };
        if !answers.is_empty() && peer.slow() {
            tokio::time::sleep(SLOW).await;
        }
        for answer in answers {
            let written = output.write_all(answer.as_bytes()).await;
            if written.and(output.write_all(b"\n").await).is_err() {
                return Ok(());
            }
        }
        if output.flush().await.is_err() {
            return Ok(());
        }
    }
    Ok(())
}
