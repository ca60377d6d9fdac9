//! From a case's outcome and transcript to its verdict: what the steps found, what the
//! protocol's whole checker found in every frame, and the verdict each of the case's own
//! rules gets.
//!
//! A case speaks for the rules it was written for. A violation of any other rule seen in its
//! transcript is kept (and counts for that rule in the report), but never changes the case's
//! own verdict. Evidence is never thrown away: a case that skipped still reports what it saw.

use super::model::Case;
use super::outcome::Outcome;
use crate::judge::{self, FrameViolation};
use crate::protocol::Protocol;
use crate::rules::{self, Level};
use crate::transcript::{Direction, Entry, Observation};
use crate::verdict::Verdict;
use std::collections::BTreeMap;

/// What judging one case concluded.
#[derive(Debug, Clone)]
pub(super) struct Judged {
    pub verdict: Verdict,
    pub message: String,
    /// The verdict each of the case's rules gets from it (a rule the case could not reach,
    /// because an earlier step failed under another rule, is absent).
    pub rules: BTreeMap<String, Verdict>,
    /// Every rule the target broke in the transcript, the case's own and any other.
    pub violations: Vec<FrameViolation>,
    /// The rules of the judged side the transcript exercised ([`judge::Judge::exercised`]).
    pub exercised: Vec<&'static str>,
}

/// The level of rule `id` (an unknown id counts as `info`: it cannot fail anything, so
/// `tests/it/rule_ids.rs` holds every id the code and the bundled suites name to a catalogue,
/// and a suite file naming an unknown one is refused as it loads).
fn level_of(protocol: &dyn Protocol, id: &str) -> Level {
    rules::find(protocol.rules(), id).map_or(Level::Info, |r| r.level)
}

/// The strictest level among the case's rules.
pub(super) fn case_level(protocol: &dyn Protocol, case: &Case) -> Level {
    case.rules
        .iter()
        .map(|r| level_of(protocol, r))
        .max()
        .unwrap_or(Level::Info)
}

/// Judges a finished case.
pub(super) fn judge_case(
    protocol: &dyn Protocol,
    case: &Case,
    outcome: Result<(), Outcome>,
    transcript: &[Entry],
    judged: Direction,
) -> Judged {
    let level = case_level(protocol, case);
    // A frame the judged side's transport refused as too big never reached its application:
    // what a step then missed (the error an application rule asks for, say) says nothing of
    // that rule, so it is recorded, not judged.
    let outcome = match (outcome, size_refusal(transcript, judged)) {
        (Err(Outcome::Fail { message, .. } | Outcome::Error(message)), Some(how)) => {
            Err(Outcome::Recorded(format!(
                "recorded, not judged: the transport refused a frame as too big ({how}) \
                 before the application saw it; {message}"
            )))
        }
        (outcome, _) => outcome,
    };
    let step_failed = matches!(outcome, Err(Outcome::Fail { .. }));
    let every_rule = |of: &dyn Fn(&str) -> Verdict| -> BTreeMap<String, Verdict> {
        case.rules.iter().map(|r| (r.clone(), of(r))).collect()
    };
    let mut own: BTreeMap<String, Verdict> = BTreeMap::new();
    let (mut verdict, mut message) = match outcome {
        Ok(()) => {
            own = every_rule(&|r| Verdict::held(level_of(protocol, r)));
            (Verdict::held(level), String::new())
        }
        Err(Outcome::Skip(why)) => {
            own = every_rule(&|_| Verdict::Skip);
            (Verdict::Skip, why)
        }
        Err(Outcome::Error(why)) => {
            own = every_rule(&|_| Verdict::Error);
            (Verdict::Error, why)
        }
        Err(Outcome::Recorded(what)) => {
            own = every_rule(&|_| Verdict::Info);
            (Verdict::Info, what)
        }
        Err(Outcome::Fail { rule, message }) => {
            // A step that names no rule speaks for the case's strictest rules.
            let blamed: Vec<String> = match rule {
                Some(r) => vec![r],
                None => case
                    .rules
                    .iter()
                    .filter(|r| level_of(protocol, r) == level)
                    .cloned()
                    .collect(),
            };
            let blamed_level = blamed
                .iter()
                .map(|r| level_of(protocol, r))
                .max()
                .unwrap_or(level);
            for r in &blamed {
                own.insert(r.clone(), Verdict::broken(level_of(protocol, r)));
            }
            let prefix = match blamed.as_slice() {
                [one] => format!("{one}: "),
                _ => String::new(),
            };
            (Verdict::broken(blamed_level), format!("{prefix}{message}"))
        }
    };

    // Everything the target sent, through the whole checker.
    let (violations, exercised) = judge::judge_transcript(protocol, transcript, judged);
    for v in violations
        .iter()
        .filter(|v| case.rules.iter().any(|r| *r == v.rule))
    {
        let broken = Verdict::broken(v.level);
        let entry = own.entry(v.rule.to_string()).or_insert(broken);
        *entry = entry.worst(broken);
        verdict = verdict.worst(broken);
        if !message.is_empty() {
            message.push_str("; ");
        }
        message.push_str(&format!("{}: {}", v.rule, v.message));
    }

    // A target that never said anything in the protocol (silence, a close, garbage, an
    // oversized frame) has not answered: the case could not be judged. One whose lines broke
    // one of the case's own rules was judged by them.
    let judged_against = step_failed || verdict.is_broken();
    let own_broken = client_broke_own_rule(case, &violations, judged);
    let already = message.starts_with(NO_PROTOCOL_MESSAGE);
    if judged_against && !own_broken && !already && !answered(protocol, transcript, judged) {
        verdict = Verdict::Error;
        message = format!("{NO_PROTOCOL_MESSAGE}{message}");
        for v in own.values_mut() {
            *v = Verdict::Error;
        }
    }
    // A case that only records behaviour never ends `error`: what happened is the record.
    if level == Level::Info && verdict == Verdict::Error {
        verdict = Verdict::Info;
        message = format!("recorded: {message}");
    }
    for (rule, v) in own.iter_mut() {
        if *v == Verdict::Error && level_of(protocol, rule) == Level::Info {
            *v = Verdict::Info;
        }
    }
    if verdict == Verdict::Info && message.is_empty() {
        message = "behaviour recorded: every step held".into();
    }
    Judged {
        verdict,
        message,
        rules: own,
        violations,
        exercised,
    }
}

