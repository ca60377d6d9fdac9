//! What a fuzz run's result counts as: the rule it broke (past the target's known deviations),
//! its verdict, and the words a finding leads with.

use super::FuzzProfile;
use crate::judge::FrameViolation;
use crate::protocol::Protocol;
use crate::results::CaseResult;
use crate::rules;
use crate::transcript::{Direction, Observation};
use crate::verdict::Verdict;
use std::collections::BTreeSet;

/// A rule broken by a run, with the runner's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub rule: String,
    pub verdict: Verdict,
    pub message: String,
}

/// The failure a case result shows, if any (`fail`, or `warn` for a should rule). A target
/// that ended where the profile's probe says it must stay breaks that rule, whatever step
/// noticed it. A run that broke only `known` rules (`fuzz --known-failing`: deviations the
/// target is known for) shows none; one that broke another is named by the first other.
pub fn failure_of(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    result: &CaseResult,
    judged: Direction,
    known: &BTreeSet<String>,
) -> Option<Failure> {
    if !result.verdict.is_broken() {
        return None;
    }
    if !known.is_empty()
        && result
            .judged
            .iter()
            .all(|(rule, v)| !v.is_broken() || known.contains(rule))
    {
        return None;
    }
    if let Some(rule) = profile
        .probe()
        .ended
        .filter(|_| target_ended(result, judged))
        .filter(|rule| !known.contains(*rule))
    {
        return Some(Failure {
            rule: rule.to_owned(),
            verdict: Verdict::Fail,
            message: format!(
                "{rule}: the target ended after an adversarial input ({})",
                result.message
            ),
        });
    }
    // The first rule named that is more than a note (an `info` finding rides along in the
    // message but never fails a run), a failed one before a warned one: a run that failed is
    // never reported as a warning because a `should` came first in its message.
    let named_rules: Vec<&str> = result
        .message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| {
            !known.contains(*w)
                && rules::find(protocol.rules(), w).is_some_and(|r| r.level > rules::Level::May)
        })
        .collect();
    let named = named_rules
        .iter()
        .find(|rule| result.judged.get(**rule) == Some(&Verdict::Fail))
        .or(named_rules.first())
        .copied();
    // The finding's verdict is its rule's: a `should` named past a known `must` is a warning.
    let verdict = named
        .and_then(|rule| result.judged.get(rule).copied())
        .filter(|v| v.is_broken())
        .unwrap_or(result.verdict);
    Some(Failure {
        rule: named.unwrap_or("?").to_owned(),
        verdict,
        message: leading_with(named, &result.message, &result.violations),
    })
}

/// True when `result` fails the way `failure` did: it is a failure, and `failure`'s rule is
/// broken in it, whether or not that rule is the one its message names first (a replay that
/// also broke a must, a probe's timeout say, still shows the should it was replayed for).
pub fn fails_again(
    protocol: &dyn Protocol,
    profile: &dyn FuzzProfile,
    result: &CaseResult,
    judged: Direction,
    known: &BTreeSet<String>,
    failure: &Failure,
) -> bool {
    let Some(now) = failure_of(protocol, profile, result, judged, known) else {
        return false;
    };
    now.rule == failure.rule
        || result
            .judged
            .get(&failure.rule)
            .is_some_and(|v| v.is_broken())
        || result
            .violations
            .iter()
            .any(|v| v.rule == failure.rule && v.level > rules::Level::May)
}

/// The run's message, led by what broke `rule` when the message starts with another (a known
/// deviation, say): a finding's words are about the rule it names, the rest follows.
fn leading_with(rule: Option<&str>, message: &str, violations: &[FrameViolation]) -> String {
    let Some(rule) = rule.filter(|r| !message.starts_with(&format!("{r}:"))) else {
        return message.to_owned();
    };
    match violations.iter().find(|v| v.rule == rule) {
        Some(v) => format!(
            "{rule}: {} (transcript entry {}); {message}",
            v.message, v.frame
        ),
        None => message.to_owned(),
    }
}

