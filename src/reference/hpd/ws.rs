//! `GET {prefix}/ws`: the hosted WebSocket. Every live event goes out as one text frame (the
//! envelope JSON); client text frames carry inputs, responses and interruptions, handled as
//! the HTTP routes handle them. An invalid frame closes with 1007, a binary frame with 1008.
//! A client's close is echoed by the transport with the client's own code (1000 for a normal
//! close).

use super::envelope;
use super::hub::Published;
use super::session::switched_on;
use super::session::Session;
use crate::reference::http_body::{upgrade_required, Body, MAX_BODY};
use crate::transport::websocket::answer_upgrade;
use crate::transport::{Connection, Frame, Outgoing, Received};
use hyper::body::Incoming;
use hyper::{Request, Response};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// The largest frame or message a client may send (the HTTP routes' body limit).
const MAX_MESSAGE: usize = MAX_BODY;
/// How long one event may take to go out before the client counts as gone.
const SEND_BUDGET: Duration = Duration::from_secs(30);

/// RFC 6455 §7.4.1's close statuses the socket ends with.
const GOING_AWAY: u16 = 1001;
const INVALID_PAYLOAD: u16 = 1007;
const POLICY: u16 = 1008;
const TRY_AGAIN_LATER: u16 = 1013;

/// Answers the upgrade request (101) and serves the socket once hyper hands it over.
pub fn upgrade(session: Arc<Session>, mut req: Request<Incoming>) -> Response<Body> {
    // Subscribed before the 101 goes out: the client gets every event after its handshake.
    let (_, live) = session.hub.subscribe(None);
    let answered = answer_upgrade(&mut req, None, MAX_MESSAGE, None, |socket, _| {
        serve(session, socket, live)
    });
    answered.unwrap_or_else(|| upgrade_required("this route"))
}

/// Why the server ends a socket.
enum Ending {
    /// The client left (or closed, which the transport answers).
    Gone,
    /// The server closes with this status.
    Close(u16, &'static str),
}

async fn serve(
    session: Arc<Session>,
    mut socket: Connection,
    mut live: broadcast::Receiver<Arc<Published>>,
) {
    let mut shutdown = session.shutdown.clone();
    let far = || Instant::now() + Duration::from_secs(24 * 3600);
    let ending = loop {
        tokio::select! {
            _ = switched_on(&mut shutdown) => break Ending::Close(GOING_AWAY, "server stopping"),
            received = socket.recv(far()) => match received {
                None => break Ending::Gone,
                Some((received, _)) => {
                    if let Some(ending) = on_received(&session, received) {
                        break ending;
                    }
                }
            },
            event = live.recv() => match event {
                Ok(event) => {
                    let frame = Outgoing::Frame(Frame::Text(event.json.clone()));
                    if socket.send(frame, Instant::now() + SEND_BUDGET).await.is_err() {
                        break Ending::Gone;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => break Ending::Close(TRY_AGAIN_LATER, "client too slow"),
                Err(broadcast::error::RecvError::Closed) => break Ending::Close(GOING_AWAY, "server stopping"),
            },
        }
    };
    match ending {
        Ending::Gone => socket.close().await,
        Ending::Close(code, reason) => socket.close_with(code, reason).await,
    }
}

/// Handles what the client's socket gave; `Some` ends the socket.
fn on_received(session: &Session, received: Received) -> Option<Ending> {
    let faults = &session.config.faults;
    match received {
        Received::Frame(Frame::Text(text))
            if faults.has("rejects-messages-input")
                && envelope::is_messages_input(text.as_bytes()) =>
        {
            None
        }
        Received::Frame(Frame::Text(text)) => match envelope::parse(text.as_bytes()) {
            // An unknown id over the socket has nobody to tell: it is dropped.
            Ok(event) => {
                let _ = session.handle(event);
                None
            }
            Err(_) => {
                session.rejected();
                (!faults.has("no-1007"))
                    .then_some(Ending::Close(INVALID_PAYLOAD, "invalid event envelope"))
            }
        },
        Received::Frame(Frame::Binary(_) | Frame::RawText(_)) => (!faults.has("accepts-binary"))
            .then_some(Ending::Close(POLICY, "binary frames are not accepted")),
        received if received.is_terminal() => Some(Ending::Gone),
        _ => None,
    }
}
