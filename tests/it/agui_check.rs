//! `wireprobe check agui` on captured answers: recorded streams get the verdict their names
//! give, a capture judges what `run` judges on the same events, and what a capture cannot show
//! is reported unjudged rather than passed.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `check agui` on `file` (with `args`), and its JSON report.
fn check_file(file: &Path, args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let report = dir.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["check", "agui"])
        .arg(file)
        .args(args)
        .arg("--report")
        .arg(format!("json={}", report.display()))
        .output()
        .expect("wireprobe runs");
    let text = std::fs::read_to_string(&report).expect("the report is written");
    (
        out,
        serde_json::from_str(&text).expect("the report is JSON"),
    )
}

/// Each rule's verdict in a check report.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap_or_default();
            let rule = id.strip_prefix("check.").unwrap_or(id).to_owned();
            (rule, c["verdict"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

fn streams() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/agui/streams");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus/agui/streams")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    files
}

/// `corpus/agui/streams/NAME--RULE.ndjson` breaks RULE and nothing else; `NAME--none` breaks
/// nothing. Each is a producer's events alone, as `--from server` reads them.
#[test]
fn recorded_streams_get_the_verdict_their_names_give() {
    let files = streams();
    assert!(files.len() >= 8, "{files:?}");
    for file in files {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let (_, broken) = name.split_once("--").expect("NAME--RULE");
        let (out, report) = check_file(&file, &["--from", "server"]);
        let said = String::from_utf8_lossy(&out.stdout);
        for (rule, verdict) in verdicts(&report) {
            let expected: &[&str] = match rule == broken {
                true => &["fail", "warn", "info"],
                false => &["pass", "skip"],
            };
            assert!(
                expected.contains(&verdict.as_str()),
                "{name}: {rule} is {verdict}\n{said}"
            );
        }
        let gate = match broken {
            "none" => 0,
            _ => match wireprobe::rules::find(wireprobe::protocol::agui::rules::RULES, broken)
                .map(|r| r.level)
            {
                Some(wireprobe::rules::Level::Must) => 1,
                _ => 0,
            },
        };
        assert_eq!(out.status.code(), Some(gate), "{name}: {said}");
    }
}

/// What a capture cannot show is reported unjudged (`skip`, with why), never passed: the
/// input's rules without an input, the HTTP head's without one, the end of a capture cut
/// short (`--cut`), a state delta whose baseline was the input's.
#[test]
fn what_a_capture_cannot_show_is_reported_unjudged() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/agui/streams");
    let open = dir.join("ends-with-run-open--AGUI-RUN-005.ndjson");
    let (out, report) = check_file(&open, &["--from", "server", "--cut"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let verdict = |rule: &str| {
        verdicts(&report)
            .into_iter()
            .find(|(r, _)| r == rule)
            .map(|(_, v)| v)
    };
    for rule in [
        "AGUI-RUN-005",
        "AGUI-IN-001",
        "AGUI-TOOL-001",
        "AGUI-HTTP-001",
    ] {
        assert_eq!(verdict(rule).as_deref(), Some("skip"), "{rule}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not judged: AGUI-RUN-005"), "{stderr}");
    let delta = dir.join("delta-before-snapshot--none.ndjson");
    let (_, report) = check_file(&delta, &["--from", "server"]);
    let state = verdicts(&report)
        .into_iter()
        .find(|(r, _)| r == "AGUI-STATE-001");
    assert_eq!(state.map(|(_, v)| v).as_deref(), Some("skip"));
}

/// One answer of the reference agent to `said` as a user, as `curl` saves it: SSE text or
/// protobuf frames.
pub async fn agui_capture(accept: &str, faults: &[&str], said: &str) -> Vec<u8> {
    let opts = wireprobe::reference::ServeOptions {
        faults: faults.iter().map(|f| f.to_string()).collect(),
        ..Default::default()
    };
    let target = wireprobe::reference::start("agui", "127.0.0.1:0".parse().expect("addr"), &opts)
        .await
        .expect("the reference agent starts");
    let input = serde_json::json!({
        "threadId": "t", "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": said}],
    });
    let body = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .post(&target.url)
        .header("accept", accept)
        .header("content-type", "application/json")
        .body(input.to_string())
        .send()
        .await
        .expect("answered")
        .bytes()
        .await
        .expect("a body");
    body.to_vec()
}

