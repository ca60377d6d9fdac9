//! How a case or a whole run ends before it is done: a case's [`Outcome`], a run's
//! [`RunError`].

use super::model::Unanswered;
use crate::results::CaseResult;
use crate::transport::TransportError;

/// Why a case stopped before its last step.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The target broke a rule (`rule`: the step's rule, if it named one).
    Fail {
        rule: Option<String>,
        message: String,
    },
    Skip(String),
    Error(String),
    /// What happened is recorded, not judged (`info`): the step could not speak for its rule
    /// (a frame the transport refused before the application saw it).
    Recorded(String),
}

/// What an unmet expectation becomes: a failure, or a skip when it was a precondition.
pub(super) fn unmet(kind: Unanswered, message: String) -> Outcome {
    match kind {
        Unanswered::Fails => fail(message),
        Unanswered::ScenarioNotReached => Outcome::Skip(format!("scenario not reached: {message}")),
        Unanswered::ProbeUnanswered => Outcome::Skip(format!(
            "cannot judge: a liveness probe went unanswered (its own case judges that): {message}"
        )),
    }
}

pub(super) fn fail(message: impl Into<String>) -> Outcome {
    Outcome::Fail {
        rule: None,
        message: message.into(),
    }
}

/// Why a run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Unreachable(TransportError),
    /// The target refuses the connection wireprobe makes with its best credentials: every
    /// case would end the same way, so the run stops with one line saying why.
    #[error("{0}")]
    Refused(String),
    /// The target (a process) ends, or never says a word of the protocol, before any case
    /// could start: one line, not a wall of per-case errors.
    #[error("{0}")]
    Mute(String),
    /// Every case ran and the target never once spoke the protocol (it speaks another, or
    /// nothing): one cause, said once; the results are kept for the reports.
    #[error("{why}")]
    NeverSpoke {
        why: String,
        results: Vec<CaseResult>,
    },
}
