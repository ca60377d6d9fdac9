//! How a case's connection opens: the transport (or, judging a client, its next connection),
//! the handshake either side starts, the reply it waits for, and the capabilities a case
//! requires of the reply. Judging a client: the listener, the client started against it, and
//! the connection it opens.

use super::arrival::Item;
use super::config::CASE_SCOPE;
use super::connect::{open_transport, CaseDir};
use super::link::Watch;
use super::model::*;
use super::outcome::{fail, Outcome};
use super::serving::{presented_at, Serving, ServingError};
use super::steps::CaseRun;
use super::tokens::connect_options;
use crate::transcript::Observation;
use crate::transport::process::{OutputLine, Stream};
use crate::transport::TransportKind;
use crate::transport::{local_ports, Outgoing, TransportError};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// How long a connect that found no local port free waits before it tries again.
const AGAIN_AFTER: Duration = Duration::from_millis(50);

impl CaseRun<'_> {
    /// A case's `handshake_with` over the run's defaults, with variables substituted.
    pub(super) fn handshake_with(
        &mut self,
        case: Option<&Value>,
    ) -> Result<Option<Value>, Outcome> {
        self.handshake_copies = case
            .map(|c| super::copied::target_values(c, &self.from_target))
            .unwrap_or_default();
        let merged = match (&self.cfg.handshake_defaults, case) {
            (None, None) => return Ok(None),
            (Some(d), None) => d.clone(),
            (None, Some(c)) => c.clone(),
            (Some(d), Some(c)) => {
                let mut m = d.clone();
                crate::protocol::merge(&mut m, c);
                m
            }
        };
        self.substitute(&merged).map(Some)
    }

    pub(super) async fn open(
        &mut self,
        token: Option<&str>,
        expects_refusal: bool,
    ) -> Result<(), Outcome> {
        self.link.pending.clear();
        self.link.answers.clear();
        self.link.ended = None;
        self.link.refused = None;
        if self.cfg.judged == crate::transcript::Direction::Client {
            return self.open_served(token).await;
        }
        let placement = self
            .case
            .connect
            .token_in
            .unwrap_or(self.protocol.token_placement());
        let mut opts = connect_options(
            self.protocol,
            self.cfg,
            token,
            placement,
            self.timeout(None),
        );
        opts.url = opts.url.replace(CASE_SCOPE, &self.scope);
        self.link.transcript.observe_ours(Observation::Connect {
            url: opts.url.clone(),
        });
        // Only a process's command line has a `{tmp}`: creating and removing a directory per
        // case was 4% of live fuzzing's CPU over a network transport.
        let spawns = self.cfg.transport_of(self.protocol) == TransportKind::Stdio;
        if spawns && self.dir.is_none() {
            self.dir = Some(CaseDir::create().map_err(|e| Outcome::Error(e.to_string()))?);
        }
        let tmp = self
            .dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        // A connect that found no local port free (each tried for its own timeout) is tried
        // again until ports come free, a minute at most: the time is this machine's, and the
        // watchdog is told of it.
        let began = Instant::now();
        let mut counted = Duration::ZERO;
        let result = loop {
            match open_transport(self.protocol, opts.clone(), self.cfg, &tmp).await {
                Err(e) if e.is_local() && began.elapsed() < local_ports::LONGEST_DROUGHT => {
                    let waited = began.elapsed();
                    let more = (waited - counted).as_millis() as u64;
                    self.port_waits.fetch_add(more, Ordering::Relaxed);
                    counted = waited;
                    tokio::time::sleep(AGAIN_AFTER).await;
                }
                done => break done,
            }
        };
        match result {
            Ok(conn) => {
                let took = conn.round_trip().unwrap_or_default();
                self.link.round_trip = self.link.round_trip.max(took);
                self.link.conn = Some(conn);
                Ok(())
            }
            Err(TransportError::Rejected { status }) => {
                self.link
                    .transcript
                    .observe_target(Observation::Rejected { status });
                self.link.refused = Some(format!("HTTP {status} on the WebSocket upgrade"));
                let refused = format!("the target refused the connection with HTTP {status}");
                match (
                    expects_refusal,
                    self.case.connect.refusal == super::model::Refusal::Fail,
                ) {
                    (true, _) => Ok(()),
                    (false, true) => Err(fail(refused)),
                    (false, false) => Err(Outcome::Error(refused)),
                }
            }
            Err(e) => {
                let seen = Observation::Error {
                    message: e.to_string(),
                };
                // This machine having no port to connect from is nothing the target did.
                match e.is_local() {
                    true => self.link.transcript.observe_ours(seen),
                    false => self.link.transcript.observe_target(seen),
                }
                Err(Outcome::Error(format!("could not connect: {e}")))
            }
        }
    }

    pub(super) async fn handshake(
        &mut self,
        mode: HandshakeMode,
        with: Option<&Value>,
        resume: bool,
    ) -> Result<(), Outcome> {
        if mode == HandshakeMode::None || self.link.conn.is_none() || !self.protocol.has_handshake()
        {
            return Ok(());
        }
        // A session that answers the other side's hello (wireprobe serving a client) waits for
        // it first, so its answer can name what the hello set up.
        let answering = self.link.session.answers_handshake();
        if answering && mode != HandshakeMode::SendOnly {
            self.handshake_reply().await?;
        }
        let frames = self
            .link
            .session
            .handshake(with, resume)
            .map_err(|e| Outcome::Error(format!("cannot build the handshake: {e}")))?;
        let copies = std::mem::take(&mut self.handshake_copies);
        let role = self.cfg.role_of(self.protocol);
        for frame in &frames {
            let out = Outgoing::Frame(frame.clone());
            let with = with.cloned().unwrap_or_default();
            if let Some(why) =
                super::copied::broken_probe(self.protocol, role, &copies, &with, &out)
            {
                return Err(Outcome::Skip(why));
            }
        }
        for frame in frames {
            self.link
                .send(frame, Instant::now() + self.timeout(None))
                .await?;
        }
        // Serving a client, a session that speaks first (a Nuum agent's init) has no reply to
        // wait for: the client's first line is the case's to expect.
        let serving = self.link.transcript.judged() == crate::transcript::Direction::Client;
        if answering || serving || mode == HandshakeMode::SendOnly {
            return Ok(());
        }
        self.handshake_reply().await
    }

    /// Waits for the other side's part of the handshake (its reply, or its hello).
    pub(super) async fn handshake_reply(&mut self) -> Result<(), Outcome> {
        let budget = match (&self.serving, self.link.session.answers_handshake()) {
            (Some(serving), true) => serving.hello_budget(self.timeout(None)),
            _ => self.timeout(None),
        };
        let deadline = Instant::now() + budget;
        let found = self
            .link
            .watch(deadline, |a, session| match a {
                Item::Event(e, _) if session.is_handshake_reply(e) => Watch::Take(Ok(e.clone())),
                Item::Event(e, _) => match session.error_code(e) {
                    Some(code) => Watch::Stop(Err(format!(
                        "the target answered the handshake with an error ({code})"
                    ))),
                    None => Watch::Keep,
                },
                Item::Ended(how) => Watch::Stop(Err(format!(
                    "the connection ended during the handshake ({how})"
                ))),
                _ => Watch::Keep,
            })
            .await;
        match found {
            Some(Ok(reply)) => {
                let reply = std::sync::Arc::unwrap_or_clone(reply);
                self.vars.insert("handshake".into(), reply);
                self.from_target.insert("handshake".into());
                Ok(())
            }
            Some(Err(why)) => Err(Outcome::Error(why)),
            // A target that speaks first and has not: that is for its rules to judge, and
            // what it does once it has input is judged too.
            None if self.protocol.target_speaks_first() && self.link.ended.is_none() => {
                let waited_ms = budget.as_millis() as u64;
                self.link
                    .transcript
                    .observe_target(Observation::NoGreeting { waited_ms });
                Ok(())
            }
            None => Err(Outcome::Error(format!(
                "no handshake reply within {} ms",
                budget.as_millis()
            ))),
        }
    }

    /// Skips the case when the target lacks a required capability; binds the declared values
    /// as `${capability.NAME}`.
    pub(super) fn check_capabilities(&mut self) -> Result<(), Outcome> {
        let mut declared_caps = serde_json::Map::new();
        for req in &self.case.requires {
            let Requirement::Capability(name) = req else {
                continue;
            };
            let Some(reply) = self.vars.get("handshake") else {
                return Err(Outcome::Error(format!(
                    "the case requires capability `{name}` but performs no full handshake"
                )));
            };
            let declared = self.link.session.capability(reply, name);
            if matches!(
                declared,
                None | Some(Value::Null) | Some(Value::Bool(false))
            ) {
                return Err(Outcome::Skip(format!(
                    "the target does not declare capability `{name}`"
                )));
            }
            if let Some(value) = declared {
                declared_caps.insert(name.clone(), value);
            }
        }
        self.vars
            .insert("capability".into(), Value::Object(declared_caps));
        self.from_target.insert("capability".into());
        Ok(())
    }
}

