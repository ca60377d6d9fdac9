//! What a target answers to input wireprobe sent broken on purpose is judged only by the rules
//! about broken input, and broken input changes nothing the checker expects of the target.
//! Each protocol's careful answer to a broken input is judged clean; the same answer where
//! nothing was broken is still a violation, so the excuse covers no more than it should.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use wireprobe::check::check_stream;
use wireprobe::protocol;
use wireprobe::transcript::Direction;

/// The rules the server side broke in `lines` (transcript lines), with how often.
fn server_findings(protocol: &str, lines: &[Value]) -> BTreeMap<String, u64> {
    let p = protocol::get(protocol).expect("protocol");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut found = BTreeMap::new();
    let summary = check_stream(p, text.as_bytes(), Default::default(), |f| {
        if f.from == Direction::Server {
            *found.entry(f.violation.rule.to_owned()).or_insert(0) += 1;
        }
    })
    .expect("reads");
    assert_eq!(summary.bad_line_count, 0, "{:?}", summary.bad_lines);
    found
}

fn event(from: &str, frame: Value) -> Value {
    json!({"from": from, "frame": frame})
}

fn observed(from: &str, observation: Value) -> Value {
    json!({"from": from, "observed": observation})
}

fn connect() -> Value {
    observed("client", json!({"connect": {"url": "ws://127.0.0.1:1/"}}))
}

// --- HAIP -----------------------------------------------------------------------------------

const SESSION: &str = "4659248c-85c9-44b6-9666-063f1b0ab6ba";

/// A HAIP envelope with the `n`th UUID as its id.
fn haip(n: u32, seq: u32, channel: &str, ty: &str, payload: Value) -> Value {
    json!({"id": format!("00000000-0000-4000-8000-{n:012}"), "session": SESSION,
        "seq": seq.to_string(), "ts": "1795417816125", "channel": channel, "type": ty,
        "payload": payload})
}

fn in_run(run: &str, mut event: Value) -> Value {
    event["run_id"] = json!(run);
    event
}

fn hai(n: u32, credit: u64) -> Value {
    haip(
        n,
        1,
        "SYSTEM",
        "HAI",
        json!({"haip_version": "1.1.2", "accept_major": [1],
            "accept_events": ["HAI", "RUN_STARTED", "RUN_FINISHED", "PING", "PONG",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_PART", "TEXT_MESSAGE_END", "ERROR",
                "FLOW_UPDATE"],
            "capabilities": {"flow_control": {"initial_credit_messages": credit}}}),
    )
}

fn haip_error(n: u32, seq: u32, channel: &str, related_id: &str) -> Value {
    haip(
        n,
        seq,
        channel,
        "ERROR",
        json!({"code": "PROTOCOL_VIOLATION", "message": "bad message", "related_id": related_id}),
    )
}

/// A FLOW_UPDATE granting -5 (the schema's minimum is 1) grants nothing: the server's credit
/// is the 6 the HAI gave, and its run on that channel spends 2 of it. Taken as a grant, it
/// would leave 1.
#[test]
fn haip_a_refused_flow_update_grants_nothing() {
    let run = "11111111-1111-4111-8111-111111111111";
    let lines = [
        connect(),
        event("client", hai(1, 6)),
        event("server", hai(2, 64)),
        event(
            "client",
            haip(
                3,
                2,
                "SYSTEM",
                "FLOW_UPDATE",
                json!({"channel": "agent", "add_messages": -5}),
            ),
        ),
        event(
            "server",
            haip_error(4, 2, "SYSTEM", "00000000-0000-4000-8000-000000000003"),
        ),
        event(
            "server",
            in_run(run, haip(5, 3, "agent", "RUN_STARTED", json!({}))),
        ),
        event(
            "server",
            in_run(
                run,
                haip(
                    6,
                    4,
                    "agent",
                    "TEXT_MESSAGE_START",
                    json!({"message_id": "m1", "author": "agent"}),
                ),
            ),
        ),
    ];
    let found = server_findings("haip", &lines);
    assert!(!found.contains_key("HAIP-FLOW-001"), "{found:?}");
}

