//! What `fuzz agui --client` sends holds to its word: valid runs that leave nothing open, only
//! material a consumer must survive, and a probe that waits for the stream to take it.

use super::*;
use crate::fuzz::case::{case_for, FuzzRun, FuzzStep};
use crate::fuzz_profile::{gen, Opening};
use crate::protocol::agui::{patches, schema::schema};
use crate::suite::model::Action;
use crate::suite::runner::RunConfig;
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

/// Where each event the case sends goes, by its type (a `$stream` step by its key).
fn sent(case: &crate::suite::model::Case) -> Vec<String> {
    case.steps
        .iter()
        .map(|s| match &s.action {
            Action::Send(send) => match send.event["type"].as_str() {
                Some(t) => t.to_owned(),
                None => "$stream".to_owned(),
            },
            Action::Expect(_) => "expect".to_owned(),
            Action::Discard(_) => "discard".to_owned(),
            _ => "other".to_owned(),
        })
        .collect()
}

/// The case opens on the client's first run, and a probe owed after a mutated message start
/// goes after the message's end, then opens the next run's stream.
#[test]
fn the_probe_after_a_mutation_waits_for_what_is_open_to_close() {
    let protocol = crate::protocol::get("agui").expect("agui");
    let undescribed = MUTATORS
        .iter()
        .position(|m| m.name == "undescribed-member")
        .expect("the mutator");
    let start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m"});
    let run = FuzzRun {
        opening: Opening::Handshake(None),
        steps: vec![
            FuzzStep::Mutated {
                base: start,
                mutator: undescribed,
                seed: 3,
            },
            FuzzStep::Valid(
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}),
            ),
            FuzzStep::Valid(json!({"type": "TEXT_MESSAGE_END", "messageId": "m"})),
        ],
    };
    let on = RunConfig::new("http://127.0.0.1:1/{case}");
    let case = case_for(protocol, &AguiClientFuzz, "c", run, &on);
    let kinds = sent(&case);
    let probe = [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "RUN_FINISHED",
        "$stream",
        "expect",
        "RUN_STARTED",
    ];
    let mut wanted = vec!["expect", "RUN_STARTED"];
    wanted.extend(probe);
    wanted.extend([
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]);
    wanted.push("discard");
    wanted.extend(probe);
    wanted.push("other");
    assert_eq!(kinds, wanted, "{:#?}", case.steps);
    // The probe after the mutation is judged under the rule the mutation tests.
    let last_expect = case
        .steps
        .iter()
        .rev()
        .find(|s| matches!(s.action, Action::Expect(_)))
        .expect("the probe's answer");
    assert_eq!(last_expect.rule.as_deref(), Some(AGUI_CLI_014));
}

/// Valid events alone are followed by a probe at each place it fits, judged under
/// AGUI-CLI-009: a client that fails a valid run is named by it, not by a mutation after it.
#[test]
fn valid_groups_are_probed_too() {
    let protocol = crate::protocol::get("agui").expect("agui");
    let custom = json!({"type": "CUSTOM", "name": "n", "value": 1});
    let run = FuzzRun {
        opening: Opening::Handshake(None),
        steps: vec![
            FuzzStep::Valid(json!({"type": "STEP_STARTED", "stepName": "s"})),
            FuzzStep::Valid(json!({"type": "STEP_FINISHED", "stepName": "s"})),
            FuzzStep::Valid(custom),
        ],
    };
    let on = RunConfig::new("http://127.0.0.1:1/{case}");
    let case = case_for(protocol, &AguiClientFuzz, "c", run, &on);
    let kinds = sent(&case);
    let at = |ty: &str| kinds.iter().position(|k| k == ty).expect(ty);
    let probes: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == "TOOL_CALL_START")
        .collect();
    // Before the sequence, after the step closed (not between its start and finish), after
    // the custom event.
    assert_eq!(probes.len(), 3, "{kinds:?}");
    assert!(probes[0] < at("STEP_STARTED") && probes[1] > at("STEP_FINISHED"));
    assert!(probes[2] > at("CUSTOM"));
    let rules: Vec<Option<&str>> = case
        .steps
        .iter()
        .filter(|s| matches!(s.action, Action::Expect(_)))
        .map(|s| s.rule.as_deref())
        .collect();
    assert_eq!(
        rules,
        [AGUI_CLI_001, AGUI_CLI_009, AGUI_CLI_009, AGUI_CLI_009].map(Some),
    );
}
