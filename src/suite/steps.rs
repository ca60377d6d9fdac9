//! Executes one case's steps over a live connection.

use super::arrival::Item;
use super::config::RunConfig;
use super::connect::CaseDir;
use super::link::{Link, Watch};
use super::model::*;
use super::outcome::{unmet, Outcome};
use super::tokens::token_for;
use crate::matcher::{self, Vars};
use crate::protocol::Protocol;
use crate::transcript::{Observation, Transcript};
use crate::transport::TransportKind;
use crate::transport::{Body, Frame, Outgoing, StreamFrom};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// The state of one running case.
pub struct CaseRun<'a> {
    pub(super) protocol: &'a dyn Protocol,
    pub(super) cfg: &'a RunConfig,
    pub(super) case: &'a Case,
    pub(super) link: Link,
    pub(super) vars: Vars,
    /// The variables whose values the target sent (captures, its handshake reply, the
    /// capabilities it declared): a send that copies one is checked (see `copied`).
    pub(super) from_target: std::collections::BTreeSet<String>,
    /// The target values the next handshake's `handshake_with` copies.
    pub(super) handshake_copies: Vec<String>,
    /// `{tmp}` of a stdio target: one per case, kept across restarts.
    pub(super) dir: Option<CaseDir>,
    /// What `{case}` in the target URL becomes: one path segment per case, kept across
    /// reconnects (a deployment that hosts an agent per route prefix).
    pub(super) scope: String,
    /// The step running now, counting the fallback steps after the case's own; `None` while
    /// connecting and shaking hands. Where an unfinished case stopped.
    pub(super) at_step: Option<usize>,
    /// Judging a client: the case's listener and the client started against it.
    pub(super) serving: Option<super::serving::Serving>,
    /// What the step before this one sent, if it sent something.
    pub(super) sent: Option<SentStep>,
    /// Milliseconds its connects waited for a local port to connect from: this machine's wait,
    /// which the case's watchdog adds to its budget (see `local_ports`).
    pub(super) port_waits: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The rules named by steps that ran to their end, held or failed: each was judged.
    pub(super) exercised: Vec<&'static str>,
}

/// The rules a step that ran to its end judged, held or failed: the rule it names, the rule
/// its failure names, and an expected error's `code_rule` once the code was compared.
fn judged_by<'s>(step: &'s Step, stepped: &'s Result<(), Outcome>) -> Vec<&'s str> {
    let mut rules: Vec<&str> = Vec::new();
    let code_rule = match &step.action {
        Action::ExpectError(e) if e.wanted.code.is_some() => e.wanted.code_rule.as_deref(),
        _ => None,
    };
    match stepped {
        Ok(()) => rules.extend(step.rule.as_deref().into_iter().chain(code_rule)),
        Err(Outcome::Fail { rule, .. }) => {
            rules.extend(step.rule.as_deref().into_iter().chain(rule.as_deref()))
        }
        Err(_) => {}
    }
    rules
}

/// A step that sent: a silence expected next is counted from when it was done, not from when
/// that step got to run (a run starved of CPU starts a step late, and a window begun late takes
/// in an answer the target was right to send).
#[derive(Debug, Clone, Copy)]
pub(super) struct SentStep {
    /// When its sends were done.
    pub(super) at: Instant,
    /// How many of the arrivals kept unjudged (`link.pending`, oldest first) had come before
    /// it sent: none of them answers what it sent.
    pub(super) earlier: usize,
}

/// A fresh session of the side wireprobe plays (the CLI serves a client only with a protocol
/// that has a serving session).
fn our_session(protocol: &dyn Protocol, cfg: &RunConfig) -> Box<dyn crate::protocol::Session> {
    let transport = cfg.transport_of(protocol);
    match cfg.judged {
        crate::transcript::Direction::Client => protocol
            .serving_session(transport)
            .unwrap_or_else(|| protocol.session(transport)),
        crate::transcript::Direction::Server => protocol.session(transport),
    }
}

impl<'a> CaseRun<'a> {
    pub fn new(protocol: &'a dyn Protocol, cfg: &'a RunConfig, case: &'a Case) -> Self {
        let session = our_session(protocol, cfg);
        let condense = session.condenses();
        CaseRun {
            protocol,
            cfg,
            case,
            link: Link {
                session,
                conn: None,
                refused: None,
                ended: None,
                lost: None,
                transcript: Transcript::judging(cfg.judged).condensing(condense),
                pending: VecDeque::new(),
                auto_answer: case.auto_answer,
                answers: Vec::new(),
                slot: None,
                round_trip: Duration::ZERO,
                pongs: None,
                unanswered_ping: false,
            },
            vars: Vars::new(),
            from_target: Default::default(),
            handshake_copies: Vec::new(),
            dir: None,
            scope: format!("wp-{}", uuid::Uuid::new_v4().simple()),
            at_step: None,
            serving: None,
            sent: None,
            port_waits: Default::default(),
            exercised: Vec::new(),
        }
    }