/// An ERROR answering a malformed message may name it by the id it had and go out on the
/// channel it named; the same ERROR where nothing was malformed breaks the schema.
#[test]
fn haip_an_error_echoing_a_malformed_message_is_judged_as_an_error() {
    let mut ping = haip(3, 2, "bad channel!", "PING", json!({"nonce": "n1"}));
    ping["id"] = json!("not-a-uuid");
    let echo = haip_error(4, 2, "bad channel!", "not-a-uuid");
    let answered = [
        connect(),
        event("client", hai(1, 64)),
        event("server", hai(2, 64)),
        event("client", ping),
        event("server", echo.clone()),
    ];
    assert_eq!(server_findings("haip", &answered), BTreeMap::new());

    let unprovoked = [
        connect(),
        event("client", hai(1, 64)),
        event("server", hai(2, 64)),
        event("server", echo),
    ];
    let found = server_findings("haip", &unprovoked);
    assert!(found.contains_key("HAIP-ERR-002"), "{found:?}");
    assert!(found.contains_key("HAIP-ENV-004"), "{found:?}");
}

/// A broken message excuses one answer, not more: the binary frame an envelope announced is
/// no broken input, so a second ERROR on a bad channel after it is judged.
#[test]
fn haip_an_announced_binary_frame_is_not_broken_input() {
    let mut bad_ping = haip(3, 2, "SYSTEM", "PING", json!({"nonce": "n1"}));
    bad_ping["ts"] = json!("yesterday");
    let mut audio = haip(
        5,
        3,
        "USER",
        "AUDIO_CHUNK",
        json!({"message_id": "00000000-0000-4000-8000-000000000099", "mime": "audio/opus"}),
    );
    audio["bin_len"] = json!(2);
    audio["bin_mime"] = json!("audio/opus");
    let with_audio = |mut hai: Value| {
        hai["payload"]["capabilities"]["binary_frames"] = json!(true);
        if let Some(events) = hai["payload"]["accept_events"].as_array_mut() {
            events.push(json!("AUDIO_CHUNK"));
        }
        hai
    };
    let hai_binary = with_audio(hai(1, 64));
    let server_hai = with_audio(hai(2, 64));
    let lines = [
        connect(),
        event("client", hai_binary),
        event("server", server_hai),
        event("client", bad_ping),
        event(
            "server",
            haip_error(4, 2, "bad channel!", "00000000-0000-4000-8000-000000000003"),
        ),
        event("client", audio),
        observed("client", json!({"binary": {"base64": "AAE=", "len": 2}})),
        event(
            "server",
            haip_error(6, 3, "bad channel!", "00000000-0000-4000-8000-000000000005"),
        ),
    ];
    let found = server_findings("haip", &lines);
    assert_eq!(found.get("HAIP-ENV-004"), Some(&1), "{found:?}");
}

// --- HUMA -----------------------------------------------------------------------------------

fn sio(from: &str, channel: &str, payload: Value) -> Value {
    let text = format!("42{}", json!([channel, payload]));
    observed(from, json!({"text": {"text": text, "len": text.len()}}))
}

/// A tool-result the server must reject leaves its call outstanding: cancelling that call
/// later is right, not a cancel of a call that was never open.
#[test]
fn huma_an_invalid_tool_result_leaves_the_call_outstanding() {
    let call = "6f1c6a3e-1d2b-4c9a-9a51-2f1e0b7c8d90";
    let lines = [
        connect(),
        sio(
            "server",
            "event",
            json!({"type": "tool-call", "toolCallId": call, "toolName": "ask", "arguments": {}}),
        ),
        sio(
            "client",
            "message",
            json!({"type": "tool-result", "triggering": false, "toolCallId": call,
                "toolName": "ask", "outcome": "done", "result": "x"}),
        ),
        sio(
            "server",
            "error",
            json!({"type": "error", "code": "INVALID_EVENT", "message": "outcome is invalid"}),
        ),
        sio(
            "client",
            "message",
            json!({"type": "context-update", "triggering": true, "name": "n", "description": "d", "context": {"a": 1}}),
        ),
        sio(
            "server",
            "event",
            json!({"type": "cancel-tool-call", "toolCallId": call, "toolName": "ask", "reason": "new context"}),
        ),
    ];
    let found = server_findings("huma", &lines);
    assert!(!found.contains_key("HUMA-SRV-003"), "{found:?}");
}

// --- Nuum -----------------------------------------------------------------------------------

const NUUM_SESSION: &str = "nuum_B658EB64882C43E2A3111E228B";

fn nuum(from: &str, mut line: Value) -> Value {
    if from == "server" {
        line["session_id"] = json!(NUUM_SESSION);
    }
    event(from, line)
}

