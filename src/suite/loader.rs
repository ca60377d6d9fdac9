//! Loads `suites/PROTOCOL/*.toml` into a [`Suite`], with errors that name the file, the line,
//! the case and the step. The file format is the model's serde derivation; what stays here is
//! what spans a whole case or suite: rule ids the protocol knows, unique case ids.

use super::model::*;
use crate::protocol::Protocol;
use crate::rules;
use std::collections::HashSet;
use std::path::Path;

/// A suite file that cannot be used, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}{}{}: {message}",
    line.map(|l| format!(":{l}")).unwrap_or_default(),
    case.as_ref().map(|c| format!(": case `{c}`")).unwrap_or_default(),
    step.map(|s| format!(" step {}", s + 1)).unwrap_or_default())]
pub struct SuiteError {
    pub origin: String,
    /// The line (from 1) the trouble is on, when the parser knows it.
    pub line: Option<usize>,
    pub case: Option<String>,
    pub step: Option<usize>,
    pub message: String,
}

/// The suite compiled into the binary for `protocol`.
pub fn load_bundled(protocol: &dyn Protocol) -> Result<Suite, SuiteError> {
    load_compiled(protocol, protocol.bundled_suite())
}

/// The suite compiled into the binary that judges a client of `protocol` (`run --client`).
pub fn load_bundled_client(protocol: &dyn Protocol) -> Result<Suite, SuiteError> {
    load_compiled(protocol, protocol.descriptor().client_suite)
}

fn load_compiled(protocol: &dyn Protocol, compiled: &[(&str, &str)]) -> Result<Suite, SuiteError> {
    let files: Vec<(String, String)> = compiled
        .iter()
        .map(|(name, text)| {
            (
                format!("suites/{}/{name}", protocol.id()),
                (*text).to_owned(),
            )
        })
        .collect();
    load_texts(protocol, &files)
}

/// A suite file or folder that could not be read.
fn io_error(path: &Path, e: std::io::Error) -> SuiteError {
    SuiteError {
        origin: path.display().to_string(),
        line: None,
        case: None,
        step: None,
        message: e.to_string(),
    }
}

/// A suite from a `.toml` file or a directory of them (sorted by name).
pub fn load_path(protocol: &dyn Protocol, path: &Path) -> Result<Suite, SuiteError> {
    let io_err = |e: std::io::Error| io_error(path, e);
    let mut paths = Vec::new();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).map_err(io_err)? {
            let p = entry.map_err(io_err)?.path();
            if p.extension().is_some_and(|e| e == "toml") {
                paths.push(p);
            }
        }
        paths.sort();
    } else {
        paths.push(path.to_path_buf());
    }
    let mut files = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| io_error(&p, e))?;
        files.push((p.display().to_string(), text));
    }
    load_texts(protocol, &files)
}

/// Parses suite texts `(origin, toml)`; case ids must be unique across all of them.
pub fn load_texts(
    protocol: &dyn Protocol,
    files: &[(String, String)],
) -> Result<Suite, SuiteError> {
    let mut suite = Suite::default();
    let mut seen = HashSet::new();
    for (origin, text) in files {
        for case in parse_file(protocol, origin, text)? {
            if !seen.insert(case.id.clone()) {
                return Err(SuiteError {
                    origin: origin.clone(),
                    line: None,
                    case: Some(case.id),
                    step: None,
                    message: "duplicate case id".into(),
                });
            }
            suite.cases.push(case);
        }
    }
    Ok(suite)
}

fn parse_file(protocol: &dyn Protocol, origin: &str, text: &str) -> Result<Vec<Case>, SuiteError> {
    let file: SuiteFile = toml::from_str(text).map_err(|e| located(origin, text, &e))?;
    file.case
        .into_iter()
        .map(|mut case| {
            case.origin = origin.to_owned();
            known_rules(protocol, &case).map_err(|(step, message)| SuiteError {
                origin: origin.to_owned(),
                line: None,
                case: Some(case.id.clone()),
                step,
                message,
            })?;
            Ok(case)
        })
        .collect()
}

/// A case names at least one rule, and only rules of the protocol's catalogue (its steps'
/// too; fallback steps are numbered after the main ones).
fn known_rules(protocol: &dyn Protocol, case: &Case) -> Result<(), (Option<usize>, String)> {
    if case.rules.is_empty() {
        return Err((
            None,
            "`rules` is empty: a case must exercise at least one rule".into(),
        ));
    }
    for r in &case.rules {
        if rules::find(protocol.rules(), r).is_none() {
            return Err((
                None,
                format!(
                    "unknown rule `{r}` (see `wireprobe list {} --rules`)",
                    protocol.id()
                ),
            ));
        }
    }
    for (i, step) in case.steps.iter().chain(&case.fallback).enumerate() {
        if let Some(r) = &step.rule {
            if rules::find(protocol.rules(), r).is_none() {
                return Err((Some(i), format!("unknown rule `{r}`")));
            }
        }
    }
    Ok(())
}

/// A TOML or format error with the line it is on and the case that line belongs to.
fn located(origin: &str, text: &str, e: &toml::de::Error) -> SuiteError {
    let line = e.span().map(|span| {
        let before = text.get(..span.start).unwrap_or(text);
        before.matches('\n').count() + 1
    });
    SuiteError {
        origin: origin.to_owned(),
        line,
        case: line.and_then(|l| case_at(text, l)),
        step: None,
        message: e.message().trim_end().to_owned(),
    }
}

/// The id of the `[[case]]` table line `line` (from 1) belongs to, when the file writes its
/// cases as `[[case]]` tables with a plain `id = "..."`.
fn case_at(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .take(line)
        .rposition(|l| l.trim().replace(' ', "") == "[[case]]")?;
    lines[header + 1..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with('['))
        .find_map(|l| {
            let table: toml::Table = toml::from_str(l).ok()?;
            table.get("id")?.as_str().map(str::to_owned)
        })
}
