//! The runner drives stdio targets: a test-only protocol of JSON lines over real processes
//! (`cat`, `sh`) exercises sends, expectations, `restart`, `{tmp}` and its cleanup.

use serde_json::Value;
use std::time::Duration;
use wireprobe::protocol::{
    Checker, Decoded, Descriptor, Observed, Protocol, ProtocolError, Session, TokenPlacement,
};
use wireprobe::rules::{Binds, Level, Rule, Violation};
use wireprobe::suite::{loader, runner};
use wireprobe::transcript::Direction;
use wireprobe::transport::TransportKind;
use wireprobe::transport::{Frame, Outgoing};
use wireprobe::verdict::Verdict;

static RULES: &[Rule] = &[Rule {
    id: "T-LINE-001",
    level: Level::Must,
    text: "lines come back",
    quote: "",
    source: "test §Lines",
    binds: Binds::Either,
}];

struct Lines;
struct LineSession;
struct NoChecks;

static LINES: Descriptor = Descriptor {
    id: "lines",
    title: "JSON lines (test)",
    spec_file: "test",
    rules: RULES,
    transports: &[TransportKind::Stdio],
    roles: &[],
    token_placement: TokenPlacement::Query,
    suite: &[],
    client_suite: &[],
    errata: "",
    http_routes: None,
    has_handshake: true,
    target_speaks_first: false,
    one_conversation: false,
    broken_input_excuses: &[],
};

impl Protocol for Lines {
    fn descriptor(&self) -> &'static Descriptor {
        &LINES
    }
    fn session(&self, _transport: TransportKind) -> Box<dyn Session> {
        Box::new(LineSession)
    }
    fn checker(&self) -> Box<dyn Checker> {
        Box::new(NoChecks)
    }
    fn recognises(&self, item: Observed<'_>) -> bool {
        matches!(item, Observed::Event(e, _) if e.value().is_object())
    }
}

impl Session for LineSession {
    fn handshake(&mut self, _: Option<&Value>, _: bool) -> Result<Vec<Frame>, ProtocolError> {
        Ok(Vec::new())
    }
    fn is_handshake_reply(&self, _: &Value) -> bool {
        false
    }
    fn encode(&mut self, event: &Value) -> Result<Outgoing, ProtocolError> {
        Ok(Frame::Text(event.to_string()).into())
    }
    fn decode(&mut self, frame: &Frame) -> Decoded {
        match frame {
            Frame::Text(t) => {
                serde_json::from_str(t).map_or_else(|_| Decoded::Garbage(t.clone()), Decoded::Event)
            }
            Frame::Binary(b) | Frame::RawText(b) => Decoded::Binary(b.len()),
        }
    }
    fn error_code(&self, event: &Value) -> Option<String> {
        event
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
    fn capability(&self, _: &Value, _: &str) -> Option<Value> {
        None
    }
}

impl Checker for NoChecks {
    fn observe(&mut self, _: Direction, _: u64, _: Observed<'_>, _: &mut Vec<Violation>) {}
}

async fn run(exec: &str, suite: &str) -> Vec<(String, Verdict, String)> {
    let suite =
        loader::load_texts(&Lines, &[("t.toml".into(), suite.into())]).expect("suite loads");
    let mut cfg = runner::RunConfig::new(exec);
    cfg.exec = wireprobe::transport::stdio::split_command(exec).expect("splits");
    cfg.step_timeout = Duration::from_millis(2000);
    runner::run_suite(&Lines, &suite, &cfg, &|_| {})
        .await
        .expect("starts")
        .into_iter()
        .map(|r| (r.id, r.verdict, r.message))
        .collect()
}

#[tokio::test]
async fn lines_echo_and_restart() {
    let suite = r#"
[[case]]
id = "t.echo-and-restart"
title = "cat echoes, before and after a restart"
rules = ["T-LINE-001"]
handshake = "none"
steps = [
  { send = { x = 1 } },
  { expect = { x = 1 } },
  { restart = {} },
  { send = { y = 2 } },
  { expect = { y = 2 } },
]
"#;
    for (id, verdict, message) in run("cat", suite).await {
        assert_eq!(verdict, Verdict::Pass, "{id}: {message}");
    }
}

#[tokio::test]
async fn tmp_is_a_fresh_directory_removed_after_the_case() {
    let suite = r#"
[[case]]
id = "t.tmp"
title = "{tmp} is expanded"
rules = ["T-LINE-001"]
handshake = "none"
steps = [
  { expect = { tmp = "$capture:dir" } },
  { send = { dir = "${dir}" } },
  { expect = { dir = "${dir}" } },
]
"#;
    let script = r#"sh -c 'test -d "$1" && printf "{\"tmp\":\"%s\"}\n" "$1"; exec cat' sh {tmp}"#;
    let suite =
        loader::load_texts(&Lines, &[("t.toml".into(), suite.into())]).expect("suite loads");
    let mut cfg = runner::RunConfig::new(script);
    cfg.exec = wireprobe::transport::stdio::split_command(script).expect("splits");
    let results = runner::run_suite(&Lines, &suite, &cfg, &|_| {})
        .await
        .expect("starts");
    assert_eq!(results[0].verdict, Verdict::Pass, "{}", results[0].message);
    let dir = results[0]
        .transcript
        .iter()
        .find_map(|e| {
            e.event()?
                .get("tmp")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .expect("the process reported its {tmp}");
    assert!(dir.contains("wireprobe-"), "{dir}");
    assert!(
        !std::path::Path::new(&dir).exists(),
        "{dir} outlived its case"
    );
}

#[tokio::test]
async fn a_missing_program_is_unreachable() {
    let suite = loader::load_texts(&Lines, &[]).expect("empty suite");
    let mut cfg = runner::RunConfig::new("nope");
    cfg.exec = vec!["wireprobe-no-such-program".into()];
    let mut with_case = suite.clone();
    with_case.cases = loader::load_texts(
        &Lines,
        &[(
            "t.toml".into(),
            "[[case]]\nid = \"x\"\ntitle = \"t\"\nrules = [\"T-LINE-001\"]\nsteps = []\n".into(),
        )],
    )
    .expect("loads")
    .cases;
    assert!(runner::run_suite(&Lines, &with_case, &cfg, &|_| {})
        .await
        .is_err());
}
