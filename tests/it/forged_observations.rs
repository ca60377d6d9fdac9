//! Nothing a target sends can pose as an observation of ours. Transcripts once stored what the
//! transport saw (a close, stderr, an HTTP answer, SSE fields) as JSON objects with `$` keys, in
//! the same namespace as the target's own JSON: a target sending `{"$stderr": "…"}` went
//! unjudged and `{"$close": {}}` read as a closed connection. Every key that scheme knew, sent
//! by a target inside and outside its events, is now judged as what it is: the target's JSON.

use crate::common;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use wireprobe::check::check_stream;
use wireprobe::protocol;
use wireprobe::rules::{self, Level};
use wireprobe::suite::{loader, runner};
use wireprobe::transcript::{Direction, Observation};
use wireprobe::verdict::Verdict;

/// Every key the old transcript scheme gave a meaning, in the target's namespace.
const KEYS: &[&str] = &[
    "$close",
    "$stderr",
    "$text",
    "$error",
    "$rejected",
    "$connect",
    "$notice",
    "$binary",
    "$truncated",
    "$invalid_utf8_text",
    "$http",
    "$sse",
    "$sse_open",
    "$post",
    "$stream",
    "$json",
];

/// Values those keys took, so each key is tried in the shapes that once meant something.
fn values() -> [Value; 3] {
    [
        json!({}),
        json!("x"),
        json!({"code": 1000, "status": 401, "after": "1", "id": "1", "len": 3}),
    ]
}

/// Rules `check` finds (with their counts) in one server line.
fn findings(protocol: &str, event: &Value) -> BTreeMap<String, u64> {
    let p = protocol::get(protocol).expect("known protocol");
    let line = json!({"from": "server", "at_ms": 0, "event": event}).to_string();
    let summary = check_stream(p, line.as_bytes(), Default::default(), |_| {}).expect("reads");
    assert!(summary.bad_lines.is_empty(), "{:?}", summary.bad_lines);
    summary
        .per_rule
        .into_iter()
        .map(|(rule, n)| (rule.to_owned(), n))
        .collect()
}

/// A valid event the target side sends, from the protocol's corpus.
fn valid_event(protocol: &str, file: &str) -> Value {
    let path = format!(
        "{}/corpus/{protocol}/valid/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("corpus file");
    let first = text.lines().next().expect("a line");
    serde_json::from_str(first).expect("JSON")
}

/// The key with its `$` replaced: a name no scheme ever reserved.
fn plain(key: &str) -> String {
    format!("wp_{}", key.trim_start_matches('$'))
}

#[test]
fn dollar_keys_are_judged_like_any_other_key() {
    let samples = [
        ("haip", valid_event("haip", "gen-sequence.ndjson")),
        (
            "nuum",
            json!({"type": "system", "subtype": "init", "session_id": "s", "version": "1", "tools": []}),
        ),
        ("hpd", valid_event("hpd", "spec-agent-turn-started.json")),
        ("uae", valid_event("uae", "spec-assistant-message.json")),
    ];
    for (protocol, valid) in &samples {
        let p = protocol::get(protocol).expect("known protocol");
        let broken: Vec<String> = findings(protocol, valid)
            .into_keys()
            .filter(|r| rules::find(p.rules(), r).is_some_and(|r| r.level > Level::Info))
            .collect();
        assert!(
            broken.is_empty(),
            "{protocol}: the sample is valid: {broken:?}"
        );
        for key in KEYS {
            for value in values() {
                // Outside an event: an object holding only the key.
                let forged = json!({ *key: value.clone() });
                let innocent = json!({ plain(key): value.clone() });
                let seen = findings(protocol, &forged);
                assert!(!seen.is_empty(), "{protocol}: {forged} went unjudged");
                assert_eq!(
                    seen,
                    findings(protocol, &innocent),
                    "{protocol}: {forged} is judged unlike {innocent}"
                );
                // Inside an otherwise valid event.
                let mut inside = valid.clone();
                inside[*key] = value.clone();
                let mut beside = valid.clone();
                beside[plain(key)] = value.clone();
                assert_eq!(
                    findings(protocol, &inside),
                    findings(protocol, &beside),
                    "{protocol}: {key} inside a valid event is judged unlike another key"
                );
            }
        }
    }
}

/// A stdio target that writes each forged object on stdout (and a line on stderr) after its
/// init: the run keeps every one as the event it is and judges it; none ends the connection,
/// none is taken for stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_target_sending_dollar_keys_is_judged_on_what_it_sent() {
    let forged: Vec<String> = KEYS
        .iter()
        .map(|k| json!({ *k: {"code": 1000} }).to_string())
        .collect();
    let mut script = String::from(
        r#"printf '%s\n' '{"type":"system","subtype":"init","session_id":"s","tools":[]}'; "#,
    );
    for line in &forged {
        script.push_str(&format!("printf '%s\\n' '{line}'; "));
    }
    script.push_str("echo 'on stderr' >&2; while read -r _; do :; done");
    let suite_text = r#"
[[case]]
id = "forged.keys"
title = "Reads what the target sends"
rules = ["NUUM-INIT-001"]
steps = [{ wait = { ms = 300 } }]
"#;
    let p = protocol::get("nuum").expect("nuum");
    let suite = loader::load_texts(p, &[("t.toml".into(), suite_text.into())]).expect("loads");
    let command = vec!["sh".to_owned(), "-c".to_owned(), script];
    let mut cfg = common::test_config(runner::RunConfig::new("sh"), None);
    cfg.exec = command;
    let results = runner::run_suite(p, &suite, &cfg, &|_| {})
        .await
        .expect("runs");
    let case = &results[0];
    let events: Vec<&Value> = case
        .transcript
        .iter()
        .filter(|e| e.from == Direction::Server)
        .filter_map(|e| e.event())
        .collect();
    for key in KEYS {
        assert!(
            events.iter().any(|e| e.get(*key).is_some()),
            "{key}: not kept as the target's event: {:?}",
            case.transcript
        );
    }
    let stderr = case
        .transcript
        .iter()
        .filter(|e| matches!(e.observation(), Some(Observation::Stderr { .. })))
        .count();
    assert_eq!(stderr, 1, "only the real stderr line is stderr");
    let closes = case
        .transcript
        .iter()
        .filter(|e| e.from == Direction::Server)
        .filter(|e| matches!(e.observation(), Some(Observation::Close { .. })))
        .count();
    assert_eq!(closes, 0, "the target never closed: {:?}", case.transcript);
    // Each forged line is a line of no known Nuum type, and judged so.
    let judged = case
        .violations
        .iter()
        .filter(|v| v.level > Level::Info)
        .count();
    assert!(
        judged > 0,
        "the forged lines went unjudged: {:?}",
        case.violations
    );
    assert_ne!(case.verdict, Verdict::Error, "{}", case.message);
}
