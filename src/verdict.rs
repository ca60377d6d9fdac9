//! Case verdicts and how they combine.

use crate::rules::Level;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The outcome of one case (or, aggregated, of one rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    /// A must-level rule was broken.
    Fail,
    /// A should-level rule was broken ("non-strict").
    Warn,
    /// Behaviour recorded, not judged.
    Info,
    /// The target lacks a capability, a scenario was not reached, or the case was filtered out.
    Skip,
    /// The harness could not complete the case.
    Error,
}

impl Verdict {
    /// Severity used to combine verdicts: the worst one wins.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Skip => 0,
            Verdict::Pass => 1,
            Verdict::Info => 2,
            Verdict::Warn => 3,
            Verdict::Error => 4,
            Verdict::Fail => 5,
        }
    }

    /// The worse of two verdicts.
    pub fn worst(self, other: Verdict) -> Verdict {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    /// True when a rule was broken: `fail` (a must) or `warn` (a should).
    pub fn is_broken(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Warn)
    }

    /// True when this verdict makes the run exit 1 (`warn` only under `--strict`).
    pub fn is_failing(self, strict: bool) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error) || (strict && self == Verdict::Warn)
    }

    /// The verdict a broken rule of `level` gives: `fail` for a must, `warn` for a should or
    /// may, `info` for behaviour the spec leaves open.
    pub fn broken(level: Level) -> Verdict {
        match level {
            Level::Must => Verdict::Fail,
            Level::Should | Level::May => Verdict::Warn,
            Level::Info => Verdict::Info,
        }
    }

    /// The verdict a rule of `level` gives when it held: `info` rules record, others pass.
    pub fn held(level: Level) -> Verdict {
        match level {
            Level::Info => Verdict::Info,
            _ => Verdict::Pass,
        }
    }

    pub const ALL: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Warn,
        Verdict::Info,
        Verdict::Skip,
        Verdict::Error,
    ];
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::Info => "info",
            Verdict::Skip => "skip",
            Verdict::Error => "error",
        })
    }
}
