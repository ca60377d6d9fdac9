//! What the fuzzer gets for HAIP: valid client streams (HAI, then PINGs, text messages, credit
//! grants and replay requests with consistent ids, seq and ts), the mutators that break each
//! schema rule, and the schema as the validator. A receiver must answer a malformed message
//! with ERROR (HAIP-ERR-001); unknown fields it may ignore (HAIP-ENV-005) unless `crit` is set.

use super::model;
use super::model::EVENT_TYPES;
use super::scenarios;
use super::schema::schema;
use super::session::{HaipSession, Header};
use super::session::{REPEAT_SEQ, SKIP_SEQ};
use crate::auth::TokenKind;
use crate::fuzz_profile::{
    mutate, Answer, FuzzProfile, Input, Mutator, Opening, Oracle, Probe, Rng, SyncPoint,
};
use crate::protocol::Session;
use crate::protocol::OMIT;
use crate::rules::ids::{
    HAIP_AUTH_001, HAIP_AUTH_002, HAIP_AUTH_003, HAIP_AUTH_004, HAIP_AUTH_005, HAIP_ENV_001,
    HAIP_ENV_002, HAIP_ENV_003, HAIP_ENV_004, HAIP_ENV_005, HAIP_ENV_006, HAIP_ENV_007,
    HAIP_ENV_008, HAIP_ENV_009, HAIP_ERR_001, HAIP_FLOW_002, HAIP_FLOW_004, HAIP_FLOW_005,
    HAIP_PING_001, HAIP_PING_002, HAIP_RUN_005, HAIP_SEQ_006, HAIP_SEQ_007, HAIP_SEQ_009,
    HAIP_TEXT_002, HAIP_TOOL_002, HAIP_VER_001,
};
use crate::transcript::Direction;
use crate::transport::Frame;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// The HAIP [`FuzzProfile`].
pub struct HaipFuzz;

use super::values::{counter, of_types, uuid_from};
pub(super) use crate::fuzz_profile::keeps::text;

/// One client action before envelopes: a list of (type, payload) that belong together.
fn action() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    prop_oneof![
        4 => proptest::option::of(text(24)).prop_map(|nonce| vec![(
            "PING",
            nonce.map_or_else(|| json!({}), |n| json!({"nonce": n})),
        )]),
        3 => proptest::collection::vec(text(32), 0..4).prop_map(|parts| {
            // The message id is filled in with the envelope ids, below.
            let mut out = vec![("TEXT_MESSAGE_START", json!({"author": "user"}))];
            out.extend(parts.into_iter().map(|t| ("TEXT_MESSAGE_PART", json!({"text": t}))));
            out.push(("TEXT_MESSAGE_END", json!({})));
            out
        }),
        1 => (1u64..1000).prop_map(|n| vec![("FLOW_UPDATE", json!({"channel": "agent", "add_messages": n}))]),
        // A keep-alive PONG answering no PING: a catalogue type no ERROR may refuse.
        1 => text(16).prop_map(|n| vec![("PONG", json!({"nonce": n}))]),
        1 => Just(vec![("REPLAY_REQUEST", json!({"from_seq": "1"}))]),
        // Server-side flows, through the README's scenario directives: a target that does not
        // know them just gets a text message.
        3 => prop_oneof![
            text(16).prop_map(|t| format!("wireprobe: say {t}")),
            Just("wireprobe: fail".to_owned()),
            (1u32..256).prop_map(|n| format!("wireprobe: audio {n}")),
        ]
        .prop_map(|directive| vec![
            ("TEXT_MESSAGE_START", json!({"author": "user", "text": directive})),
            ("TEXT_MESSAGE_END", json!({})),
        ]),
        // The reference tools; a target without them answers with an error of its choosing.
        1 => any::<u8>().prop_map(|x| vec![("TOOL_CALL", json!({"tool": "wireprobe.echo", "params": {"x": x}}))]),
        1 => (100u64..300).prop_map(|ms| vec![("TOOL_CALL", json!({"tool": "wireprobe.slow", "params": {"ms": ms}}))]),
        1 => text(16).prop_map(|t| vec![
            ("PAUSE_CHANNEL", json!({"channel": "AGENT"})),
            ("TEXT_MESSAGE_START", json!({"author": "user", "text": format!("wireprobe: say {t}")})),
            ("TEXT_MESSAGE_END", json!({})),
            ("RESUME_CHANNEL", json!({"channel": "AGENT"})),
        ]),
    ]
}

