//! Rules: one normative statement of a spec each, with its level and source.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How binding a rule is. `Info` marks behaviour the spec leaves open: recorded, never judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    May,
    Should,
    Must,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::May => "may",
            Level::Info => "info",
        })
    }
}

/// One normative statement of a spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `PROTOCOL-AREA-NNN`, e.g. `HAIP-SEQ-003`.
    pub id: &'static str,
    pub level: Level,
    /// Our paraphrase of the statement.
    pub text: &'static str,
    /// The spec's own words the rule rests on, verbatim: one or more excerpts joined by
    /// [`QUOTE_SEPARATOR`]. An excerpt that starts with [`FACTS_PREFIX`] comes from the
    /// facts gathered about real implementations (`specs/README.md`), not from the spec.
    pub quote: &'static str,
    /// Spec file name and section heading, e.g. `001_1704fd641f081645.txt §Sequencing and Replay`.
    pub source: &'static str,
    /// The side whose behaviour the rule states: a run judging the other side leaves it out
    /// of its rules table.
    pub binds: Binds,
}

/// Which side of a connection a rule binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binds {
    /// Each side, or a sender whichever it is (HAIP's envelope, sequencing, liveness).
    Either,
    /// What the server does.
    Server,
    /// What the client does.
    Client,
}

impl Binds {
    /// True when a run that judges the server (`judges_server`) or the client can test it.
    pub fn applies(self, judges_server: bool) -> bool {
        match self {
            Binds::Either => true,
            Binds::Server => judges_server,
            Binds::Client => !judges_server,
        }
    }
}

/// A rule broken by one observed frame or by a transcript as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Violation {
    pub rule: &'static str,
    pub message: String,
}

impl Violation {
    pub fn new(rule: &'static str, message: impl Into<String>) -> Self {
        Violation {
            rule,
            message: message.into(),
        }
    }
}

/// A rule a checker could not judge on what it was shown (a capture without the input it
/// answers, a stream cut short), and why: a report says so rather than pass it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unjudged {
    pub rule: &'static str,
    pub why: &'static str,
}

/// The rules a checker evaluated since it was last asked ([`crate::protocol::Checker::exercised`]):
/// each rule whose condition was tested on an observation it applies to, whether or not it
/// held. A rule merely present in a catalogue, or a frame that passed by without the rule
/// applying to it, is no hit: coverage is measured in the spec's own terms.
#[derive(Debug, Default, Clone)]
pub struct Exercised {
    hits: Vec<&'static str>,
}

impl Exercised {
    /// Notes that the check of `rule` ran on an observation it applies to.
    pub fn hit(&mut self, rule: &'static str) {
        // A handful of hits per observation: a scan beats hashing them.
        if !self.hits.contains(&rule) {
            self.hits.push(rule);
        }
    }

    /// Moves the hits noted so far into `into`.
    pub fn drain_into(&mut self, into: &mut Vec<&'static str>) {
        into.append(&mut self.hits);
    }
}

/// In a checker's test: each rule of `applied` is among the `hits` an exchange made, and no rule
/// of `never` (rules about what the exchange never held, though traffic flowed).
#[cfg(test)]
pub(crate) fn assert_exercised(hits: &[&str], applied: &[&str], never: &[&str]) {
    for rule in applied {
        assert!(
            hits.contains(rule),
            "{rule} was checked, but not in {hits:?}"
        );
    }
    for rule in never {
        assert!(
            !hits.contains(rule),
            "{rule} had nothing to check: {hits:?}"
        );
    }
}

/// Each rule of every catalogue as a constant (`NUUM-INJ-002` is `ids::NUUM_INJ_002`), which
/// the code names rules by, so a misspelt one does not build; and where the code names each
/// (`build.rs` makes both from the catalogues).
pub mod ids {
    include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));
}

/// Joins the excerpts of a [`Rule::quote`].
pub const QUOTE_SEPARATOR: &str = " … ";

/// Marks an excerpt of a [`Rule::quote`] taken from the facts about real implementations.
pub const FACTS_PREFIX: &str = "facts: ";

impl Rule {
    /// The excerpts of the spec the rule rests on, each verbatim.
    pub fn excerpts(&self) -> impl Iterator<Item = &'static str> {
        self.quote
            .split(QUOTE_SEPARATOR)
            .filter(|excerpt| !excerpt.is_empty())
    }
}

