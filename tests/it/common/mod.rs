//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod bounded;
pub mod distant;
pub mod hostile;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wireprobe::protocol;
use wireprobe::reference::{self, ServeOptions};
use wireprobe::results::CaseResult;
use wireprobe::suite::filter::CaseFilter;
use wireprobe::suite::runner::{run_suite, Credentials, RunConfig};
use wireprobe::suite::{self};
use wireprobe::verdict::Verdict;

/// `(case id, verdict)` of every case the filter selected.
pub type Verdicts = Vec<(String, Verdict)>;

pub const TEST_SECRET: &str = "wireprobe-test-secret";

/// Runs the bundled HAIP suite against an in-process reference target with `faults`.
pub async fn run_builtin(faults: &[&str], filter: Option<&str>) -> Verdicts {
    run_protocol("haip", faults, filter).await
}

/// Runs a protocol's bundled suite against its in-process reference target with `faults`.
pub async fn run_protocol(protocol: &str, faults: &[&str], filter: Option<&str>) -> Verdicts {
    run_protocol_results(protocol, faults, filter)
        .await
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

pub async fn run_builtin_results(faults: &[&str], filter: Option<&str>) -> Vec<CaseResult> {
    run_protocol_results("haip", faults, filter).await
}

pub async fn run_protocol_results(
    id: &str,
    faults: &[&str],
    filter: Option<&str>,
) -> Vec<CaseResult> {
    run_reference(id, faults, &[], filter).await
}

/// Runs a protocol's bundled suite against its reference target started with `faults` and
/// `variants`.
pub async fn run_reference(
    id: &str,
    faults: &[&str],
    variants: &[&str],
    filter: Option<&str>,
) -> Vec<CaseResult> {
    run_reference_as(Target::default_of(id), faults, variants, filter).await
}

/// Which reference target a test runs against: a protocol, the part it plays, and over which
/// transport (`None`: the protocol's default).
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub id: &'a str,
    pub role: Option<&'a str>,
    pub transport: Option<protocol::TransportKind>,
}

impl<'a> Target<'a> {
    pub fn default_of(id: &'a str) -> Self {
        Target {
            id,
            role: None,
            transport: None,
        }
    }
}

/// [`run_reference`] against `target`.
pub async fn run_reference_as(
    target: Target<'_>,
    faults: &[&str],
    variants: &[&str],
    filter: Option<&str>,
) -> Vec<CaseResult> {
    let protocol = protocol::get(target.id).expect("protocol is registered");
    let (_target, cfg) = start_reference(target, faults, variants, filter).await;
    let mut bundled = suite::load_bundled(protocol).expect("bundled suite loads");
    scale_spec_timers(&mut bundled);
    run_suite(protocol, &bundled, &cfg, &|_| {})
        .await
        .expect("target reachable")
}

/// The cases of a suite file's `text` run against `id`'s reference target.
pub async fn run_text_against_reference(id: &str, text: &str) -> Vec<CaseResult> {
    let protocol = protocol::get(id).expect("protocol is registered");
    let (_target, cfg) = start_reference(Target::default_of(id), &[], &[], None).await;
    run_text(protocol, text, &cfg).await
}

/// The cases of a suite file's `text` run as `cfg` says.
async fn run_text(
    protocol: &'static dyn protocol::Protocol,
    text: &str,
    cfg: &RunConfig,
) -> Vec<CaseResult> {
    let suite = suite::loader::load_texts(protocol, &[("t.toml".into(), text.into())])
        .expect("the suite loads");
    run_suite(protocol, &suite, cfg, &|_| {})
        .await
        .expect("target reachable")
}

/// The cases of a suite file's `text` run against `id`'s reference target, started with
/// `faults` and `variants` and reached through a [`distant::proxy`] that holds each chunk
/// `each_way`.
pub async fn run_text_from_afar(
    id: &str,
    [faults, variants]: [&[&str]; 2],
    text: &str,
    each_way: Duration,
) -> Vec<CaseResult> {
    run_text_through(id, [faults, variants], text, |addr| {
        distant::proxy(addr, each_way)
    })
    .await
}