/// The events of SSE text, one JSON per line (what `--from server` reads).
fn events_of(sse: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(sse).lines() {
        if let Some(data) = line.strip_prefix("data:") {
            out.extend(data.trim_start().as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// The rules a JSON report's rules table shows broken.
fn broken_rules(report: &Value) -> Vec<String> {
    report["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| matches!(r["verdict"].as_str(), Some("fail" | "warn")))
        .filter_map(|r| r["id"].as_str().map(str::to_owned))
        .collect()
}

/// A fault `run` catches is caught by `check` on the same events, from the stream alone:
/// as the SSE text and as bare event lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_judges_a_capture_as_run_judges_the_same_events() {
    let say = "wireprobe: say hello";
    for (fault, said, rule) in [
        (
            "reasoning-as-assistant",
            "wireprobe: reason the sum is four",
            "AGUI-VAL-001",
        ),
        ("finishes-other-thread", say, "AGUI-ID-001"),
        ("truncates", say, "AGUI-RUN-005"),
        ("long-version", say, "AGUI-VER-003"),
        ("finishes-other-run", say, "AGUI-ID-002"),
    ] {
        let dir = tempfile::tempdir().expect("a temp dir");
        let report = dir.path().join("run.json");
        let run = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
            .args(["run", "agui", "--target", "builtin", "--transport", "sse"])
            .args(["--fault", fault, "--report"])
            .arg(format!("json={}", report.display()))
            .output()
            .expect("wireprobe runs");
        let text = std::fs::read_to_string(&report).expect("the run's report");
        let run_report: Value = serde_json::from_str(&text).expect("JSON");
        assert!(
            broken_rules(&run_report).iter().any(|r| r == rule),
            "run --fault {fault}: {}",
            String::from_utf8_lossy(&run.stdout)
        );
        let sse = agui_capture("text/event-stream", &[fault], said).await;
        for (form, bytes, args) in [
            ("sse", sse.clone(), &[][..]),
            ("events", events_of(&sse), &["--from", "server"][..]),
        ] {
            let file = dir.path().join(format!("capture.{form}"));
            std::fs::write(&file, bytes).expect("written");
            let (out, report) = check_file(&file, args);
            assert!(
                broken_rules(&report).iter().any(|r| r == rule),
                "check of {fault}'s capture as {form}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

/// The user's line the capture tests send: a tool call and its result.
const SAY_TOOL: &str = "wireprobe: tool echo {\"a\": 1}";

/// `check agui` on `bytes` given on stdin.
fn check_bytes(bytes: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .args(["check", "agui"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("wireprobe runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(bytes).expect("write stdin");
    drop(stdin);
    child.wait_with_output().expect("wireprobe ends")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agui_answers_are_checked_from_sse_text_and_protobuf_frames() {
    for accept in ["text/event-stream", "application/vnd.ag-ui.event+proto"] {
        let whole = agui_capture(accept, &[], SAY_TOOL).await;
        let out = check_bytes(&whole);
        assert!(
            out.status.success(),
            "{accept}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        // The body cut short: the run never ends, a truncated run.
        let cut = &whole[..whole.len() * 2 / 3];
        let out = check_bytes(cut);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.status.success() && said.contains("AGUI-RUN-005"),
            "{accept}: {said}"
        );
        // A fault shows under its rule.
        let faulty = agui_capture(accept, &["finishes-other-run", "crlf-lines"], SAY_TOOL).await;
        let out = check_bytes(&faulty);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("AGUI-ID-002"), "{accept}: {said}");
        // Only the SSE text has line ends to judge.
        assert_eq!(
            said.contains("AGUI-HTTP-005"),
            accept == "text/event-stream",
            "{accept}: {said}"
        );
    }
}