/// Looks a rule up by id in a catalogue.
pub fn find(catalogue: &'static [Rule], id: &str) -> Option<&'static Rule> {
    index_of(catalogue).get(id).map(|at| &catalogue[*at])
}

/// Where each rule of `catalogue` is, by id. A fuzz run's case holds every rule of its
/// protocol, and each is looked up as the case is judged: scanning a catalogue of a hundred
/// ids that differ in their last characters only, each time, was 1% of live fuzzing's CPU.
/// Built once per catalogue (a handful per process), and kept.
fn index_of(catalogue: &'static [Rule]) -> &'static foldhash::HashMap<&'static str, usize> {
    type Index = foldhash::HashMap<&'static str, usize>;
    static INDEXES: std::sync::RwLock<Vec<(usize, usize, &'static Index)>> =
        std::sync::RwLock::new(Vec::new());
    let key = (catalogue.as_ptr() as usize, catalogue.len());
    let known = |indexes: &[(usize, usize, &'static Index)]| {
        indexes
            .iter()
            .find(|(at, len, _)| (*at, *len) == key)
            .map(|(_, _, index)| *index)
    };
    // A poisoned lock still holds whole entries: each is pushed complete.
    if let Some(index) = known(&INDEXES.read().unwrap_or_else(|e| e.into_inner())) {
        return index;
    }
    let mut indexes = INDEXES.write().unwrap_or_else(|e| e.into_inner());
    if let Some(index) = known(&indexes) {
        return index;
    }
    let mut index = Index::default();
    for (at, rule) in catalogue.iter().enumerate() {
        // The first of a repeated id, as a scan finds it.
        index.entry(rule.id).or_insert(at);
    }
    let index: &'static Index = Box::leak(Box::new(index));
    indexes.push((key.0, key.1, index));
    index
}

/// True when `id` is a `must` of `catalogue`: what breaks one is broken input, not a
/// difference of taste.
pub fn is_must(catalogue: &'static [Rule], id: &str) -> bool {
    find(catalogue, id).is_some_and(|r| r.level == Level::Must)
}

/// A [`Rule`] citing `SPEC §SECTION`:
/// `spec_rule!("file.txt", "ID", Must, "Section", "our paraphrase", "the spec's words")`.
#[macro_export]
macro_rules! spec_rule {
    (binds $binds:ident, $spec:literal, $id:literal, $level:expr, $section:literal, $text:literal, $quote:literal) => {
        $crate::rules::Rule {
            id: $id,
            level: $level,
            text: $text,
            quote: $quote,
            source: concat!($spec, " §", $section),
            binds: $crate::rules::Binds::$binds,
        }
    };
    ($spec:literal, $id:literal, $level:expr, $section:literal, $text:literal, $quote:literal) => {
        $crate::spec_rule!(binds Either, $spec, $id, $level, $section, $text, $quote)
    };
    ($spec:literal, $id:literal, $level:expr, $section:literal, $text:literal) => {
        $crate::spec_rule!($spec, $id, $level, $section, $text, "")
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constants are the catalogues' rules, no more and no fewer: `build.rs` reads the
    /// catalogues as text, and this holds what it read against what they are.
    #[test]
    fn each_rule_has_its_constant_and_each_constant_a_rule() {
        let mut catalogued: Vec<&str> = crate::protocol::all()
            .iter()
            .flat_map(|p| p.rules().iter().map(|r| r.id))
            .collect();
        catalogued.sort_unstable();
        catalogued.dedup();
        let mut constants: Vec<&str> = ids::ALL.iter().map(|(_, id)| *id).collect();
        constants.sort_unstable();
        assert_eq!(constants, catalogued);
        for (name, id) in ids::ALL {
            assert_eq!(name.replace('_', "-"), *id);
        }
    }

    #[test]
    fn a_rule_is_found_by_id_as_a_scan_finds_it() {
        for protocol in crate::protocol::all() {
            let catalogue = protocol.rules();
            let scanned = |id: &str| catalogue.iter().find(|r| r.id == id);
            for rule in catalogue {
                assert_eq!(find(catalogue, rule.id), scanned(rule.id), "{}", rule.id);
                let near = format!("{}0", rule.id);
                assert_eq!(find(catalogue, &near), None, "{near}");
            }
            assert_eq!(find(catalogue, ""), None);
        }
        // Catalogues are told apart: a rule of one is not found in another.
        let (haip, hpd) = (
            crate::protocol::haip::rules::RULES,
            crate::protocol::hpd::DESCRIPTOR.rules,
        );
        assert!(find(hpd, haip[0].id).is_none());
        assert!(find(haip, haip[0].id).is_some());
    }
}
