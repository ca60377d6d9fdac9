//! Generator properties, for every protocol that can be fuzzed: every generated valid event
//! passes the protocol's own validator, every mutated input fails exactly the rule its mutator
//! names (a sequence one is a valid event whose place in the sequence breaks it), and
//! generation is reproducible from its seed.

use wireprobe::fuzz::{gen, Answer};
use wireprobe::protocol;

fn fuzzable() -> Vec<(&'static str, &'static dyn wireprobe::fuzz::FuzzProfile)> {
    protocol::all()
        .iter()
        .filter_map(|p| p.fuzzing().map(|f| (p.id(), f)))
        .collect()
}

#[test]
fn there_are_fuzzable_protocols() {
    let ids: Vec<&str> = fuzzable().iter().map(|(id, _)| *id).collect();
    for id in ["haip", "huma", "nuum"] {
        assert!(ids.contains(&id), "{id} has no fuzz profile: {ids:?}");
    }
}

#[test]
fn generated_valid_events_pass_the_validator() {
    for (id, profile) in fuzzable() {
        for seed in 0..200 {
            for event in gen::valid(profile, 12, seed).expect("generates") {
                let broken =
                    profile.input_violations(&wireprobe::fuzz::Input::Event(event.clone()));
                assert!(
                    broken.is_empty(),
                    "{id} seed {seed}: {event} breaks {broken:?}"
                );
            }
        }
    }
}

#[test]
fn every_mutation_breaks_exactly_its_rule() {
    for (id, profile) in fuzzable() {
        for mutator in profile.mutators() {
            for seed in 0..40 {
                for m in gen::invalid(profile, Some(mutator.name), 5, seed).expect("generates") {
                    let broken = profile.input_violations(&m.input);
                    let expected: &[&str] = match mutator.answer {
                        Answer::Sequence => &[],
                        _ => &[mutator.breaks],
                    };
                    assert_eq!(
                        broken,
                        expected,
                        "{id} {} seed {seed}: {}",
                        mutator.name,
                        gen::render(&m)
                    );
                }
            }
        }
    }
}

/// An input that tests an application's rule (its answer is the protocol's error) stays
/// under 1,000,000 bytes, what Node's socket.io takes by default: past that the transport
/// refuses the frame (close 1009) before the application can keep or break the rule. A
/// HUMA result of 3 MiB was found as HUMA-VAL-004 against such a server, before. A line on a
/// child's stdin has no such limit.
#[test]
fn inputs_judged_by_an_application_rule_stay_under_common_transport_limits() {
    const TRANSPORT_LIMIT: usize = 1_000_000;
    let framed = |id: &str| {
        protocol::get(id).is_some_and(|p| p.transport() != protocol::TransportKind::Stdio)
    };
    for (id, profile) in fuzzable().into_iter().filter(|(id, _)| framed(id)) {
        for mutator in profile
            .mutators()
            .iter()
            .filter(|m| matches!(m.answer, Answer::Error(_)))
        {
            for seed in 0..40 {
                for m in gen::invalid(profile, Some(mutator.name), 5, seed).expect("generates") {
                    let size = match &m.input {
                        wireprobe::fuzz::Input::Event(e) => e.to_string().len(),
                        wireprobe::fuzz::Input::Raw(bytes) => bytes.len(),
                    };
                    assert!(
                        size < TRANSPORT_LIMIT,
                        "{id} {} seed {seed}: {size} bytes",
                        mutator.name
                    );
                }
            }
        }
    }
}

#[test]
fn generation_is_reproducible_from_the_seed() {
    for (id, profile) in fuzzable() {
        let a = gen::valid(profile, 20, 7).expect("generates");
        let b = gen::valid(profile, 20, 7).expect("generates");
        assert_eq!(a, b, "{id}");
        let c = gen::valid(profile, 20, 8).expect("generates");
        assert_ne!(a, c, "{id}: another seed, another sequence");
        let render = |seed| {
            gen::invalid(profile, None, 30, seed)
                .expect("generates")
                .iter()
                .map(gen::render)
                .collect::<Vec<_>>()
        };
        assert_eq!(render(3), render(3), "{id}");
    }
}

/// The campaign keeps each run's runner as it was before the run's draw, not the value tree
/// drawn, and draws the tree again when the run fails: that state must draw the same run, and
/// shrink it the same way, however many runs were drawn after it.
#[test]
fn a_runner_kept_from_before_a_draw_draws_that_run_again() {
    use proptest::strategy::{Strategy, ValueTree};
    use wireprobe::fuzz::case::sequences;
    for (id, profile) in fuzzable() {
        let strategy = sequences(profile, 30);
        let mut runner = gen::runner(11);
        for _ in 0..5 {
            let _ = strategy.new_tree(&mut runner).expect("draws");
        }
        let mut before = runner.clone();
        let mut drawn = strategy.new_tree(&mut runner).expect("draws");
        for _ in 0..5 {
            let _ = strategy.new_tree(&mut runner).expect("draws");
        }
        let mut again = strategy.new_tree(&mut before).expect("draws");
        assert_eq!(drawn.current(), again.current(), "{id}");
        if drawn.simplify() {
            assert!(again.simplify(), "{id}");
            assert_eq!(
                drawn.current(),
                again.current(),
                "{id}: the first shrink step"
            );
        }
    }
}
