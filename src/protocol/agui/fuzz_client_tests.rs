//! What `fuzz agui --client` sends holds to its word: valid runs that leave nothing open, only
//! material a consumer must survive (where its probes go: `fuzz/case_tests.rs`).

use super::*;
use crate::fuzz_profile::gen;
use crate::protocol::agui::{patches, schema::schema};
use proptest::strategy::{Strategy, ValueTree};

/// `count` generated sequences of up to 12 events.
fn sequences(count: usize) -> Vec<Vec<Value>> {
    let mut runner = gen::runner(7);
    let strategy = AguiClientFuzz.valid_sequence(1..=12);
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).expect("a draw").current())
        .collect()
}

#[test]
fn every_generated_event_is_valid_and_every_run_leaves_nothing_open() {
    for events in sequences(300) {
        assert!(!events.is_empty() && events.len() <= 12, "{events:#?}");
        let mut open = 0;
        let mut state = Value::Null;
        for e in &events {
            let ty = e["type"].as_str().expect("a type");
            let flaws = schema().event_flaws(ty, e).expect("a described type");
            assert!(flaws.is_empty(), "{e}: {flaws:?}");
            open += AguiClientFuzz.opened_by(e);
            assert!(open >= 0, "{events:#?}");
            match ty {
                "STATE_SNAPSHOT" => state = e["snapshot"].clone(),
                // Each patch applies to what came before: the state a client carries is known.
                "STATE_DELTA" => patches::apply(&mut state, &e["delta"]).expect("it applies"),
                _ => {}
            }
        }
        assert_eq!(open, 0, "{events:#?}");
    }
}

#[test]
fn each_mutation_is_material_a_consumer_must_read_on() {
    let content = json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"});
    let start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m"});
    let custom = json!({"type": "CUSTOM", "name": "n", "value": 1});
    let result = json!({"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "c", "content": "found"});
    let by_name = |name: &str| MUTATORS.iter().find(|m| m.name == name).expect("a mutator");
    for seed in 0..40 {
        let rng = &mut Rng::new(seed);
        // An event whose loss breaks the stream (content for a message never started) keeps
        // its type.
        assert_eq!((by_name("unknown-type").apply)(&start, rng), None);
        let Some(Input::Event(unknown)) = (by_name("unknown-type").apply)(&content, rng) else {
            panic!("an unknown type")
        };
        assert!(!schema().knows(unknown["type"].as_str().expect("a type")));
        let Some(Input::Event(extra)) = (by_name("undescribed-member").apply)(&start, rng) else {
            panic!("a member")
        };
        assert_eq!(extra["messageId"], "m");
        assert_eq!(extra.as_object().map(|m| m.len()), Some(3));
        let Some(Input::Event(parts)) = (by_name("unknown-content-part").apply)(&result, rng)
        else {
            panic!("parts")
        };
        assert!(parts["content"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["text"] == "found")));
        let Some(Input::Event(lines)) = (by_name("sse-fields").apply)(&custom, rng) else {
            panic!("lines")
        };
        let lines = lines["$stream"]["lines"].as_array().expect("lines").clone();
        assert!(lines.iter().all(|l| l
            .as_str()
            .is_some_and(|l| !l.contains(['\n', '\r']) && !l.starts_with("data"))));
        assert_eq!((by_name("sse-fields").apply)(&content, rng), None);
    }
    let sse = by_name("sse-fields");
    assert_eq!(AguiClientFuzz.probe_rule(sse), Some(AGUI_CLI_017));
}
