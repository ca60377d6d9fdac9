//! Guidance: each run of a campaign aims at one rule the profile's mutators break, the rules
//! taken in turn. Drawn at random by weight, a mutator of a rule few mutators break (a resume,
//! a gap then a wait) came up once in hundreds of runs, and a fault only it reveals was found
//! late or never; aimed, every such rule is tried within one turn of the rules (a few dozen
//! runs), and again in each turn after, in a new order.
//!
//! The aim of run `k` follows from the seed and `k` alone: what earlier runs exercised does not
//! steer it, since runs finish in whatever order the target answers them and a shard sees only
//! its own. So a seed replays the same campaign, a shard's runs are the runs they would be
//! unsharded, and a finding's run is drawn again as it ran. What the runs did exercise is the
//! campaign's coverage ([`super::coverage`]).

use super::case::{sequences, FuzzRun, FuzzStep};
use super::{FuzzProfile, Rng};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

/// The strategies a campaign draws its runs from, and which one each run uses.
pub struct Sequences {
    /// Per aimed rule: the index of each of its mutators, as often as the mutator's weight.
    rules: Vec<Vec<usize>>,
    /// Per mutator: runs with at least one input it made (where one of the run's events takes
    /// it).
    aimed: Vec<BoxedStrategy<FuzzRun>>,
    /// Runs as drawn without aim, for a profile without mutators.
    plain: BoxedStrategy<FuzzRun>,
    seed: u64,
}

impl Sequences {
    /// The runs of a campaign over `profile` with `seed`, each of up to `max_len` steps.
    pub fn new(profile: &dyn FuzzProfile, max_len: usize, seed: u64) -> Self {
        Self::guided(profile, max_len, seed, true)
    }

