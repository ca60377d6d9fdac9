//! Which transport a connection speaks: the transports own their kinds, which the protocols
//! list and the runner, the CLI and `check` choose by.

/// The transport a protocol's targets speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    WebSocket,
    /// Socket.IO (Engine.IO v4 over WebSocket).
    SocketIo,
    /// A child process speaking NDJSON on stdin/stdout.
    Stdio,
    /// Server-Sent Events down, HTTP POSTs up.
    Sse,
    /// HTTP POSTs answered with length-prefixed protobuf frames (AG-UI's protobuf binding,
    /// negotiated by `Accept`; a server without it answers SSE).
    Protobuf,
}

impl TransportKind {
    /// The name `--transport` and reports use.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::WebSocket => "ws",
            TransportKind::SocketIo => "socketio",
            TransportKind::Stdio => "stdio",
            TransportKind::Sse => "sse",
            TransportKind::Protobuf => "proto",
        }
    }
}

impl std::str::FromStr for TransportKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [
            TransportKind::Sse,
            TransportKind::WebSocket,
            TransportKind::SocketIo,
            TransportKind::Stdio,
            TransportKind::Protobuf,
        ]
        .into_iter()
        .find(|k| k.name() == s)
        .ok_or_else(|| format!("unknown transport {s:?}; known: sse, ws, socketio, stdio, proto"))
    }
}
