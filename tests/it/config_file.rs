//! `wireprobe.toml` / `run --config PATH`: a CI job in one line, with credentials from the
//! environment, paths relative to the file, and the command line winning over the file.

use std::path::Path;
use std::process::{Command, Output};

fn wireprobe(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wireprobe"))
        .current_dir(dir)
        .args(args)
        .env_remove("WIREPROBE_TEST_SECRET")
        .envs(env.iter().copied())
        .output()
        .expect("wireprobe runs")
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::fs::write(path, text).expect("write");
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("report written")).expect("JSON report")
}

/// The whole job from the file: protocol, builtin target with a fault, the known-failing list
/// that excuses it, a report path relative to the file. Then an option given on the command
/// line overrides the file's.
#[test]
fn a_config_file_is_a_whole_ci_job() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        &dir.path().join("ci/wireprobe.toml"),
        r#"
protocol = "uae"
target = "builtin"
faults = ["epoch-ts"]
timeout_ms = 1500
known_failing = "known-failing.txt"
reports = ["json=out/run.json"]
transcripts = "none"
"#,
    );
    write(
        &dir.path().join("ci/known-failing.txt"),
        "uae.agent.envelope\n",
    );
    let out = wireprobe(dir.path(), &["run", "--config", "ci/wireprobe.toml"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run = report(&dir.path().join("ci/out/run.json"));
    assert!(run["target"]
        .as_str()
        .is_some_and(|t| t.starts_with("builtin --fault epoch-ts")));
    assert_eq!(
        run["cases"][0]["transcript"],
        serde_json::json!([]),
        "transcripts = none"
    );

    let out = wireprobe(
        dir.path(),
        &[
            "run",
            "--config",
            "ci/wireprobe.toml",
            "--transcripts",
            "all",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run = report(&dir.path().join("ci/out/run.json"));
    assert!(
        run["cases"][0]["transcript"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "the command line wins"
    );

    // A target on the command line replaces the file's (no conflict between --target and
    // --exec the user never typed).
    let out = wireprobe(
        dir.path(),
        &["run", "--config", "ci/wireprobe.toml", "--exec", "true"],
        &[],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("cannot be used with"), "{said}");
}

/// `jwt_secret_env` reads the secret from the environment: the auth cases run (they skip
/// without credentials). Unset, it is a usage error naming the variable.
#[test]
fn credentials_come_from_environment_variables() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        &dir.path().join("wireprobe.toml"),
        r#"
protocol = "haip"
target = "builtin"
jwt_secret_env = "WIREPROBE_TEST_SECRET"
cases = ["haip.auth.missing-token"]
report = "json=run.json"
"#,
    );
    let out = wireprobe(dir.path(), &["run"], &[("WIREPROBE_TEST_SECRET", "s3cret")]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("using wireprobe.toml"));
    let run = report(&dir.path().join("run.json"));
    assert_eq!(run["summary"]["pass"], 1, "{run}");

    let unset = wireprobe(dir.path(), &["run"], &[]);
    assert_eq!(unset.status.code(), Some(2), "{unset:?}");
    let said = String::from_utf8_lossy(&unset.stderr);
    assert!(
        said.contains("WIREPROBE_TEST_SECRET, which is not set"),
        "{said}"
    );
}

/// Mistakes in the file are usage errors that say what to write instead; a default file for
/// another protocol is left alone, a named one is refused.
#[test]
fn a_broken_config_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        ("jwt_secret = \"x\"\n", "jwt_secret_env = \"NAME\""),
        ("tagret = \"builtin\"\n", "unknown key `tagret`"),
        ("target = [1.5]\n", "takes strings, numbers or true"),
        ("protocol = \"mqtt\"\n", "not one wireprobe knows"),
        ("target = \n", "not valid TOML"),
    ];
    for (text, expected) in cases {
        write(&dir.path().join("bad.toml"), text);
        let out = wireprobe(dir.path(), &["run", "haip", "--config", "bad.toml"], &[]);
        assert_eq!(out.status.code(), Some(2), "{text}: {out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(expected), "{text}: {said}");
    }
    write(
        &dir.path().join("wireprobe.toml"),
        "protocol = \"uae\"\ntarget = \"ws://127.0.0.1:9/\"\n",
    );
    let named = wireprobe(
        dir.path(),
        &["run", "haip", "--config", "wireprobe.toml"],
        &[],
    );
    assert_eq!(named.status.code(), Some(2), "{named:?}");
    assert!(String::from_utf8_lossy(&named.stderr).contains("configures a uae run"));
    // The default file is for uae: a haip run ignores it (and so needs its own target).
    let other = wireprobe(
        dir.path(),
        &["run", "haip", "--target", "builtin", "--case", "haip.ping*"],
        &[],
    );
    assert_eq!(other.status.code(), Some(0), "{other:?}");
}
