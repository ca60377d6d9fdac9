//! The turns that ask the UI and wait for its answer: a permission before a tool call, and a
//! continuation past the iterations a turn was given.

use super::{Step, Turn, CONTINUATION_SOURCE, PERMISSION_SOURCE};
use crate::reference::directive::MAX_ITERATIONS;
use crate::reference::hpd::envelope::AskKind;
use serde_json::{json, Value};

impl Turn {
    /// `wireprobe: permission NAME`: ask, then run the call or report the denial.
    pub(super) async fn permission(&mut self, name: &str, own: bool) -> Step {
        self.begin_iteration(1)?;
        let permission_id = self.s.fresh_id("perm");
        let call = self.s.fresh_id("call");
        let (_pending, answer) = self.s.ask(AskKind::Permission, &permission_id);
        // As the framework does: the model's call is streamed before the middleware asks.
        let announced = self.variant("denial-as-result");
        if announced {
            let message = self.s.fresh_id("msg");
            self.send(
                "TOOL_CALL_START",
                json!({"callId": call, "name": name, "messageId": message}),
            );
            self.send("TOOL_CALL_ARGS", json!({"callId": call, "argsJson": "{}"}));
        }
        self.emit(
            "PERMISSION_REQUEST",
            json!({
                "permissionId": permission_id,
                "sourceName": PERMISSION_SOURCE,
                "functionName": name,
                "description": format!("The agent wants to call {name}."),
                "callId": call,
                "arguments": {},
            }),
        )?;
        let answer = self.wait(answer).await?;
        let approved = answer
            .as_ref()
            .and_then(|a| a.get("approved"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let outcome = !self.fault("no-permission-outcome");
        if approved {
            if outcome {
                self.emit(
                    "PERMISSION_APPROVED",
                    json!({"permissionId": permission_id, "sourceName": PERMISSION_SOURCE}),
                )?;
            }
            self.tool_call(&call, name, &json!({}))?;
            self.end_iteration();
            self.begin_iteration(2)?;
            let said = if own {
                "All done."
            } else {
                "The approved call ran."
            };
            self.text(said).await
        } else {
            let reason = match &answer {
                Some(body) => body
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("denied by the user")
                    .to_owned(),
                None => "no response in time".to_owned(),
            };
            if outcome {
                self.emit(
                    "PERMISSION_DENIED",
                    json!({
                        "permissionId": permission_id,
                        "sourceName": PERMISSION_SOURCE,
                        "callId": call,
                        "reason": reason,
                    }),
                )?;
            }
            if self.fault("denied-permission-runs") || self.fault("denied-runs-text-tool") {
                self.tool_call(&call, name, &json!({}))?;
            } else if announced {
                // The framework closes a denied call with the denial's text as its result.
                self.send("TOOL_CALL_END", json!({"callId": call}));
                self.send(
                    "TOOL_CALL_RESULT",
                    json!({"callId": call, "result": reason}),
                );
            }
            let said = if own {
                "I will not do that, then."
            } else {
                "Permission was denied, so the call did not run."
            };
            self.text(said).await
        }
    }

    /// `wireprobe: continue N`: N agent turns, a continuation request, and more on approval.
    pub(super) async fn continuation(&mut self, n: u32, own: bool) -> Step {
        for i in 1..=n {
            self.iteration_text(i, n, own).await?;
        }
        let id = self.s.fresh_id("cont");
        let (_pending, answer) = self.s.ask(AskKind::Continuation, &id);
        self.emit(
            "CONTINUATION_REQUEST",
            json!({
                "continuationId": id,
                "sourceName": CONTINUATION_SOURCE,
                "currentIteration": n,
                "maxIterations": n,
            }),
        )?;
        let Some(answer) = self.wait(answer).await? else {
            return Ok(());
        };
        if answer.get("approved").and_then(Value::as_bool) != Some(true) {
            return Ok(());
        }
        let extra = answer
            .get("extensionAmount")
            .and_then(Value::as_u64)
            .map_or(1, |e| e.clamp(1, u64::from(MAX_ITERATIONS)));
        let last = n + u32::try_from(extra).unwrap_or(MAX_ITERATIONS);
        for i in n + 1..=last {
            self.iteration_text(i, last, own).await?;
        }
        Ok(())
    }
}
