//! Socket.IO transport: Engine.IO v4 over WebSocket, with our own packet codec ([`packet`]).
//!
//! The transport completes the Engine.IO handshake (the server's open packet), answers the
//! server's pings at any moment, and reports a missed heartbeat; everything else passes through
//! as exact Engine.IO packet text, both ways, so a case can send any packet at all. Socket.IO
//! itself (CONNECT to a namespace, events, acks) is the protocol profile's business, built with
//! [`packet`].

pub mod packet;
pub mod server;

use super::websocket::{self, WsOptions};
use super::{Command, Connection, Frame, Inbox, Received, TransportError};
use packet::{EioPacket, OpenInfo};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The default Engine.IO path.
pub const DEFAULT_PATH: &str = "/socket.io/";

/// Longest heartbeat wait honoured, whatever the server announces.
const MAX_HEARTBEAT: Duration = Duration::from_secs(3600);

/// Budget for one relayed send (the runner's own deadline usually ends the wait sooner).
const SEND_BUDGET: Duration = Duration::from_secs(30);

/// The Engine.IO WebSocket URL for a Socket.IO server given as `http(s)://host:port[/...]`
/// (or `ws(s)://`), with the Engine.IO path `path`.
pub fn engine_io_url(target: &str, path: &str) -> Result<String, TransportError> {
    let bad = |reason: &str| TransportError::BadTarget {
        target: target.to_owned(),
        reason: reason.to_owned(),
    };
    let (scheme, rest) = target
        .split_once("://")
        .ok_or_else(|| bad("expected http://HOST:PORT"))?;
    let ws_scheme = match scheme {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        _ => return Err(bad("the scheme must be http, https, ws or wss")),
    };
    let (authority, query) = match rest.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (rest, None),
    };
    let host = authority.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let mut url = format!("{ws_scheme}://{host}{path}?EIO=4&transport=websocket");
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        url.push('&');
        url.push_str(q);
    }
    Ok(url)
}

/// Connects, waits for the server's Engine.IO open packet, and returns the connection (whose
/// first received frame is that open packet) with the announced parameters.
///
/// No Socket.IO endpoint at all (HTTP 404, or a first frame that is not an open packet) is
/// [`TransportError::Unreachable`]: there is nothing to test.
pub async fn connect(
    mut opts: WsOptions,
    path: &str,
) -> Result<(Connection, OpenInfo), TransportError> {
    let target = opts.url.clone();
    opts.url = engine_io_url(&target, path)?;
    let not_socketio = |reason: String| TransportError::Unreachable {
        target: target.clone(),
        reason: format!("not a Socket.IO server: {reason}"),
    };
    let mut inner = match websocket::connect(&opts).await {
        Err(TransportError::Rejected { status: 404 }) => {
            return Err(not_socketio(format!(
                "HTTP 404 for the Engine.IO path {path}"
            )))
        }
        other => other?,
    };
    let budget_ms = opts.connect_timeout.as_millis() as u64;
    let deadline = Instant::now() + opts.connect_timeout;
    let (open_text, info) = match inner.recv(deadline).await {
        None => return Err(TransportError::Timeout(budget_ms)),
        Some((Received::Frame(Frame::Text(text)), _)) => match packet::parse_eio(&text) {
            Ok(EioPacket::Open(info)) => (text, info),
            Ok(_) | Err(_) => {
                let shown: String = text.chars().take(60).collect();
                return Err(not_socketio(format!(
                    "its first frame was {shown:?}, not an Engine.IO open packet"
                )));
            }
        },
        Some((Received::Frame(_), _)) => {
            return Err(not_socketio("its first frame was binary".into()))
        }
        Some((Received::Closed { code, reason }, _)) => {
            return Err(TransportError::Protocol(format!(
                "the server closed the connection before the Engine.IO handshake (close code {}{})",
                code.map_or("none".to_owned(), |c| c.to_string()),
                if reason.is_empty() {
                    String::new()
                } else {
                    format!(" \"{reason}\"")
                }
            )))
        }
        Some((Received::Failed(e), _)) => return Err(e),
        Some((Received::Notice(what) | Received::Stderr(what), _)) => {
            return Err(TransportError::Protocol(format!(
                "unexpected before the handshake: {what}"
            )))
        }
        // A WebSocket carries neither SSE events nor HTTP answers.
        Some((
            Received::SseEvent { .. }
            | Received::Http(_)
            | Received::StreamOpened(_)
            | Received::Posted { .. }
            | Received::AnswerEnded { .. }
            | Received::Subscribed(_)
            // Nothing asked for one yet.
            | Received::RoundTrip(_),
            _,
        )) => {
            return Err(not_socketio(
                "it answered with something other than a frame".into(),
            ))
        }
    };
    let (inbox, commands, parts) = Connection::channels();
    let upgraded_in = inner.round_trip();
    let task = tokio::spawn(relay(inner, inbox, commands, open_text, info.clone()));
    // Over a WebSocket (Engine.IO's polling is not used here): its pings are ours to ask for.
    let mut conn = Connection::from_parts(parts, task).pinging();
    if let Some(took) = upgraded_in {
        conn = conn.opened_in(took);
    }
    Ok((conn, info))
}

/// Relays frames between the runner and the WebSocket, answering pings and watching the
/// heartbeat on the way.
async fn relay(
    mut inner: Connection,
    inbox: Inbox,
    mut commands: mpsc::Receiver<Command>,
    open_text: String,
    info: OpenInfo,
) {
    let heartbeat = Duration::from_millis(info.ping_interval.saturating_add(info.ping_timeout))
        .min(MAX_HEARTBEAT);
    if !inbox.push(Received::Frame(Frame::Text(open_text))).await {
        return;
    }
    let mut ping_due = Instant::now() + heartbeat;
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(out, done)) => {
                    let result = inner.send(out, Instant::now() + SEND_BUDGET).await;
                    let _ = done.send(result);
                }
                // The WebSocket's pong comes back through `inner`, behind what came before it.
                Some(Command::Ping) => {
                    inner.ping();
                }
                Some(Command::Close(_)) | None => {
                    inner.close().await;
                    return;
                }
            },
            got = inner.recv(ping_due) => {
                let Some((received, _)) = got else {
                    if !inner.is_finished() {
                        let missed = TransportError::Protocol(format!(
                            "missed heartbeat: no ping from the server within {} ms (pingInterval + pingTimeout)",
                            heartbeat.as_millis()
                        ));
                        inbox.push(Received::Failed(missed)).await;
                    }
                    return;
                };
                if let Received::Frame(Frame::Text(text)) = &received {
                    if let Some(payload) = text.strip_prefix('2') {
                        ping_due = Instant::now() + heartbeat;
                        let pong = Frame::Text(format!("3{payload}"));
                        if inner.send(pong, Instant::now() + SEND_BUDGET).await.is_err() {
                            // The read side will report how the connection ended.
                        }
                    }
                }
                let last = received.is_terminal();
                if !inbox.push(received).await || last {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            engine_io_url("http://127.0.0.1:3000", DEFAULT_PATH).unwrap(),
            "ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket"
        );
        assert_eq!(
            engine_io_url("https://h:1/ignored?token=t", "custom/").unwrap(),
            "wss://h:1/custom/?EIO=4&transport=websocket&token=t"
        );
        assert!(engine_io_url("ftp://h", DEFAULT_PATH).is_err());
        assert!(engine_io_url("h:1", DEFAULT_PATH).is_err());
    }
}
