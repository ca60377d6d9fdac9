//! Which bearer token a case presents, and where.

use super::config::{Credentials, RunConfig};
use super::model::TokenKind;
use super::outcome::Outcome;
use crate::auth;
use crate::protocol::{Protocol, TokenPlacement};
use crate::transport::websocket::WsOptions;
use serde_json::json;
use std::time::Duration;

/// How to open a connection to the run's target presenting `token` at `placement`.
pub(super) fn connect_options(
    protocol: &dyn Protocol,
    cfg: &RunConfig,
    token: Option<&str>,
    placement: TokenPlacement,
    timeout: Duration,
) -> WsOptions {
    let url = protocol.endpoint(cfg.transport_of(protocol), &cfg.target_url);
    let mut opts = WsOptions::new(url);
    opts.headers = cfg.headers.clone();
    opts.max_frame = cfg.max_frame;
    opts.connect_timeout = timeout;
    opts.insecure = cfg.insecure;
    if let Some(token) = token {
        match placement {
            TokenPlacement::Query => opts.url = with_query_token(&opts.url, token),
            TokenPlacement::Subprotocol => opts.subprotocols.push(token.to_owned()),
            TokenPlacement::Header => opts
                .headers
                .push(("Authorization".into(), format!("Bearer {token}"))),
        }
    }
    opts
}

/// The URL with `token` added as a `token` query parameter (after any query it has).
fn with_query_token(url: &str, token: &str) -> String {
    let url = crate::transport::websocket::with_root_path(url);
    let encoded = crate::transport::query_escape(token);
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}token={encoded}")
}

/// The token a connection presents for `kind`, or why the case cannot run.
pub(super) fn token_for(kind: TokenKind, creds: &Credentials) -> Result<Option<String>, Outcome> {
    let secret = creds.jwt_secret.as_deref().map(str::as_bytes);
    let template = creds.claims_template();
    let valid = || -> Option<String> {
        creds
            .token
            .clone()
            .or_else(|| secret.map(|s| auth::mint_hs256(s, &auth::fresh_claims(template.as_ref()))))
    };
    let needs_secret = || Outcome::Skip("needs --jwt-secret to mint this token".into());
    let needs_any = || Outcome::Skip("needs --token or --jwt-secret".into());
    let now = auth::now_secs();
    let with_times = |iat: i64, exp: i64, nbf: Option<i64>| {
        let mut claims = auth::fresh_claims(template.as_ref());
        claims["iat"] = json!(iat);
        claims["exp"] = json!(exp);
        if let Some(nbf) = nbf {
            claims["nbf"] = json!(nbf);
        }
        claims
    };
    Ok(match kind {
        TokenKind::Valid => valid(),
        TokenKind::Absent => None,
        TokenKind::Malformed => Some("not-a-jwt".into()),
        TokenKind::Tampered => Some(auth::tamper(&valid().ok_or_else(needs_any)?)),
        TokenKind::AlgNone => Some(auth::alg_none(&valid().ok_or_else(needs_any)?)),
        TokenKind::WrongKey => Some(auth::mint_hs256(
            b"wireprobe-not-the-target-key",
            &auth::fresh_claims(template.as_ref()),
        )),
        TokenKind::Expired => Some(auth::mint_hs256(
            secret.ok_or_else(needs_secret)?,
            &with_times(now - 7200, now - 3600, None),
        )),
        TokenKind::NotYetValid => Some(auth::mint_hs256(
            secret.ok_or_else(needs_secret)?,
            &with_times(now + 3600, now + 7200, Some(now + 3600)),
        )),
    })
}