/// How the judged side's transport refused a frame as too big, if it did: a WebSocket close
/// 1009 (message too big: Node's `ws` under socket.io's maxHttpBufferSize, say) or an HTTP 413.
fn size_refusal(transcript: &[Entry], judged: Direction) -> Option<&'static str> {
    transcript
        .iter()
        .filter(|e| e.from == judged)
        .find_map(|e| match e.observation()? {
            Observation::Close {
                code: Some(1009), ..
            } => Some("close 1009, message too big"),
            Observation::Rejected { status: 413 } => Some("HTTP 413, payload too large"),
            Observation::Http(answer) if answer.status == 413 => {
                Some("HTTP 413, payload too large")
            }
            _ => None,
        })
}

/// True when the target answered at all: an explicit refusal of the connection, or a message
/// the protocol recognises as its own.
/// How a case the target never answered in its protocol says so.
pub(super) const NO_PROTOCOL_MESSAGE: &str = "the target sent no protocol message: ";

fn answered(protocol: &dyn Protocol, transcript: &[Entry], judged: Direction) -> bool {
    let refused = |e: &&Entry| {
        e.from == judged && matches!(e.observation(), Some(Observation::Rejected { .. }))
    };
    transcript.iter().any(|e| refused(&e)) || judge::target_spoke(protocol, transcript, judged)
}

/// True when the judged side spoke in a way `case` can judge: it answered ([`answered`]), or
/// it is a client that broke one of the case's own rules ([`client_broke_own_rule`]).
pub(super) fn spoke_to(
    protocol: &dyn Protocol,
    case: &Case,
    transcript: &[Entry],
    judged: Direction,
) -> bool {
    answered(protocol, transcript, judged)
        || client_broke_own_rule(
            case,
            &judge::target_violations(protocol, transcript, judged),
            judged,
        )
}

/// A client under test whose lines broke one of the case's own rules (a host writing NDJSON
/// that is not JSON, in a case about its lines) spoke, badly: that is the case's verdict, not a
/// silence. A client connected to the endpoint wireprobe serves for this protocol, so what it
/// writes is its protocol output. A server that answers only garbage may be no server of this
/// protocol at all (a wrong port): it stays unjudged.
fn client_broke_own_rule(case: &Case, violations: &[FrameViolation], judged: Direction) -> bool {
    judged == Direction::Client
        && violations
            .iter()
            .any(|v| case.rules.iter().any(|r| *r == v.rule))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Record;

    fn observed(from: Direction, what: Observation) -> Entry {
        Entry {
            from,
            at_ms: 0,
            record: Record::Observed(what),
        }
    }

    /// A client under test whose transport closed with 1009 after our oversized frame: the
    /// step that then missed its answer is recorded, not failed. A close with another code
    /// fails as before, and so does a 1009 from our own side.
    #[test]
    fn a_step_missed_behind_a_size_refusal_is_recorded() {
        let huma = crate::protocol::get("huma").expect("huma");
        let case: Case = serde_json::from_value(serde_json::json!({
            "id": "c", "title": "t", "rules": ["HUMA-CLI-009"], "steps": []
        }))
        .expect("a case");
        let judge = |code: u16, from: Direction| {
            let transcript = [
                observed(Direction::Server, Observation::Connect { url: "u".into() }),
                observed(
                    from,
                    Observation::Close {
                        code: Some(code),
                        reason: String::new(),
                    },
                ),
            ];
            let outcome = Err(Outcome::Fail {
                rule: None,
                message: "no answer".into(),
            });
            judge_case(huma, &case, outcome, &transcript, Direction::Client)
        };
        let refused = judge(1009, Direction::Client);
        assert_eq!(refused.verdict, Verdict::Info, "{}", refused.message);
        assert!(
            refused.message.contains("close 1009"),
            "{}",
            refused.message
        );
        assert_eq!(refused.rules.get("HUMA-CLI-009"), Some(&Verdict::Info));
        assert_ne!(judge(1011, Direction::Client).verdict, Verdict::Info);
        assert_ne!(judge(1009, Direction::Server).verdict, Verdict::Info);
    }
}