/// True when the target (the `judged` side) ended a connection, or its process exited, that
/// we were not closing.
fn target_ended(result: &CaseResult, judged: Direction) -> bool {
    let mut closing = false;
    for entry in &result.transcript {
        let Some(observed) = entry.observation() else {
            continue;
        };
        let ours = entry.from != judged;
        match observed {
            Observation::Close { .. } if ours => closing = true,
            // A new connection, whichever side the transcript credits with it (ours when we
            // dial a server, the client's when we serve one).
            Observation::Connect { .. } => closing = false,
            Observation::Close { .. } | Observation::Error { .. } if !ours && !closing => {
                return true
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::rules::Level;

    /// A run's result: each of `judged`'s rules with its verdict, the worst of them the run's,
    /// and `message` the runner's words.
    pub(in crate::fuzz) fn run_result(judged: &[(&str, Verdict)], message: &str) -> CaseResult {
        CaseResult {
            id: "run".into(),
            title: String::new(),
            rules: judged.iter().map(|(r, _)| r.to_string()).collect(),
            level: Level::Must,
            verdict: judged
                .iter()
                .map(|(_, v)| *v)
                .max()
                .unwrap_or(Verdict::Pass),
            message: message.into(),
            duration_ms: 0,
            judged: judged.iter().map(|(r, v)| (r.to_string(), *v)).collect(),
            violations: Vec::new(),
            transcript: Vec::new(),
            steps: Vec::new(),
            stopped_at: None,
            exercised: Vec::new(),
        }
    }

    fn violation(rule: &'static str, message: &str, frame: usize) -> FrameViolation {
        FrameViolation {
            rule: rule.into(),
            level: Level::Must,
            message: message.to_owned(),
            frame,
            side: None,
        }
    }

    /// A run that failed a `must` is named by it, though a `should` it only warned about comes
    /// first in its message (a HUMA error that came late, after the liveness probe: the probe's
    /// HUMA-ERR-003 is named first, and the error answering a valid event is HUMA-VAL-007).
    #[test]
    fn a_failed_rule_names_the_finding_before_a_warned_one() {
        let huma = crate::protocol::get("huma").expect("huma");
        let profile = huma.fuzzing().expect("huma fuzzes");
        let result = |judged: &[(&str, Verdict)]| {
            run_result(
                judged,
                "HUMA-ERR-003: expected silence for 300 ms; HUMA-VAL-007: an error answers \
                 the client's valid context-update",
            )
        };
        let none = BTreeSet::new();
        let found = |r: &CaseResult, known: &BTreeSet<String>| {
            failure_of(huma, profile, r, Direction::Server, known).map(|f| (f.rule, f.verdict))
        };
        let both = result(&[
            ("HUMA-ERR-003", Verdict::Warn),
            ("HUMA-VAL-007", Verdict::Fail),
        ]);
        assert_eq!(
            found(&both, &none),
            Some(("HUMA-VAL-007".into(), Verdict::Fail))
        );
        // Warned only: the first named, as before.
        let warned = result(&[("HUMA-ERR-003", Verdict::Warn)]);
        assert_eq!(
            found(&warned, &none),
            Some(("HUMA-ERR-003".into(), Verdict::Warn))
        );
        // A failed rule the target is known to break names nothing: the warning is the finding.
        let known = BTreeSet::from(["HUMA-VAL-007".to_string()]);
        assert_eq!(
            found(&both, &known),
            Some(("HUMA-ERR-003".into(), Verdict::Warn))
        );
    }

    /// A replay fails the same way when the finding's rule is broken in it, though another
    /// rule now leads its message; a replay that passed, or broke only another rule, does not.
    #[test]
    fn a_replay_fails_again_when_the_findings_rule_is_broken_in_it() {
        let huma = crate::protocol::get("huma").expect("huma");
        let profile = huma.fuzzing().expect("huma fuzzes");
        let result = run_result;
        let was = Failure {
            rule: "HUMA-ERR-003".into(),
            verdict: Verdict::Warn,
            message: String::new(),
        };
        let none = BTreeSet::new();
        let again = |r: &CaseResult| fails_again(huma, profile, r, Direction::Server, &none, &was);
        let both = result(
            &[
                ("HUMA-ERR-003", Verdict::Warn),
                ("HUMA-VAL-007", Verdict::Fail),
            ],
            "HUMA-VAL-007: an error answers a valid event; HUMA-ERR-003: silence broken",
        );
        assert!(again(&both));
        let other = result(&[("HUMA-VAL-007", Verdict::Fail)], "HUMA-VAL-007: an error");
        assert!(!again(&other));
        assert!(!again(&result(&[("HUMA-ERR-003", Verdict::Pass)], "")));
    }

    /// Past a known deviation the message starts with, a finding leads with its own rule's
    /// violation; a message that already starts with it is left as it is.
    #[test]
    fn a_finding_leads_with_the_rule_it_names() {
        let known = "HAIP-ERR-001: expected an error within 2000 ms; HAIP-TEXT-001: end";
        let found = [
            violation("HAIP-ENV-003", "/seq: no match", 2),
            violation("HAIP-TEXT-001", "TEXT_MESSAGE_END names message m", 32),
        ];
        assert_eq!(
            leading_with(Some("HAIP-TEXT-001"), known, &found),
            format!(
                "HAIP-TEXT-001: TEXT_MESSAGE_END names message m (transcript entry 32); {known}"
            )
        );
        assert_eq!(leading_with(Some("HAIP-ERR-001"), known, &found), known);
        assert_eq!(leading_with(None, known, &found), known);
        // Named by a step, with no violation of its own in the transcript: as it was.
        assert_eq!(leading_with(Some("HAIP-SEQ-003"), known, &found), known);
    }
}
