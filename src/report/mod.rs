//! Reports: the run's results in the schema ARCHITECTURE.md fixes, and writers for each format.
//! Nothing here knows a protocol's details; rules come in as the catalogue.

pub mod console;
pub mod diff;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod merge;
pub mod sarif;

pub use crate::results::{CaseReport, CaseResult, Report, RuleReport, Summary};

use crate::rules::Rule;
use crate::verdict::Verdict;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

impl Report {
    pub fn new(
        protocol: &str,
        target: &str,
        started_at: std::time::SystemTime,
        duration_ms: u64,
        catalogue: &[Rule],
        results: Vec<CaseResult>,
    ) -> Report {
        let cases: Vec<CaseReport> = results;
        let rules = catalogue
            .iter()
            .map(|rule| rule_report(rule, &cases))
            .collect();
        Report {
            wireprobe: crate::VERSION.to_owned(),
            protocol: protocol.to_owned(),
            spec: crate::protocol::get(protocol).map(|p| crate::citation::cite(p.spec_file()).text),
            side: None,
            shard: None,
            target: target.to_owned(),
            started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
            duration_ms,
            summary: Summary::of(cases.iter().map(|c| c.verdict)),
            cases,
            rules,
        }
    }
}

impl Report {
    /// `RULE-ID (seen in CASE)`: a rule and the first case whose transcript showed it broken.
    pub fn rule_seen(&self, rule: &str) -> String {
        let seen_in = self
            .cases
            .iter()
            .find(|c| c.violations.iter().any(|v| v.rule == rule))
            .map_or(String::new(), |c| format!(" (seen in {})", c.id));
        format!("{rule}{seen_in}")
    }
}

/// A rule's verdict over a whole run: the worst of what the cases written for it concluded
/// and of every violation of it seen in any case's transcript. Its `cases` are the cases
/// written for it, then those that merely saw it broken.
fn rule_report(rule: &Rule, cases: &[CaseReport]) -> RuleReport {
    let (judged_by, verdict) = judged_over(rule.id, rule.level, cases);
    let citation = crate::citation::cite(rule.source);
    RuleReport {
        id: rule.id.to_owned(),
        level: rule.level,
        text: rule.text.to_owned(),
        source: citation.text,
        url: citation.url.map(str::to_owned),
        cases: judged_by,
        verdict,
    }
}

/// The cases that judged rule `id` (of `level`) or saw it broken, and its verdict over them
/// ([`rule_report`]; `report merge` reads a joined run's rules the same way).
fn judged_over(
    id: &str,
    level: crate::rules::Level,
    cases: &[CaseReport],
) -> (Vec<String>, Verdict) {
    let mut verdict: Option<Verdict> = None;
    let mut judged_by = Vec::new();
    let mut seen_in = Vec::new();
    for case in cases {
        let listed = case.rules.iter().any(|r| r == id);
        if listed {
            judged_by.push(case.id.clone());
        }
        if let Some(v) = case.judged.get(id) {
            verdict = Some(verdict.map_or(*v, |w| w.worst(*v)));
        }
        if case.violations.iter().any(|v| v.rule == id) {
            let broken = Verdict::broken(level);
            verdict = Some(verdict.map_or(broken, |w| w.worst(broken)));
            if !listed {
                seen_in.push(case.id.clone());
            }
        }
    }
    judged_by.extend(seen_in);
    (judged_by, verdict.unwrap_or(Verdict::Skip))
}

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Junit,
    Markdown,
    Sarif,
    Html,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "json" => Ok(Format::Json),
            "junit" => Ok(Format::Junit),
            "markdown" | "md" => Ok(Format::Markdown),
            "sarif" => Ok(Format::Sarif),
            "html" => Ok(Format::Html),
            other => Err(format!(
                "unknown report format {other:?} (json, junit, markdown, sarif, html)"
            )),
        }
    }
}

/// `FORMAT=PATH` from the command line; `-` as the path is standard output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportTarget {
    pub format: Format,
    pub path: Option<PathBuf>,
}

impl std::str::FromStr for ReportTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (format, path) = s
            .split_once('=')
            .ok_or_else(|| format!("--report takes FORMAT=PATH, got {s:?}"))?;
        Ok(ReportTarget {
            format: format.parse()?,
            path: (path != "-").then(|| PathBuf::from(path)),
        })
    }
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, strict: bool) -> String {
    match format {
        Format::Json => json::render(report),
        Format::Junit => junit::render(report, strict),
        Format::Markdown => markdown::render(report),
        Format::Sarif => sarif::render(report, strict),
        Format::Html => html::render(report, strict),
    }
}

/// Which cases keep their transcripts in a written report (`--transcripts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transcripts {
    All,
    /// Only cases that did not pass (or only record): what a reader needs to see why.
    Failing,
    None,
}

