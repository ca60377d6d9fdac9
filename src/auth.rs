//! Bearer JWTs: minting valid and deliberately invalid HS256 tokens for the auth cases, and
//! verifying them in reference targets.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Seconds since the Unix epoch.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn sign(secret: &[u8], signing_input: &str) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(signing_input.as_bytes());
    B64.encode(mac.finalize().into_bytes())
}

/// An HS256 token over `claims`.
pub fn mint_hs256(secret: &[u8], claims: &Value) -> String {
    let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let body = B64.encode(claims.to_string());
    let input = format!("{header}.{body}");
    let sig = sign(secret, &input);
    format!("{input}.{sig}")
}

/// Claims valid for an hour from now, keeping `iss`/`aud`/`sub` from `template` if given.
pub fn fresh_claims(template: Option<&Map<String, Value>>) -> Value {
    let now = now_secs();
    let mut claims = template.cloned().unwrap_or_default();
    claims.insert("iat".into(), json!(now));
    claims.insert("exp".into(), json!(now + 3600));
    claims.remove("nbf");
    claims.entry("sub").or_insert(json!("wireprobe"));
    Value::Object(claims)
}

/// The claims of a token, without verifying it.
pub fn peek_claims(token: &str) -> Option<Map<String, Value>> {
    let body = token.split('.').nth(1)?;
    let bytes = B64.decode(body).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// The token with one character of its signature changed.
pub fn tamper(token: &str) -> String {
    let mut out = token.to_owned();
    if let Some(last) = out.pop() {
        out.push(if last == 'A' { 'B' } else { 'A' });
    }
    out
}

/// The token's claims under `{"alg":"none"}` with an empty signature.
pub fn alg_none(token: &str) -> String {
    let header = B64.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let body = token.split('.').nth(1).unwrap_or("e30");
    format!("{header}.{body}.")
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("no token")]
    Missing,
    #[error("malformed token")]
    Malformed,
    #[error("unsupported alg {0:?}")]
    Algorithm(String),
    #[error("bad signature")]
    Signature,
    #[error("token expired")]
    Expired,
    #[error("token not valid yet")]
    NotYetValid,
}

/// Clock skew tolerated on `exp`, `iat` and `nbf`.
pub const LEEWAY_SECS: i64 = 60;

/// Checks an HS256 token: structure, algorithm, signature, `exp` (required), `iat`, `nbf`.
/// The error names the first defect found, in that order.
pub fn verify_hs256(
    token: &str,
    secret: &[u8],
    now: i64,
) -> Result<Map<String, Value>, TokenError> {
    let mut parts = token.split('.');
    let (Some(h), Some(b), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: Value = B64
        .decode(h)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(TokenError::Malformed)?;
    let claims = peek_claims(token).ok_or(TokenError::Malformed)?;
    match header.get("alg").and_then(Value::as_str) {
        Some("HS256") => {}
        other => return Err(TokenError::Algorithm(other.unwrap_or("").to_owned())),
    }
    // Constant-time comparison through the MAC API.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(format!("{h}.{b}").as_bytes());
    let given = B64.decode(s).map_err(|_| TokenError::Signature)?;
    mac.verify_slice(&given)
        .map_err(|_| TokenError::Signature)?;
    let num = |k: &str| claims.get(k).and_then(Value::as_i64);
    match num("exp") {
        Some(exp) if exp + LEEWAY_SECS >= now => {}
        _ => return Err(TokenError::Expired),
    }
    if num("iat").is_some_and(|iat| iat > now + LEEWAY_SECS)
        || num("nbf").is_some_and(|nbf| nbf > now + LEEWAY_SECS)
    {
        return Err(TokenError::NotYetValid);
    }
    Ok(claims)
}

/// Which token a connection presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenKind {
    /// `--token`, or one minted with `--jwt-secret`, or none when neither was given.
    #[default]
    Valid,
    Absent,
    /// Not a JWT at all.
    Malformed,
    /// A valid token with its signature altered.
    Tampered,
    /// The valid token's claims with `alg: none` and no signature.
    AlgNone,
    /// Signed with a key that is not the target's.
    WrongKey,
    /// Signed with the right key, `exp` in the past (needs `--jwt-secret`).
    Expired,
    /// Signed with the right key, `iat` and `nbf` an hour ahead (needs `--jwt-secret`).
    NotYetValid,
}

impl TokenKind {
    /// Each kind by the name a suite gives it (`connect.token`).
    pub const NAMES: [(&'static str, TokenKind); 8] = [
        ("valid", TokenKind::Valid),
        ("none", TokenKind::Absent),
        ("malformed", TokenKind::Malformed),
        ("tampered", TokenKind::Tampered),
        ("alg-none", TokenKind::AlgNone),
        ("wrong-key", TokenKind::WrongKey),
        ("expired", TokenKind::Expired),
        ("not-yet-valid", TokenKind::NotYetValid),
    ];

    /// The name a suite gives this kind.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("valid", |(n, _)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_verify_and_bad_ones_do_not() {
        let now = now_secs();
        let good = mint_hs256(b"k", &fresh_claims(None));
        assert!(verify_hs256(&good, b"k", now).is_ok());
        assert_eq!(
            verify_hs256(&tamper(&good), b"k", now),
            Err(TokenError::Signature)
        );
        assert_eq!(
            verify_hs256(&good, b"other", now),
            Err(TokenError::Signature)
        );
        assert!(matches!(
            verify_hs256(&alg_none(&good), b"k", now),
            Err(TokenError::Algorithm(_))
        ));
        assert_eq!(verify_hs256("abc", b"k", now), Err(TokenError::Malformed));
        let expired = mint_hs256(b"k", &json!({"iat": now - 7200, "exp": now - 3600}));
        assert_eq!(verify_hs256(&expired, b"k", now), Err(TokenError::Expired));
        let future = mint_hs256(
            b"k",
            &json!({"iat": now + 3600, "nbf": now + 3600, "exp": now + 7200}),
        );
        assert_eq!(
            verify_hs256(&future, b"k", now),
            Err(TokenError::NotYetValid)
        );
    }
}