    pub(super) fn timeout(&self, within_ms: Option<u64>) -> Duration {
        Duration::from_millis(
            within_ms
                .or(self.case.timeout_ms)
                .unwrap_or(self.cfg.step_timeout.as_millis() as u64),
        )
    }

    /// Runs the whole case; `Ok` when every step held. When the steps skip and the case has
    /// fallback steps, those run on a fresh connection.
    pub async fn execute(&mut self) -> Result<(), Outcome> {
        let first = self.execute_steps(&self.case.steps, 0).await;
        match first {
            Err(Outcome::Skip(why)) if !self.case.fallback.is_empty() => {
                self.finish().await;
                self.vars.clear();
                self.link.session = our_session(self.protocol, self.cfg);
                match self
                    .execute_steps(&self.case.fallback, self.case.steps.len())
                    .await
                {
                    Err(Outcome::Skip(again)) => Err(Outcome::Skip(format!(
                        "{why}; and by the fallback steps: {again}"
                    ))),
                    other => other,
                }
            }
            other => other,
        }
    }

    /// Connects, shakes hands and runs `steps` (numbered from `first` in the report).
    async fn execute_steps(&mut self, steps: &[Step], first: usize) -> Result<(), Outcome> {
        self.at_step = None;
        let token = token_for(self.case.connect.token, &self.cfg.credentials)?;
        let expects_refusal = steps
            .iter()
            .any(|s| matches!(s.action, Action::ExpectRefused(_)));
        self.open(token.as_deref(), expects_refusal).await?;
        let handshake_with = self.handshake_with(self.case.handshake_with.as_ref())?;
        self.handshake(self.case.handshake, handshake_with.as_ref(), false)
            .await?;
        self.check_capabilities()?;
        for (i, step) in steps.iter().enumerate() {
            self.at_step = Some(first + i);
            let stepped = self.step(&step.action).await;
            if let (Err(_), Some(lost)) = (&stepped, &self.link.lost) {
                return Err(Outcome::Error(format!("could not complete: {lost}")));
            }
            for rule in judged_by(step, &stepped) {
                let known = crate::rules::find(self.protocol.rules(), rule);
                if let Some(rule) = known.filter(|r| !self.exercised.contains(&r.id)) {
                    self.exercised.push(rule.id);
                }
            }
            stepped.map_err(|o| match o {
                Outcome::Fail {
                    rule: None,
                    message,
                } => Outcome::Fail {
                    rule: step.rule.clone(),
                    message,
                },
                other => other,
            })?;
        }
        Ok(())
    }

    /// The transcript so far.
    pub fn into_transcript(self) -> Vec<crate::transcript::Entry> {
        self.link.transcript.into_entries()
    }

    /// Closes the connection politely.
    pub async fn finish(&mut self) {
        // What arrived after the last step is the target's too: into the transcript with it.
        self.link.drain();
        if let Some(conn) = self.link.conn.take() {
            if !conn.is_finished() {
                self.link.transcript.observe_ours(Observation::Close {
                    code: Some(1000),
                    reason: "case finished".into(),
                });
            }
            conn.close().await;
        }
        if let Some(serving) = self.serving.take() {
            let last = serving.stop().await;
            self.keep_output(last);
        }
    }

    fn times(&self, times: &Times) -> Result<u64, Outcome> {
        match times {
            Times::Fixed(n) => Ok(*n),
            Times::FromVar { name, delta } => {
                let v =
                    matcher::lookup(name, &self.vars).map_err(|e| Outcome::Error(e.to_string()))?;
                let base = v
                    .as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                    .ok_or_else(|| {
                        Outcome::Error(format!("`times`: ${{{name}}} is {v}, not a number"))
                    })?;
                let n = base.saturating_add(*delta);
                if !(0..=super::vocabulary::MAX_TIMES as i64).contains(&n) {
                    return Err(Outcome::Skip(format!(
                        "`times` resolves to {n}, outside 0..={}",
                        super::vocabulary::MAX_TIMES
                    )));
                }
                Ok(n as u64)
            }
        }
    }