impl std::str::FromStr for Transcripts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Transcripts::All),
            "failing" => Ok(Transcripts::Failing),
            "none" => Ok(Transcripts::None),
            other => Err(format!(
                "--transcripts is all, failing or none, not {other:?}"
            )),
        }
    }
}

impl Transcripts {
    /// What a format keeps unless told: JUnit only the failing cases' (a clean run's JUnit
    /// would otherwise be megabytes no CI viewer shows), the rest everything.
    fn default_for(format: Format) -> Transcripts {
        match format {
            Format::Junit => Transcripts::Failing,
            _ => Transcripts::All,
        }
    }

    /// `report` with only the transcripts this keeps.
    fn trim<'a>(self, report: &'a Report) -> std::borrow::Cow<'a, Report> {
        if self == Transcripts::All {
            return std::borrow::Cow::Borrowed(report);
        }
        let mut trimmed = report.clone();
        for case in &mut trimmed.cases {
            if !self.keeps(case.verdict) {
                case.transcript.clear();
            }
        }
        std::borrow::Cow::Owned(trimmed)
    }

    /// True when a case with `verdict` keeps its transcript.
    pub fn keeps(self, verdict: Verdict) -> bool {
        match self {
            Transcripts::All => true,
            Transcripts::Failing => !matches!(verdict, Verdict::Pass | Verdict::Info),
            Transcripts::None => false,
        }
    }
}

/// How reports are written.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Should-level findings fail (JUnit failures, SARIF's note).
    pub strict: bool,
    /// Which transcripts to keep (`None`: each format's default).
    pub transcripts: Option<Transcripts>,
}

/// Writes `report` to every target; the first failure is returned after trying them all.
pub fn write_all(
    report: &Report,
    targets: &[ReportTarget],
    opts: WriteOptions,
) -> std::io::Result<()> {
    let mut first_error = None;
    for t in targets {
        let scope = opts
            .transcripts
            .unwrap_or_else(|| Transcripts::default_for(t.format));
        let text = render(&scope.trim(report), t.format, opts.strict);
        let result = emit(t.path.as_deref(), &text);
        if let Err(e) = result {
            first_error.get_or_insert(std::io::Error::new(
                e.kind(),
                format!(
                    "{}: {e}",
                    t.path.as_deref().unwrap_or(Path::new("-")).display()
                ),
            ));
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Writes `text` to `path` (its directory made first), or to standard output without one.
pub fn emit(path: Option<&Path>, text: &str) -> std::io::Result<()> {
    match path {
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes())
        }
        Some(path) => write_file(path, text),
    }
}

fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

/// The outcome of comparing results with a `--known-failing` baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gate {
    /// Failing cases not in the baseline, then rules broken only in the transcripts of cases
    /// written for other rules (`RULE-ID (seen in CASE)`).
    pub new_failures: Vec<String>,
    /// Baseline entries (case or rule ids) that no longer fail (the baseline is stale).
    pub stale: Vec<String>,
}

impl Gate {
    /// Gates a run. `known_failing` holds case ids and rule ids.
    pub fn evaluate(report: &Report, strict: bool, known_failing: &BTreeSet<String>) -> Gate {
        let mut gate = Gate::default();
        for c in &report.cases {
            let failing = c.verdict.is_failing(strict);
            match (failing, known_failing.contains(&c.id)) {
                (true, false) => gate.new_failures.push(c.id.clone()),
                (false, true) if c.verdict != Verdict::Skip => gate.stale.push(c.id.clone()),
                _ => {}
            }
        }
        for rule in &report.rules {
            let failing = rule.verdict.is_failing(strict);
            let known = known_failing.contains(&rule.id);
            // A failing case written for the rule already gates it.
            let gated_by_case = report
                .cases
                .iter()
                .any(|c| c.verdict.is_failing(strict) && c.rules.contains(&rule.id));
            match (failing, known) {
                (true, false) if !gated_by_case => {
                    gate.new_failures.push(report.rule_seen(&rule.id));
                }
                // A shard sees a rule over its own cases only: the case still breaking it may
                // be another shard's, so a shard never calls a rule's entry stale.
                (false, true) if rule.verdict != Verdict::Skip && report.shard.is_none() => {
                    gate.stale.push(rule.id.clone())
                }
                _ => {}
            }
        }
        gate
    }

    /// Drops the failures of `ids` (known-flaky cases: they never fail the run).
    pub fn excuse(&mut self, ids: &BTreeSet<String>) {
        self.new_failures.retain(|f| !ids.contains(f));
        self.stale.retain(|s| !ids.contains(s));
    }

    /// The process exit code: 0 clean, 1 failures or a stale baseline.
    pub fn exit_code(&self) -> i32 {
        if self.new_failures.is_empty() && self.stale.is_empty() {
            0
        } else {
            1
        }
    }
}
