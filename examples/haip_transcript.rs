//! Writes a valid HAIP transcript of N events (NDJSON on stdout), for `scripts/bench-check.sh`:
//! a handshake, then rounds of PING/PONG, a user message, and a streamed agent run.

use serde_json::json;
use std::io::{BufWriter, Write};

struct Side {
    seq: u64,
}

fn main() -> std::io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let session = "223e4567-e89b-42d3-a456-426614174001";
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let (mut client, mut server) = (Side { seq: 0 }, Side { seq: 0 });
    let mut written = 0u64;
    let mut counter = 0u64;
    let mut uuid = || {
        counter += 1;
        format!("00000000-0000-4000-8000-{counter:012x}")
    };
    let mut emit = |from: &str,
                    side: &mut Side,
                    peer_seq: u64,
                    ty: &str,
                    channel: &str,
                    payload: serde_json::Value,
                    run: Option<&str>,
                    id: String|
     -> std::io::Result<()> {
        side.seq += 1;
        let mut event = json!({"id": id, "session": session, "seq": side.seq.to_string(), "ts": (1_700_000_000_000u64 + side.seq).to_string(),
                               "channel": channel, "type": ty, "payload": payload});
        if peer_seq > 0 {
            event["ack"] = json!(peer_seq.to_string());
        }
        if let Some(r) = run {
            event["run_id"] = json!(r);
        }
        serde_json::to_writer(
            &mut out,
            &json!({"from": from, "at_ms": side.seq, "event": event}),
        )?;
        out.write_all(b"\n")
    };
    let all = wireprobe::protocol::haip::model::EVENT_TYPES;
    let hai = json!({"haip_version": "1.1.2", "accept_major": [1], "accept_events": all});
    emit(
        "client",
        &mut client,
        0,
        "HAI",
        "SYSTEM",
        hai.clone(),
        None,
        uuid(),
    )?;
    emit(
        "server",
        &mut server,
        client.seq,
        "HAI",
        "SYSTEM",
        hai,
        None,
        uuid(),
    )?;
    written += 2;
    while written < n {
        emit(
            "client",
            &mut client,
            server.seq,
            "PING",
            "SYSTEM",
            json!({"nonce": format!("n{written}")}),
            None,
            uuid(),
        )?;
        emit(
            "server",
            &mut server,
            client.seq,
            "PONG",
            "SYSTEM",
            json!({"nonce": format!("n{written}")}),
            None,
            uuid(),
        )?;
        let msg = uuid();
        emit(
            "client",
            &mut client,
            server.seq,
            "TEXT_MESSAGE_START",
            "USER",
            json!({"message_id": msg, "text": "hello agent"}),
            None,
            uuid(),
        )?;
        emit(
            "client",
            &mut client,
            server.seq,
            "TEXT_MESSAGE_END",
            "USER",
            json!({"message_id": msg}),
            None,
            uuid(),
        )?;
        let run = uuid();
        let reply = uuid();
        emit(
            "server",
            &mut server,
            client.seq,
            "RUN_STARTED",
            "AGENT",
            json!({}),
            Some(&run),
            uuid(),
        )?;
        emit(
            "server",
            &mut server,
            client.seq,
            "TEXT_MESSAGE_START",
            "AGENT",
            json!({"message_id": reply, "author": "agent"}),
            Some(&run),
            uuid(),
        )?;
        for word in ["Hello ", "from ", "the ", "agent."] {
            emit(
                "server",
                &mut server,
                client.seq,
                "TEXT_MESSAGE_PART",
                "AGENT",
                json!({"message_id": reply, "text": word}),
                Some(&run),
                uuid(),
            )?;
        }
        emit(
            "server",
            &mut server,
            client.seq,
            "TEXT_MESSAGE_END",
            "AGENT",
            json!({"message_id": reply}),
            Some(&run),
            uuid(),
        )?;
        emit(
            "server",
            &mut server,
            client.seq,
            "RUN_FINISHED",
            "AGENT",
            json!({"status": "OK"}),
            Some(&run),
            uuid(),
        )?;
        written += 11;
    }
    out.flush()
}
