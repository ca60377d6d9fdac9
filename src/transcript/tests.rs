use super::*;
use serde_json::json;

fn line(text: &str) -> Entry {
    serde_json::from_str(text).expect("a transcript line")
}

/// A text kept unread is read when the entries are taken: JSON an event, anything else
/// text, one too long cut at once; past the bound only counted.
#[test]
fn texts_kept_unread_are_read_when_taken() {
    let mut t = Transcript::new();
    let now = Instant::now();
    t.push_text_at(Direction::Client, now, r#"{"type":"PING"}"#);
    t.push_text_at(Direction::Server, now, "not json");
    t.push_text_at(Direction::Server, now, &"x".repeat(MAX_STORED_FRAME + 1));
    let entries = t.into_entries();
    assert_eq!(entries[0].event(), Some(&json!({"type": "PING"})));
    assert!(matches!(
        entries[1].observation(),
        Some(Observation::Text { text, len: 8 }) if text == "not json"
    ));
    assert!(matches!(
        entries[2].observation(),
        Some(Observation::Text { text, .. }) if text.ends_with(TRUNCATED_MARK)
    ));
    let mut full = Transcript::new();
    for _ in 0..=MAX_ENTRIES {
        full.push_text_at(Direction::Client, now, "{}");
    }
    assert_eq!(full.dropped(), 1);
}

/// This machine running out of ports is recorded as ours; any other failure as the target's.
#[test]
fn no_local_port_is_ours() {
    use crate::transport::TransportError;
    let mut t = Transcript::new();
    let ran_out = TransportError::NoLocalPort {
        target: "http://10.0.0.2/".into(),
        reason: "none free".into(),
    };
    t.record_received(&Received::Failed(ran_out), Instant::now());
    t.record_received(&Received::Failed(TransportError::Closed), Instant::now());
    let sides: Vec<Direction> = t.entries().iter().map(|e| e.from).collect();
    assert_eq!(sides, [Direction::Client, Direction::Server]);
}

/// Past the byte budget nothing more is stored, not even what has no size: what is kept
/// is a prefix, then the `truncated` mark (found against ag-ui-langgraph, whose large
/// events filled the budget: the HTTP heads of later POSTs were kept without the POSTs,
/// and each was judged as the answer to an earlier input).
#[test]
fn past_the_budget_the_kept_entries_are_a_prefix() {
    let mut t = Transcript::new();
    let now = Instant::now();
    let big = "x".repeat(MAX_STORED_FRAME);
    while t.dropped() == 0 {
        t.push_text_at(Direction::Server, now, &big);
    }
    let kept = t.entries().len();
    t.observe(
        Direction::Server,
        Observation::Close {
            code: None,
            reason: String::new(),
        },
    );
    assert_eq!(t.entries().len(), kept);
    assert_eq!(t.dropped(), 2);
    let entries = t.into_entries();
    assert!(matches!(
        entries.last().and_then(Entry::observation),
        Some(Observation::Truncated { dropped: 2 })
    ));
}

#[test]
fn an_event_holding_observation_keys_stays_an_event() {
    for key in [
        "$close",
        "$stderr",
        "$rejected",
        "$error",
        "$text",
        "$http",
        "$sse",
    ] {
        let sent = format!(r#"{{"from":"server","at_ms":1,"frame":{{"{key}":{{}}}}}}"#);
        let entry = line(&sent);
        assert_eq!(entry.event(), Some(&json!({ key: {} })), "{key}");
        let again = serde_json::to_string(&entry).expect("serializes");
        assert_eq!(line(&again), entry);
    }
}

#[test]
fn observations_have_their_own_field() {
    let entry = Entry {
        from: Direction::Server,
        at_ms: 3,
        record: Record::Observed(Observation::Close {
            code: Some(1000),
            reason: "bye".into(),
        }),
    };
    let text = serde_json::to_string(&entry).expect("serializes");
    assert_eq!(
        text,
        r#"{"from":"server","at_ms":3,"observed":{"close":{"code":1000,"reason":"bye"}}}"#
    );
    assert_eq!(line(&text), entry);
    assert!(serde_json::from_str::<Entry>(r#"{"from":"server","at_ms":0}"#).is_err());
}

#[test]
fn sse_fields_sit_beside_the_event() {
    let mut t = Transcript::new();
    let data = r#"{"type":"X","$sse":{"id":"forged"}}"#.to_owned();
    let meta = SseMeta {
        id: Some("7".into()),
        ..SseMeta::default()
    };
    t.record_received(&Received::SseEvent { data, meta }, Instant::now());
    let text = serde_json::to_string(&t.entries()[0]).expect("serializes");
    assert!(
        text.contains(r#""frame":{"type":"X","$sse":{"id":"forged"}}"#),
        "{text}"
    );
    assert!(text.contains(r#""sse":{"id":"7"}"#), "{text}");
}