/// Envelopes for `actions` after our HAI, numbered from seq 1, ids drawn from `seed`.
pub(super) fn envelopes(actions: Vec<Vec<(&'static str, Value)>>, seed: u64) -> Vec<Value> {
    let mut rng = Rng::new(seed);
    let session_id = uuid_from(&mut rng);
    let handshake = client_handshake().to_vec();
    // Numbered on from the handshake, as the client's session numbers what it sends (nothing
    // is delivered to it here, so nothing is acknowledged).
    let mut seq = handshake
        .iter()
        .filter_map(|e| e.get("seq").and_then(model::parse_seq))
        .max()
        .unwrap_or(0);
    let mut messages = Vec::new();
    for group in actions {
        let message_id = uuid_from(&mut rng);
        for (ty, mut payload) in group {
            if ty.starts_with("TEXT_MESSAGE") {
                payload["message_id"] = json!(message_id);
            }
            if ty == "TOOL_CALL" {
                payload["call_id"] = json!(message_id);
            }
            seq += 1;
            messages.push((seq, ty, payload));
        }
    }
    // Ids come after every message id, in order, so a seed draws what it always drew.
    let mut stamp = |i: usize| {
        (
            uuid_from(&mut rng),
            (1_700_000_000_000u64 + i as u64 * 7).to_string(),
        )
    };
    let mut events = Vec::with_capacity(handshake.len() + messages.len());
    for mut e in handshake {
        let (id, ts) = stamp(events.len());
        e["id"] = json!(id);
        e["session"] = json!(session_id);
        e["ts"] = json!(ts);
        events.push(e);
    }
    for (seq, ty, payload) in messages {
        let (id, ts) = stamp(events.len());
        let header = Header {
            id,
            session: &session_id,
            seq,
            ack: None,
            ts,
        };
        events.push(Value::Object(header.envelope(
            Direction::Client,
            ty,
            payload,
        )));
    }
    events
}

/// The HAI a client session opens with, built once per process: a run's sequence starts with
/// it, its id, session and ts drawn for the run.
fn client_handshake() -> &'static [Value] {
    static HANDSHAKE: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    HANDSHAKE.get_or_init(|| {
        HaipSession::new()
            .handshake(None, false)
            .unwrap_or_default()
            .iter()
            .filter_map(|frame| match frame {
                Frame::Text(text) => serde_json::from_str(text).ok(),
                _ => None,
            })
            .collect()
    })
}

const MALFORMED: Answer = Answer::Error(None);

/// The envelope fields the live session numbers, names and stamps on every message it sends.
const LIVE_FIELDS: [&str; 5] = ["id", "session", "seq", "ack", "ts"];

fn pick_set(e: &Value, path: &str, choices: &[Value], rng: &mut Rng) -> Option<Input> {
    mutate::set(e, path, rng.pick(choices).clone()).map(Input::Event)
}

