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
pub fn find<'a>(catalogue: &'a [Rule], id: &str) -> Option<&'a Rule> {
    catalogue.iter().find(|r| r.id == id)
}

/// True when `id` is a `must` of `catalogue`: what breaks one is broken input, not a
/// difference of taste.
pub fn is_must(catalogue: &[Rule], id: &str) -> bool {
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
