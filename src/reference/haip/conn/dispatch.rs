//! What the reference target does with each in-order client message: one handler per event
//! type, after the message's credit is taken (`credit.rs`).

use super::Conn;
use crate::protocol::haip::model::{self, AGENT_CHANNEL, SYSTEM_CHANNEL};
use crate::reference::haip::agent::{self, Plan, RunSpec};
use crate::reference::haip::outbox::Outgoing;
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// A field of the payload, owned.
fn payload_string(event: &Value, field: &str) -> Option<String> {
    model::payload_str(event, field).map(str::to_owned)
}

/// The run a message names: its envelope's `run_id`.
fn envelope_run(event: &Value) -> Option<String> {
    event
        .get("run_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

impl Conn {
    pub(super) async fn deliver(&mut self, event: Value) {
        let ty = model::event_type(&event).unwrap_or("").to_owned();
        if model::consumes_credit(&ty)
            && !self.consume_credit(&event)
            && !self.config.faults.has("no-flow-enforcement")
        {
            return self
                .error(
                    "FLOW_CONTROL_VIOLATION",
                    "message beyond the credit granted on its channel",
                    Some(&event),
                )
                .await;
        }
        match ty.as_str() {
            "PING" => self.on_ping(&event).await,
            "REPLAY_REQUEST" => self.on_replay_request(&event).await,
            "RUN_STARTED" => self.on_run_started(&event).await,
            "RUN_CANCEL" => self.on_run_cancel(&event).await,
            "RUN_FINISHED" | "RUN_ERROR" => {
                if let Some(id) = envelope_run(&event) {
                    self.runs.remove(&id);
                }
            }
            "TEXT_MESSAGE_START" => self.on_text_start(&event),
            "TEXT_MESSAGE_PART" => self.on_text_part(&event).await,
            "TEXT_MESSAGE_END" => self.on_text_end(&event).await,
            "AUDIO_CHUNK" => self.on_audio_chunk(&event).await,
            "TOOL_CALL" => self.on_tool_call(&event).await,
            "TOOL_CANCEL" => {
                // Cancelling a call that already ended is a harmless race: nothing to do.
                let call = payload_string(&event, "call_id");
                if let Some(cancel) = call.and_then(|id| self.tools.remove(&id)) {
                    let _ = cancel.send(());
                }
            }
            "FLOW_UPDATE" | "PAUSE_CHANNEL" | "RESUME_CHANNEL" => {
                self.on_flow_control(&ty, &event).await
            }
            // As the public server does: the ERROR names no message and acknowledges none.
            "PONG" if self.config.faults.has("errors-on-pong") => {
                let payload =
                    json!({"code": "UNSUPPORTED_TYPE", "message": "Unknown message type: PONG"});
                let mut refusal = Outgoing::new("ERROR", SYSTEM_CHANNEL, payload);
                refusal.acknowledges = false;
                self.emit(refusal).await;
            }
            // PONG, ERROR, a later HAI, and tool events for calls we never make need no answer.
            _ => {}
        }
    }

    async fn on_ping(&mut self, event: &Value) {
        let f = &self.config.faults;
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

    async fn on_replay_request(&mut self, event: &Value) {
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
            Some(Err(())) if !self.config.faults.has("silent-replay-too-old") => {
                let msg = format!("seq {from} is older than the replay window");
                self.error("REPLAY_TOO_OLD", &msg, Some(event)).await;
            }
            _ => {}
        }
    }

    async fn on_run_started(&mut self, event: &Value) {
        // Variant `no-client-runs`: runs are the agent's; a client's RUN_STARTED is noted and
        // changes nothing.
        if self.config.variants.has("no-client-runs") {
            return;
        }
        let Some(id) = envelope_run(event).or_else(|| payload_string(event, "run_id")) else {
            return self
                .error(
                    "PROTOCOL_VIOLATION",
                    "RUN_STARTED needs a run_id",
                    Some(event),
                )
                .await;
        };
        if self.seen_run(&id) {
            return self
                .error(
                    "PROTOCOL_VIOLATION",
                    "run_id already used in this session",
                    Some(event),
                )
                .await;
        }
        if !self.room_for_run_or_refuse(event).await {
            return;
        }
        self.note_run(&id);
        self.runs.insert(id, None);
    }

    async fn on_run_cancel(&mut self, event: &Value) {
        let id = envelope_run(event)
            .or_else(|| payload_string(event, "run_id"))
            .unwrap_or_default();
        if self.config.faults.has("ignores-run-cancel") && self.runs.contains_key(&id) {
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
            // A run already over (its end may have crossed the cancel) or never started: the
            // spec names no answer and the cancel breaks no rule, so an ERROR claiming a
            // violation would break HAIP-ERR-004. Nothing is left to cancel, unless the cancel
            // itself is broken: it names its run in the envelope and the payload (HAIP-RUN-003).
            None if envelope_run(event).is_some() && payload_string(event, "run_id").is_some() => {}
            None => {
                self.error(
                    "PROTOCOL_VIOLATION",
                    "RUN_CANCEL lacks run_id in the envelope or the payload",
                    Some(event),
                )
                .await
            }
        }
    }

    fn on_text_start(&mut self, event: &Value) {
        let id = payload_string(event, "message_id").unwrap_or_default();
        let text = payload_string(event, "text").unwrap_or_default();
        self.texts.insert(id, (text, envelope_run(event)));
    }

    async fn on_text_part(&mut self, event: &Value) {
        let id = payload_string(event, "message_id").unwrap_or_default();
        match self.texts.get_mut(&id) {
            Some((text, _)) if text.len() < 1 << 20 => {
                text.push_str(&payload_string(event, "text").unwrap_or_default())
            }
            Some(_) => {}
            None => self.never_started(event).await,
        }
    }

    async fn on_text_end(&mut self, event: &Value) {
        let id = payload_string(event, "message_id").unwrap_or_default();
        match self.texts.remove(&id) {
            Some((text, start_run)) => {
                self.on_user_message(&text, start_run.or(envelope_run(event)), event)
                    .await
            }
            None => self.never_started(event).await,
        }
    }

    /// A text part or end naming a message the client never started.
    async fn never_started(&mut self, event: &Value) {
        let ty = model::event_type(event).unwrap_or("");
        let msg = format!("{ty} for a message never started");
        self.error("PROTOCOL_VIOLATION", &msg, Some(event)).await
    }

    async fn on_audio_chunk(&mut self, event: &Value) {
        if let Some(len) = event.get("bin_len").and_then(Value::as_u64) {
            if event.pointer("/payload/data").is_some() {
                return self
                    .error(
                        "PROTOCOL_VIOLATION",
                        "a binary-mode envelope must not contain data",
                        Some(event),
                    )
                    .await;
            }
            self.owed_binary = Some(len);
        } else if model::media_bytes(event).is_none() {
            self.error(
                "PROTOCOL_VIOLATION",
                "payload.data is not valid Base64",
                Some(event),
            )
            .await;
        }
    }

    async fn on_tool_call(&mut self, event: &Value) {
        let call_id = payload_string(event, "call_id").unwrap_or_default();
        if self.tools.contains_key(&call_id) {
            return self
                .error("PROTOCOL_VIOLATION", "call_id already in use", Some(event))
                .await;
        }
        let tool = payload_string(event, "tool").unwrap_or_default();
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

    /// FLOW_UPDATE, PAUSE_CHANNEL, RESUME_CHANNEL: what the client lets us send.
    async fn on_flow_control(&mut self, ty: &str, event: &Value) {
        let channel = payload_string(event, "channel");
        if let (Some(ch), Some(o)) = (channel.clone(), self.outbox.as_mut()) {
            match ty {
                "FLOW_UPDATE" => {
                    let m = event
                        .pointer("/payload/add_messages")
                        .and_then(Value::as_i64);
                    let b = event.pointer("/payload/add_bytes").and_then(Value::as_i64);
                    o.grant(&ch, m, b);
                }
                "PAUSE_CHANNEL" => o.pause(&ch),
                _ => o.resume(&ch),
            }
        }
        if ty != "PAUSE_CHANNEL" {
            self.flush().await;
            return;
        }
        // A pause holds what credit counts, and a PING is not counted (ERRATA 9): it goes out
        // on the paused channel at once.
        let pings = self.config.variants.has("pings-paused-channels");
        if let Some(ch) = channel.filter(|_| pings) {
            let payload = json!({"nonce": "wireprobe-paused"});
            self.emit(Outgoing::new("PING", &ch, payload)).await;
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

    /// True when another run may open; else `event`, which would open one, is refused with
    /// RUN_LIMIT_EXCEEDED.
    async fn room_for_run_or_refuse(&mut self, event: &Value) -> bool {
        let room = self.runs.len() < self.config.max_concurrent_runs
            || self.config.faults.has("no-run-limit");
        if !room {
            let message = "max_concurrent_runs reached";
            self.error("RUN_LIMIT_EXCEEDED", message, Some(event)).await;
        }
        room
    }

    async fn on_user_message(&mut self, text: &str, run_id: Option<String>, event: &Value) {
        let f = self.config.faults.clone();
        let (run_id, announce) = match run_id.filter(|id| matches!(self.runs.get(id), Some(None))) {
            Some(id) => (id, false),
            None => {
                if !self.room_for_run_or_refuse(event).await {
                    return;
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
        // Announced as the message is taken in, before the next frame is read: a PING behind
        // the message is answered after the run it began, as the run's first event.
        if announce {
            let started = Outgoing::new("RUN_STARTED", AGENT_CHANNEL, json!({}));
            self.emit(started.in_run(Some(&run_id))).await;
        }
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.runs.insert(run_id.clone(), Some(cancel_tx));
        let binary_ok = self.outbox.as_ref().is_some_and(|o| o.client.binary_frames);
        let spec = RunSpec {
            run_id,
            plan: Plan::of(text),
            binary_ok,
            config: self.config.clone(),
        };
        self.tasks
            .spawn(agent::run(spec, self.internal_tx.clone(), cancel_rx));
    }
}
