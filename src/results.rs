//! The JSON report's schema: what a run produced, case by case and rule by rule. It is a
//! contract CI pipelines read (ARCHITECTURE.md fixes it; additions are optional fields), so it
//! lives in one file of its own, below both the runner that fills it in and the report
//! writers that render it.

use crate::judge::FrameViolation;
use crate::rules::Level;
use crate::transcript::Entry;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of each verdict.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Summary {
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub info: usize,
    pub skip: usize,
    pub error: usize,
}

impl Summary {
    pub fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Summary {
        let mut s = Summary::default();
        for v in verdicts {
            s.total += 1;
            *match v {
                Verdict::Pass => &mut s.pass,
                Verdict::Fail => &mut s.fail,
                Verdict::Warn => &mut s.warn,
                Verdict::Info => &mut s.info,
                Verdict::Skip => &mut s.skip,
                Verdict::Error => &mut s.error,
            } += 1;
        }
        s
    }
}

/// The result of one case (serialised as-is into the JSON report's `cases`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub title: String,
    pub rules: Vec<String>,
    /// The strictest level among the case's rules.
    pub level: Level,
    pub verdict: Verdict,
    pub message: String,
    pub duration_ms: u64,
    /// The verdict this case gives each of its own rules (a rule it could not reach, because
    /// a step failed under another rule first, is absent).
    #[serde(default)]
    pub judged: BTreeMap<String, Verdict>,
    /// Every rule the target broke anywhere in the transcript, the case's own and any other,
    /// each pinned to the frame where it was seen. Only the case's own rules change its
    /// verdict; the rest count for their rules in the report.
    #[serde(default)]
    pub violations: Vec<FrameViolation>,
    #[serde(default)]
    pub transcript: Vec<Entry>,
    /// The case's steps, one line each (its fallback steps after its own, marked so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// The index in `steps` of the step the case ended at without finishing, when a step
    /// (not the connection or the handshake) ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
    /// The rules of the judged side the run exercised: checked on an item they apply to, or
    /// named by a step that ran to its end. Kept by the fuzzer's runs, whose campaign reports
    /// the rules they reached; a `run` leaves it out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exercised: Vec<std::borrow::Cow<'static, str>>,
}

/// One case in a report: the runner's result as it is.
pub type CaseReport = CaseResult;

/// One rule in a report, with the verdict of the cases that exercise it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuleReport {
    pub id: String,
    pub level: Level,
    pub text: String,
    /// The spec's public title, version and section ([`crate::citation::cite`]).
    pub source: String,
    /// Where the spec is published, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub cases: Vec<String>,
    pub verdict: Verdict,
}

/// A whole run (read back from a saved JSON report by `wireprobe report`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub wireprobe: String,
    pub protocol: String,
    /// The protocol's spec by public title and version, when the protocol is a registered one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// The side the run judged, when it was a client (`run --client`); a run judging a server
    /// leaves it out, as every report before client runs did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<crate::transcript::Direction>,
    /// The shard of a run split with `--shard I/N` this report is; a whole run leaves it out
    /// (as does `report merge`, joining a run's shards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardOf>,
    pub target: String,
    pub started_at: String,
    pub duration_ms: u64,
    pub summary: Summary,
    pub cases: Vec<CaseReport>,
    pub rules: Vec<RuleReport>,
}
