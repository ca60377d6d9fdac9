//! The server side of a case that judges a client: a loopback listener of the case's own, the
//! client under test started against it (`{url}`, `{token}`, `{tmp}` expanded, and given as
//! `WIREPROBE_URL` and `WIREPROBE_TOKEN`), and each connection it opens accepted over the
//! run's transport. What the client writes to stdout and stderr is kept for the transcript.

use super::connect::CaseDir;
use super::outcome::Outcome;
use super::steps::CaseRun;
use crate::protocol::{Protocol, TransportKind};
use crate::transcript::Observation;
use crate::transport::process::Stream;
use crate::transport::process::{self, Launched, OutputLine};
use crate::transport::socketio::server::{EioServer, ServerOptions};
use crate::transport::websocket::{self, Opened};
use crate::transport::{Connection, TransportError};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Where a case takes the client's connections from.
#[derive(Clone)]
enum Listening {
    /// A loopback port of the case's own, for the client it starts.
    Own(Arc<TcpListener>),
    /// The run's listener, which a harness's connections reach one case at a time.
    Shared(super::config::SharedListener),
}

impl Listening {
    async fn accept(&self) -> std::io::Result<TcpStream> {
        match self {
            Listening::Own(own) => own.accept().await.map(|(tcp, _)| tcp),
            Listening::Shared(shared) => shared.lock().await.accept().await.map(|(tcp, _)| tcp),
        }
    }
}

/// A Socket.IO server for the case: every TCP connection that arrives is handed to it (a
/// polling client opens several per session), by a task stopped with the case.
struct SocketIoServing {
    server: Arc<EioServer>,
    feed: JoinHandle<()>,
}

impl Drop for SocketIoServing {
    fn drop(&mut self) {
        self.feed.abort();
    }
}

/// A case's listener and the client started against it.
pub(super) struct Serving {
    listener: Listening,
    transport: TransportKind,
    /// Started at the first accept of a Socket.IO case.
    socketio: Option<SocketIoServing>,
    /// What `{url}` becomes: where the client connects.
    url: String,
    launched: Option<Launched>,
}

/// Why the client under test could not be served.
#[derive(Debug, thiserror::Error)]
pub(super) enum ServingError {
    #[error("cannot listen on loopback for the client: {0}")]
    Listen(std::io::Error),
    #[error("{0}")]
    Launch(TransportError),
    #[error("{protocol} cannot serve a client over {transport} yet")]
    Unsupported {
        protocol: &'static str,
        transport: &'static str,
    },
    #[error("the client did not connect within {waited_ms} ms{exited}")]
    NoConnection { waited_ms: u64, exited: String },
    #[error("the client's connection failed: {0}")]
    Accept(TransportError),
}

impl Serving {
    /// Listens for a client of `protocol` over `transport`: on the run's listener when a
    /// harness starts the client (`shared`), else on a free loopback port.
    pub(super) async fn bind(
        protocol: &dyn Protocol,
        transport: TransportKind,
        shared: Option<&super::config::SharedListener>,
    ) -> Result<Serving, ServingError> {
        let scheme = match transport {
            TransportKind::WebSocket => "ws",
            TransportKind::SocketIo => "http",
            other => {
                return Err(ServingError::Unsupported {
                    protocol: protocol.id(),
                    transport: other.name(),
                })
            }
        };
        let (listener, addr) = match shared {
            Some(shared) => {
                let addr = shared.lock().await.local_addr();
                (Listening::Shared(shared.clone()), addr)
            }
            None => {
                let own = TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(ServingError::Listen)?;
                let addr = own.local_addr();
                (Listening::Own(Arc::new(own)), addr)
            }
        };
        let addr = addr.map_err(ServingError::Listen)?;
        Ok(Serving {
            listener,
            transport,
            socketio: None,
            url: format!("{scheme}://{addr}/"),
            launched: None,
        })
    }

    /// Starts the client under test, `command` with `{url}`, `{token}` and `{tmp}` expanded.
    pub(super) fn launch(
        &mut self,
        command: &[String],
        token: Option<&str>,
        tmp: &Path,
        cwd: Option<&Path>,
    ) -> Result<(), ServingError> {
        let token = token.unwrap_or("");
        let argv: Vec<String> = crate::transport::stdio::expand_tmp(command, tmp)
            .into_iter()
            .map(|a| a.replace("{url}", &self.url).replace("{token}", token))
            .collect();
        let env = [
            ("WIREPROBE_URL".to_owned(), self.url.clone()),
            ("WIREPROBE_TOKEN".to_owned(), token.to_owned()),
        ];
        let launched = process::launch(&argv, &env, cwd).map_err(ServingError::Launch)?;
        self.launched = Some(launched);
        Ok(())
    }