/// The cases of a suite file's `text` run against `id`'s reference target, started with
/// `faults` and `variants` and reached through the proxy `proxy` starts in front of it.
async fn run_text_through<P, Fut>(
    id: &str,
    [faults, variants]: [&[&str]; 2],
    text: &str,
    proxy: P,
) -> Vec<CaseResult>
where
    P: FnOnce(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = SocketAddr>,
{
    let protocol = protocol::get(id).expect("protocol is registered");
    let (target, mut cfg) = start_reference(Target::default_of(id), faults, variants, None).await;
    let target = target.expect("a network reference target");
    let far = proxy(target.addr).await;
    cfg.target_url = cfg
        .target_url
        .replace(&target.addr.to_string(), &far.to_string());
    run_text(protocol, text, &cfg).await
}

/// The cases of a suite file's `text` run against `id`'s reference target, started with
/// `faults` and `variants`, through a [`distant::late_after_open`] proxy: nothing for a
/// connection's first 300 ms (its opening), 250 ms each way after.
pub async fn run_text_answering_late(
    id: &str,
    [faults, variants]: [&[&str]; 2],
    text: &str,
) -> Vec<CaseResult> {
    let late = |addr| {
        let (each_way, after) = (Duration::from_millis(250), Duration::from_millis(300));
        distant::late_after_open(addr, each_way, after)
    };
    run_text_through(id, [faults, variants], text, late).await
}

/// The cases of a suite file's `text` run against `id`'s reference target through a
/// [`distant::slow_to_open`] proxy: 300 ms each way for a connection's first 500 ms (its
/// opening), nothing after.
pub async fn run_text_slow_to_open(id: &str, text: &str) -> Vec<CaseResult> {
    let slow = |addr| {
        let (each_way, first) = (Duration::from_millis(300), Duration::from_millis(500));
        distant::slow_to_open(addr, each_way, first)
    };
    run_text_through(id, [&[], &[]], text, slow).await
}

/// `target`'s reference target started with `faults` and `variants` (none for a stdio one:
/// the config starts a process per case), and how the tests run cases against it.
/// Variants slow on purpose, past the tests' 1 s steps (see [`start_reference`]).
const SLOW_ON_PURPOSE: &[&str] = &["slow-first-error"];

async fn start_reference(
    target: Target<'_>,
    faults: &[&str],
    variants: &[&str],
    filter: Option<&str>,
) -> (Option<reference::RunningTarget>, RunConfig) {
    let id = target.id;
    let protocol = protocol::get(id).expect("protocol is registered");
    // A protocol with a process form and a network form runs over the one chosen, else its
    // network form (the command line picks it from the target's form).
    let transport = target
        .transport
        .or_else(|| protocol::transport_of_form(protocol, false));
    let stdio = transport.unwrap_or(protocol.transport()) == protocol::TransportKind::Stdio;
    // A stdio protocol's reference target is this package's binary, one process per case.
    let (target_handle, mut cfg) = if stdio {
        let mut cfg = RunConfig::new(format!("builtin {id}"));
        cfg.exec = builtin_stdio_command(id, faults);
        for variant in variants {
            cfg.exec
                .extend(["--variant".to_owned(), variant.to_string()]);
        }
        if let Some(role) = target.role {
            cfg.exec.extend(["--role".to_owned(), role.to_owned()]);
        }
        (None, cfg)
    } else {
        let opts = ServeOptions {
            faults: faults.iter().map(|f| f.to_string()).collect(),
            variants: variants.iter().map(|v| v.to_string()).collect(),
            jwt_secret: Some(TEST_SECRET.into()),
            // HUMA's confirmation timeout, scaled from the spec's 30 s.
            confirm_timeout: Some(Duration::from_millis(1500)),
            role: target.role.map(str::to_owned),
            ..ServeOptions::default()
        };
        let target = reference::start(id, SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
            .await
            .expect("reference target starts");
        let url = RunConfig::scoped_per_case(protocol, &target.url);
        (Some(target), RunConfig::new(url))
    };
    cfg = test_config(cfg, filter);
    cfg.transport = transport;
    cfg.role = target.role.map(str::to_owned);
    // A process per case starts slowly when dozens start at once on two cores: its first
    // line (the handshake) gets more time than a network target's reply.
    if stdio {
        cfg.step_timeout = Duration::from_millis(2000);
    }
    // A variant slow on purpose (HAIP's first ERROR, 2.5 s late) is judged at `run`'s own
    // budget: its slowness is legal, and a case waiting 1 s for it would say otherwise.
    if variants.iter().any(|v| SLOW_ON_PURPOSE.contains(v)) {
        cfg.step_timeout = RunConfig::new(String::new()).step_timeout;
    }
    (target_handle, cfg)
}

/// The reference targets run the specs' timers scaled down (HUMA's 30 s confirmation timeout
/// is 1.5 s here): a wait a case sizes to such a timer (over 30 s) is scaled alike, to 5 s, so
/// a target that never acts on the timer fails in seconds, not in half a minute.
fn scale_spec_timers(bundled: &mut suite::model::Suite) {
    use suite::model::Action;
    for case in &mut bundled.cases {
        for step in case.steps.iter_mut().chain(case.fallback.iter_mut()) {
            if let Action::Expect(expect) = &mut step.action {
                if expect.within_ms.is_some_and(|ms| ms > 30_000) {
                    expect.within_ms = Some(5_000);
                }
            }
        }
    }
}

/// How the tests run a suite: 1 s steps, 8 cases at once, tokens minted with
/// [`TEST_SECRET`], and only the cases `glob` selects (all without one).
pub fn test_config(mut cfg: RunConfig, glob: Option<&str>) -> RunConfig {
    cfg.step_timeout = Duration::from_millis(1000);
    cfg.jobs = 8;
    cfg.credentials = Credentials {
        token: None,
        jwt_secret: Some(TEST_SECRET.into()),
        claims: None,
    };
    if let Some(glob) = glob {
        cfg.filter = CaseFilter::new(&[glob.to_string()], &[]).expect("glob parses");
    }
    cfg
}

/// `wireprobe serve ID --stdio` with `faults` (and, for a protocol that is only a process, a
/// database in the case's `{tmp}`).
pub fn builtin_stdio_command(id: &str, faults: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = [env!("CARGO_BIN_EXE_wireprobe"), "serve", id, "--stdio"]
        .map(str::to_owned)
        .to_vec();
    let p = protocol::get(id).expect("protocol is registered");
    if p.transports() == [protocol::TransportKind::Stdio] {
        argv.extend(["--db".to_owned(), "{tmp}/agent.db".to_owned()]);
    }
    for fault in faults {
        argv.extend(["--fault".to_owned(), fault.to_string()]);
    }
    argv
}

/// The rule and the run (0-based, as a string) of the `finding: RULE (verdict) in run N
/// (after T s): …` line `wireprobe fuzz` prints, when it printed one.
pub fn fuzz_finding(stdout: &str) -> Option<(String, Option<String>)> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("finding: "))?;
    let rule = line.split_whitespace().next()?.to_owned();
    let run = line
        .split(" in run ")
        .nth(1)
        .and_then(|rest| rest.split([':', ' ']).next())
        .map(str::to_owned);
    Some((rule, run))
}

