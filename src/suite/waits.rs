//! The steps that wait on the target: an expected event (or its answer in another form), an
//! error, the end of the connection, silence, a refusal, and a tool the target offers.

use super::arrival::Item;
use super::config::ToolOffer;
use super::link::Watch;
use super::model::*;
use super::outcome::{fail, unmet, Outcome};
use super::steps::CaseRun;
use crate::matcher::Vars;
use crate::transcript::Direction;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

impl CaseRun<'_> {
    pub(super) async fn expect(
        &mut self,
        patterns: &[Value],
        within_ms: Option<u64>,
        unanswered: Unanswered,
        otherwise: &Otherwise<'_>,
    ) -> Result<(), Outcome> {
        let patterns = self.substitute_all(patterns)?;
        let other_forms = self.substitute_all(otherwise.patterns)?;
        let timeout = self.timeout(within_ms);
        let deadline = Instant::now() + timeout;
        let mut captured = Vars::new();
        let found = self
            .link
            .watch_answered(deadline, |a, _| {
                if patterns.iter().any(|p| a.matches(p, &mut captured)) {
                    Watch::Take(Ok(()))
                } else if other_forms.iter().any(|p| a.matches(p, &mut Vars::new())) {
                    Watch::Stop(Err(a.describe()))
                } else {
                    Watch::Keep
                }
            })
            .await;
        let pattern = if patterns.len() == 1 {
            patterns[0].to_string()
        } else {
            format!("any of {}", Value::Array(patterns.clone()))
        };
        match found {
            Some(Ok(())) => {
                self.from_target.extend(captured.keys().cloned());
                self.vars.extend(captured);
                return Ok(());
            }
            Some(Err(instead)) => {
                let means = otherwise.means.unwrap_or(unanswered);
                let message = format!(
                    "the target answered with {instead} instead of an event matching {pattern}"
                );
                return Err(unmet(means, message));
            }
            None => {}
        }
        let why = match &self.link.ended {
            Some(how) => {
                format!("the connection ended ({how}) before an event matching {pattern} arrived")
            }
            None if self.link.seen().answered_whole() => format!(
                "no event matching {pattern}: the answers to everything sent came whole without it"
            ),
            None => format!(
                "no event matching {pattern} within {} ms",
                timeout.as_millis()
            ),
        };
        let message = format!("{why}; {}", self.link.unmatched_summary());
        // A target that has not said one message of the protocol in this case (a process that
        // exits at once or never answers, a server that hangs up) did not decline a scenario:
        // it cannot be judged at all, which is an error ("timeout before any answer"), not a
        // skip that would leave a build green.
        let spoke = || {
            super::verdicts::spoke_to(
                self.protocol,
                self.case,
                self.link.transcript.entries(),
                self.link.transcript.judged(),
            )
        };
        if unanswered != Unanswered::Fails && !spoke() {
            return Err(Outcome::Error(format!(
                "{}{message}",
                super::verdicts::NO_PROTOCOL_MESSAGE
            )));
        }
        Err(unmet(unanswered, message))
    }

    pub(super) async fn pick_tool(
        &mut self,
        prefer: &[String],
        params: &Value,
        default: Option<&str>,
        slow: bool,
        within_ms: Option<u64>,
    ) -> Result<(), Outcome> {
        // A client advertises no tools: the user names them, or the case cannot run.
        let offered = if self.link.transcript.judged() == Direction::Client {
            let (offered, flag) = match slow {
                true => (&self.cfg.slow_tools, "--slow-tool"),
                false => (&self.cfg.tools, "--tool"),
            };
            if offered.is_empty() {
                return Err(Outcome::Skip(format!(
                    "the case needs a tool the client runs{}: name one with {flag} NAME[=JSON]",
                    if slow {
                        " long enough to be cancelled"
                    } else {
                        ""
                    }
                )));
            }
            offered.clone()
        } else if let (true, Some(name)) = (self.cfg.tools.is_empty(), default) {
            vec![ToolOffer {
                name: name.to_owned(),
                params: None,
            }]
        } else if self.cfg.tools.is_empty() {
            let deadline = Instant::now() + self.timeout(within_ms);
            let protocol = self.protocol;
            let advertised = self
                .link
                .watch(deadline, |a, _| match a {
                    Item::Event(e, _) => protocol
                        .advertised_tools(e)
                        .map_or(Watch::Keep, Watch::Stop),
                    _ => Watch::Keep,
                })
                .await;
            advertised
                .unwrap_or_default()
                .into_iter()
                .map(|name| ToolOffer { name, params: None })
                .collect()
        } else {
            self.cfg.tools.clone()
        };
        let Some(ToolOffer {
            name,
            params: own_params,
        }) = choose_tool(offered, prefer)
        else {
            return Err(Outcome::Skip(
                "the target offers no tool: it advertised none, and none was given with --tool NAME[=JSON]".into(),
            ));
        };
        let params = own_params.unwrap_or_else(|| params.clone());
        self.vars
            .insert("tool".into(), json!({"name": name, "params": params}));
        Ok(())
    }

    pub(super) async fn expect_error(
        &mut self,
        code: Option<&str>,
        code_rule: Option<&str>,
        unless: Option<&Value>,
        within_ms: Option<u64>,
    ) -> Result<(), Outcome> {
        let unless = match unless {
            Some(u) => Some(self.substitute(u)?),
            None => None,
        };
        let timeout = self.timeout(within_ms);
        let deadline = Instant::now() + timeout;
        let mut wrong: Option<String> = None;
        let found = self
            .link
            .watch(deadline, |a, session| {
                if let Some(u) = &unless {
                    if a.matches(u, &mut Vars::new()) {
                        return Watch::Stop(Err(a.describe()));
                    }
                }
                match a.error_code(&**session) {
                    Some(got) if code.is_none_or(|want| want == got) => Watch::Take(Ok(())),
                    Some(got) => {
                        wrong.get_or_insert(got);
                        Watch::Keep
                    }
                    None => Watch::Keep,
                }
            })
            .await;
        let want = code.unwrap_or("an error");
        match found {
            Some(Ok(())) => Ok(()),
            Some(Err(seen)) => Err(Outcome::Skip(format!(
                "the target sent {seen}, so the condition for {want} no longer held"
            ))),
            None => Err(match (wrong, &self.link.ended) {
                (Some(got), _) => Outcome::Fail {
                    rule: code_rule.map(str::to_owned),
                    message: format!("rejected for the wrong reason: expected {want}, got {got}"),
                },
                (None, Some(how)) => fail(format!(
                    "expected {want}, but the connection ended ({how}) with no error event"
                )),
                (None, None) => fail(format!(
                    "expected {want} within {} ms; {}",
                    timeout.as_millis(),
                    self.link.unmatched_summary()
                )),
            }),
        }
    }

    pub(super) async fn expect_close(
        &mut self,
        code: Option<u16>,
        within_ms: Option<u64>,
    ) -> Result<(), Outcome> {
        let timeout = self.timeout(within_ms);
        let deadline = Instant::now() + timeout;
        let found = self
            .link
            .watch(deadline, |a, _| match a {
                Item::Ended(how) => Watch::Take(how.clone()),
                _ => Watch::Keep,
            })
            .await;
        match (found, code) {
            (None, _) => Err(fail(format!(
                "the connection was still open {} ms later",
                timeout.as_millis()
            ))),
            (Some(how), Some(want)) if !how.contains(&format!("code {want}")) => Err(fail(
                format!("expected close code {want}, but the connection ended ({how})"),
            )),
            (Some(_), _) => Ok(()),
        }
    }

    pub(super) async fn expect_silence(
        &mut self,
        silence: &Silence,
        unanswered: Unanswered,
    ) -> Result<(), Outcome> {
        let Silence {
            ms,
            matching,
            answer,
        } = silence;
        let matching = self.substitute_all(matching)?;
        // An answer's silence counted from what we sent is the target's once that arrives, and
        // what it says then takes as long again to come back: the window is a round trip longer.
        // Nor can anything that came before the send answer it: a late answer to something
        // sent earlier (a refusal the spec leaves open, say) is let be.
        let (from, distance, mut earlier) = match self.sent.take() {
            Some(sent) if *answer => (sent.at, self.link.round_trip, sent.earlier),
            Some(sent) => (sent.at, Duration::ZERO, 0),
            None => (Instant::now(), Duration::ZERO, 0),
        };
        let deadline = from + Duration::from_millis(*ms) + distance;
        let found = self
            .link
            .watch(deadline, |a, _| match a {
                // An end stays an end, whenever it came.
                Item::Ended(how) => Watch::Stop(format!("the connection ended ({how})")),
                // The kept arrivals come first, oldest first.
                _ if earlier > 0 => {
                    earlier -= 1;
                    Watch::Keep
                }
                _ if matching.is_empty() => Watch::Stop(a.describe()),
                _ if matching.iter().any(|m| a.matches(m, &mut Vars::new())) => {
                    Watch::Stop(a.describe())
                }
                _ => Watch::Keep,
            })
            .await;
        match found {
            None => Ok(()),
            Some(what) => Err(unmet(
                unanswered,
                format!(
                    "expected silence for {ms} ms{}, but received {what}",
                    named_round_trip(distance)
                ),
            )),
        }
    }

    pub(super) async fn expect_refused(&mut self, within_ms: Option<u64>) -> Result<(), Outcome> {
        if self.link.refused.is_some() {
            return Ok(());
        }
        let timeout = self.timeout(within_ms);
        let deadline = Instant::now() + timeout;
        let found = self
            .link
            .watch(deadline, |a, session| match a {
                Item::Event(e, _) if session.is_handshake_reply(e) => Watch::Stop(false),
                _ if a.error_code(&**session).is_some() => Watch::Take(true),
                Item::Ended(_) => Watch::Take(true),
                _ => Watch::Keep,
            })
            .await;
        match found {
            Some(true) => Ok(()),
            Some(false) => Err(fail(
                "the target accepted the connection: it answered the handshake",
            )),
            None => Err(fail(format!(
                "the target neither refused nor answered within {} ms",
                timeout.as_millis()
            ))),
        }
    }
}

/// A round trip long enough to have lengthened a window noticeably, named for the message
/// (a loopback target's, a millisecond or so, is not: messages stay the same run to run).
fn named_round_trip(distance: Duration) -> String {
    match distance.as_millis() {
        ms @ 100.. => format!(" (and the {ms} ms round trip its connection measured)"),
        _ => String::new(),
    }
}

/// The first offered tool whose name matches the earliest of the `prefer` globs, else the
/// first offered.
fn choose_tool(offered: Vec<ToolOffer>, prefer: &[String]) -> Option<ToolOffer> {
    let preferred = prefer.iter().find_map(|glob| {
        let glob = globset::Glob::new(glob).ok()?.compile_matcher();
        offered.iter().find(|t| glob.is_match(&t.name)).cloned()
    });
    preferred.or_else(|| offered.into_iter().next())
}
