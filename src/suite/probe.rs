//! Before a run: is the target there at all, does it take the run's credentials, and does it
//! speak the protocol? A target wrong as a whole is one clear error (exit 3), not a wall of
//! per-case errors.

use super::config::{Credentials, RunConfig, CASE_SCOPE};
use super::connect::{open_transport, CaseDir};
use super::model::TokenKind;
use super::outcome::RunError;
use super::tokens::{connect_options, token_for};
use super::vocabulary::values::TOKEN_PLACEMENTS;
use crate::protocol::{Decoded, Observed, Protocol, TokenPlacement};
use crate::transport::TransportKind;
use crate::transport::{Connection, Received, TransportError};
use std::time::Duration;

/// How long the probe waits for a target to close a fresh connection (a refusal sent after
/// the upgrade, as some servers refuse a token) before it takes the connection as accepted.
const PROBE_SETTLE: Duration = Duration::from_millis(250);

/// Checks the target is there at all and accepts the run's best credentials, so an
/// unreachable or refusing target is one clear error rather than a wall of per-case errors.
/// A token refused where the protocol puts it by default is tried in the other places a
/// server may read it from: a target that takes it anywhere is judged case by case.
pub(super) async fn probe(protocol: &dyn Protocol, cfg: &RunConfig) -> Result<(), RunError> {
    let token = token_for(TokenKind::Valid, &cfg.credentials).ok().flatten();
    let default = protocol.token_placement();
    let others = TOKEN_PLACEMENTS
        .iter()
        .map(|(_, p)| *p)
        .filter(|p| token.is_some() && *p != default);
    let mut first_refusal = None;
    for placement in std::iter::once(default).chain(others) {
        match probe_once(protocol, cfg, token.as_deref(), placement).await? {
            Probed::Accepted => return Ok(()),
            // The cases will say what went wrong; the probe only spares them a refusal.
            Probed::Failed if first_refusal.is_none() => return Ok(()),
            Probed::Failed => {}
            Probed::Refused(how) => {
                first_refusal.get_or_insert(how);
            }
        }
    }
    let how = first_refusal.unwrap_or_default();
    Err(RunError::Refused(refusal_advice(&how, &cfg.credentials)))
}

/// What one probe connection found.
enum Probed {
    Accepted,
    /// The target refused the credentials (how it did).
    Refused(String),
    /// Something else went wrong (a subprotocol the server does not echo, a timeout).
    Failed,
}

/// One probe connection.
async fn probe_once(
    protocol: &dyn Protocol,
    cfg: &RunConfig,
    token: Option<&str>,
    placement: TokenPlacement,
) -> Result<Probed, RunError> {
    let mut opts = connect_options(protocol, cfg, token, placement, cfg.step_timeout);
    opts.url = opts.url.replace(CASE_SCOPE, "wp-probe");
    let tmp = CaseDir::create().map_err(RunError::Unreachable)?;
    match open_transport(protocol, opts, cfg, tmp.path()).await {
        Err(e) if e.is_unreachable() => Err(RunError::Unreachable(e)),
        Err(TransportError::Rejected {
            status: status @ (401 | 403),
        }) => Ok(Probed::Refused(format!(
            "answered the upgrade with HTTP {status}"
        ))),
        Ok(mut conn) => {
            let closed_at_once = match cfg.transport_of(protocol) {
                TransportKind::WebSocket => {
                    let settle = tokio::time::Instant::now() + PROBE_SETTLE;
                    match conn.recv(settle).await {
                        Some((
                            Received::Closed {
                                code: Some(code @ (1008 | 4001 | 4003 | 4401 | 4403)),
                                reason,
                            },
                            _,
                        )) => Some(format!(
                            "closed the connection at once with code {code} \"{reason}\""
                        )),
                        _ => None,
                    }
                }
                TransportKind::Stdio => {
                    let mute = mute_process(protocol, cfg, &mut conn).await;
                    if let Some(why) = mute {
                        conn.close().await;
                        return Err(RunError::Mute(why));
                    }
                    None
                }
                _ => None,
            };
            conn.close().await;
            Ok(closed_at_once.map_or(Probed::Accepted, Probed::Refused))
        }
        Err(_) => Ok(Probed::Failed),
    }
}

/// One line for a target that refused the probe: what it did and which flags change that.
fn refusal_advice(how: &str, creds: &Credentials) -> String {
    if creds.any() {
        format!(
            "the target refuses the token wireprobe presents: it {how}. Check --token, or \
             --jwt-secret (and --claims for claims the server needs, such as '{{\"userId\": \"probe\"}}')"
        )
    } else {
        format!(
            "the target refuses connections without a token: it {how}. Give --token, or \
             --jwt-secret (with --claims for claims the server needs)"
        )
    }
}