    /// [`Sequences::new`], or, unless `guided`, runs that aim at nothing (every mutator drawn
    /// at random by weight).
    pub fn guided(profile: &dyn FuzzProfile, max_len: usize, seed: u64, guided: bool) -> Self {
        let mutators = profile.mutators();
        let mut rules: Vec<(&'static str, Vec<usize>)> = Vec::new();
        for (i, m) in mutators.iter().enumerate() {
            let weight = profile.weight(m);
            if weight == 0 {
                continue;
            }
            let at = match rules.iter().position(|(rule, _)| *rule == m.breaks) {
                Some(at) => at,
                None => {
                    rules.push((m.breaks, Vec::new()));
                    rules.len() - 1
                }
            };
            rules[at].1.extend(std::iter::repeat_n(i, weight));
        }
        if !guided {
            rules.clear();
        }
        let plain = sequences(profile, max_len);
        let aimed = (0..mutators.len())
            .map(|i| {
                let apply = mutators[i].apply;
                (plain.clone(), any::<u64>())
                    .prop_map(move |(run, at)| with_mutation(run, i, apply, at))
                    .boxed()
            })
            .collect();
        Sequences {
            rules: rules.into_iter().map(|(_, of)| of).collect(),
            aimed,
            plain,
            seed,
        }
    }

    /// The mutator run `run` aims at, if the profile has any: the rules in a new order each
    /// turn (drawn from the seed and the turn), and one of the rule's mutators by weight.
    pub fn aim(&self, run: u64) -> Option<usize> {
        let turn_len = self.rules.len() as u64;
        if turn_len == 0 {
            return None;
        }
        let (turn, at) = (run / turn_len, (run % turn_len) as usize);
        let mut order: Vec<usize> = (0..self.rules.len()).collect();
        let mut rng = Rng::new(self.seed ^ turn.wrapping_mul(0xA24B_AED4_963E_E407));
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let of_rule = &self.rules[order[at]];
        let mut pick = Rng::new(self.seed ^ run.wrapping_mul(0x9FB2_1C65_1E98_DF25));
        Some(*pick.pick(of_rule))
    }

    /// The strategy run `run` is drawn from.
    pub fn of_run(&self, run: u64) -> &BoxedStrategy<FuzzRun> {
        match self.aim(run) {
            Some(mutator) => &self.aimed[mutator],
            None => &self.plain,
        }
    }
}

/// `run` with one of its steps mutated by `mutator` (whose `apply` it is), unless a step
/// already is: the first, from step `at` on (wrapping), whose event the mutator takes. A run
/// none of whose events it takes stays as drawn.
fn with_mutation(
    mut run: FuzzRun,
    mutator: usize,
    apply: fn(&serde_json::Value, &mut Rng) -> Option<super::Input>,
    at: u64,
) -> FuzzRun {
    let has =
        |step: &FuzzStep| matches!(step, FuzzStep::Mutated { mutator: m, .. } if *m == mutator);
    let len = run.steps.len();
    if len == 0 || run.steps.iter().any(has) {
        return run;
    }
    for i in 0..len {
        let j = (at as usize).wrapping_add(i) % len;
        let (base, seed) = match &run.steps[j] {
            FuzzStep::Valid(event) => (event, at.wrapping_add(j as u64)),
            FuzzStep::Mutated { base, seed, .. } => (base, *seed),
        };
        if apply(base, &mut Rng::new(seed)).is_some() {
            let base = base.clone();
            run.steps[j] = FuzzStep::Mutated {
                base,
                mutator,
                seed,
            };
            break;
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule a mutator breaks is aimed at once in each turn of the rules, in an order the
    /// seed gives, and the aim of a run is the same however it is asked for.
    #[test]
    fn each_turn_aims_at_every_rule_once_in_an_order_the_seed_gives() {
        let profile = crate::protocol::get("haip")
            .and_then(|p| p.fuzzing_as(None))
            .expect("haip fuzzes");
        let sequences = Sequences::new(profile, 12, 7);
        let turn = sequences.rules.len() as u64;
        assert!(turn > 5, "{turn}");
        let rule_of = |run: u64| {
            let m = sequences.aim(run).expect("aimed");
            profile.mutators()[m].breaks
        };
        for t in 0..3 {
            let mut rules: Vec<&str> = (t * turn..(t + 1) * turn).map(rule_of).collect();
            rules.sort_unstable();
            rules.dedup();
            assert_eq!(rules.len() as u64, turn, "turn {t}");
        }
        let first: Vec<&str> = (0..turn).map(rule_of).collect();
        let second: Vec<&str> = (turn..2 * turn).map(rule_of).collect();
        assert_ne!(first, second, "each turn takes the rules in a new order");
        let again = Sequences::new(profile, 12, 7);
        assert!((0..3 * turn).all(|run| again.aim(run) == sequences.aim(run)));
        let other = Sequences::new(profile, 12, 8);
        assert!((0..turn).any(|run| other.aim(run) != sequences.aim(run)));
    }

    /// A seed draws the same runs again, aimed alike; another seed draws others. A shard
    /// draws every run too and keeps the ones it holds (the engine), so its runs are these.
    #[test]
    fn a_seed_draws_the_same_campaign_again() {
        let profile = crate::protocol::get("haip")
            .and_then(|p| p.fuzzing_as(None))
            .expect("haip fuzzes");
        let draw = |seed: u64| -> Vec<FuzzRun> {
            let sequences = Sequences::new(profile, 12, seed);
            let mut runner = crate::fuzz_profile::gen::runner(seed);
            (0..60)
                .map(|run| {
                    let tree = sequences.of_run(run).new_tree(&mut runner);
                    tree.expect("a run").current()
                })
                .collect()
        };
        assert!(draw(3) == draw(3));
        assert!(draw(3) != draw(4));
    }

    /// An aimed run holds an input of its mutator where one of its events takes it.
    #[test]
    fn an_aimed_run_holds_its_mutators_input() {
        let profile = crate::protocol::get("haip")
            .and_then(|p| p.fuzzing_as(None))
            .expect("haip fuzzes");
        let sequences = Sequences::new(profile, 12, 1);
        let mut runner = crate::fuzz_profile::gen::runner(1);
        let mut holding = 0;
        for run in 0..40 {
            let mutator = sequences.aim(run).expect("aimed");
            let tree = sequences.of_run(run).new_tree(&mut runner).expect("a run");
            let drawn = tree.current();
            let takes = drawn.steps.iter().any(|s| {
                let (FuzzStep::Valid(e) | FuzzStep::Mutated { base: e, .. }) = s;
                (profile.mutators()[mutator].apply)(e, &mut Rng::new(0)).is_some()
            });
            let holds = drawn
                .steps
                .iter()
                .any(|s| matches!(s, FuzzStep::Mutated { mutator: m, .. } if *m == mutator));
            holding += usize::from(holds);
            assert!(holds || !takes, "run {run}: {drawn:?}");
        }
        assert!(holding > 20, "{holding} of 40 runs held their aim");
    }
}
