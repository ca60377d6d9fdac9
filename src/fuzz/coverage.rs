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
    /// The rules no run exercised, in catalogue order.
    pub never_reached: Vec<&'static str>,
}

/// True when a campaign judging `side` counts `rule` in its coverage.
fn counted(rule: &Rule, side: Direction) -> bool {
    rule.level != Level::Info && rule.binds.applies(side == Direction::Server)
}

/// The coverage of a campaign over `protocol` judging `side` whose runs exercised `exercised`.
pub fn coverage(
    protocol: &dyn Protocol,
    side: Direction,
    exercised: &BTreeSet<&'static str>,
) -> Coverage {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut never: Vec<&'static str> = Vec::new();
    for rule in protocol.rules().iter().filter(|r| counted(r, side)) {
        // A catalogue may repeat an id (its first entry is the rule): count it once.
        if seen.contains(&rule.id) || never.contains(&rule.id) {
            continue;
        }
        match exercised.contains(rule.id) {
            true => seen.push(rule.id),
            false => never.push(rule.id),
        }
    }
    Coverage {
        side,
        rules: seen.len() + never.len(),
        exercised: seen,
        never_reached: never,
    }
}

impl Coverage {
    /// One line: `exercised 58 of 64 server rules; never reached: HAIP-FLOW-004, …`.
    pub fn summary(&self) -> String {
        let side = match self.side {
            Direction::Server => "server",
            Direction::Client => "client",
        };
        let mut line = format!(
            "exercised {} of {} {side} rules",
            self.exercised.len(),
            self.rules
        );
        if !self.never_reached.is_empty() {
            line.push_str("; never reached: ");
            line.push_str(&self.never_reached.join(", "));
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
        let c = coverage(hpd, Direction::Server, &exercised);
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
        let whole = coverage(hpd, Direction::Server, &all);
        assert_eq!(
            whole.summary(),
            format!("exercised {0} of {0} server rules", side.len())
        );
        assert!(hpd
            .rules()
            .iter()
            .filter(|r| r.level == Level::Info)
            .all(|r| !whole.exercised.contains(&r.id)));
    }
}
