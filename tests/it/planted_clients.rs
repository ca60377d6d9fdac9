//! Clients of our own with one planted bug each (tests/node/nuum-host.js `--writes=HOW`,
//! tests/node/hpd-client.js `--bug=HOW`): each is judged on the case its bug breaks, with
//! the verdict the bug earns, and the console says what the rules table holds.

use crate::node_interop::judged_client_given;
use serde_json::Value;

/// Case `id` of a client run's report.
fn case_entry<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["cases"]
        .as_array()
        .and_then(|cases| cases.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no case {id}: {report:#}"))
}

/// The verdict and message of `id` in a client run's report.
fn case<'r>(report: &'r Value, id: &str) -> (&'r str, &'r str) {
    let found = case_entry(report, id);
    (
        found["verdict"].as_str().unwrap_or_default(),
        found["message"].as_str().unwrap_or_default(),
    )
}

/// A host that writes broken NDJSON spoke, however badly: it is judged (NUUM-HOST-002 fails
/// the case about its lines, exit 1), not called unreachable.
#[test]
fn a_nuum_host_writing_broken_ndjson_is_judged_not_called_unreachable() {
    for how in ["two-on-a-line", "pretty", "dict", "latin1"] {
        let (output, report) = judged_client_given(
            "nuum",
            "nuum-host.js",
            &format!("--writes={how}"),
            &["--case", "nuum.host.user-message"],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{how}: {stderr}");
        let (verdict, message) = case(&report, "nuum.host.user-message");
        assert_eq!(verdict, "fail", "{how}: {message}");
        assert!(message.contains("NUUM-HOST-002"), "{how}: {message}");
        assert!(!stderr.contains("never sent"), "{how}: {stderr}");
    }
}

/// A host that writes a line before its agent's init is recorded writing it first, though the
/// line crossed the relay after the init wireprobe sent: the transcript keeps the order on
/// the host's pipes, which is what the rules read.
#[test]
fn a_nuum_host_writing_before_its_agents_init_is_recorded_first() {
    let (_, report) = judged_client_given(
        "nuum",
        "nuum-host.js",
        "--writes=early",
        &["--case", "nuum.host.user-message"],
    );
    let found = case_entry(&report, "nuum.host.user-message");
    let kinds: Vec<String> = found["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let frame = entry.get("frame")?;
            let kind = frame["type"].as_str().unwrap_or_default();
            Some(format!(
                "{} {kind}",
                entry["from"].as_str().unwrap_or_default()
            ))
        })
        .collect();
    assert_eq!(
        kinds.get(..3),
        Some(
            &[
                "client control".to_owned(),
                "server system".into(),
                "client user".into()
            ][..]
        ),
        "{kinds:?}"
    );
    assert_eq!(found["verdict"], "pass", "{found:#}");
}

/// An HPD client whose envelopes break the envelope rules, or that posts an input of a type no
/// agent can deserialize, warns on the case about its envelopes, and the console's summary
/// names the rules.
#[test]
fn an_hpd_client_breaking_envelope_rules_warns_on_its_case() {
    for (bug, rule) in [
        ("no-version", "HPD-ENV-002"),
        ("lower-type", "HPD-ENV-003"),
        ("user-input", "HPD-CLI-006"),
    ] {
        let (output, report) = judged_client_given(
            "hpd",
            "hpd-client.js",
            &format!("--bug={bug}"),
            &["--case", "hpd.client.permission-answered"],
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let (verdict, message) = case(&report, "hpd.client.permission-answered");
        assert_eq!(verdict, "warn", "{bug}: {message}");
        assert!(message.contains(rule), "{bug}: {message}");
        assert!(
            stdout.contains(&format!("warned: {rule}")),
            "{bug}: {stdout}"
        );
        assert_eq!(output.status.code(), Some(0), "{bug}: {stdout}");
    }
}

/// Playing the hosted agent over `/ws`, wireprobe closes on an invalid event frame with 1007,
/// as the spec has the agent do. Whether the client prints that it saw the close before the
/// case stops it is the client's timing (on a loaded machine it may not have yet), so the
/// transcript's own close, code 1007, is what is held.
#[test]
fn wireprobe_serving_hpd_over_websocket_closes_an_invalid_frame_with_1007() {
    let (_, report) = judged_client_given(
        "hpd",
        "hpd-client.js",
        "--ws --bug=user-input",
        &[
            "--transport",
            "ws",
            "--case",
            "hpd.client.permission-answered",
            "--transcripts",
            "all",
        ],
    );
    let transcript = report["cases"][0]["transcript"].to_string();
    assert!(
        transcript.contains(r#""close":{"code":1007"#),
        "{transcript}"
    );
    assert!(
        transcript.contains("wireprobe closed the WebSocket with 1007"),
        "{transcript}"
    );
}