/// Judging a client, the case's connection is the client's next one.
impl CaseRun<'_> {
    /// Opens the case's connection when it judges a client: the first time, a listener and
    /// the client started against it; every time, the client's next connection accepted.
    pub(super) async fn open_served(&mut self, token: Option<&str>) -> Result<(), Outcome> {
        // A connection after the first answers a `reconnect`, whose drop the client may or may
        // not come back from: the spec leaves reconnecting to it.
        let again = self.serving.is_some();
        if self.serving.is_none() {
            let transport = self.cfg.transport_of(self.protocol);
            let shared = self.cfg.client_listener.as_ref();
            let mut serving = Serving::bind(self.protocol, transport, shared)
                .await
                .map_err(|e| Outcome::Error(e.to_string()))?;
            if self.dir.is_none() {
                self.dir = Some(CaseDir::create().map_err(|e| Outcome::Error(e.to_string()))?);
            }
            let tmp = self.dir.as_ref().map(|d| d.path().to_path_buf());
            if !self.cfg.client_command.is_empty() {
                serving
                    .launch(
                        &self.cfg.client_command,
                        token,
                        &tmp.unwrap_or_default(),
                        self.cfg.cwd.as_deref(),
                    )
                    .map_err(|e| Outcome::Error(e.to_string()))?;
            }
            self.serving = Some(serving);
        }
        let timeout = self.timeout(None);
        let Some(serving) = self.serving.as_mut() else {
            return Err(Outcome::Error("no listener for the client".into()));
        };
        let accepted = serving.accept(self.cfg.max_frame, timeout).await;
        // A harness's client (`--listen`) was handed none by us: the step's token stands.
        let token = serving.handed.clone().or_else(|| token.map(str::to_owned));
        let output = serving.output();
        // A client that could not connect usually said why on stderr.
        let last_words = output
            .iter()
            .rev()
            .find(|l| l.stream == Stream::Stderr)
            .map(|l| l.text.chars().take(200).collect::<String>());
        self.keep_output(output);
        match accepted {
            Ok((conn, opened)) => {
                // Which connection ran the case: what it asked for, and from where.
                let url = match opened.peer {
                    Some(peer) => format!("{} (from {peer})", opened.path),
                    None => opened.path.clone(),
                };
                self.link
                    .transcript
                    .observe_target(Observation::Connect { url });
                // A client handed a token: where it presented it is the protocol's to judge.
                if let Some(token) = token.filter(|t| !t.is_empty()) {
                    let at = presented_at(&opened, &token).map(str::to_owned);
                    self.link
                        .transcript
                        .observe_target(Observation::TokenPresented { at });
                }
                self.link.conn = Some(conn);
                Ok(())
            }
            Err(ServingError::NoConnection { waited_ms, .. }) if again => {
                Err(Outcome::Skip(format!(
                    "the client did not connect again within {waited_ms} ms of the drop (reconnecting is its own choice)"
                )))
            }
            Err(e) => {
                let message = match last_words {
                    Some(words) => format!("{e}; its stderr ends: {words:?}"),
                    None => e.to_string(),
                };
                self.link.transcript.observe_target(Observation::Error {
                    message: message.clone(),
                });
                Err(Outcome::Error(message))
            }
        }
    }

    /// Puts what the client under test wrote into the transcript.
    pub(super) fn keep_output(&mut self, lines: Vec<OutputLine>) {
        for line in lines {
            let observation = match line.stream {
                Stream::Stdout => Observation::Stdout { line: line.text },
                Stream::Stderr => Observation::Stderr { line: line.text },
            };
            self.link.transcript.observe_target(observation);
        }
    }
}
