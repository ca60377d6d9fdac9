//! `--case` / `--skip` globs and the `--known-failing` baseline.

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
        })
    }

    /// The patterns that match none of `ids`: a typo there would quietly run (or skip)
    /// nothing it was meant to.
    pub fn unmatched<'a>(&self, ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        self.patterns
            .iter()
            .filter(|p| {
                let glob = Glob::new(p).map(|g| g.compile_matcher());
                glob.is_ok_and(|g| !ids.clone().any(|id| g.is_match(id)))
            })
            .cloned()
            .collect()
    }

    /// True when the case with this id runs.
    pub fn selects(&self, id: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(id))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(id))
    }
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
