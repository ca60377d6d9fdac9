//! What the reference targets that answer HTTP share: the body every response has, the
//! largest request body read, a JSON answer (and the one to a request that should have been a
//! WebSocket upgrade), and reading a request's body within that bound.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;

/// Every response body: a small JSON document or a stream.
pub type Body = BoxBody<Bytes, Infallible>;

/// The largest request body read; more is answered 413 unread.
pub const MAX_BODY: usize = 1 << 20;

/// A response with a JSON body.
pub fn json_response(status: StatusCode, body: Value) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The answer to a plain request where a WebSocket target or route wants an upgrade (426):
/// `what` names it ("this target", "this route").
pub fn upgrade_required(what: &str) -> Response<Body> {
    json_response(
        StatusCode::UPGRADE_REQUIRED,
        json!({"error": format!("{what} is a WebSocket")}),
    )
}

/// The whole request body, at most [`MAX_BODY`] bytes.
pub async fn read_body(req: Request<Incoming>) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            json!({"error": format!("body over {MAX_BODY} bytes")}),
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(e) => Err(json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": format!("cannot read body: {e}")}),
        )),
    }
}