    async fn step(&mut self, action: &Action) -> Result<(), Outcome> {
        let sends = matches!(action, Action::Send(_) | Action::SendRaw(_));
        // What arrived so far is kept in wire order ahead of anything this step's sends can
        // draw (a send takes it in first anyway).
        let earlier = sends.then(|| {
            self.link.drain();
            self.link.pending.len()
        });
        let done = self.run_step(action).await;
        self.sent = earlier.map(|earlier| SentStep {
            at: Instant::now(),
            earlier,
        });
        done
    }

    async fn run_step(&mut self, action: &Action) -> Result<(), Outcome> {
        match action {
            Action::Send(Send { event, times }) => {
                let n = self.times(times)?;
                // An event with no `${...}` in it goes out as written: no copy to fill in.
                let plain = !matcher::mentions_template(event);
                for i in 0..n {
                    self.vars.insert("i".into(), json!(i));
                    let (template, event) = match plain {
                        true => (Cow::Borrowed(event), Cow::Borrowed(event)),
                        false => {
                            let template = matcher::with_index(event, i);
                            let filled = self.substitute(&template)?;
                            (Cow::Owned(template), Cow::Owned(filled))
                        }
                    };
                    let (out, parsed) = match exchange_of(&event) {
                        Some(exchange) => (self.over_http(exchange)?, None),
                        None => self
                            .link
                            .session
                            .encode_parsed(&event)
                            .map_err(|e| Outcome::Error(e.to_string()))?,
                    };
                    // Only a template can copy what the target sent.
                    let copied = match plain {
                        true => Vec::new(),
                        false => super::copied::target_values(&template, &self.from_target),
                    };
                    let role = self.cfg.role_of(self.protocol);
                    if let Some(why) =
                        super::copied::broken_probe(self.protocol, role, &copied, &event, &out)
                    {
                        return Err(Outcome::Skip(why));
                    }
                    self.link
                        .send_parsed(out, parsed, Instant::now() + self.timeout(None))
                        .await?;
                }
                Ok(())
            }
            Action::SendRaw(SendRaw { frame, times }) => {
                let n = self.times(times)?;
                let frame = match frame {
                    RawFrame::Text(t) => Frame::Text(t.clone()),
                    RawFrame::Binary(b) => Frame::Binary(b.clone()),
                    RawFrame::TextBytes(b) => Frame::RawText(b.clone()),
                };
                for _ in 0..n {
                    self.link
                        .send(frame.clone(), Instant::now() + self.timeout(None))
                        .await?;
                }
                Ok(())
            }
            Action::Expect(expect) => {
                for _ in 0..self.times(&expect.count)? {
                    self.expect(
                        &expect.patterns,
                        expect.within_ms,
                        expect.unanswered(),
                        &expect.otherwise(),
                    )
                    .await?;
                }
                Ok(())
            }
            Action::ExpectError(ExpectError {
                wanted:
                    ErrorWanted {
                        code,
                        code_rule,
                        unless,
                        within_ms,
                    },
            }) => {
                self.expect_error(
                    code.as_deref(),
                    code_rule.as_deref(),
                    unless.as_ref(),
                    *within_ms,
                )
                .await
            }
            Action::ExpectClose(ExpectClose {
                wanted: CloseWanted { code, within_ms },
            }) => self.expect_close(*code, *within_ms).await,
            Action::ExpectSilence(silence) => {
                self.expect_silence(&silence.silence, silence.unanswered())
                    .await
            }
            Action::ExpectRefused(ExpectRefused {
                wanted: RefusalWanted { within_ms },
            }) => self.expect_refused(*within_ms).await,
            Action::Wait(Wait {
                pause: Pause { ms, until, settled },
            }) => {
                let plain = until.is_empty() && !settled;
                // A plain wait is the time it names; one for the target's answers gives them
                // a round trip more to come back.
                let distance = if plain {
                    Duration::ZERO
                } else {
                    self.link.round_trip
                };
                let mut deadline = Instant::now() + Duration::from_millis(*ms) + distance;
                if plain {
                    match &mut self.link.slot {
                        Some(slot) => slot.sleep_until(deadline).await,
                        None => tokio::time::sleep_until(deadline).await,
                    }
                    return Ok(());
                }
                let until = self.substitute_all(until)?;
                // Settled on what has already arrived: nothing more need come.
                self.link.drain();
                if *settled && self.link.seen().settled() {
                    return Ok(());
                }
                // A settle the protocol's structure cannot end is time alone, and a target may
                // answer later than its opening's round trip says (its machine got busy after).
                // Where the transport can, it is asked for a pong now: that comes behind
                // everything the target sent before reading it, and the wait lasts its `ms`
                // from there at least (the target's time to answer what it read before the
                // ping). A wait `until` an answer ends on that answer, and asks nothing.
                if *settled && self.link.session.settled().is_none() {
                    let bound = Instant::now() + self.timeout(None);
                    if let Some(pong) = self.link.pong(bound).await {
                        deadline = deadline.max(pong + Duration::from_millis(*ms));
                    }
                }
                // What arrives stays for the steps after: this only decides when to go on.
                self.link
                    .watch(deadline, |a, seen| match a {
                        Item::Ended(_) => Watch::Stop(()),
                        _ if *settled && seen.settled() => Watch::Stop(()),
                        a if until.iter().any(|p| a.matches(p, &mut Vars::new())) => {
                            Watch::Stop(())
                        }
                        _ => Watch::Keep,
                    })
                    .await;
                Ok(())
            }
            Action::Check(check) => {
                let Comparison { value, pattern } = &check.comparison;
                let unanswered = check.unanswered();
                let value = match (self.substitute(value), unanswered) {
                    (Ok(v), _) => v,
                    // What the value would have come from never arrived.
                    (Err(Outcome::Error(why)), Unanswered::ScenarioNotReached) => {
                        return Err(unmet(unanswered, why))
                    }
                    (Err(other), _) => return Err(other),
                };
                let pattern = self.substitute(pattern)?;
                if matcher::matches(&pattern, &value, &mut self.vars) {
                    Ok(())
                } else {
                    Err(unmet(
                        unanswered,
                        format!("{value} does not match {pattern}"),
                    ))
                }
            }
            Action::Discard(_) => {
                // Take in what already arrived, then forget all of it.
                self.link.drain();
                self.link.pending.clear();
                Ok(())
            }
            Action::Unblock(_) => {
                // What has arrived so far is what the session knows to free.
                self.link.drain();
                for event in self.link.session.unblocking() {
                    let (out, parsed) = (self.link.session.encode_parsed(&event))
                        .map_err(|e| Outcome::Error(e.to_string()))?;
                    self.link
                        .send_parsed(out, parsed, Instant::now() + self.timeout(None))
                        .await?;
                }
                Ok(())
            }
            Action::PickTool(PickTool {
                choice:
                    ToolChoice {
                        prefer,
                        params,
                        default,
                        slow,
                        within_ms,
                    },
            }) => {
                self.pick_tool(prefer, params, default.as_deref(), *slow, *within_ms)
                    .await
            }
            Action::Reconnect(Reconnect {
                how:
                    Reconnection {
                        handshake,
                        handshake_with,
                        new_session,
                        token,
                    },
            }) => {
                if let Some(conn) = self.link.conn.take() {
                    match self.cfg.judged {
                        crate::transcript::Direction::Server => {
                            self.link.transcript.observe_ours(Observation::Close {
                                code: Some(1000),
                                reason: "reconnect".into(),
                            });
                            conn.close().await;
                        }
                        // Serving a client: the connection drops as a network failure would
                        // (no close frame), which a client may resume from.
                        crate::transcript::Direction::Client => {
                            self.link.transcript.observe_ours(Observation::Close {
                                code: None,
                                reason: "dropped without a close frame, as a network failure would"
                                    .into(),
                            });
                            drop(conn);
                        }
                    }
                }
                let handshake_with = self.handshake_with(handshake_with.as_ref())?;
                let kind = token.unwrap_or(self.case.connect.token);
                let token = token_for(kind, &self.cfg.credentials)?;
                if *new_session {
                    self.link.session = our_session(self.protocol, self.cfg);
                }
                self.open(token.as_deref(), kind != TokenKind::Valid)
                    .await?;
                self.handshake(*handshake, handshake_with.as_ref(), !*new_session)
                    .await
            }
            Action::Restart(_) if self.protocol.transport() != TransportKind::Stdio => Err(
                Outcome::Error("`restart` needs a process transport (stdio)".into()),
            ),
            Action::Restart(_) => {
                // The same command and {tmp}: a persistence case sees what the last run left.
                if let Some(conn) = self.link.conn.take() {
                    self.link.transcript.observe_ours(Observation::Close {
                        code: None,
                        reason: "restart".into(),
                    });
                    conn.close().await;
                }
                self.open(None, false).await?;
                let handshake_with = self.handshake_with(self.case.handshake_with.as_ref())?;
                self.handshake(self.case.handshake, handshake_with.as_ref(), false)
                    .await
            }
        }
    }