fn nuum_turn_output() -> [Value; 2] {
    [
        nuum(
            "server",
            json!({"type": "assistant", "message": {"role": "assistant",
                "content": [{"type": "text", "text": "the alarm rang"}], "model": "m"}}),
        ),
        nuum(
            "server",
            json!({"type": "result", "subtype": "success", "duration_ms": 0, "is_error": false,
                "num_turns": 1, "result": "the alarm rang",
                "usage": {"input_tokens": 0, "output_tokens": 0}}),
        ),
    ]
}

/// A user line the process must refuse starts no turn: a turn the process starts on its own
/// afterwards (an alarm firing) owes no turn_accepted.
#[test]
fn nuum_a_refused_user_line_starts_no_turn() {
    let mut lines = vec![
        connect(),
        nuum(
            "server",
            json!({"type": "system", "subtype": "init", "version": "0.1.0", "tools": []}),
        ),
        nuum(
            "client",
            json!({"type": "user", "message": {"role": "assistant", "content": "x"}}),
        ),
        nuum(
            "server",
            json!({"type": "system", "subtype": "error", "message": "role must be user"}),
        ),
    ];
    lines.extend(nuum_turn_output());
    let found = server_findings("nuum", &lines);
    assert!(!found.contains_key("NUUM-TURN-001"), "{found:?}");

    // The same output after a valid user line is a turn that was never accepted.
    lines[2] = nuum(
        "client",
        json!({"type": "user", "message": {"role": "user", "content": "x"}}),
    );
    lines.remove(3);
    let found = server_findings("nuum", &lines);
    assert!(found.contains_key("NUUM-TURN-001"), "{found:?}");
}

// --- HPD ------------------------------------------------------------------------------------

fn post(path: &str, body: Value) -> Value {
    observed(
        "client",
        json!({"post": {"path": path, "body": {"json": body}}}),
    )
}

fn http(path: &str, status: u16) -> Value {
    observed(
        "server",
        json!({"http": {"method": "POST", "path": path, "status": status}}),
    )
}

/// An input of a known type whose envelope is wrong may be refused: the spec does not say
/// which envelope faults make a bad request. A valid input refused is still HPD-IN-003.
#[test]
fn hpd_an_input_with_a_broken_body_may_be_refused() {
    let route = "/inputs";
    let refused_broken = [
        connect(),
        post(route, json!({"version": "1.0", "type": "USER_TEXT_INPUT"})),
        http(route, 400),
    ];
    assert_eq!(server_findings("hpd", &refused_broken), BTreeMap::new());

    let refused_valid = [
        connect(),
        post(
            route,
            json!({"version": "1.0", "type": "USER_TEXT_INPUT", "text": "hi"}),
        ),
        http(route, 400),
    ];
    let found = server_findings("hpd", &refused_valid);
    assert!(found.contains_key("HPD-IN-003"), "{found:?}");
}

/// Over the WebSocket the agent closes over the first frame it cannot take: 1007 for text
/// that is not an envelope, even when a binary frame (1008) followed it.
#[test]
fn hpd_the_first_unacceptable_frame_names_the_close_code() {
    let text = "not json";
    let lines = [
        observed("client", json!({"connect": {"url": "ws://127.0.0.1:1/ws"}})),
        observed("client", json!({"text": {"text": text, "len": text.len()}})),
        observed("client", json!({"binary": {"base64": "AAE=", "len": 2}})),
        observed("server", json!({"close": {"code": 1007, "reason": ""}})),
    ];
    assert_eq!(server_findings("hpd", &lines), BTreeMap::new());
}

// --- UAE ------------------------------------------------------------------------------------

fn uae(ty: &str, trace: Option<&str>, payload: Value) -> Value {
    let mut e = json!({"type": ty, "id": format!("evt_{}", uuid::Uuid::new_v4().simple()),
        "ts": "2026-01-08T12:34:56.789Z", "session_id": "sess_1", "payload": payload});
    if let Some(trace) = trace {
        e["trace_id"] = json!(trace);
    }
    e
}