    /// Accepts the client's next connection within `timeout`: over Socket.IO, its next
    /// Engine.IO session.
    pub(super) async fn accept(
        &mut self,
        max_frame: usize,
        timeout: Duration,
    ) -> Result<(Connection, Opened), ServingError> {
        let waited_ms = timeout.as_millis() as u64;
        let accepted = if self.transport == TransportKind::SocketIo {
            let server = self.socketio_server(max_frame);
            match server.accept(timeout).await {
                Err(TransportError::Timeout(_)) => None,
                other => Some(other.map_err(ServingError::Accept)),
            }
        } else {
            match tokio::time::timeout(timeout, self.listener.accept()).await {
                Ok(Ok(tcp)) => Some(
                    websocket::accept(tcp, max_frame, timeout)
                        .await
                        .map_err(ServingError::Accept),
                ),
                Ok(Err(e)) => Some(Err(ServingError::Listen(e))),
                Err(_) => None,
            }
        };
        accepted.unwrap_or_else(|| {
            let exited = match self.launched.as_mut().and_then(Launched::exited) {
                Some(status) => format!(" (it exited: {status})"),
                None => String::new(),
            };
            Err(ServingError::NoConnection { waited_ms, exited })
        })
    }

    /// The case's Socket.IO server, fed from its listener from the first call on.
    fn socketio_server(&mut self, max_frame: usize) -> Arc<EioServer> {
        let listener = self.listener.clone();
        let serving = self.socketio.get_or_insert_with(|| {
            let server = Arc::new(EioServer::new(ServerOptions::new(max_frame)));
            let feeding = server.clone();
            let feed = tokio::spawn(async move {
                while let Ok(tcp) = listener.accept().await {
                    feeding.serve_tcp(tcp);
                }
            });
            SocketIoServing { server, feed }
        });
        serving.server.clone()
    }

    /// What the client has written since the last call.
    pub(super) fn output(&mut self) -> Vec<OutputLine> {
        self.launched
            .as_mut()
            .map(Launched::new_lines)
            .unwrap_or_default()
    }

    /// Stops the client (its whole process group): what it wrote last.
    pub(super) async fn stop(mut self) -> Vec<OutputLine> {
        match self.launched.take() {
            Some(launched) => launched.stop().await,
            None => Vec::new(),
        }
    }
}

impl CaseRun<'_> {
    /// Opens the case's connection when it judges a client: the first time, a listener and
    /// the client started against it; every time, the client's next connection accepted.
    pub(super) async fn open_served(&mut self, token: Option<&str>) -> Result<(), Outcome> {
        if self.serving.is_none() {
            let transport = self.cfg.transport_of(self.protocol);
            let shared = self.cfg.client_listener.as_ref();
            let mut serving = Serving::bind(self.protocol, transport, shared)
                .await
                .map_err(|e| Outcome::Error(e.to_string()))?;
            if self.dir.is_none() {
                self.dir = Some(CaseDir::create().map_err(|e| Outcome::Error(e.to_string()))?);
            }
            let tmp = self.dir.as_ref().map(|d| d.path().to_path_buf());
            if !self.cfg.client_command.is_empty() {
                serving
                    .launch(
                        &self.cfg.client_command,
                        token,
                        &tmp.unwrap_or_default(),
                        self.cfg.cwd.as_deref(),
                    )
                    .map_err(|e| Outcome::Error(e.to_string()))?;
            }
            self.serving = Some(serving);
        }
        let timeout = self.timeout(None);
        let Some(serving) = self.serving.as_mut() else {
            return Err(Outcome::Error("no listener for the client".into()));
        };
        let accepted = serving.accept(self.cfg.max_frame, timeout).await;
        let output = serving.output();
        // A client that could not connect usually said why on stderr.
        let last_words = output
            .iter()
            .rev()
            .find(|l| l.stream == Stream::Stderr)
            .map(|l| l.text.chars().take(200).collect::<String>());
        self.keep_output(output);
        match accepted {
            Ok((conn, opened)) => {
                // Which connection ran the case: what it asked for, and from where.
                let url = match opened.peer {
                    Some(peer) => format!("{} (from {peer})", opened.path),
                    None => opened.path,
                };
                self.link
                    .transcript
                    .observe_target(Observation::Connect { url });
                self.link.conn = Some(conn);
                Ok(())
            }
            Err(e) => {
                let message = match last_words {
                    Some(words) => format!("{e}; its stderr ends: {words:?}"),
                    None => e.to_string(),
                };
                self.link.transcript.observe_target(Observation::Error {
                    message: message.clone(),
                });
                Err(Outcome::Error(message))
            }
        }
    }

    /// Puts what the client under test wrote into the transcript.
    pub(super) fn keep_output(&mut self, lines: Vec<OutputLine>) {
        for line in lines {
            let observation = match line.stream {
                Stream::Stdout => Observation::Stdout { line: line.text },
                Stream::Stderr => Observation::Stderr { line: line.text },
            };
            self.link.transcript.observe_target(observation);
        }
    }
}
