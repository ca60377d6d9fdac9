//! Opens a case's connection over the run's transport, and the directory a stdio case gets.

use super::config::RunConfig;
use crate::protocol::Protocol;
use crate::transport::TransportKind;
use crate::transport::{socketio, sse, stdio, websocket, Connection, TransportError};

/// Opens a connection over the run's transport to the target `opts` names (a stdio target:
/// `cfg.exec`, with `{tmp}` as `tmp`).
pub(super) async fn open_transport(
    protocol: &dyn Protocol,
    opts: websocket::WsOptions,
    cfg: &RunConfig,
    tmp: &std::path::Path,
) -> Result<Connection, TransportError> {
    match cfg.transport_of(protocol) {
        // The protobuf binding is the SSE binding's POST with another Accept: the transport
        // reads whichever encoding the answer's content type names.
        TransportKind::Sse | TransportKind::Protobuf => {
            let routes = protocol
                .http_routes()
                .ok_or_else(|| TransportError::BadTarget {
                    target: opts.url.clone(),
                    reason: format!("{} has no SSE + HTTP binding", protocol.id()),
                })?;
            sse::connect(&sse::SseOptions {
                base: opts.url,
                stream_path: routes.stream.map(str::to_owned),
                default_post_path: routes.post.to_owned(),
                headers: opts.headers,
                max_frame: opts.max_frame,
                timeout: opts.connect_timeout,
                insecure: opts.insecure,
                framed_types: routes.framed.iter().map(|t| t.to_string()).collect(),
            })
            .await
        }
        TransportKind::WebSocket => websocket::connect(&opts).await,
        TransportKind::SocketIo => socketio::connect(opts, &cfg.socketio_path)
            .await
            .map(|(conn, _)| conn),
        TransportKind::Stdio => {
            let stdio_opts = stdio::StdioOptions {
                argv: stdio::expand_tmp(&cfg.exec, tmp),
                cwd: cfg.cwd.clone(),
                max_line: cfg.max_frame,
            };
            stdio::spawn(&stdio_opts).await
        }
    }
}

/// A fresh directory for one case (`{tmp}` of a stdio command), removed when dropped.
pub(super) struct CaseDir(std::path::PathBuf);

impl CaseDir {
    pub(super) fn create() -> Result<CaseDir, TransportError> {
        let path = std::env::temp_dir().join(format!("wireprobe-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).map_err(|e| {
            TransportError::Protocol(format!(
                "cannot create the case directory {}: {e}",
                path.display()
            ))
        })?;
        Ok(CaseDir(path))
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
