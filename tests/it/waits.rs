//! Steps that let a run go on at the target's pace, keyed on what it sends: a `wait` with
//! `until` goes on as soon as the event it names arrives (or the connection ends), so a fuzz run
//! pays a round trip, not the whole pause, to see what a target made of an input whose answer
//! the spec leaves open; with `settled`, as soon as the target owes nothing more by the
//! protocol's structure (HPD: each accepted input has had its turn, each turn has ended);
//! `unblock` frees what flow control holds back, so a scenario's answer is not waited for until
//! the step times out.

use crate::common;

use serde_json::Value;
use wireprobe::verdict::Verdict;

const SUITE: &str = r#"
[[case]]
id = "wait.answered"
title = "A wait ends with the answer it names, which later steps still see"
rules = ["HAIP-PING-002"]
steps = [
  { send = { type = "PING", payload = { nonce = "w1" } } },
  { wait = { ms = 5000, until = { type = "PONG", payload = { nonce = "w1" } } } },
  { expect = { type = "PONG", payload = { nonce = "w1" } }, within_ms = 1 },
]

[[case]]
id = "wait.unanswered"
title = "A wait whose event never comes lasts its time and judges nothing"
rules = ["HAIP-PING-002"]
steps = [{ wait = { ms = 300, until = [{ type = "WIREPROBE_NEVER" }] } }]

[[case]]
id = "unblock.credit"
title = "A run held back by the one message of credit we gave goes on after unblock"
rules = ["HAIP-RUN-001"]
handshake_with = { payload = { capabilities = { flow_control = { initial_credit_messages = 1 } } } }
steps = [
  { send = { type = "PAUSE_CHANNEL", payload = { channel = "wireprobe-paused" } } },
  { send = { type = "TEXT_MESSAGE_START", payload = { message_id = "${uuid:m}", text = "wireprobe: say held back" } } },
  { send = { type = "TEXT_MESSAGE_END", payload = { message_id = "${uuid:m}" } } },
  { expect = { type = "RUN_STARTED" } },
  { expect_silence = { ms = 200, matching = { type = "RUN_FINISHED" } } },
  { unblock = {} },
  { expect = { type = "RUN_FINISHED" } },
]
"#;

#[tokio::test]
async fn a_wait_until_an_answer_ends_with_it_and_judges_nothing() {
    let results = common::run_text_against_reference("haip", SUITE).await;
    let by_id = |id: &str| {
        results
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("{id} ran"))
    };
    let answered = by_id("wait.answered");
    assert_eq!(answered.verdict, Verdict::Pass, "{}", answered.message);
    assert!(
        answered.duration_ms < 2000,
        "the wait ended with the PONG, not after 5 s: {} ms",
        answered.duration_ms
    );
    assert!(
        answered
            .steps
            .iter()
            .any(|s| s.contains("wait 5000 ms or until")),
        "{:?}",
        answered.steps
    );
    let unblocked = by_id("unblock.credit");
    assert_eq!(unblocked.verdict, Verdict::Pass, "{}", unblocked.message);
    let sent: Vec<_> = (unblocked.transcript.iter())
        .filter(|e| e.from == wireprobe::transcript::Direction::Client)
        .filter_map(|e| e.event())
        .map(|e| (e["type"].clone(), e.pointer("/payload/channel").cloned()))
        .collect();
    // The channel the run came on gets credit, the one we paused is resumed (with credit for
    // what it held back); no other channel gets credit.
    let target_channels: Vec<Value> = (unblocked.transcript.iter())
        .filter(|e| e.from == wireprobe::transcript::Direction::Server)
        .filter_map(|e| e.event())
        .map(|e| e["channel"].clone())
        .collect();
    let run_channel = (unblocked.transcript.iter())
        .filter_map(|e| e.event())
        .find(|e| e["type"] == "RUN_STARTED")
        .map(|e| e["channel"].clone());
    assert!(
        sent.contains(&("FLOW_UPDATE".into(), run_channel)),
        "{sent:?}"
    );
    assert!(
        sent.contains(&("RESUME_CHANNEL".into(), Some("wireprobe-paused".into()))),
        "{sent:?}"
    );
    for (_, channel) in sent.iter().filter(|(t, _)| t == "FLOW_UPDATE") {
        let channel = channel.clone().unwrap_or_default();
        assert!(
            target_channels.contains(&channel) || channel == "wireprobe-paused",
            "{sent:?}"
        );
    }
    let unanswered = by_id("wait.unanswered");
    assert_eq!(unanswered.verdict, Verdict::Pass, "{}", unanswered.message);
    assert!(
        unanswered.duration_ms >= 300,
        "{} ms",
        unanswered.duration_ms
    );
}

