//! The hosted HTTP routes under the prefix: `POST inputs`, `GET events/live` (SSE),
//! `POST responses`, `POST interrupt` and `GET ws` (WebSocket upgrade). Anything else is 404,
//! a known route with the wrong method 405.

use super::conversations::Conversations;
use super::envelope::{self, ClientEvent, EnvelopeError};
use super::session::{Outcome, Session};
use super::{sse, ws};
use crate::reference::http_body::{json_response, read_body, Body};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;
use std::sync::Arc;

/// Answers one request. Never fails: every problem is an HTTP status.
pub async fn route(conversations: Arc<Conversations>, req: Request<Incoming>) -> Response<Body> {
    let Some((session, route)) = conversations.find(req.uri().path()) else {
        return not_found();
    };
    let (method, handler) = match route.as_str() {
        "/inputs" => (Method::POST, Handler::Inputs),
        "/events/live" => (Method::GET, Handler::Events),
        "/responses" => (Method::POST, Handler::Responses),
        "/interrupt" => (Method::POST, Handler::Interrupt),
        "/ws" => (Method::GET, Handler::Ws),
        _ => return not_found(),
    };
    if req.method() != method {
        let mut resp = json_response(
            StatusCode::METHOD_NOT_ALLOWED,
            json!({"error": format!("use {method}")}),
        );
        if let Ok(allow) = HeaderValue::from_str(method.as_str()) {
            resp.headers_mut().insert(ALLOW, allow);
        }
        return resp;
    }
    match handler {
        Handler::Inputs => inputs(&session, req).await,
        Handler::Events => events(session, &req),
        Handler::Responses => responses(&session, req).await,
        Handler::Interrupt => interrupt(&session, req).await,
        Handler::Ws => ws::upgrade(session, req),
    }
}

enum Handler {
    Inputs,
    Events,
    Responses,
    Interrupt,
    Ws,
}

async fn inputs(session: &Session, req: Request<Incoming>) -> Response<Body> {
    let body = match read_body(req).await {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    if session.config.faults.has("rejects-messages-input") && envelope::is_messages_input(&body) {
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "USER_MESSAGES_INPUT is not taken here"}),
        );
    }
    match envelope::parse(&body) {
        Ok(event @ ClientEvent::Input(_)) => answer(session.handle(event)),
        Ok(other) => invalid(session, EnvelopeError::WrongRoute(other.kind()), true),
        Err(e) => invalid(session, e, true),
    }
}

async fn responses(session: &Session, req: Request<Incoming>) -> Response<Body> {
    let body = match read_body(req).await {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    match envelope::parse(&body) {
        Ok(event @ ClientEvent::Response { .. }) => answer(session.handle(event)),
        Ok(other) => invalid(session, EnvelopeError::WrongRoute(other.kind()), false),
        Err(e) => invalid(session, e, false),
    }
}

async fn interrupt(session: &Session, req: Request<Incoming>) -> Response<Body> {
    let body = match read_body(req).await {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    // An empty body is a plain "stop", as a button in a UI would send it.
    if body.iter().all(u8::is_ascii_whitespace) {
        return answer(session.handle(ClientEvent::Interrupt));
    }
    match envelope::parse(&body) {
        Ok(ClientEvent::Interrupt) => answer(session.handle(ClientEvent::Interrupt)),
        Ok(other) => invalid(session, EnvelopeError::WrongRoute(other.kind()), false),
        Err(e) => invalid(session, e, false),
    }
}

/// The SSE stream, resuming after `?after=N` or `Last-Event-ID: N` (the query wins).
fn events(session: Arc<Session>, req: &Request<Incoming>) -> Response<Body> {
    let from_query = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("after="))
            .and_then(|n| n.parse::<u64>().ok())
    });
    let from_header = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let body = sse::subscribe(session, from_query.or(from_header));
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// The status of a handled client event.
fn answer(outcome: Outcome) -> Response<Body> {
    match outcome {
        Outcome::Accepted => json_response(StatusCode::ACCEPTED, json!({"accepted": true})),
        Outcome::Delivered => json_response(StatusCode::OK, json!({"delivered": true})),
        Outcome::UnknownId => json_response(
            StatusCode::NOT_FOUND,
            json!({"error": "no pending request has this id"}),
        ),
        Outcome::Conflict => {
            json_response(StatusCode::CONFLICT, json!({"error": "a turn is running"}))
        }
        Outcome::Busy => json_response(
            StatusCode::TOO_MANY_REQUESTS,
            json!({"error": "too many inputs waiting"}),
        ),
    }
}

/// 400 for an invalid envelope (202 on the inputs route in the `accepts-invalid-input` fault).
fn invalid(session: &Session, error: EnvelopeError, input_route: bool) -> Response<Body> {
    session.rejected();
    if input_route && session.config.faults.has("accepts-invalid-input") {
        return json_response(StatusCode::ACCEPTED, json!({"accepted": true}));
    }
    json_response(StatusCode::BAD_REQUEST, json!({"error": error.to_string()}))
}

fn not_found() -> Response<Body> {
    json_response(StatusCode::NOT_FOUND, json!({"error": "no such route"}))
}