pub(super) static MUTATORS: &[Mutator] = &[
    Mutator {
        name: "missing-envelope-field",
        breaks: HAIP_ENV_001,
        answer: MALFORMED,
        apply: |e, rng| {
            let field = rng.pick(&["id", "session", "seq", "ts", "channel", "payload"]);
            mutate::remove(e, &format!("/{field}")).map(Input::Event)
        },
    },
    Mutator {
        name: "payload-not-object",
        breaks: HAIP_ENV_001,
        answer: MALFORMED,
        apply: |e, rng| pick_set(e, "/payload", &[json!([]), json!("payload"), json!(1)], rng),
    },
    Mutator {
        name: "bad-uuid",
        breaks: HAIP_ENV_002,
        answer: MALFORMED,
        apply: |e, rng| {
            let path = rng.pick(&["/id", "/session"]);
            pick_set(
                e,
                path,
                &[
                    json!("not-a-uuid"),
                    json!("00000000-0000-0000-0000-000000000000"),
                    json!(""),
                ],
                rng,
            )
        },
    },
    Mutator {
        name: "bad-counter",
        breaks: HAIP_ENV_003,
        answer: MALFORMED,
        apply: |e, rng| {
            let path = rng.pick(&["/seq", "/ts", "/ack"]);
            pick_set(
                e,
                path,
                &[
                    json!("two"),
                    json!("-1"),
                    json!("1.5"),
                    json!("123456789012345678901"),
                    json!(""),
                ],
                rng,
            )
        },
    },
    Mutator {
        name: "bad-channel",
        breaks: HAIP_ENV_004,
        answer: MALFORMED,
        apply: |e, rng| {
            let long = "c".repeat(129);
            pick_set(
                e,
                "/channel",
                &[
                    json!("bad channel!"),
                    json!(long),
                    json!(""),
                    json!("naïve"),
                ],
                rng,
            )
        },
    },
    Mutator {
        name: "unknown-field",
        breaks: HAIP_ENV_005,
        answer: Answer::Survive,
        apply: |e, rng| {
            let path = rng.pick(&["/x_wireprobe_future", "/payload/x_wireprobe_future"]);
            mutate::set(e, path, json!(1)).map(Input::Event)
        },
    },
    Mutator {
        name: "crit-unknown-field",
        breaks: HAIP_ENV_005,
        answer: Answer::Error(Some("UNSUPPORTED_TYPE")),
        apply: |e, _| {
            mutate::set(e, "/crit", json!(true))
                .and_then(|e| mutate::set(&e, "/x_wireprobe_future", json!(1)))
                .map(Input::Event)
        },
    },
    Mutator {
        name: "unknown-type",
        breaks: HAIP_ENV_006,
        answer: MALFORMED,
        apply: |e, rng| {
            let ty = e["type"].as_str().unwrap_or("PING");
            let bad = match rng.below(3) {
                0 => ty.to_lowercase(),
                1 => format!("{ty}X"),
                _ => "WIREPROBE".into(),
            };
            mutate::set(e, "/type", json!(bad)).map(Input::Event)
        },
    },
    Mutator {
        name: "bad-envelope-number",
        breaks: HAIP_ENV_007,
        answer: MALFORMED,
        apply: |e, rng| match rng.below(4) {
            0 => mutate::set(e, "/pv", json!(256)).map(Input::Event),
            1 => mutate::set(e, "/pv", json!(-1)).map(Input::Event),
            2 => mutate::set(e, "/crit", json!("yes")).map(Input::Event),
            _ => mutate::raw_token(e, "/pv", "18446744073709551616"),
        },
    },
    Mutator {
        name: "bad-ping",
        breaks: HAIP_ENV_009,
        answer: MALFORMED,
        apply: |e, rng| {
            if !of_types(e, &["PING"]) {
                return None;
            }
            pick_set(
                e,
                "/payload/nonce",
                &[json!(7), json!(null), json!({"n": 1})],
                rng,
            )
        },
    },
    Mutator {
        name: "bad-text-payload",
        breaks: HAIP_TEXT_002,
        answer: MALFORMED,
        apply: |e, rng| {
            if !of_types(
                e,
                &[
                    "TEXT_MESSAGE_START",
                    "TEXT_MESSAGE_PART",
                    "TEXT_MESSAGE_END",
                ],
            ) {
                return None;
            }
            match rng.below(2) {
                0 => pick_set(e, "/payload/message_id", &[json!("m1"), json!(1)], rng),
                _ => mutate::remove(e, "/payload/message_id").map(Input::Event),
            }
        },
    },
    Mutator {
        name: "zero-credit",
        breaks: HAIP_FLOW_005,
        answer: MALFORMED,
        apply: |e, rng| {
            if !of_types(e, &["FLOW_UPDATE"]) {
                return None;
            }
            pick_set(
                e,
                "/payload/add_messages",
                &[json!(0), json!(-5), json!("10")],
                rng,
            )
        },
    },
    Mutator {
        name: "invalid-json",
        breaks: HAIP_ERR_001,
        answer: MALFORMED,
        apply: |e, rng| Some(mutate::truncated(e, rng)),
    },
    // WebSocket fails the connection on invalid UTF-8 in a text frame (RFC 6455 §8.1) before
    // HAIP sees it (suites/haip/ERRATA.md item 16): any end is allowed, then a new connection.
    Mutator {
        name: "invalid-utf8",
        breaks: HAIP_ERR_001,
        answer: Answer::Unspecified,
        apply: |e, _| Some(mutate::invalid_utf8(e)),
    },
    Mutator {
        name: "deep-nesting",
        breaks: HAIP_ERR_001,
        answer: MALFORMED,
        apply: |e, _| mutate::deep_nesting(e, "/payload/x", 10_000),
    },
    Mutator {
        name: "huge-number",
        breaks: HAIP_ERR_001,
        answer: MALFORMED,
        apply: |e, _| mutate::raw_token(e, "/pv", "1e400"),
    },
];

