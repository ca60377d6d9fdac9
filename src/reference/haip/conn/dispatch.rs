//! What the reference target does with each in-order client message, and the inbound credit
//! it grants.

use super::{Conn, Granted};
use crate::protocol::haip::model::{self, SYSTEM_CHANNEL};
use crate::reference::haip::agent::{self, Directive, RunSpec};
use crate::reference::haip::outbox::{Outgoing, AGENT_CHANNEL};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

impl Conn {
    pub(super) async fn deliver(&mut self, event: Value) {
        let f = self.config.faults.clone();
        let ty = model::event_type(&event).unwrap_or("").to_owned();
        if model::consumes_credit(&ty)
            && !self.consume_credit(&event)
            && !f.has("no-flow-enforcement")
        {
            return self
                .error(
                    "FLOW_CONTROL_VIOLATION",
                    "message beyond the credit granted on its channel",
                    Some(&event),
                )
                .await;
        }
        let run_id = event
            .get("run_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let payload_str = |k: &str| model::payload_str(&event, k).map(str::to_owned);
        match ty.as_str() {
            "PING" => {
                if f.has("no-pong") {
                    return;
                }
                let mut payload = json!({});
                if let Some(nonce) = event.pointer("/payload/nonce") {
                    payload["nonce"] = if f.has("pong-nonce") {
                        json!("wireprobe-wrong-nonce")
                    } else if f.has("bad-ping-payload") {
                        json!(42)
                    } else {
                        nonce.clone()
                    };
                }
                self.emit(Outgoing::new("PONG", SYSTEM_CHANNEL, payload))
                    .await;
            }
            "REPLAY_REQUEST" => {
                let from = event
                    .pointer("/payload/from_seq")
                    .and_then(model::parse_seq)
                    .unwrap_or(1);
                let to = event
                    .pointer("/payload/to_seq")
                    .and_then(model::parse_seq)
                    .unwrap_or(u64::MAX);
                let replay = self.outbox.as_ref().map(|o| o.replay(from, to));
                match replay {
                    Some(Ok(frames)) => self.send_frames(frames).await,
                    Some(Err(())) if !f.has("silent-replay-too-old") => {
                        let msg = format!("seq {from} is older than the replay window");
                        self.error("REPLAY_TOO_OLD", &msg, Some(&event)).await;
                    }
                    _ => {}
                }
            }
            // Variant `no-client-runs`: runs are the agent's; a client's RUN_STARTED is noted
            // and changes nothing.
            "RUN_STARTED" if self.config.variants.has("no-client-runs") => {}
            "RUN_STARTED" => {
                let Some(id) = run_id.or_else(|| payload_str("run_id")) else {
                    return self
                        .error(
                            "PROTOCOL_VIOLATION",
                            "RUN_STARTED needs a run_id",
                            Some(&event),
                        )
                        .await;
                };
                if self.seen_run(&id) {
                    return self
                        .error(
                            "PROTOCOL_VIOLATION",
                            "run_id already used in this session",
                            Some(&event),
                        )
                        .await;
                }
                if !self.room_for_run() {
                    return self
                        .error(
                            "RUN_LIMIT_EXCEEDED",
                            "max_concurrent_runs reached",
                            Some(&event),
                        )
                        .await;
                }
                self.note_run(&id);
                self.runs.insert(id, None);
            }
            "RUN_CANCEL" => {
                let id = run_id.or_else(|| payload_str("run_id")).unwrap_or_default();
                if f.has("ignores-run-cancel") && self.runs.contains_key(&id) {
                    return;
                }
                match self.runs.remove(&id) {
                    Some(Some(cancel)) => {
                        let _ = cancel.send(());
                        // The run task reports its own end; keep it open until then.
                        self.runs.insert(id, None);
                    }
                    Some(None) => {
                        let end = Outgoing::new(
                            "RUN_FINISHED",
                            AGENT_CHANNEL,
                            json!({"status": "CANCELLED"}),
                        );
                        self.emit(end.in_run(Some(&id))).await;
                    }
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "RUN_CANCEL names no open run",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "RUN_FINISHED" | "RUN_ERROR" => {
                if let Some(id) = run_id {
                    self.runs.remove(&id);
                }
            }
            "TEXT_MESSAGE_START" => {
                let id = payload_str("message_id").unwrap_or_default();
                self.texts
                    .insert(id, (payload_str("text").unwrap_or_default(), run_id));
            }
            "TEXT_MESSAGE_PART" => {
                let id = payload_str("message_id").unwrap_or_default();
                match self.texts.get_mut(&id) {
                    Some((text, _)) if text.len() < 1 << 20 => {
                        text.push_str(&payload_str("text").unwrap_or_default())
                    }
                    Some(_) => {}
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "TEXT_MESSAGE_PART for a message never started",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "TEXT_MESSAGE_END" => {
                let id = payload_str("message_id").unwrap_or_default();
                match self.texts.remove(&id) {
                    Some((text, start_run)) => {
                        self.on_user_message(&text, start_run.or(run_id), &event)
                            .await
                    }
                    None => {
                        self.error(
                            "PROTOCOL_VIOLATION",
                            "TEXT_MESSAGE_END for a message never started",
                            Some(&event),
                        )
                        .await
                    }
                }
            }
            "AUDIO_CHUNK" => {
                if let Some(len) = event.get("bin_len").and_then(Value::as_u64) {
                    if event.pointer("/payload/data").is_some() {
                        return self
                            .error(
                                "PROTOCOL_VIOLATION",
                                "a binary-mode envelope must not contain data",
                                Some(&event),
                            )
                            .await;
                    }
                    self.owed_binary = Some(len);
                } else if model::media_bytes(&event).is_none() {
                    self.error(
                        "PROTOCOL_VIOLATION",
                        "payload.data is not valid Base64",
                        Some(&event),
                    )
                    .await;
                }
            }
            "TOOL_CALL" => {
                let call_id = payload_str("call_id").unwrap_or_default();
                if self.tools.contains_key(&call_id) {
                    return self
                        .error("PROTOCOL_VIOLATION", "call_id already in use", Some(&event))
                        .await;
                }
                let tool = payload_str("tool").unwrap_or_default();
                let params = event
                    .pointer("/payload/params")
                    .cloned()
                    .unwrap_or(json!({}));
                let (cancel_tx, cancel_rx) = oneshot::channel();
                self.tools.insert(call_id.clone(), cancel_tx);
                let config = self.config.clone();
                let tx = self.internal_tx.clone();
                self.tasks.spawn(async move {
                    agent::call_tool(call_id, tool, params, &config, tx, cancel_rx).await
                });
            }
            "TOOL_CANCEL" => {
                // Cancelling a call that already ended is a harmless race: nothing to do.
                if let Some(cancel) = payload_str("call_id").and_then(|id| self.tools.remove(&id)) {
                    let _ = cancel.send(());
                }
            }
            "FLOW_UPDATE" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    let m = event
                        .pointer("/payload/add_messages")
                        .and_then(Value::as_i64);
                    let b = event.pointer("/payload/add_bytes").and_then(Value::as_i64);
                    o.grant(&ch, m, b);
                }
                self.flush().await;
            }
            "PAUSE_CHANNEL" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    o.pause(&ch);
                }
            }
            "RESUME_CHANNEL" => {
                if let (Some(ch), Some(o)) = (payload_str("channel"), self.outbox.as_mut()) {
                    o.resume(&ch);
                }
                self.flush().await;
            }
            "PONG" if f.has("errors-on-pong") => {
                let msg = "Unknown message type: PONG";
                self.error("UNSUPPORTED_TYPE", msg, Some(&event)).await;
            }
            // PONG, ERROR, a later HAI, and tool events for calls we never make need no answer.
            _ => {}
        }
    }

    fn seen_run(&self, id: &str) -> bool {
        self.outbox
            .as_ref()
            .is_some_and(|o| o.state.lock().is_ok_and(|s| s.run_ids.contains(id)))
    }

    fn note_run(&self, id: &str) {
        if let Some(Ok(mut s)) = self.outbox.as_ref().map(|o| o.state.lock()) {
            s.run_ids.insert(id.to_owned());
        }
    }

    fn room_for_run(&self) -> bool {
        self.runs.len() < self.config.max_concurrent_runs || self.config.faults.has("no-run-limit")
    }

    async fn on_user_message(&mut self, text: &str, run_id: Option<String>, event: &Value) {
        let f = self.config.faults.clone();
        let (run_id, announce) = match run_id.filter(|id| matches!(self.runs.get(id), Some(None))) {
            Some(id) => (id, false),
            None => {
                if !self.room_for_run() {
                    return self
                        .error(
                            "RUN_LIMIT_EXCEEDED",
                            "max_concurrent_runs reached",
                            Some(event),
                        )
                        .await;
                }
                let id = if f.has("run-id-reuse") {
                    "00000000-0000-4000-8000-000000000001".to_owned()
                } else {
                    self.config.fresh_id()
                };
                (id, true)
            }
        };
        self.note_run(&run_id);
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.runs.insert(run_id.clone(), Some(cancel_tx));
        let binary_ok = self.outbox.as_ref().is_some_and(|o| o.client.binary_frames);
        let spec = RunSpec {
            run_id,
            announce,
            directive: Directive::parse(text),
            binary_ok,
            config: self.config.clone(),
        };
        self.tasks
            .spawn(agent::run(spec, self.internal_tx.clone(), cancel_rx));
    }

    /// Takes one message's credit; false when the client had none left.
    fn consume_credit(&mut self, event: &Value) -> bool {
        let channel = event
            .get("channel")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let bytes = model::media_bytes(event).unwrap_or(0) as i64;
        let (m, b) = (
            self.config.initial_credit_messages as i64,
            self.config.initial_credit_bytes as i64,
        );
        let g = self.granted.entry(channel).or_insert(Granted {
            messages: m,
            bytes: b,
            used_since_grant: 0,
            last_arrival: Instant::now(),
        });
        g.messages -= 1;
        g.bytes -= bytes;
        g.used_since_grant += 1;
        g.last_arrival = Instant::now();
        g.messages >= 0 && g.bytes >= 0
    }

    /// Grants credit back on channels that went idle after using half of it.
    pub(super) async fn refill(&mut self) {
        let half = (self.config.initial_credit_messages / 2).max(1);
        let idle = self.config.credit_refill_idle;
        let zero = self.config.faults.has("zero-credit-grant");
        let mut grants = Vec::new();
        for (channel, g) in &mut self.granted {
            if g.used_since_grant >= half && g.last_arrival.elapsed() >= idle && g.messages >= 0 {
                let add = g.used_since_grant;
                g.messages += add as i64;
                g.used_since_grant = 0;
                grants
                    .push(json!({"channel": channel, "add_messages": if zero { 0 } else { add }}));
            }
        }
        for payload in grants {
            self.emit(Outgoing::new("FLOW_UPDATE", SYSTEM_CHANNEL, payload))
                .await;
        }
    }
}