/// Why a freshly started target process cannot be run against, if it cannot: it ends before
/// writing a line of the protocol, or (when the target speaks first, as Nuum's init) writes
/// none within the step timeout, nor within another after it is given its first input (a
/// target that greets only once spoken to is alive, and its rules judge the late greeting).
/// A process that waits for input is given [`PROBE_SETTLE`] to show it does not simply exit.
async fn mute_process(
    protocol: &dyn Protocol,
    cfg: &RunConfig,
    conn: &mut Connection,
) -> Option<String> {
    let mut session = protocol.session(TransportKind::Stdio);
    let speaks_first = protocol.target_speaks_first();
    let wait = match speaks_first {
        true => cfg.step_timeout,
        false => PROBE_SETTLE,
    };
    let mut deadline = tokio::time::Instant::now() + wait;
    let mut heard = None;
    let mut stderr = None;
    let mut nudged = false;
    loop {
        let Some((received, _)) = conn.recv(deadline).await else {
            if !speaks_first {
                return None;
            }
            if !nudged && !conn.is_finished() {
                if let Some(input) = first_input(protocol, &mut *session) {
                    nudged = true;
                    deadline = tokio::time::Instant::now() + wait;
                    if conn.send(input, deadline).await.is_ok() {
                        continue;
                    }
                }
            }
            return Some(format!(
                "the target process wrote no {} message within {} ms{}{}",
                protocol.id(),
                wait.as_millis(),
                if nudged {
                    ", nor after its first input"
                } else {
                    ""
                },
                said(heard.as_deref(), stderr.as_deref())
            ));
        };
        match received {
            Received::Frame(frame) => match session.decode(&frame) {
                Decoded::Event(event)
                    if protocol.recognises(Observed::Event((&event).into(), None)) =>
                {
                    return None
                }
                Decoded::Event(event) => {
                    heard.get_or_insert_with(|| crate::show::event(&event));
                }
                Decoded::Garbage(text) => {
                    heard.get_or_insert_with(|| text.chars().take(80).collect());
                }
                _ => {}
            },
            Received::Stderr(line) => stderr = Some(line),
            Received::Closed { reason, .. } => {
                return Some(format!(
                    "the target process ended before it wrote a {} message ({reason}){}",
                    protocol.id(),
                    said(heard.as_deref(), stderr.as_deref())
                ))
            }
            Received::Failed(e) => {
                return Some(format!("the target process failed at once: {e}"));
            }
            // A stdio process has no SSE events or HTTP answers; a notice is not a message.
            Received::Notice(_)
            | Received::SseEvent { .. }
            | Received::Http(_)
            | Received::StreamOpened(_)
            | Received::Posted { .. }
            | Received::AnswerEnded { .. }
            | Received::Subscribed(_)
            | Received::RoundTrip(_) => {}
        }
    }
}

/// The first input a target that has not spoken is given: the message that shows a target
/// serves (its fuzz profile's probe), encoded.
fn first_input(
    protocol: &dyn Protocol,
    session: &mut dyn crate::protocol::Session,
) -> Option<crate::transport::Outgoing> {
    let probe = protocol.fuzzing()?.probe();
    session.encode(probe.sends.first()?).ok()
}

/// What a mute process did say, for its one line.
fn said(stdout: Option<&str>, stderr: Option<&str>) -> String {
    match (stdout, stderr) {
        (Some(out), _) => format!("; it wrote {out:?}"),
        (None, Some(err)) => format!("; its stderr said {err:?}"),
        (None, None) => String::new(),
    }
}

/// Why a whole run shows a target that does not speak the protocol, if it does: not one case
/// passed and not one message of the protocol came back in any transcript (a Socket.IO server
/// given to a WebSocket protocol, an HTTP endpoint of another API). Every case would otherwise
/// be its own error, for one cause.
pub(super) fn never_spoke(
    protocol: &dyn Protocol,
    results: &[crate::results::CaseResult],
    judged_side: crate::transcript::Direction,
) -> Option<String> {
    use crate::verdict::Verdict;
    let transcripts = || results.iter().flat_map(|r| &r.transcript);
    let judged = results.iter().any(|r| r.verdict != Verdict::Skip);
    let passed = results.iter().any(|r| r.verdict == Verdict::Pass);
    if !judged || passed || crate::judge::target_spoke(protocol, transcripts(), judged_side) {
        return None;
    }
    // A client we served connected for this protocol: whatever it then wrote, however broken,
    // is judged (a host writing NDJSON that is not JSON breaks the host's rules); only one that
    // wrote nothing at all is not speaking to us.
    let wrote = || transcripts().any(|e| e.from == judged_side && e.record.was_sent());
    if judged_side == crate::transcript::Direction::Client && wrote() {
        return None;
    }
    let sent = transcripts()
        .find(|e| e.from == judged_side && e.record.was_sent())
        .map(|e| {
            format!(
                "; the first thing it sent: {}",
                crate::transcript::words::entry(e)
            )
        })
        .unwrap_or_else(|| "; it sent nothing at all".into());
    let (who, what) = match judged_side {
        crate::transcript::Direction::Server => ("target", "target"),
        crate::transcript::Direction::Client => ("client", "client"),
    };
    Some(format!(
        "the {who} never sent a {} message in any of {} cases: is it a {} {what}?{sent}",
        protocol.id(),
        results.len(),
        protocol.title()
    ))
}
