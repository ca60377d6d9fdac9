//! `--case` / `--skip` / `--rule` globs and the `--known-failing` baseline.

use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::BTreeSet;
use std::path::Path;

/// Which cases run.
#[derive(Debug, Clone, Default)]
pub struct CaseFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// Every pattern as given, `--case` then `--skip`, to say which match nothing.
    patterns: Vec<String>,
    /// `--rule` globs: a case runs only when it lists a rule one of them matches.
    rules: Option<GlobSet>,
    rule_patterns: Vec<String>,
    /// `--shard I/N`: of the cases the rest selects, only those this shard holds run.
    shard: Option<crate::shard::Shard>,
}

/// A glob that does not parse.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid case glob {glob:?}: {reason}")]
pub struct BadGlob {
    pub glob: String,
    pub reason: String,
}

fn build(globs: &[String]) -> Result<Option<GlobSet>, BadGlob> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).map_err(|e| BadGlob {
            glob: g.clone(),
            reason: e.to_string(),
        })?);
    }
    b.build().map(Some).map_err(|e| BadGlob {
        glob: globs.join(" "),
        reason: e.to_string(),
    })
}

impl CaseFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, BadGlob> {
        Ok(CaseFilter {
            include: build(include)?,
            exclude: build(exclude)?,
            patterns: include.iter().chain(exclude).cloned().collect(),
            rules: None,
            rule_patterns: Vec::new(),
            shard: None,
        })
    }

    /// Also requires a case to be held by `shard` (all cases are without one).
    pub fn with_shard(mut self, shard: Option<crate::shard::Shard>) -> Self {
        self.shard = shard;
        self
    }

    /// Also requires a case to list a rule one of `rules` (globs over rule ids) matches.
    pub fn with_rules(mut self, rules: &[String]) -> Result<Self, BadGlob> {
        self.rules = build(rules)?;
        self.rule_patterns = rules.to_vec();
        Ok(self)
    }

    /// True when `case` runs: its id is selected, it lists a selected rule, and this shard
    /// holds it.
    pub fn selects_case(&self, case: &super::model::Case) -> bool {
        self.selects_for_run(case) && self.shard.is_none_or(|s| s.holds_case(&case.id))
    }

    /// True when `case` runs in some shard of the run: selected by id and rule.
    pub fn selects_for_run(&self, case: &super::model::Case) -> bool {
        self.selects(&case.id)
            && self
                .rules
                .as_ref()
                .is_none_or(|g| case.rules.iter().any(|r| g.is_match(r)))
    }

    /// The `--rule` patterns that match none of `ids` (rule ids).
    pub fn unmatched_rules<'a>(&self, ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        unmatched(&self.rule_patterns, ids)
    }

    /// The patterns that match none of `ids`: a typo there would quietly run (or skip)
    /// nothing it was meant to.
    pub fn unmatched<'a>(&self, ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        unmatched(&self.patterns, ids)
    }

    /// True when the case with this id runs.
    pub fn selects(&self, id: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(id))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(id))
    }
}

/// The `patterns` that match none of `ids`.
fn unmatched<'a>(patterns: &[String], ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    patterns
        .iter()
        .filter(|p| {
            let glob = Glob::new(p).map(|g| g.compile_matcher());
            glob.is_ok_and(|g| !ids.clone().any(|id| g.is_match(id)))
        })
        .cloned()
        .collect()
}

/// Case ids expected to fail (one per line; `#` starts a comment).
pub fn read_known_failing(path: &Path) -> std::io::Result<BTreeSet<String>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}
