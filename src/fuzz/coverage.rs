//! A campaign's rule coverage: which rules of the side it judges any of its runs exercised
//! (a check of the rule ran on an item it applies to, see [`crate::rules::Exercised`]), and
//! which it never reached. Coverage in the spec's own terms, not in lines of the target's code.

use crate::protocol::Protocol;
use crate::rules::{Level, Rule};
use crate::transcript::Direction;
use serde::Serialize;
use std::collections::BTreeSet;

/// The rules of one side a campaign exercised and those it never reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// The side judged.
    pub side: Direction,
    /// How many rules of that side count: every rule binding it but the `info` ones, which
    /// record what the spec leaves open and judge nothing.
    pub rules: usize,
    /// The rules exercised, in catalogue order.
    pub exercised: Vec<&'static str>,
    /// The rules no run exercised that a live campaign can reach, in catalogue order.
    pub never_reached: Vec<&'static str>,
    /// The rules no live campaign of the profile reaches, each with why (exercised or not:
    /// a step may still have named one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub out_of_reach: Vec<OutOfReach>,
}

/// A rule no live campaign reaches, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutOfReach {
    pub rule: &'static str,
    pub why: &'static str,
}

/// True when a campaign judging `side` counts `rule` in its coverage.
fn counted(rule: &Rule, side: Direction) -> bool {
    rule.level != Level::Info && rule.binds.applies(side == Direction::Server)
}

/// The coverage of a campaign over `protocol` judging `side` whose runs exercised `exercised`;
/// `out_of_reach` names the rules no live campaign reaches, with why.
pub fn coverage(
    protocol: &dyn Protocol,
    side: Direction,
    exercised: &BTreeSet<&'static str>,
    out_of_reach: &[(&'static str, &'static str)],
) -> Coverage {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut never: Vec<&'static str> = Vec::new();
    let mut beyond: Vec<OutOfReach> = Vec::new();
    for rule in protocol.rules().iter().filter(|r| counted(r, side)) {
        // A catalogue may repeat an id (its first entry is the rule): count it once.
        if seen.contains(&rule.id) || never.contains(&rule.id) {
            continue;
        }
        let why = out_of_reach.iter().find(|(id, _)| *id == rule.id);
        match (exercised.contains(rule.id), why) {
            (true, _) => seen.push(rule.id),
            (false, Some(&(rule, why))) => beyond.push(OutOfReach { rule, why }),
            (false, None) => never.push(rule.id),
        }
    }
    Coverage {
        side,
        rules: seen.len() + never.len() + beyond.len(),
        exercised: seen,
        never_reached: never,
        out_of_reach: beyond,
    }
}

impl Coverage {
    /// One line: `exercised 49 of 51 server rules a live campaign reaches; never reached:
    /// HAIP-FLOW-004, …; out of its reach: HAIP-SEQ-006, …`.
    pub fn summary(&self) -> String {
        let side = match self.side {
            Direction::Server => "server",
            Direction::Client => "client",
        };
        let reachable = self.rules - self.out_of_reach.len();
        let mut line = format!(
            "exercised {} of {reachable} {side} rules",
            self.exercised.len()
        );
        if !self.out_of_reach.is_empty() {
            line.push_str(" a live campaign reaches");
        }
        if !self.never_reached.is_empty() {
            line.push_str("; never reached: ");
            line.push_str(&self.never_reached.join(", "));
        }
        if !self.out_of_reach.is_empty() {
            let ids: Vec<&str> = self.out_of_reach.iter().map(|o| o.rule).collect();
            line.push_str(&format!(
                "; out of its reach ({}): {}",
                ids.len(),
                ids.join(", ")
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coverage counts the side's rules but the info ones, names the rest in catalogue order,
    /// and says so in one line.
    #[test]
    fn coverage_counts_the_judged_sides_rules_and_names_those_never_reached() {
        let hpd = crate::protocol::get("hpd").expect("hpd");
        let side: Vec<&Rule> = hpd
            .rules()
            .iter()
            .filter(|r| counted(r, Direction::Server))
            .collect();
        let first = side[0].id;
        let exercised = BTreeSet::from([first, "NOT-A-RULE"]);
        let c = coverage(hpd, Direction::Server, &exercised, &[]);
        assert_eq!(c.rules, side.len());
        assert_eq!(c.exercised, vec![first]);
        assert_eq!(c.never_reached.len(), side.len() - 1);
        assert!(!c.never_reached.contains(&first));
        let line = c.summary();
        assert!(
            line.starts_with(&format!(
                "exercised 1 of {} server rules; never reached: ",
                side.len()
            )),
            "{line}"
        );
        let all: BTreeSet<&str> = side.iter().map(|r| r.id).collect();
        let whole = coverage(hpd, Direction::Server, &all, &[]);
        assert_eq!(
            whole.summary(),
            format!("exercised {0} of {0} server rules", side.len())
        );
        assert!(hpd
            .rules()
            .iter()
            .filter(|r| r.level == Level::Info)
            .all(|r| !whole.exercised.contains(&r.id)));
        // A rule out of reach is named apart, with why, and not counted among those a
        // campaign could have reached; exercised all the same, it counts as exercised.
        let second = side[1].id;
        let beyond = [(second, "a reason"), (first, "another")];
        let c = coverage(hpd, Direction::Server, &exercised, &beyond);
        assert_eq!(c.exercised, vec![first]);
        assert_eq!(
            c.out_of_reach,
            vec![OutOfReach {
                rule: second,
                why: "a reason"
            }]
        );
        assert!(!c.never_reached.contains(&second));
        let line = c.summary();
        let reachable = side.len() - 1;
        assert!(
            line.starts_with(&format!(
                "exercised 1 of {reachable} server rules a live campaign reaches; never reached: "
            )),
            "{line}"
        );
        assert!(
            line.ends_with(&format!("; out of its reach (1): {second}")),
            "{line}"
        );
    }
}
