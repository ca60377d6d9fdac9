//! `report merge`: the JSON reports of one run's shards (`run --shard I/N`) joined into the
//! report of the whole run: every case once, the summary summed, each rule's verdict read
//! again over all the cases (so the worst any shard saw). Reports that are not the shards of
//! one run, a shard twice, or a shard missing are refused with the reason: a merged report
//! passes a CI gate, and one made of the wrong parts would pass cases that never ran.

use super::{judged_over, Report, RuleReport, Summary};
use std::collections::BTreeMap;

/// Why reports cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no report to merge")]
    Empty,
    #[error("{name} is not a shard of a run (run --shard I/N writes one): merge joins the shards of one run")]
    NotAShard { name: String },
    #[error("{a} and {b} are shards of different runs ({why}): merging them would mix two runs")]
    DifferentRuns { a: String, b: String, why: String },
    #[error("{a} and {b} are both shard {index}/{count}: the same shard twice")]
    SameShard {
        a: String,
        b: String,
        index: u32,
        count: u32,
    },
    #[error("shard {missing} of {count} is missing: without it the merged report would pass cases that never ran")]
    Missing { missing: String, count: u32 },
}

/// Joins `shards` (each named, for the errors, by where it came from) into one report.
pub fn merge(shards: Vec<(String, Report)>) -> Result<Report, MergeError> {
    let mut by_index: BTreeMap<u32, (String, Report)> = BTreeMap::new();
    let mut first: Option<(String, crate::shard::ShardOf, String)> = None;
    for (name, report) in shards {
        let Some(shard) = report.shard.clone() else {
            return Err(MergeError::NotAShard { name });
        };
        match &first {
            None => first = Some((name.clone(), shard.clone(), report.protocol.clone())),
            Some((a, one, protocol)) => {
                let why = if *protocol != report.protocol {
                    Some(format!("{protocol} and {}", report.protocol))
                } else if one.count != shard.count {
                    Some(format!("split {} and {} ways", one.count, shard.count))
                } else if one.run != shard.run {
                    Some("their cases, filters or wireprobe versions differ".into())
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(MergeError::DifferentRuns {
                        a: a.clone(),
                        b: name,
                        why,
                    });
                }
            }
        }
        if let Some((a, _)) = by_index.get(&shard.index) {
            return Err(MergeError::SameShard {
                a: a.clone(),
                b: name,
                index: shard.index,
                count: shard.count,
            });
        }
        by_index.insert(shard.index, (name, report));
    }
    let Some((_, one, _)) = first else {
        return Err(MergeError::Empty);
    };
    let missing: Vec<String> = (1..=one.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            missing: missing.join(", "),
            count: one.count,
        });
    }
    let reports: Vec<Report> = by_index.into_values().map(|(_, r)| r).collect();
    joined(reports).ok_or(MergeError::Empty)
}

/// The shards (in order, checked) as one report; `None` when there are none.
fn joined(reports: Vec<Report>) -> Option<Report> {
    let head = reports.first()?;
    let (wireprobe, protocol) = (head.wireprobe.clone(), head.protocol.clone());
    let (spec, side) = (head.spec.clone(), head.side);
    let mut targets: Vec<String> = Vec::new();
    let mut rules: Vec<RuleReport> = Vec::new();
    let mut cases = Vec::new();
    let mut started_at: Option<String> = None;
    let mut duration_ms = 0;
    for report in reports {
        if !targets.contains(&report.target) {
            targets.push(report.target.clone());
        }
        for rule in &report.rules {
            if !rules.iter().any(|r| r.id == rule.id) {
                rules.push(rule.clone());
            }
        }
        // RFC 3339 in UTC, as reports write it: the earliest sorts first.
        if started_at.as_ref().is_none_or(|s| report.started_at < *s) {
            started_at = Some(report.started_at.clone());
        }
        // The shards ran side by side: the run took as long as the longest.
        duration_ms = duration_ms.max(report.duration_ms);
        cases.extend(report.cases);
    }
    for rule in &mut rules {
        let (judged_by, verdict) = judged_over(&rule.id, rule.level, &cases);
        rule.cases = judged_by;
        rule.verdict = verdict;
    }
    Some(Report {
        wireprobe,
        protocol,
        spec,
        side,
        shard: None,
        target: targets.join(", "),
        started_at: started_at.unwrap_or_default(),
        duration_ms,
        summary: Summary::of(cases.iter().map(|c| c.verdict)),
        cases,
        rules,
    })
}