/// An executor refusing a call that had no trace_id cannot name the call's trace; where the
/// call had one, a result naming another is UAE-RES-002.
#[test]
fn uae_a_refusal_of_a_call_without_trace_names_no_call() {
    let refusal = uae(
        "tool.result",
        Some("tr_new"),
        json!({"tool": "echo", "ok": false, "result": null,
            "error": {"code": "INVALID_REQUEST", "message": "no trace_id"}}),
    );
    let untraced = [
        connect(),
        event(
            "client",
            uae("tool.call", None, json!({"tool": "echo", "args": {}})),
        ),
        event("server", refusal.clone()),
    ];
    assert_eq!(server_findings("uae", &untraced), BTreeMap::new());

    let traced = [
        connect(),
        event(
            "client",
            uae(
                "tool.call",
                Some("tr_1"),
                json!({"tool": "echo", "args": {}}),
            ),
        ),
        event("server", refusal),
    ];
    let found = server_findings("uae", &traced);
    assert!(found.contains_key("UAE-RES-002"), "{found:?}");
}

// --- Errors answering valid input -----------------------------------------------------------

/// An ERROR claiming a violation for a message that broke no rule is HAIP-ERR-004, whether it
/// names the message (related_id) or, naming none, acknowledges it as the client's latest.
#[test]
fn haip_an_error_refusing_a_valid_message_is_err_004() {
    let pong = haip(3, 2, "SYSTEM", "PONG", json!({"nonce": "keep-alive"}));
    let mut refusal = haip_error(4, 2, "SYSTEM", "00000000-0000-4000-8000-000000000003");
    refusal["payload"]["code"] = json!("UNSUPPORTED_TYPE");
    let named = [
        connect(),
        event("client", hai(1, 64)),
        event("server", hai(2, 64)),
        event("client", pong.clone()),
        event("server", refusal.clone()),
    ];
    let found = server_findings("haip", &named);
    assert_eq!(found.get("HAIP-ERR-004"), Some(&1), "{found:?}");

    let mut unnamed = refusal.clone();
    unnamed["payload"]
        .as_object_mut()
        .map(|p| p.remove("related_id"));
    unnamed["ack"] = json!("2");
    let acknowledged = [
        connect(),
        event("client", hai(1, 64)),
        event("server", hai(2, 64)),
        event("client", pong),
        event("server", unnamed.clone()),
    ];
    let found = server_findings("haip", &acknowledged);
    assert_eq!(found.get("HAIP-ERR-004"), Some(&1), "{found:?}");

    // After a malformed message the same ERROR answers that one.
    let mut bad_ping = haip(3, 2, "SYSTEM", "PING", json!({"nonce": 7}));
    bad_ping["ts"] = json!("yesterday");
    let answered = [
        connect(),
        event("client", hai(1, 64)),
        event("server", hai(2, 64)),
        event("client", bad_ping),
        event("server", unnamed),
    ];
    assert_eq!(server_findings("haip", &answered), BTreeMap::new());
}

/// An error answering a valid context-update is HUMA-VAL-007 in any case, not only where a
/// case listens for one; answering a broken event it is the rejection the rules ask for.
#[test]
fn huma_an_error_answering_a_valid_event_is_val_007() {
    let error = sio(
        "server",
        "error",
        json!({"type": "error", "code": "INVALID_EVENT", "message": "no"}),
    );
    let valid = [
        connect(),
        sio(
            "client",
            "message",
            json!({"type": "context-update", "triggering": false, "name": "n", "description": "d", "context": {"a": 1}}),
        ),
        error.clone(),
    ];
    let found = server_findings("huma", &valid);
    assert_eq!(found.get("HUMA-VAL-007"), Some(&1), "{found:?}");

    let broken = [
        connect(),
        sio(
            "client",
            "message",
            json!({"type": "context-update", "triggering": "yes", "name": "n", "description": "d", "context": {"a": 1}}),
        ),
        error,
    ];
    assert_eq!(server_findings("huma", &broken), BTreeMap::new());
}

// --- Binary frames from the target ----------------------------------------------------------

/// Neither UAE nor HPD names a frame type: a binary frame from the target is a should-level
/// finding of its own (UAE-ENV-009, HPD-ENV-009), no longer a broken envelope.
#[test]
fn a_binary_frame_from_the_target_is_its_own_should() {
    for (protocol, rule) in [("uae", "UAE-ENV-009"), ("hpd", "HPD-ENV-009")] {
        let lines = [
            observed("client", json!({"connect": {"url": "ws://127.0.0.1:1/ws"}})),
            observed("server", json!({"binary": {"base64": "AAE=", "len": 2}})),
        ];
        let found = server_findings(protocol, &lines);
        assert_eq!(found, BTreeMap::from([(rule.to_owned(), 1)]), "{protocol}");
    }
}
