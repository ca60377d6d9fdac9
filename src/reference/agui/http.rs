//! The reference agent's one route: `POST /agent` with a `RunAgentInput`, answered with the
//! run as an SSE stream (HTTP + Server-Sent Events). Input the schema rejects is refused with
//! 400 before any run; members it does not describe are stripped and the run served.

use super::{faults, script::Script, Shared};
use crate::protocol::agui::schema::{schema, Flaw};
use crate::protocol::agui::PROTO_MEDIA_TYPE;
pub use crate::reference::http_body::Body;
use crate::reference::http_body::{json_response, read_body};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;

/// The route the agent answers on.
pub const ROUTE: &str = "/agent";

/// Answers one request: every problem is an HTTP status.
pub async fn answer(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    if req.uri().path() != ROUTE {
        return json_response(StatusCode::NOT_FOUND, json!({"error": "not found"}));
    }
    if req.method() != Method::POST {
        return json_response(StatusCode::METHOD_NOT_ALLOWED, json!({"error": "use POST"}));
    }
    // HTTP + Protobuf › Negotiation: the binding whenever Accept admits it (`sse-only`: a
    // producer without it, which answers SSE).
    let proto = !shared.config.variants.has("sse-only")
        && req
            .headers()
            .get_all(hyper::header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(crate::protocol::agui::http::admits_proto);
    let body = match read_body(req).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let config = &shared.config;
    let on = |name: &str| config.faults.has(name);
    let input: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) if on("rejects-in-stream") => return refused_in_stream(&e.to_string()),
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("the input is not JSON: {e}")}),
            )
        }
    };
    let flaws = schema().input_flaws(&input);
    let malformed = flaws.iter().find_map(|f| match f {
        Flaw::Malformed { path, message } => Some(format!("{path}: {message}")),
        _ => None,
    });
    if let Some(why) = malformed {
        if on("rejects-in-stream") {
            return refused_in_stream(&why);
        }
        if !on("serves-malformed") {
            return json_response(StatusCode::BAD_REQUEST, json!({"error": why}));
        }
    }
    let novel = flaws
        .iter()
        .any(|f| matches!(f, Flaw::Unknown { .. } | Flaw::Unrecognised { .. }));
    let newer = input
        .get("protocolVersion")
        .and_then(Value::as_str)
        .and_then(crate::protocol::agui::conversation::version)
        .is_some_and(|v| v > (1, 1));
    if on("rejects-novel") && (novel || newer) {
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "the input carries what this agent does not know"}),
        );
    }
    let replayed = if config.variants.has("replays") {
        shared.history(&input)
    } else {
        Vec::new()
    };
    let events = Script::new(config, &input).play(&input, &replayed);
    if config.variants.has("replays") {
        shared.remember(&input, &events);
    }
    let events = faults::apply(config, &input, events);
    let status = if on("status-201") {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    if proto {
        let kind = if on("proto-type-parameter") {
            "application/vnd.ag-ui.event+proto; version=1"
        } else {
            PROTO_MEDIA_TYPE
        };
        return streamed(status, kind, proto_frames(&events, config));
    }
    let kind = if on("json-content-type") {
        "application/json"
    } else {
        "text/event-stream"
    };
    streamed(status, kind, sse_chunks(&events, config))
}

/// Each event as a length-prefixed `ag_ui.Event` frame (HTTP + Protobuf › Framing); an event
/// the wire has no arm for is left out, as the binding drops one.
fn proto_frames(events: &[Value], config: &super::Config) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = events
        .iter()
        .filter_map(|e| crate::protocol::agui::proto::encode(e).ok())
        .map(|body| crate::transport::length_prefixed::encode(&body))
        .collect();
    if config.faults.has("undecodable-frame") {
        let at = frames.len().saturating_sub(1);
        frames.insert(
            at,
            crate::transport::length_prefixed::encode(b"\xff\xfe not a message"),
        );
    }
    frames
}

/// A malformed input answered the way `rejects-in-stream` does: a stream opening with RUN_ERROR.
fn refused_in_stream(why: &str) -> Response<Body> {
    let error = json!({"type": "RUN_ERROR", "message": format!("invalid input: {why}"), "code": "invalid_input"});
    streamed(
        StatusCode::OK,
        "text/event-stream",
        vec![format!("data: {error}\n\n")],
    )
}

/// The SSE text of each event (LF line ends, one event per `data:` line).
fn sse_chunks(events: &[Value], config: &super::Config) -> Vec<String> {
    let mut chunks = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let mut chunk = String::new();
        if config.variants.has("keep-alive") {
            chunk.push_str(": keep-alive\n\n");
        }
        if config.variants.has("event-fields") {
            let ty = event["type"].as_str().unwrap_or("message");
            chunk.push_str(&format!("event: {ty}\nid: {i}\n"));
        }
        chunk.push_str(&format!("data: {event}\n\n"));
        if config.faults.has("crlf-lines") {
            chunk = chunk.replace('\n', "\r\n");
        }
        chunks.push(chunk);
    }
    chunks
}

/// A streamed answer: each chunk its own body frame.
fn streamed<C: Into<Bytes> + Send + Sync + 'static>(
    status: StatusCode,
    kind: &'static str,
    chunks: Vec<C>,
) -> Response<Body> {
    let frames = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, Infallible>(hyper::body::Frame::data(c.into()))),
    );
    let mut resp = Response::new(StreamBody::new(frames).boxed());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}
