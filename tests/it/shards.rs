//! `run --shard I/N` and `report merge`: the shards of a builtin run, merged, give the
//! unsharded run's verdicts (every case once, each rule's verdict, the summary); reports that
//! are not every shard of one run, each once, are refused with the reason.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use wireprobe::report::Report;

fn wireprobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wireprobe"))
}

/// `run haip --target builtin` with `args`, its JSON report written to `out`.
fn run(args: &[&str], out: &Path) {
    let status = wireprobe()
        .args(["run", "haip", "--target", "builtin", "--jobs", "8"])
        .args(args)
        .arg("--report")
        .arg(format!("json={}", out.display()))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("wireprobe runs");
    assert!(status.code().is_some_and(|c| c <= 1), "{args:?}: {status}");
}

fn read(path: &Path) -> Report {
    serde_json::from_slice(&std::fs::read(path).expect("a report")).expect("a JSON report")
}

/// Case id → verdict, and rule id → verdict.
fn verdicts(report: &Report) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let show = |v: &wireprobe::verdict::Verdict| format!("{v:?}");
    (
        report
            .cases
            .iter()
            .map(|c| (c.id.clone(), show(&c.verdict)))
            .collect(),
        report
            .rules
            .iter()
            .map(|r| (r.id.clone(), show(&r.verdict)))
            .collect(),
    )
}

fn merge(shards: &[&Path]) -> std::process::Output {
    wireprobe()
        .args(["report", "merge"])
        .args(shards)
        .output()
        .expect("wireprobe runs")
}

#[test]
fn three_shards_merged_give_the_whole_runs_verdicts() {
    let dir = tempfile::tempdir().expect("a directory");
    let at = |name: &str| dir.path().join(name);
    // A fault, so some cases and rules fail and the merge has verdicts of every kind to keep.
    let fault = ["--fault", "seq-skips"];
    run(&fault, &at("whole.json"));
    for i in 1..=3 {
        let shard = format!("{i}/3");
        run(
            &[&fault[..], &["--shard", &shard]].concat(),
            &at(&format!("{i}.json")),
        );
    }
    let shards: Vec<_> = (1..=3).map(|i| at(&format!("{i}.json"))).collect();
    let sizes: Vec<usize> = shards.iter().map(|p| read(p).cases.len()).collect();
    assert!(
        sizes.iter().all(|n| *n > 0),
        "each shard runs a share: {sizes:?}"
    );
    let merged = wireprobe()
        .args(["report", "merge"])
        .args(&shards)
        .arg("-o")
        .arg(at("merged.json"))
        .status()
        .expect("wireprobe runs");
    assert!(merged.success());
    let (whole, merged) = (read(&at("whole.json")), read(&at("merged.json")));
    assert_eq!(verdicts(&merged), verdicts(&whole));
    assert_eq!(merged.cases.len(), whole.cases.len(), "every case once");
    assert_eq!(
        serde_json::to_value(&merged.summary).expect("json"),
        serde_json::to_value(&whole.summary).expect("json")
    );
    assert!(merged.shard.is_none());
    assert!(
        merged.summary.fail > 0,
        "the fault shows: {:?}",
        merged.summary
    );

    // Refused, each with its reason.
    let (one, two) = (shards[0].as_path(), shards[1].as_path());
    for (parts, why) in [
        (vec![one, one, two], "the same shard twice"),
        (vec![one, two], "shard 3 of 3 is missing"),
        (vec![at("whole.json").as_path(), one], "is not a shard"),
    ] {
        let out = merge(&parts);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains(why), "{why}: {said}");
    }
    run(
        &["--case", "haip.handshake.*", "--shard", "3/3"],
        &at("other.json"),
    );
    let out = merge(&[one, two, &at("other.json")]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("shards of different runs"), "{said}");
}

/// `fuzz --seed S --fault F`: the run a finding names, and its rule.
fn fuzz_finding(shard: Option<&str>, out: &Path) -> Option<(String, String)> {
    let mut cmd = wireprobe();
    cmd.args(["fuzz", "haip", "--target", "builtin", "--seed", "1"])
        .args(["--fault", "seq-skips", "--runs", "40", "--jobs", "4"])
        .args(["--shrink-secs", "0", "--timeout-ms", "2000"])
        .arg("--out")
        .arg(out);
    if let Some(shard) = shard {
        cmd.args(["--shard", shard]);
    }
    let output = cmd.output().expect("wireprobe runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (rule, run) = crate::common::fuzz_finding(&stdout)?;
    Some((run?, rule))
}

#[test]
fn a_fuzz_shard_makes_the_campaigns_runs_it_holds_and_finds_what_they_find() {
    let dir = tempfile::tempdir().expect("a directory");
    let (run, rule) = fuzz_finding(None, dir.path()).expect("the campaign finds the fault");
    let number: u64 = run.parse().expect("a run number");
    let holder = format!("{}/2", number % 2 + 1);
    let sharded = fuzz_finding(Some(&holder), dir.path());
    assert_eq!(
        sharded,
        Some((run, rule)),
        "shard {holder} holds run {number}"
    );
}
