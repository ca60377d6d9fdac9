//! How a generated run becomes a case: the waits that make it mean the same wherever it runs.

use super::*;
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
    assert_eq!(run.shape(profile), vec!["undescribed-member"]);
    assert_eq!(run.mutated_bases(), vec![&start]);
    let reverted = run.reverting(std::slice::from_ref(&start));
    assert_eq!(reverted.steps, vec![FuzzStep::Valid(start)]);
    assert!(reverted.shape(profile).is_empty());
}
