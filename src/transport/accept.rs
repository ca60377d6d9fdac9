//! Reading an HTTP `Accept` header: whether it admits a media type, by name or by a wildcard
//! range (`*/*`, `type/*`), at a positive quality (RFC 9110 §12.5.1). Relative qualities are
//! not compared: a binding that negotiates by admission alone (AG-UI's protobuf) asks only this.

/// True when `accept` admits `media` (compared without case), at a quality above zero.
pub fn admits(accept: &str, media: &str) -> bool {
    let media = media.to_ascii_lowercase();
    let family = media.split('/').next().unwrap_or("");
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let named = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let zero = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f64>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        let matches = named == media
            || named == "*/*"
            || named.strip_suffix("/*").is_some_and(|f| f == family);
        !zero && matches
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_type_is_admitted_by_name_or_wildcard_and_not_at_quality_zero() {
        let proto = "application/vnd.ag-ui.event+proto";
        assert!(admits(
            "text/event-stream, application/vnd.ag-ui.event+proto",
            proto
        ));
        assert!(admits("*/*", proto));
        assert!(admits("application/*;q=0.1", proto));
        assert!(!admits("text/event-stream", proto));
        assert!(!admits("application/vnd.ag-ui.event+proto;q=0", proto));
        assert!(!admits("text/*", proto));
        assert!(admits("TEXT/Event-Stream", "text/event-stream"));
    }
}