    /// An HTTP exchange a step asked for, when the run's transport makes HTTP exchanges.
    fn over_http(&self, exchange: Result<Outgoing, String>) -> Result<Outgoing, Outcome> {
        let kind = self.cfg.transport_of(self.protocol);
        if !matches!(kind, TransportKind::Sse | TransportKind::Protobuf) {
            return Err(Outcome::Error(
                "`$post` and `$stream` steps are for the SSE + HTTP transport".into(),
            ));
        }
        exchange.map_err(|why| Outcome::Error(format!("this step's exchange: {why}")))
    }

    pub(super) fn substitute(&mut self, v: &Value) -> Result<Value, Outcome> {
        matcher::bind_uuids(v, &mut self.vars);
        matcher::substitute(v, &self.vars).map_err(|e| Outcome::Error(e.to_string()))
    }

    pub(super) fn substitute_all(&mut self, patterns: &[Value]) -> Result<Vec<Value>, Outcome> {
        patterns.iter().map(|p| self.substitute(p)).collect()
    }
}

/// The suite's own words for an HTTP exchange in a `send` body: `{"$post": PATH, "body": JSON}`
/// (or `"body_text"` for exact bytes, and `"headers"`, a table, for request headers of its
/// own) POSTs to a route; `{"$stream": {"after": N}}` (or
/// `{"last_event_id": N}`, `{"close": true}`, `{}` for the live end) reopens the event
/// stream. `None` for an ordinary event.
pub(super) fn exchange_of(step: &Value) -> Option<Result<Outgoing, String>> {
    let m = step.as_object()?;
    if let Some(path) = m.get("$post") {
        let Value::String(path) = path else {
            return Some(Err(format!("`$post` is {path}, not a route")));
        };
        let body = match (m.get("body_text"), m.get("body")) {
            (Some(Value::String(text)), _) => Body::Text(text.clone()),
            (Some(other), _) => return Some(Err(format!("`body_text` is {other}, not text"))),
            (None, Some(v)) => Body::Json(v.clone()),
            (None, None) => Body::Empty,
        };
        let headers = match m.get("headers") {
            None => Vec::new(),
            Some(Value::Object(h)) => {
                let mut headers = Vec::new();
                for (name, value) in h {
                    let Value::String(value) = value else {
                        return Some(Err(format!("header {name:?} is {value}, not text")));
                    };
                    headers.push((name.clone(), value.clone()));
                }
                headers
            }
            Some(other) => return Some(Err(format!("`headers` is {other}, not a table"))),
        };
        return Some(Ok(Outgoing::Post {
            path: path.clone(),
            body,
            headers,
        }));
    }
    let how = m.get("$stream")?;
    if let Some(lines) = how.get("lines") {
        let lines = lines.as_array().and_then(|ls| {
            ls.iter()
                .map(|l| l.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        });
        return Some(match lines {
            Some(lines) if lines.iter().all(|l| !l.contains(['\n', '\r'])) => {
                Ok(Outgoing::StreamLines(lines))
            }
            _ => Err(format!(
                "`lines` is {}, not a list of strings without line breaks",
                how["lines"]
            )),
        });
    }
    let id = |k: &str| match how.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let from = if how.get("close").and_then(Value::as_bool) == Some(true) {
        None
    } else if let Some(n) = id("after") {
        Some(StreamFrom::After(n))
    } else if let Some(n) = id("last_event_id") {
        Some(StreamFrom::LastEventId(n))
    } else {
        Some(StreamFrom::Live)
    };
    Some(Ok(Outgoing::Stream(from)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_are_the_suites_words() {
        let post = exchange_of(&json!({"$post": "/responses", "body": {"a": 1}}));
        assert_eq!(
            post,
            Some(Ok(Outgoing::Post {
                path: "/responses".into(),
                body: Body::Json(json!({"a": 1})),
                headers: Vec::new(),
            }))
        );
        let resume = exchange_of(&json!({"$stream": {"after": 5}}));
        assert_eq!(
            resume,
            Some(Ok(Outgoing::Stream(Some(StreamFrom::After("5".into())))))
        );
        assert_eq!(exchange_of(&json!({"type": "X"})), None);
        assert!(matches!(exchange_of(&json!({"$post": 3})), Some(Err(_))));
        let lines = exchange_of(&json!({"$stream": {"lines": [": keep-alive", ""]}}));
        assert_eq!(
            lines,
            Some(Ok(Outgoing::StreamLines(vec![
                ": keep-alive".into(),
                String::new()
            ])))
        );
        // A line break inside a line would write two; a number is no line.
        for bad in [json!(["a\nb"]), json!([1]), json!("x")] {
            let written = exchange_of(&json!({"$stream": {"lines": bad}}));
            assert!(matches!(written, Some(Err(_))), "{bad}");
        }
    }
}