/// A deadline five seconds from now.
pub fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(5)
}

/// The next Socket.IO packet on `conn`, skipping Engine.IO control packets (open, ping).
pub async fn next_sio(
    conn: &mut wireprobe::transport::Connection,
) -> wireprobe::transport::socketio::packet::SioPacket {
    use wireprobe::transport::socketio::packet::{parse_eio, parse_sio, EioPacket};
    use wireprobe::transport::{Frame, Received};
    loop {
        match conn.recv(soon()).await {
            Some((Received::Frame(Frame::Text(t)), _)) => match parse_eio(&t).expect("Engine.IO") {
                EioPacket::Message(m) => return parse_sio(&m).expect("Socket.IO"),
                _ => continue,
            },
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// A fault, an optional case filter, and the verdict of every case that does not pass.
pub type Expectation = (
    &'static str,
    Option<&'static str>,
    &'static [(&'static str, Verdict)],
);

/// What each fault of `protocol`'s reference target declares it fails
/// ([`reference::Fault::fails`]).
pub fn expectations(protocol: &str) -> Vec<Expectation> {
    reference::get(protocol)
        .expect("protocol has a reference")
        .faults
        .iter()
        .map(|f| (f.name, f.cases, f.fails))
        .collect()
}

/// Runs the suite once per fault (six at a time) and checks each fails exactly the cases it
/// declares.
pub async fn assert_fault_matrix(protocol: &'static str) {
    assert_fault_matrix_as(Target::default_of(protocol)).await
}

/// [`assert_fault_matrix`] against `target`: a target playing one role runs that role's
/// cases, and is held to the declared verdicts of those.
pub async fn assert_fault_matrix_as(target: Target<'static>) {
    use futures_util::StreamExt;
    use std::collections::BTreeSet;
    type Observed = (
        &'static str,
        Vec<CaseResult>,
        &'static [(&'static str, Verdict)],
    );
    let expected = expectations(target.id);
    let results: Vec<Observed> = futures_util::stream::iter(expected.clone())
        .map(|(fault, filter, want)| async move {
            (
                fault,
                run_reference_as(target, &[fault], &[], filter).await,
                want,
            )
        })
        .buffer_unordered(6)
        .collect()
        .await;
    let mut problems = Vec::new();
    for (fault, mut results, declared) in results {
        // The declared cases this run has (a role's run has that role's cases).
        let want = |results: &[CaseResult]| -> BTreeSet<(String, Verdict)> {
            declared
                .iter()
                .filter(|(id, _)| results.iter().any(|r| r.id == *id))
                .map(|(id, v)| (id.to_string(), *v))
                .collect()
        };
        let surprises = |results: &[CaseResult]| -> Vec<(String, Verdict)> {
            let got: BTreeSet<(String, Verdict)> = results
                .iter()
                .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::Info))
                .map(|r| (r.id.clone(), r.verdict))
                .collect();
            got.symmetric_difference(&want(results)).cloned().collect()
        };
        // Six suites at once, eight cases each, at 1 s steps: on a machine the rest of the
        // tests keep busy, a case now and then runs out of time before its run ends (a `skip`,
        // a large send's `error`, a `fail` for a RUN_FINISHED that came at 1.1 s). A fault's
        // verdicts are deterministic, so a suite that disagrees runs once more, alone, and
        // only a second disagreement fails; the first is printed, so a flake stays visible.
        let first = surprises(&results);
        if !first.is_empty() {
            eprintln!("fault {fault}: ran again after {first:?}");
            results = run_reference_as(target, &[fault], &[], filter_of(&expected, fault)).await;
        }
        let want = want(&results);
        let judged: Vec<&CaseResult> = results
            .iter()
            .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::Info))
            .collect();
        let got: BTreeSet<(String, Verdict)> =
            judged.iter().map(|r| (r.id.clone(), r.verdict)).collect();
        if got != want {
            // The messages of the surprises say why, for a flake seen once.
            let why: Vec<String> = judged
                .iter()
                .filter(|r| !want.contains(&(r.id.clone(), r.verdict)))
                .map(|r| format!("    {} {}: {}", r.verdict, r.id, r.message))
                .collect();
            problems.push(format!(
                "fault {fault}:\n  expected {want:?}\n  got      {got:?}\n{}",
                why.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The case filter `expected` gives `fault`.
fn filter_of(expected: &[Expectation], fault: &str) -> Option<&'static str> {
    expected
        .iter()
        .find(|(name, _, _)| *name == fault)
        .and_then(|(_, filter, _)| *filter)
}

/// Every fault declares a case it fails or warns that lists a rule the fault breaks, and
/// every case it declares is one of the bundled suite; every rule has a case; every must rule
/// has a fault.
pub fn assert_fault_coverage(protocol: &str) {
    assert_fault_coverage_except(protocol, &[]);
}

/// [`assert_fault_coverage`], but the rules in `offline` need no case and no fault: they judge
/// the party wireprobe plays live, and recorded transcripts show they can fail.
pub fn assert_fault_coverage_except(protocol: &str, offline: &[&str]) {
    assert_fault_coverage_with(protocol, offline, &[])
}

/// [`assert_fault_coverage_except`], but the faults in `overlapping` fail no case of a suite
/// run: only sessions under way at once show them, which a campaign's runs are
/// (`tests/it/fuzz_live/replays.rs` finds each, replayed among its company).
pub fn assert_fault_coverage_with(protocol: &str, offline: &[&str], overlapping: &[&str]) {
    let p = protocol::get(protocol).expect("protocol is registered");
    let bundled = suite::load_bundled(p).expect("bundled suite loads");
    let faults = reference::get(protocol)
        .expect("protocol has a reference")
        .faults;
    for fault in faults {
        // A run over several transports names the case `ID@transport`.
        let case_of = |case_id: &str| {
            bundled
                .cases
                .iter()
                .find(|c| case_id.split('@').next() == Some(c.id.as_str()))
        };
        // The matrix runs a fault on the cases its pattern selects: a case declared outside
        // them would never be held to its verdict.
        let pattern = fault.cases.map(|p| vec![p.to_owned()]).unwrap_or_default();
        let selected = wireprobe::suite::filter::CaseFilter::new(&pattern, &[]).expect("a glob");
        for (case_id, _) in fault.fails {
            let case = case_of(case_id).unwrap_or_else(|| {
                panic!(
                    "fault {} declares {case_id}, which is no case of the bundled suite",
                    fault.name
                )
            });
            assert!(
                selected.selects(&case.id),
                "fault {} declares {case_id}, which its cases ({pattern:?}) leave out",
                fault.name
            );
        }
        let judged: Vec<_> = fault
            .fails
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Fail | Verdict::Warn))
            .collect();
        // A fault of rules that only record (`info`) can fail nothing; `check` shows it seen.
        let records_only = fault.breaks.iter().all(|id| {
            wireprobe::rules::find(p.rules(), id)
                .is_some_and(|r| r.level == wireprobe::rules::Level::Info)
        });
        assert!(
            !judged.is_empty() || records_only || overlapping.contains(&fault.name),
            "fault {} fails no case",
            fault.name
        );
        for (case_id, _) in judged {
            let case = case_of(case_id).expect("case exists");
            assert!(
                case.rules
                    .iter()
                    .any(|r| fault.breaks.contains(&r.as_str())),
                "fault {} fails {case_id}, which lists none of the rules it breaks ({:?})",
                fault.name,
                fault.breaks
            );
        }
    }
    // Rules that bind only clients are the client suite's (tests/client_runs.rs).
    let served = p.rules().iter().filter(|r| r.binds.applies(true));
    for rule in served.filter(|r| !offline.contains(&r.id)) {
        assert!(
            bundled
                .cases
                .iter()
                .any(|c| c.rules.iter().any(|r| r == rule.id)),
            "rule {} has no case",
            rule.id
        );
        if rule.level == wireprobe::rules::Level::Must {
            assert!(
                faults.iter().any(|f| f.breaks.contains(&rule.id)),
                "must rule {} has no fault",
                rule.id
            );
        }
    }
}

/// The correct reference target passes every case (`info` cases record, they do not judge).
pub async fn assert_reference_passes(protocol: &str) {
    let verdicts = run_protocol(protocol, &[], None).await;
    let not_passing: Vec<_> = verdicts
        .iter()
        .filter(|(_, v)| !matches!(v, Verdict::Pass | Verdict::Info))
        .collect();
    assert!(
        not_passing.is_empty(),
        "the correct reference target must pass: {not_passing:?}"
    );
}

/// Every file under `dir` (its subfolders too) whose name ends with `ending` (`""`: all),
/// sorted.
pub fn files_under(dir: &Path, ending: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("a readable folder")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.to_string_lossy().ends_with(ending) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The lines of a Rust source that are code, numbered from 1: comment lines are passed over,
/// and an inline test module closes the file, by this project's habit (tests may name what
/// the code may not).
pub fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let next = lines.get(at + 1).copied().unwrap_or_default();
        if trimmed.starts_with("#[cfg(test)]") && next.contains('{') {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push((at + 1, trimmed));
        }
    }
    code
}
