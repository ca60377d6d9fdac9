//! How a generated run becomes a case: the waits that make it mean the same wherever it runs.

use super::*;
use crate::rules::ids::{AGUI_CLI_001, AGUI_CLI_009, AGUI_CLI_014};
use serde_json::json;

fn hpd() -> (&'static dyn Protocol, &'static dyn FuzzProfile) {
    let protocol = crate::protocol::get("hpd").expect("hpd");
    let profile = protocol.fuzzing_as(None).expect("fuzzable");
    (protocol, profile)
}

fn settles_for(step: &Step, ms: u64) -> bool {
    matches!(&step.action, Action::Wait(w) if w.pause.settled && w.pause.ms == ms)
}

/// A generated HPD case waits, before its probe after a bad input and at its end, until
/// the agent's turns have ended (up to the step timeout), and requires the transport the
/// campaign ran over: the frames its verdict depends on are its own, and its replay goes
/// where the run went.
#[test]
fn a_generated_case_waits_out_its_turns_and_pins_its_transport() {
    let (protocol, profile) = hpd();
    let mut on = RunConfig::new("http://127.0.0.1:1/{case}");
    on.step_timeout = std::time::Duration::from_millis(1234);
    let input = json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": "hello"});
    let run = FuzzRun {
        opening: Opening::Handshake(None),
        steps: vec![
            FuzzStep::Valid(input.clone()),
            FuzzStep::Mutated {
                base: input,
                mutator: 0,
                seed: 1,
            },
        ],
    };
    let case = case_for(protocol, profile, "c", run, &on);
    assert!(
        settles_for(case.steps.last().expect("steps"), 1234),
        "{:#?}",
        case.steps
    );
    let discard = case
        .steps
        .iter()
        .rposition(|s| matches!(s.action, Action::Discard(_)))
        .expect("the probe's discard");
    assert!(
        settles_for(&case.steps[discard - 1], 1234),
        "{:#?}",
        case.steps
    );
    assert_eq!(
        case.requires,
        vec![Requirement::Transport(TransportKind::Sse)]
    );
}

/// A Nuum user line sent behind one that may still run its turn waits for the agent to go
/// idle first: sent mid-turn it would be injected, its directive never obeyed, so whether
/// it was would depend on the machine's load (a finding that did not replay in CI). So does
/// an interrupt, which would cancel the turn or meet none by the same race.
#[test]
fn a_line_whose_meaning_needs_an_idle_agent_waits_for_the_work_before_it() {
    let protocol = crate::protocol::get("nuum").expect("nuum");
    let profile = protocol.fuzzing_as(None).expect("fuzzable");
    let on = RunConfig::new("builtin");
    let user = |t: &str| json!({"type": "user", "message": {"role": "user", "content": t}});
    let heartbeat = json!({"type": "control", "action": "heartbeat"});
    let run = FuzzRun {
        opening: Opening::Handshake(None),
        steps: vec![
            FuzzStep::Valid(user("first")),
            FuzzStep::Valid(heartbeat),
            FuzzStep::Valid(user("wireprobe: alarm 1 later")),
            FuzzStep::Valid(json!({"type": "control", "action": "interrupt"})),
        ],
    };
    let case = case_for(protocol, profile, "c", run, &on);
    let sends: Vec<usize> = case
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(&s.action, Action::Send(send) if send.event["type"] == "user"))
        .map(|(i, _)| i)
        .collect();
    let [first, second] = sends[..] else {
        panic!("two user lines: {:#?}", case.steps)
    };
    let settles = |range: std::ops::Range<usize>| {
        case.steps[range]
            .iter()
            .any(|s| settles_for(s, profile.settle_ms(0)))
    };
    assert!(!settles(0..first), "{:#?}", case.steps);
    assert!(settles(first..second), "{:#?}", case.steps);
    let interrupt = case
        .steps
        .iter()
        .position(
            |s| matches!(&s.action, Action::Send(send) if send.event["action"] == "interrupt"),
        )
        .expect("the interrupt");
    assert!(settles(second..interrupt), "{:#?}", case.steps);
}

/// A run's shape names the mutator that made each input (the next that applies, when the one
/// drawn does not), and reverting a mutation sends its event valid.
#[test]
fn a_shape_names_the_mutators_applied_and_reverting_sends_the_event_valid() {
    let protocol = crate::protocol::get("agui").expect("agui");
    let profile = protocol
        .client_fuzzing(TransportKind::Sse)
        .expect("fuzzable");
    let names: Vec<&str> = profile.mutators().iter().map(|m| m.name).collect();
    let drawn = names
        .iter()
        .position(|n| *n == "sse-fields")
        .expect("sse-fields");
    // SSE lines replace only custom and raw events: a message start takes the next mutator
    // that applies to it.
    let start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m"});
    let run = FuzzRun {
        opening: Opening::Handshake(None),
        steps: vec![FuzzStep::Mutated {
            base: start.clone(),
            mutator: drawn,
            seed: 1,
        }],
    };
    let on = RunConfig::new("http://127.0.0.1:1/{case}");
    let shape = |run: FuzzRun| shaped_case(protocol, profile, "c", run, &on).1;
    assert_eq!(shape(run.clone()), vec!["undescribed-member"]);
    assert_eq!(run.mutated_bases(), vec![&start]);
    let reverted = run.reverting(std::slice::from_ref(&start));
    assert_eq!(reverted.steps, vec![FuzzStep::Valid(start)]);
    assert!(shape(reverted).is_empty());
}

/// The AG-UI client profile (`fuzz agui --client`), whose probes wait for what is open.
fn agui_client() -> (&'static dyn Protocol, &'static dyn FuzzProfile) {
    let protocol = crate::protocol::get("agui").expect("agui");
    let profile = protocol
        .client_fuzzing(TransportKind::Sse)
        .expect("fuzzable");
    (protocol, profile)
}

/// Where each event the case sends goes, by its type (a `$stream` step by its key).
fn sent(case: &Case) -> Vec<String> {
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
    let (protocol, profile) = agui_client();
    let undescribed = profile
        .mutators()
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
    let case = case_for(protocol, profile, "c", run, &on);
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
    let (protocol, profile) = agui_client();
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
    let case = case_for(protocol, profile, "c", run, &on);
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
