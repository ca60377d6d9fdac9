//! Writes a valid HAIP transcript of N events (NDJSON on stdout), for `scripts/bench-check.sh`:
//! a handshake, then rounds of PING/PONG, a user message, and a streamed agent run.

use serde_json::{json, Value};
use std::io::{BufWriter, Write};
use wireprobe::protocol::haip::model::EVENT_TYPES;

const SESSION: &str = "223e4567-e89b-42d3-a456-426614174001";

/// Numbers and writes the messages of both sides.
struct Writer<W: Write> {
    out: W,
    seq: [u64; 2],
    ids: u64,
}

impl<W: Write> Writer<W> {
    fn uuid(&mut self) -> String {
        self.ids += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.ids)
    }

    /// Writes one message from `side` (0 client, 1 server); returns how many were written.
    fn emit(
        &mut self,
        side: usize,
        ty: &str,
        channel: &str,
        payload: Value,
        run: Option<&str>,
    ) -> std::io::Result<u64> {
        self.seq[side] += 1;
        let id = self.uuid();
        let mut event = json!({"id": id, "session": SESSION, "seq": self.seq[side].to_string(),
            "ts": (1_700_000_000_000u64 + self.seq[side]).to_string(), "channel": channel, "type": ty, "payload": payload});
        if self.seq[1 - side] > 0 {
            event["ack"] = json!(self.seq[1 - side].to_string());
        }
        if let Some(r) = run {
            event["run_id"] = json!(r);
        }
        let from = if side == 0 { "client" } else { "server" };
        serde_json::to_writer(
            &mut self.out,
            &json!({"from": from, "at_ms": self.seq[side], "event": event}),
        )?;
        self.out.write_all(b"\n")?;
        Ok(1)
    }
}

fn main() -> std::io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut w = Writer {
        out: BufWriter::with_capacity(1 << 20, std::io::stdout().lock()),
        seq: [0, 0],
        ids: 0,
    };
    let hai = json!({"haip_version": "1.1.2", "accept_major": [1], "accept_events": EVENT_TYPES});
    let mut written =
        w.emit(0, "HAI", "SYSTEM", hai.clone(), None)? + w.emit(1, "HAI", "SYSTEM", hai, None)?;
    while written < n {
        let nonce = json!({"nonce": format!("n{written}")});
        written += w.emit(0, "PING", "SYSTEM", nonce.clone(), None)?;
        written += w.emit(1, "PONG", "SYSTEM", nonce, None)?;
        let (msg, run, reply) = (w.uuid(), w.uuid(), w.uuid());
        written += w.emit(
            0,
            "TEXT_MESSAGE_START",
            "USER",
            json!({"message_id": msg, "text": "hello agent"}),
            None,
        )?;
        written += w.emit(
            0,
            "TEXT_MESSAGE_END",
            "USER",
            json!({"message_id": msg}),
            None,
        )?;
        let run = Some(run.as_str());
        written += w.emit(1, "RUN_STARTED", "AGENT", json!({}), run)?;
        written += w.emit(
            1,
            "TEXT_MESSAGE_START",
            "AGENT",
            json!({"message_id": reply, "author": "agent"}),
            run,
        )?;
        for word in ["Hello ", "from ", "the ", "agent."] {
            written += w.emit(
                1,
                "TEXT_MESSAGE_PART",
                "AGENT",
                json!({"message_id": reply, "text": word}),
                run,
            )?;
        }
        written += w.emit(
            1,
            "TEXT_MESSAGE_END",
            "AGENT",
            json!({"message_id": reply}),
            run,
        )?;
        written += w.emit(1, "RUN_FINISHED", "AGENT", json!({"status": "OK"}), run)?;
    }
    w.out.flush()
}
