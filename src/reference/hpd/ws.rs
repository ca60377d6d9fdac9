//! `GET {prefix}/ws`: the hosted WebSocket. Every live event goes out as one text frame (the
//! envelope JSON); client text frames carry inputs, responses and interruptions, handled as
//! the HTTP routes handle them. An invalid frame closes with 1007, a binary frame with 1008.
//! A client's close is echoed by tungstenite with the client's own code (1000 for a normal
//! close).

use super::envelope;
use super::hub::Published;
use super::session::switched_on;
use super::session::Session;
use crate::reference::http_body::{json_response, Body, MAX_BODY};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The largest frame or message a client may send (the HTTP routes' body limit).
const MAX_MESSAGE: usize = MAX_BODY;
/// How long a closing socket waits for the client's close reply.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Answers the upgrade request (101) and serves the socket once hyper hands it over.
pub fn upgrade(session: Arc<Session>, mut req: Request<Incoming>) -> Response<Body> {
    let Some(resp) = crate::transport::websocket::switching_protocols::<_, Body>(&req) else {
        return json_response(
            StatusCode::UPGRADE_REQUIRED,
            json!({"error": "this route is a WebSocket"}),
        );
    };
    let on_upgrade = hyper::upgrade::on(&mut req);
    // Subscribed before the 101 goes out: the client gets every event after its handshake.
    let (_, live) = session.hub.subscribe(None);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        serve(session, socket, live).await;
    });
    resp
}

/// Why the server ends a socket.
enum Ending {
    /// The client left (or closed and tungstenite replied).
    Gone,
    /// The server closes with this code.
    Close(CloseCode, &'static str),
}

async fn serve(
    session: Arc<Session>,
    socket: Socket,
    mut live: broadcast::Receiver<Arc<Published>>,
) {
    let (mut sink, mut stream) = socket.split();
    let mut shutdown = session.shutdown.clone();
    let ending = loop {
        tokio::select! {
            _ = switched_on(&mut shutdown) => break Ending::Close(CloseCode::Away, "server stopping"),
            frame = stream.next() => match frame {
                None | Some(Err(_)) => break Ending::Gone,
                Some(Ok(message)) => {
                    if let Some(ending) = on_message(&session, message) {
                        break ending;
                    }
                }
            },
            event = live.recv() => match event {
                Ok(event) => {
                    if sink.send(Message::text(event.json.clone())).await.is_err() {
                        break Ending::Gone;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => break Ending::Close(CloseCode::Again, "client too slow"),
                Err(broadcast::error::RecvError::Closed) => break Ending::Close(CloseCode::Away, "server stopping"),
            },
        }
    };
    match ending {
        Ending::Gone => drain(&mut sink, &mut stream).await,
        Ending::Close(code, reason) => {
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            if sink.send(Message::Close(Some(frame))).await.is_ok() {
                drain(&mut sink, &mut stream).await;
            }
        }
    }
}

/// Handles one client frame; `Some` ends the socket.
fn on_message(session: &Session, message: Message) -> Option<Ending> {
    let faults = &session.config.faults;
    match message {
        Message::Text(text)
            if faults.has("rejects-messages-input")
                && envelope::is_messages_input(text.as_bytes()) =>
        {
            None
        }
        Message::Text(text) => match envelope::parse(text.as_bytes()) {
            // An unknown id over the socket has nobody to tell: it is dropped.
            Ok(event) => {
                let _ = session.handle(event);
                None
            }
            Err(_) => {
                session.rejected();
                (!faults.has("no-1007"))
                    .then_some(Ending::Close(CloseCode::Invalid, "invalid event envelope"))
            }
        },
        Message::Binary(_) => (!faults.has("accepts-binary")).then_some(Ending::Close(
            CloseCode::Policy,
            "binary frames are not accepted",
        )),
        // tungstenite queues the close reply (and pongs) itself; reading on flushes them.
        Message::Close(_) => Some(Ending::Gone),
        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => None,
    }
}

/// Reads until the client's side ends (flushing tungstenite's close reply), for at most
/// [`CLOSE_WAIT`].
async fn drain(sink: &mut SplitSink<Socket, Message>, stream: &mut SplitStream<Socket>) {
    let _ = tokio::time::timeout(CLOSE_WAIT, async {
        while let Some(Ok(_)) = stream.next().await {}
    })
    .await;
    let _ = sink.close().await;
}
