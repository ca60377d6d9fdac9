//! Checks a run's own arguments against its suite before anything starts: whatever would
//! quietly turn a build green (a pattern that selects nothing, a baseline entry naming no case,
//! two reports on stdout, a report that cannot be written) is a usage error, exit 2.

use anyhow::{anyhow, Result};
use std::collections::BTreeSet;
use wireprobe::protocol::Protocol;
use wireprobe::report::ReportTarget;
use wireprobe::suite::filter::CaseFilter;
use wireprobe::suite::Suite;

/// Every problem with the run's arguments, one per line; `Ok` when there is none.
pub fn check(
    p: &dyn Protocol,
    suite: &Suite,
    filter: &CaseFilter,
    // The part the target plays, its default resolved.
    role: Option<&str>,
    known_failing: &BTreeSet<String>,
    reports: &[ReportTarget],
) -> Result<()> {
    let mut problems = Vec::new();
    let ids = suite.cases.iter().map(|c| c.id.as_str());
    for pattern in filter.unmatched(ids) {
        problems.push(format!(
            "--case/--skip {pattern:?} matches no case (wireprobe list {} --cases)",
            p.id()
        ));
    }
    let rule_ids = p.rules().iter().map(|r| r.id);
    for pattern in filter.unmatched_rules(rule_ids) {
        problems.push(format!(
            "--rule {pattern:?} matches no rule (wireprobe list {} --rules)",
            p.id()
        ));
    }
    // Over all shards: a shard may hold none of a small run's cases.
    if !suite
        .cases
        .iter()
        .any(|c| filter.selects_for_run(c) && c.runs_as(role))
    {
        problems.push(match role {
            Some(role) => {
                format!("--case/--skip/--rule select no case for a target playing {role}")
            }
            None => "--case/--skip/--rule together select no case".into(),
        });
    }
    let known = known_ids(p, suite);
    for entry in known_failing.iter().filter(|e| !known.contains(e.as_str())) {
        problems.push(format!(
            "--known-failing/--known-flaky lists {entry:?}, which is neither a case nor a rule of {}",
            p.id()
        ));
    }
    if reports.iter().filter(|r| r.path.is_none()).count() > 1 {
        problems.push("more than one --report goes to stdout (`-`): they would mix".into());
    }
    for path in reports.iter().filter_map(|r| r.path.as_deref()) {
        if let Err(e) = writable(path) {
            problems.push(format!(
                "--report {}: cannot be written: {e}",
                path.display()
            ));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(anyhow!("{}", problems.join("\n"))),
    }
}

/// The ids a baseline may name: every case (and, for a protocol with several transports, each
/// `ID@transport` a run labels), and every rule.
fn known_ids<'a>(p: &'a dyn Protocol, suite: &'a Suite) -> BTreeSet<String> {
    let mut ids: BTreeSet<String> = p.rules().iter().map(|r| r.id.to_owned()).collect();
    for case in &suite.cases {
        ids.insert(case.id.clone());
        for kind in p.transports() {
            ids.insert(format!("{}@{}", case.id, kind.name()));
        }
    }
    ids
}

/// Whether a report can be written to `path`, found without leaving anything behind.
fn writable(path: &std::path::Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    let existed = path.exists();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
