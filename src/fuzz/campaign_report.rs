//! The JSON report of a fuzz campaign (`fuzz --report json=PATH`): what ran, the rules it
//! exercised and never reached, and each finding with the case that replays it. A `run`
//! report's schema is another's: a campaign has no cases of its own, only runs and findings.

use super::coverage::Coverage;
use super::engine::{Finding, Outcome};
use crate::verdict::Verdict;
use serde::Serialize;

/// A whole campaign, as `fuzz --report json=PATH` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct CampaignReport {
    pub wireprobe: &'static str,
    pub protocol: String,
    pub target: String,
    pub seed: u64,
    /// The shard of a campaign split with `--shard I/N`; a whole campaign leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub started_at: String,
    pub duration_ms: u64,
    pub runs: u64,
    /// Frames sent (every event, mutation and probe).
    pub events: u64,
    /// Runs the harness could not complete.
    pub errors: u64,
    /// Runs skipped (the target never answered the probe a test mode owes).
    pub skipped: u64,
    /// Runs that broke only rules in `--known-failing`.
    pub known_only: u64,
    pub coverage: Coverage,
    pub findings: Vec<FindingReport>,
}

/// One finding of a campaign.
#[derive(Debug, Clone, Serialize)]
pub struct FindingReport {
    pub rule: String,
    pub verdict: Verdict,
    pub message: String,
    /// The run (0-based) whose sequence failed first.
    pub run: u64,
    /// How far into the campaign's budget that run ended, in ms (time spent confirming
    /// earlier findings not counted).
    pub found_after_ms: u64,
    /// False for a finding that never failed again when replayed: reported, not counted.
    pub counted: bool,
    pub reproduced: u32,
    pub attempts: u32,
    /// What the input held besides valid events.
    pub shape: Vec<&'static str>,
    /// Later runs that failed the same way on such input.
    pub repeats: u64,
    /// The case file that replays it, when one was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// The command that replays it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
}

impl FindingReport {
    /// A finding as a report shows it; `case` and `replay` say where it was written and how
    /// to run it again.
    pub fn of(finding: &Finding, case: Option<String>, replay: Option<String>) -> Self {
        FindingReport {
            rule: finding.failure.rule.clone(),
            verdict: finding.failure.verdict,
            message: finding.failure.message.clone(),
            run: finding.run,
            found_after_ms: finding.found_after.as_millis() as u64,
            counted: finding.reproduces(),
            reproduced: finding.reproduced,
            attempts: finding.attempts,
            shape: finding.shape.clone(),
            repeats: finding.repeats,
            case,
            replay,
        }
    }
}

/// What a campaign report says of where and how it ran, besides its outcome.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub protocol: String,
    pub target: String,
    pub seed: u64,
    pub shard: Option<String>,
    pub started_at: std::time::SystemTime,
    pub duration_ms: u64,
}

impl CampaignReport {
    /// The report of a campaign that ended with `outcome`, covering `coverage`.
    pub fn new(
        campaign: Campaign,
        outcome: &Outcome,
        coverage: Coverage,
        findings: Vec<FindingReport>,
    ) -> Self {
        CampaignReport {
            wireprobe: env!("CARGO_PKG_VERSION"),
            protocol: campaign.protocol,
            target: campaign.target,
            seed: campaign.seed,
            shard: campaign.shard,
            started_at: humantime::format_rfc3339_seconds(campaign.started_at).to_string(),
            duration_ms: campaign.duration_ms,
            runs: outcome.runs,
            events: outcome.events,
            errors: outcome.errors,
            skipped: outcome.skipped,
            known_only: outcome.known_only,
            coverage,
            findings,
        }
    }

    /// The report as pretty JSON, ending with a newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"the report did not serialise: {e}\"}}"));
        text.push('\n');
        text
    }
}
