//! Two saved runs compared, for CI baselines: what regressed (a case or rule that now fails
//! and did not), what got fixed, which cases are new or gone.

use super::Report;
use crate::verdict::Verdict;
use std::collections::BTreeMap;

/// One id whose verdict changed (`None`: not in that run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub id: String,
    pub old: Option<Verdict>,
    pub new: Option<Verdict>,
}

/// What changed between two runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Cases and rules failing now that did not fail before (new failing cases included).
    pub regressed: Vec<Change>,
    /// Cases and rules that failed before and do not now.
    pub fixed: Vec<Change>,
    /// Cases only the new run has (failing ones are also regressions).
    pub new: Vec<Change>,
    /// Cases only the old run has.
    pub gone: Vec<Change>,
    /// Other verdict changes (pass → skip, info → pass…), for the record.
    pub changed: Vec<Change>,
    /// Why the runs may not be comparable (another protocol), when they may not.
    pub caveat: Option<String>,
}

impl Diff {
    /// Compares `old` with `new`; with `strict`, a `warn` counts as failing.
    pub fn of(old: &Report, new: &Report, strict: bool) -> Diff {
        let mut diff = Diff::default();
        if old.protocol != new.protocol {
            diff.caveat = Some(format!(
                "the runs are of different protocols ({} and {})",
                old.protocol, new.protocol
            ));
        }
        let cases = |r: &Report| -> BTreeMap<String, Verdict> {
            r.cases.iter().map(|c| (c.id.clone(), c.verdict)).collect()
        };
        let rules = |r: &Report| -> BTreeMap<String, Verdict> {
            r.rules.iter().map(|c| (c.id.clone(), c.verdict)).collect()
        };
        diff.compare(&cases(old), &cases(new), strict, true);
        diff.compare(&rules(old), &rules(new), strict, false);
        diff
    }

    fn compare(
        &mut self,
        old: &BTreeMap<String, Verdict>,
        new: &BTreeMap<String, Verdict>,
        strict: bool,
        cases: bool,
    ) {
        let ids = old
            .keys()
            .chain(new.keys().filter(|k| !old.contains_key(*k)));
        for id in ids {
            let change = Change {
                id: id.clone(),
                old: old.get(id).copied(),
                new: new.get(id).copied(),
            };
            let failing = |v: Option<Verdict>| v.is_some_and(|v| v.is_failing(strict));
            let (was, is) = (failing(change.old), failing(change.new));
            match (change.old, change.new) {
                (None, Some(_)) if cases => {
                    if is {
                        self.regressed.push(change.clone());
                    }
                    self.new.push(change);
                }
                (Some(_), None) if cases => self.gone.push(change),
                (Some(_), Some(_)) if is && !was => self.regressed.push(change),
                (Some(_), Some(_)) if was && !is => self.fixed.push(change),
                (Some(o), Some(n)) if o != n => self.changed.push(change),
                _ => {}
            }
        }
    }

    /// 1 when something regressed, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.regressed.is_empty())
    }

    /// The comparison as text (Markdown-friendly), one section per kind of change.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(caveat) = &self.caveat {
            out.push_str(&format!("note: {caveat}\n\n"));
        }
        let shown = |v: Option<Verdict>| v.map_or("absent".to_owned(), |v| v.to_string());
        for (title, list) in [
            ("Regressed", &self.regressed),
            ("Fixed", &self.fixed),
            ("New", &self.new),
            ("Gone", &self.gone),
            ("Changed", &self.changed),
        ] {
            if list.is_empty() {
                continue;
            }
            out.push_str(&format!("## {title} ({})\n\n", list.len()));
            for c in list {
                out.push_str(&format!(
                    "- {}: {} → {}\n",
                    c.id,
                    shown(c.old),
                    shown(c.new)
                ));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "{} regressed, {} fixed, {} new, {} gone, {} otherwise changed\n",
            self.regressed.len(),
            self.fixed.len(),
            self.new.len(),
            self.gone.len(),
            self.changed.len()
        ));
        out
    }
}