/// Bad tokens (§Authentication and Security): the kind, whether minting it needs the secret,
/// and the rule a target accepting it breaks.
const UNAUTHORIZED: [(TokenKind, bool, &str); 7] = [
    (TokenKind::Absent, false, HAIP_AUTH_001),
    (TokenKind::Malformed, false, HAIP_AUTH_002),
    (TokenKind::Tampered, false, HAIP_AUTH_003),
    (TokenKind::AlgNone, false, HAIP_AUTH_003),
    (TokenKind::WrongKey, false, HAIP_AUTH_003),
    (TokenKind::Expired, true, HAIP_AUTH_004),
    (TokenKind::NotYetValid, true, HAIP_AUTH_005),
];

/// The envelope mutators, then the sequencing and run/tool scenarios.
static ALL_MUTATORS: LazyLock<Vec<Mutator>> =
    LazyLock::new(|| [MUTATORS, scenarios::MUTATORS].concat());

impl FuzzProfile for HaipFuzz {
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (HAIP_SEQ_006, "the replay window is 1000 messages: a run would need over a thousand (sequencing cases)"),
            (HAIP_SEQ_007, "a replay too old to serve is past 1000 messages: a run would need over a thousand (sequencing cases)"),
            (HAIP_RUN_005, "needs more runs held open at once than the target allows (run cases)"),
            (HAIP_TOOL_002, "binds only advertised tools, and a run does not keep the TOOL_LIST (tool cases)"),
            (HAIP_FLOW_002, "needs more messages than the target's credit in one burst (flow cases)"),
            (HAIP_FLOW_004, "no run waits for messages a pause held back to flow again (flow cases)"),
            (HAIP_FLOW_005, "the target grants credit once half of it is spent, past the 12 messages of a run at the default --max-len (flow cases)"),
        ]
    }
    /// Mostly our usual HAI; sometimes one that declares less, so the target must hold back
    /// (HAIP-VER-002 accept_events, HAIP-MEDIA-003 binary_frames, HAIP-FLOW-001 credit), or one
    /// sharing no MAJOR version, which must be refused with VERSION_INCOMPATIBLE and a close
    /// (HAIP-VER-001), or resuming a session the target never had (RESUME_FAILED,
    /// HAIP-SEQ-009); with credentials, sometimes a connection with a bad token first, which
    /// must be refused (HAIP-AUTH-001 to 005).
    fn openings(&self) -> BoxedStrategy<Opening> {
        let narrow: Vec<&str> = EVENT_TYPES
            .into_iter()
            .filter(|t| !matches!(*t, "TOOL_LIST" | "TOOL_SCHEMA"))
            .collect();
        prop_oneof![
            6 => Just(Opening::Handshake(None)),
            1 => Just(Opening::Handshake(Some(
                json!({"payload": {"accept_events": narrow}})
            ))),
            1 => Just(Opening::Handshake(Some(
                json!({"payload": {"capabilities": {"binary_frames": false}}})
            ))),
            1 => (1u64..8).prop_map(|credit| Opening::Handshake(Some(json!({"payload": {
                "capabilities": {"flow_control": {"initial_credit_messages": credit}}
            }})))),
            1 => (2u64..100).prop_map(|major| Opening::Refused {
                with: json!({"payload": {"haip_version": format!("{major}.0.0"), "accept_major": [major]}}),
                code: Some("VERSION_INCOMPATIBLE"),
                closes: true,
                rule: HAIP_VER_001,
            }),
            1 => any::<u128>().prop_map(|n| Opening::Refused {
                // A resume of a session the target never had.
                with: json!({"session": uuid::Builder::from_random_bytes(n.to_le_bytes()).into_uuid().to_string(),
                    "payload": {"last_rx_seq": "5"}}),
                code: Some("RESUME_FAILED"),
                closes: false,
                rule: HAIP_SEQ_009,
            }),
            2 => proptest::sample::select(&UNAUTHORIZED[..]).prop_map(|(token, needs_secret, rule)| {
                Opening::Unauthorized { token, needs_secret, rule }
            }),
        ]
        .boxed()
    }

    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>> {
        let (min, max) = (*len.start(), *len.end());
        // Actions expand to one or more messages: draw enough, then cut to length after HAI.
        // The HAI and at least `min` actions of one message or more make `min` events at the
        // least, so no filter is needed (a filter builds every sequence twice: once to test
        // it, once for the run).
        (
            proptest::collection::vec(action(), min..=max.max(1)),
            any::<u64>(),
        )
            .prop_map(move |(actions, seed)| {
                let mut all = envelopes(actions, seed);
                all.truncate(max.max(1));
                all
            })
            .boxed()
    }

    fn mutators(&self) -> &'static [Mutator] {
        &ALL_MUTATORS
    }

    /// Whether a message the target rejected used up its `seq` is open (suites/haip/ERRATA.md),
    /// so the probe is two PINGs: the first repeats the last number (a duplicate, dropped, if
    /// the target counted it; the missing number if not), the second takes the next one.
    fn probe(&self) -> Probe {
        Probe {
            sends: vec![
                json!({"type": "PING", "seq": REPEAT_SEQ, "payload": {"nonce": "wireprobe-probe-again"}}),
                json!({"type": "PING", "payload": {"nonce": "wireprobe-probe"}}),
            ],
            answers: vec![json!({"type": "PONG"})],
            error: json!({"type": "ERROR"}),
            rule: HAIP_PING_001,
            answered_by: HAIP_PING_001,
            ended: None,
            scenario: false,
        }
    }

    /// A malformed message must be answered with ERROR (HAIP-ERR-001); `crit` with an unknown
    /// field with UNSUPPORTED_TYPE (HAIP-ENV-008).
    fn answer_rule(&self, mutator: &Mutator) -> &'static str {
        match mutator.answer {
            Answer::Error(Some("UNSUPPORTED_TYPE")) => HAIP_ENV_008,
            Answer::Error(_) => HAIP_ERR_001,
            _ => mutator.breaks,
        }
    }

    /// The live session does its own HAI and numbers, names and stamps every message; only the
    /// envelope fields a mutation changed are sent as the mutation has them.
    fn live_event(&self, original: &Value, sent: &Value) -> Option<Value> {
        if original["type"] == "HAI" {
            return None;
        }
        let mut out = sent.clone();
        let obj = out.as_object_mut()?;
        // A field the mutation removed stays removed (the session would fill it back).
        for key in original.as_object()?.keys() {
            if sent.get(key).is_none() {
                obj.insert(key.clone(), json!(OMIT));
            }
        }
        for key in LIVE_FIELDS {
            if original.get(key).is_some() && original.get(key) == sent.get(key) {
                obj.remove(key);
            }
        }
        // A message renumbered next to its place keeps that relation to the live numbering.
        if let (Some(was), Some(is)) = (counter(original, "seq"), counter(sent, "seq")) {
            if is == was + 1 {
                obj.insert("seq".into(), json!(SKIP_SEQ));
            } else if is + 1 == was {
                obj.insert("seq".into(), json!(REPEAT_SEQ));
            }
        }
        Some(out)
    }

    /// Unchanged by a mutation, every envelope field the live session fills is left to it.
    fn live_valid(&self, mut event: Value) -> Option<Value> {
        if event["type"] == "HAI" {
            return None;
        }
        let obj = event.as_object_mut()?;
        for key in LIVE_FIELDS {
            obj.remove(key);
        }
        Some(event)
    }

    /// A target without the reference tools answers a TOOL_CALL with an error of its choosing.
    /// (A text part whose start was refused is rightly refused too; such a stray ERROR can only
    /// pass for the answer of a later bad input, never fail one, so it is not waited for.)
    fn answer_open(&self, event: &Value) -> bool {
        of_types(event, &["TOOL_CALL"])
    }

    /// A run goes on past the PONG that follows its message: a fuzz run ends once every run
    /// the target began has ended (the session tells), up to the step timeout, so the events
    /// of every run it started are judged (a run's media, tool progress and end came after
    /// the PONG, and went unjudged, before).
    fn work_outlasts_sync(&self) -> bool {
        true
    }

    /// A settle after the sync (at a run's end) waits for the target's runs, which last as
    /// long as their text and tools.
    fn settle_ms(&self, step_ms: u64) -> u64 {
        step_ms
    }

    /// A PING with a nonce of its own: its PONG echoes it (HAIP-PING-002).
    fn sync(&self, tag: u64) -> Option<SyncPoint> {
        let nonce = format!("wireprobe-sync-{tag}");
        Some(SyncPoint {
            send: json!({"type": "PING", "payload": {"nonce": nonce}}),
            answer: json!({"type": "PONG", "payload": {"nonce": nonce}}),
            rule: HAIP_PING_002,
        })
    }

    /// A gap costs the spec's 500 ms wait for REPLAY_REQUEST, about fifty other inputs' worth,
    /// and the other sequence inputs wait for a reply, a reconnect or a round trip: a mutation
    /// of one event is drawn eight times as often as a gap, four times as often as the rest.
    fn weight(&self, mutator: &Mutator) -> usize {
        match (mutator.name, mutator.answer) {
            ("seq-gap", _) => 1,
            (_, Answer::Sequence) => 2,
            _ => 8,
        }
    }

    fn oracles(&self, mutator: &Mutator, input: &Input) -> Vec<Oracle> {
        scenarios::oracles(mutator.name, input)
    }

    /// Text that is not a JSON value is HAIP-ERR-001's "malformed JSON".
    fn input_violations(&self, input: &Input) -> Vec<&'static str> {
        let Some(event) = crate::fuzz_profile::input_json(input) else {
            return vec![HAIP_ERR_001];
        };
        let event = event.as_ref();
        let mut out = Vec::new();
        schema().check(event, &mut out);
        let mut rules: Vec<&'static str> = out.into_iter().map(|v| v.rule).collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_profile::FuzzProfile;
    use proptest::strategy::ValueTree;

    /// Without a filter, every sequence still has as many events as it was asked for.
    #[test]
    fn sequences_are_as_long_as_asked_without_a_filter() {
        let mut runner = crate::fuzz_profile::gen::runner(11);
        for (min, max) in [(1, 1), (1, 12), (3, 10), (20, 50)] {
            let strategy = HaipFuzz.valid_sequence(min..=max);
            let client = super::super::fuzz_client::HaipClientFuzz.valid_sequence(min..=max);
            for _ in 0..30 {
                let Ok(tree) = strategy.new_tree(&mut runner) else {
                    panic!("the strategy draws")
                };
                let n = tree.current().len();
                assert!((min..=max).contains(&n), "{n} events for {min}..={max}");
                let Ok(tree) = client.new_tree(&mut runner) else {
                    panic!("the strategy draws")
                };
                // The client's HAI comes first, beyond the count.
                let n = tree.current().len();
                assert!(
                    (min + 1..=max + 1).contains(&n),
                    "{n} events for {min}..={max}"
                );
            }
        }
    }

    /// A valid event made live from itself is what making it live from a copy gives.
    #[test]
    fn a_valid_event_goes_live_as_it_would_from_a_copy() {
        let mut runner = crate::fuzz_profile::gen::runner(7);
        let strategy = HaipFuzz.valid_sequence(1..=50);
        for _ in 0..50 {
            let Ok(tree) = strategy.new_tree(&mut runner) else {
                panic!("the strategy draws")
            };
            for event in tree.current() {
                let from_copy = HaipFuzz.live_event(&event, &event);
                assert_eq!(HaipFuzz.live_valid(event), from_copy);
            }
        }
    }
}