const HPD_SUITE: &str = r#"
[[case]]
id = "wait.settled"
title = "A settled wait lasts until the agent's turns are over, and no longer"
rules = ["HPD-TURN-001"]
steps = [
  { send = { type = "USER_TEXT_INPUT", text = "wireprobe: slow 400" } },
  { send = { type = "USER_TEXT_INPUT", text = "wireprobe: say after it" } },
  { wait = { ms = 5000, settled = true } },
  { expect = [{ type = "MESSAGE_TURN_FINISHED" }, { type = "MESSAGE_TURN_ERROR" }], times = 2, within_ms = 1 },
]
"#;

#[tokio::test]
async fn a_settled_wait_ends_when_every_accepted_input_has_had_its_turn() {
    let results = common::run_text_against_reference("hpd", HPD_SUITE).await;
    let settled = &results[0];
    assert_eq!(settled.verdict, Verdict::Pass, "{}", settled.message);
    // Both turns ended within the wait (the expectation allowed them 1 ms more), which took
    // the slow turn's time, not the wait's 5 s.
    assert!(
        (400..3000).contains(&settled.duration_ms),
        "{} ms",
        settled.duration_ms
    );
}

const AGUI_SUITE: &str = r#"
[[case]]
id = "wait.settled.answers"
title = "A settled wait lasts until every run's answer has come whole, and no longer"
rules = ["AGUI-RUN-001"]
steps = [
  { send = { messages = [{ role = "user", content = "wireprobe: say one two three" }] } },
  { send = { messages = [{ role = "user", content = "wireprobe: say four five" }] } },
  { wait = { ms = 5000, settled = true } },
  { expect = { type = "RUN_FINISHED" }, times = 2, within_ms = 1 },
]
"#;

/// AG-UI owes nothing for an input beyond the answer to its POST (the run streams in it): the
/// wait ends once both answers have come whole, where it lasted its whole time before (every
/// fuzz run paid 200 ms before each mutated input: 939 events/s, now over 28,000).
#[tokio::test]
async fn a_settled_wait_ends_when_every_answer_has_come_whole() {
    let results = common::run_text_against_reference("agui", AGUI_SUITE).await;
    let settled = &results[0];
    assert_eq!(settled.verdict, Verdict::Pass, "{}", settled.message);
    assert!(settled.duration_ms < 3000, "{} ms", settled.duration_ms);
}

/// An AG-UI answer that came whole without the event awaited will not bring it later: the
/// step ends there, judged as at its timeout, where it waited the whole timeout before (5 s
/// for each of 28 cases against an agent answering JSON).
#[tokio::test]
async fn an_expectation_ends_once_every_answer_came_whole_without_it() {
    let results =
        common::run_protocol_results("agui", &["json-content-type"], Some("agui.run.plain")).await;
    let plain = results
        .iter()
        .find(|r| r.id.starts_with("agui.run.plain"))
        .expect("agui.run.plain ran");
    assert_eq!(plain.verdict, Verdict::Fail, "{}", plain.message);
    assert!(
        plain.message.contains("came whole without it") && plain.message.contains("AGUI-HTTP-001"),
        "{}",
        plain.message
    );
    assert!(plain.duration_ms < 3000, "{} ms", plain.duration_ms);
}
