//! Command-line definitions (the contract in ARCHITECTURE.md).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use wireprobe::report::ReportTarget;

#[derive(Debug, Parser)]
#[command(
    name = "wireprobe",
    version,
    about = "Conformance suites and fuzzing for agent<->UI event protocols"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// What `--help` ends with, after the protocols ([`protocols_help`]): the exit codes, and
/// examples.
const AFTER_HELP: &str = "\
Exit codes:
  0  every must-level case passed (with --strict: every should too); nothing found (fuzz)
  1  a fail or error not in --known-failing, a stale --known-failing entry, a regression
     (report diff), or a finding (fuzz)
  2  usage or configuration error
  3  the target could not be reached at all

Examples:
  wireprobe run haip --target builtin
  wireprobe run --config ci/wireprobe.toml
  wireprobe run haip --target ws://127.0.0.1:9000/haip --jwt-secret \"$SECRET\" --report junit=haip.xml
  wireprobe run nuum --exec \"nuum --stdio --db {tmp}/agent.db\"
  wireprobe run uae --target ws://127.0.0.1:7000/ --role executor --rule 'UAE-RES-*'
  wireprobe fuzz hpd --target http://127.0.0.1:5000/agent --seed 7 --runs 500
  wireprobe check haip recorded.ndjson
  wireprobe report diff baseline.json run.json";

/// Parses the command line; `--help` lists the protocols the registry holds.
pub fn parse(argv: Vec<std::ffi::OsString>) -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let help = format!("{}\n{AFTER_HELP}", protocols_help());
    let matches = Cli::command().after_help(help).get_matches_from(argv);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `Protocols:` and one line per protocol: id, title, transports (`--transport`'s names),
/// roles.
fn protocols_help() -> String {
    let mut help = String::from("Protocols:\n");
    for p in wireprobe::protocol::all() {
        let transports: Vec<&str> = p.transports().iter().map(|k| k.name()).collect();
        let roles = match p.roles() {
            [] => String::new(),
            roles => format!("; --role {}", roles.join("|")),
        };
        help.push_str(&format!(
            "  {:<6} {} ({}{roles})\n",
            p.id(),
            p.title(),
            transports.join(", ")
        ));
    }
    help
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List protocols, or a protocol's rules, cases, reference faults or variants.
    List(ListArgs),
    /// Everything about one rule: its statement, level and side, the spec's words, where the
    /// code names it, its cases, the reference faults that break it, the variants it must
    /// pass and the ERRATA readings that name it (`explain NUUM-INJ-002`).
    Explain {
        /// The rule's id (any protocol's: its prefix says which).
        rule: String,
    },
    /// Run a protocol's suite against a live target.
    Run(Box<RunArgs>),
    /// Fuzz a live target with generated event sequences.
    Fuzz(Box<FuzzArgs>),
    /// Render a saved JSON report again (`report FILE.json --format F -o PATH`), or compare two
    /// (`report diff OLD.json NEW.json`).
    Report(ReportArgs),
    /// Emit generated events as NDJSON on stdout.
    Gen {
        /// The protocol whose events to generate.
        protocol: String,
        /// valid (one consistent sequence, the default), invalid (any mutator), or a mutator's
        /// name.
        #[arg(long, value_name = "valid|invalid|MUTATOR")]
        kind: Option<String>,
        /// How many events (default 10).
        #[arg(long)]
        count: Option<u64>,
        /// The seed generation follows (default: random, printed to stderr).
        #[arg(long)]
        seed: Option<u64>,
        /// UAE: the events of the party that talks to a target playing this role (agent: the
        /// UI's; executor: the agent's tool calls).
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
    },
    /// Validate a recorded transcript offline (NDJSON; `-` or no file reads stdin).
    Check {
        /// The protocol the transcript speaks.
        protocol: String,
        /// NDJSON transcript lines (`{"from", "at_ms", "event"}`), or raw SSE for hpd.
        file: Option<PathBuf>,
        /// Also accept bare event lines, as sent by this side.
        #[arg(long, value_parser = ["client", "server"])]
        from: Option<String>,
        /// The capture was cut short: its end is not the end of the answer it holds (AG-UI: a
        /// run still open there is reported unjudged, not as a truncated run).
        #[arg(long)]
        cut: bool,
        /// Write a report too (repeatable): json, junit, markdown, sarif or html; `-` is stdout.
        #[arg(long = "report", value_name = "FORMAT=PATH")]
        reports: Vec<ReportTarget>,
        /// Should-level violations fail too.
        #[arg(long)]
        strict: bool,
    },
    /// Run a protocol's reference target.
    Serve(ServeArgs),
    /// Run a protocol's reference client against a server until the server closes.
    Client(ClientArgs),
    /// Sit between a real client and a real server: forward every frame unchanged and judge
    /// both sides (`--listen ADDR --upstream URL`, or `-- CMD ARGS` for a stdio agent).
    Proxy(ProxyArgs),
    /// Stand in for a host's agent: copy stdin to ADDR and ADDR to stdout, unchanged, telling
    /// ADDR when each of its lines reached stdout (what `{agent}` starts when `run --client`
    /// judges a host of a stdio protocol).
    Relay {
        /// The judging run's loopback address (`127.0.0.1:PORT`).
        addr: String,
    },
}

#[derive(Debug, Args)]
// A configuration file's settings come first on the command line: an option given again wins.
#[command(args_override_self = true)]
pub struct RunArgs {
    /// The protocol to test (`wireprobe list` names them); may come from the configuration.
    pub protocol: String,
    /// Settings from this file (`wireprobe.toml` in the working directory is read when it
    /// exists): target, credentials from environment variables, known-failing and known-flaky
    /// lists, reports. An option on the command line wins over the file's.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Judge a client: wireprobe serves, and the client under test (`--exec "CMD {url}"`,
    /// started once per case, or `--target builtin`, the reference client) connects.
    #[arg(long)]
    pub client: bool,
    /// With --client and no --exec: where the clients your own harness starts connect
    /// (HOST:PORT); each connection runs the next case, in suite order.
    #[arg(long, value_name = "ADDR", requires = "client", conflicts_with_all = ["exec", "target"])]
    pub listen: Option<String>,
    #[command(flatten)]
    pub target: TargetFlags,
    /// A suite file or directory (default: the suite built into wireprobe).
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// Run only cases whose id matches (repeatable).
    #[arg(long = "case", value_name = "GLOB")]
    pub cases: Vec<String>,
    /// Skip cases whose id matches (repeatable).
    #[arg(long = "skip", value_name = "GLOB")]
    pub skips: Vec<String>,
    /// Run only cases written for a rule whose id matches (repeatable): `--rule 'HAIP-SEQ-*'`.
    #[arg(long = "rule", value_name = "GLOB")]
    pub rules: Vec<String>,
    /// Run shard I of N: the cases the other options select, split by id the same way on
    /// every machine, so N jobs cover the run once; `report merge` joins their JSON reports.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<wireprobe::shard::Shard>,
    /// Start no new case once this many have failed or errored (the rest are skipped).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_failures: Option<u64>,
    /// Should-level failures (warn) fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// Budget of each waiting step, in milliseconds.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub timeout_ms: u64,
    /// Cases run at once, each on its own connection.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
    /// Case ids expected to fail, one per line; a listed case that passes is reported as stale.
    #[arg(long, value_name = "FILE")]
    pub known_failing: Option<PathBuf>,
    /// Case ids known to be flaky, one per line: one that fails is run again (up to
    /// --flaky-retries times), what it did is reported, and it never fails the run.
    #[arg(long, value_name = "FILE")]
    pub known_flaky: Option<PathBuf>,
    /// How many times a failing known-flaky case is run again.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=20))]
    pub flaky_retries: u64,
    /// Write a report (repeatable): json, junit, markdown, sarif or html; `-` is stdout.
    #[arg(long = "report", value_name = "FORMAT=PATH")]
    pub reports: Vec<ReportTarget>,
    /// Which cases' transcripts the reports keep: all, failing (not passing), none (default:
    /// all, but JUnit only the failing ones).
    #[arg(long, value_name = "all|failing|none")]
    pub transcripts: Option<wireprobe::report::Transcripts>,
    /// An extra request header, `"Name: value"` (repeatable).
    #[arg(long = "header", value_name = "K: V")]
    pub headers: Vec<String>,
    /// Largest frame accepted from the target, in bytes.
    #[arg(long, default_value_t = wireprobe::transport::DEFAULT_MAX_FRAME)]
    pub max_frame_bytes: usize,
    /// Socket.IO protocols: the CONNECT auth payload, as JSON.
    #[arg(long, value_name = "JSON")]
    pub auth: Option<String>,
    /// The Engine.IO path of a Socket.IO target.
    #[arg(long, default_value = wireprobe::transport::socketio::DEFAULT_PATH)]
    pub path: String,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub command: Option<ReportCommand>,
    /// A JSON report `run --report json=PATH` saved.
    pub file: Option<PathBuf>,
    /// The format to render it in: json, junit, markdown, sarif, html.
    #[arg(long, default_value = "markdown")]
    pub format: wireprobe::report::Format,
    /// Where to write it (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Should-level findings (warn) count as failures, as `run --strict` does.
    #[arg(long)]
    pub strict: bool,
    /// Which cases' transcripts to keep: all, failing, none (default as `run`).
    #[arg(long, value_name = "all|failing|none")]
    pub transcripts: Option<wireprobe::report::Transcripts>,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// What regressed (passing, now failing), what got fixed, and what is new between two saved
    /// runs; exits 1 on a regression.
    Diff {
        /// The baseline: a JSON report an earlier run saved.
        old: PathBuf,
        /// The run to judge against it.
        new: PathBuf,
        /// A warn counts as failing.
        #[arg(long)]
        strict: bool,
    },
    /// Implementations × rules: one column per saved run (named after its file), one row per
    /// rule, each cell that run's verdict, like Autobahn's report index.
    Matrix {
        /// JSON reports `run --report json=PATH` saved, one per implementation.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// html (a self-contained page) or markdown.
        #[arg(long, default_value = "markdown", value_name = "html|markdown")]
        format: MatrixFormat,
        /// Where to write it (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<PathBuf>,
        /// Shows the run saved as STEM.json under TEXT (a name and its version, say); by
        /// default a column is its file's stem.
        #[arg(long = "label", value_name = "STEM=TEXT")]
        labels: Vec<String>,
        /// An implementation that could not be run, shown as a column saying why (repeatable).
        #[arg(long = "absent", value_name = "NAME=WHY")]
        absent: Vec<String>,
    },
    /// The JSON reports of one run's shards (`run --shard I/N`) joined into the run's report:
    /// every case once, the summary summed, each rule the worst any shard saw. Reports that
    /// are not every shard of one run, each once, are refused with the reason.
    Merge {
        /// The shards' JSON reports, in any order.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Where to write the merged JSON report (default: standard output).
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<PathBuf>,
    },
}

/// What `report matrix` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatrixFormat {
    Html,
    Markdown,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The protocol whose reference target to run.
    pub protocol: String,
    /// Network protocols: where to listen (HOST:PORT).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Protocols served over stdio (see `--help`): speak NDJSON on stdin and stdout.
    #[arg(long)]
    pub stdio: bool,
    /// A stdio reference that keeps its agent's identity in a database (nuum): where (default:
    /// in memory).
    #[arg(long, value_name = "PATH", requires = "stdio")]
    pub db: Option<PathBuf>,
    /// Break one rule on purpose (repeatable); `wireprobe list PROTOCOL --faults` lists them.
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Behave in a legal but different way (repeatable); `wireprobe list PROTOCOL --variants`
    /// lists them.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Require HS256 bearer tokens signed with this secret.
    #[arg(long)]
    pub jwt_secret: Option<String>,
    /// UAE: the part the reference target plays (agent, executor; default agent).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// HPD: the routes' prefix (`/agent` serves `/agent/inputs`, `/agent/events/live`, …).
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    /// HUMA: how long a messaging burst waits for each confirmation (default 30000).
    #[arg(long)]
    pub confirm_timeout_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The protocol whose reference client to run.
    pub protocol: String,
    /// The server to connect to (`ws://HOST:PORT/PATH`), or for a stdio protocol the agent
    /// command the host starts (`"nuum --stdio"`).
    #[arg(long, value_name = "URL|COMMAND")]
    pub target: String,
    /// Break one client rule on purpose (repeatable); `wireprobe list PROTOCOL --faults`.
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Behave in a legal but different way (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// A token to present as the protocol says (HAIP: `?token=` on the WebSocket URL); empty
    /// is none.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Leave once the server has answered the client's message (HAIP: the run that followed
    /// it ended; Nuum: its result came; UAE: the agent's message came, or every tool call has
    /// its result) instead of waiting for the server to close.
    #[arg(long)]
    pub leave_when_answered: bool,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The protocol the traffic speaks.
    pub protocol: String,
    /// Where clients connect (`127.0.0.1:8080`; port 0 picks one, announced on stderr).
    #[arg(long, value_name = "ADDR", requires = "upstream")]
    pub listen: Option<String>,
    /// The server the traffic goes to: `ws://`, `wss://`, `http://` or `https://` (its path
    /// is where a client asking for `/` goes).
    #[arg(long, value_name = "URL", requires = "listen")]
    pub upstream: Option<String>,
    /// Write a report when the proxy ends (repeatable): json, junit, markdown, sarif or html;
    /// `-` is stdout.
    #[arg(long = "report", value_name = "FORMAT=PATH")]
    pub reports: Vec<ReportTarget>,
    /// Which connections' transcripts the reports keep: all, failing, none (default: failing,
    /// so a long session's memory stays flat).
    #[arg(long, value_name = "all|failing|none")]
    pub transcripts: Option<wireprobe::report::Transcripts>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub duration: Option<u64>,
    /// Stop once the first connection has closed.
    #[arg(long)]
    pub once: bool,
    /// Should-level violations fail too.
    #[arg(long)]
    pub strict: bool,
    /// Rule ids (or connection case ids) expected to fail, one per line.
    #[arg(long, value_name = "FILE")]
    pub known_failing: Option<PathBuf>,
    /// Largest message judged, in bytes; longer ones are forwarded and recorded as too large.
    #[arg(long, default_value_t = wireprobe::transport::DEFAULT_MAX_FRAME)]
    pub max_frame_bytes: usize,
    /// Accept any certificate from a wss:// or https:// upstream.
    #[arg(long)]
    pub insecure: bool,
    /// Budget for reaching the upstream, in milliseconds.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,
    /// The stdio agent to start and stand in for (after `--`).
    #[arg(last = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// The protocol to fuzz.
    pub protocol: String,
    #[command(flatten)]
    pub target: TargetFlags,
    /// Fuzz a client: wireprobe serves and sends it server events, adversarial ones among
    /// them; the client (`--exec "CMD {url}"`, started once per run, or `--target builtin`)
    /// must stay connected and still answer a probe after each.
    #[arg(long)]
    pub client: bool,
    /// The seed every generated sequence follows from (default: random, printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// How many sequences to run (default 200, or no limit with --duration).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,
    /// Stop after this many seconds (and after --runs, when both are given).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub duration: Option<u64>,
    /// Make only shard I of N of the campaign's runs (run K goes to shard K mod N + 1), so N
    /// jobs with the same --seed share one campaign; each run is the sequence it would be
    /// unsharded, and its finding replays the same way.
    #[arg(long, value_name = "I/N", requires = "seed")]
    pub shard: Option<wireprobe::shard::Shard>,
    /// Sequences run at once, each on its own connection or process.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: u64,
    /// Runs that may be under way beyond --jobs, waiting on the target's own timers (a spec's
    /// 500 ms, a silence window) while --jobs others work: a run waiting longer than 25 ms
    /// lends its place. Each holds its connection or process, so the target sees up to
    /// jobs + N at once. Default 0: --jobs runs at once, no more.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1024))]
    pub waiting: u64,
    /// Where a finding's replayable case and transcript are written.
    #[arg(long, default_value = "reports/fuzz")]
    pub out: PathBuf,
    /// Longest generated sequence.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_len: u64,
    /// Budget of each waiting step, in milliseconds.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub timeout_ms: u64,
    /// Longest time spent shrinking a finding, in seconds (0: report it as found).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub shrink_secs: u64,
    /// The campaign starts no more runs once this many distinct findings reproduced (flaky
    /// ones, which never failed again alone, do not count).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_findings: u64,
    /// Rule ids the target is known to break, one per line (`#` starts a comment): a run
    /// that breaks only these is no finding, so the campaign looks past a deviation every run
    /// shows; one that breaks another rule is named by it.
    #[arg(long, value_name = "FILE")]
    pub known_failing: Option<PathBuf>,
    /// Write the campaign's report too: `json=PATH` (`-` is stdout), with the rules its runs
    /// exercised and never reached, and each finding.
    #[arg(long = "report", value_name = "json=PATH")]
    pub reports: Vec<ReportTarget>,
    /// Draw every run's mutations at random by weight, aiming at no rule (campaigns aim each
    /// run at a rule the mutators break, the rules in turn): to compare the two.
    #[arg(long)]
    pub unguided: bool,
}

/// Where the target is and how to reach it, shared by `run` and `fuzz`.
#[derive(Debug, Args)]
pub struct TargetFlags {
    /// The target's URL, or `builtin` for the reference target.
    // Required unless --exec (or --listen, for `run --client`): checked where the target is
    // prepared, since `fuzz` shares these flags and has no --listen.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Spawn the target as a child process (stdio protocols).
    #[arg(long, value_name = "CMD", conflicts_with = "target")]
    pub exec: Option<String>,
    /// Stdio protocols: the target's working directory.
    #[arg(long, requires = "exec")]
    pub cwd: Option<PathBuf>,
    /// A valid bearer token for the target.
    #[arg(long)]
    pub token: Option<String>,
    /// The target's HS256 secret: wireprobe mints valid, expired and not-yet-valid tokens.
    #[arg(long)]
    pub jwt_secret: Option<String>,
    /// A JSON object of claims merged into every token wireprobe mints (a server may need its
    /// own, such as `{"userId": "probe"}`).
    #[arg(long, value_name = "JSON")]
    pub claims: Option<String>,
    /// A tool the target offers, with the params to call it with (repeatable): tool cases
    /// call these before any the target advertises.
    #[arg(long = "tool", value_name = "NAME[=JSON]")]
    pub tools: Vec<wireprobe::suite::runner::ToolOffer>,
    /// Judging a client: a tool it runs long enough to be cancelled, with arguments that make
    /// it so (repeatable). Cases that cancel a call need one.
    #[arg(long = "slow-tool", value_name = "NAME[=JSON]")]
    pub slow_tools: Vec<wireprobe::suite::runner::ToolOffer>,
    /// Protocols with several transports (hpd: sse, ws; agui: sse, proto): use this one
    /// (default: each in turn; uae: the one the target is, a URL or --exec). AG-UI's bindings
    /// are encodings of one exchange: `--encoding proto` says the same as `--transport proto`.
    #[arg(long, visible_alias = "encoding", value_name = "sse|ws|stdio|proto")]
    pub transport: Option<wireprobe::transport::TransportKind>,
    /// Protocols whose targets play one of several parts (uae: agent, executor): the one this
    /// target plays (default: the protocol's first).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// `wss://` and `https://` targets: accept any certificate (a self-signed test
    /// deployment). The connection is still encrypted; the server is not authenticated.
    #[arg(long)]
    pub insecure: bool,
    /// With `--target builtin`: start the reference target with this fault (repeatable).
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// With `--target builtin`: start the reference target with this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
}

/// What `wireprobe list` shows.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The protocol (without one: every protocol wireprobe knows).
    pub protocol: Option<String>,
    /// Every rule: id, level, statement, and the spec section it cites.
    #[arg(long)]
    pub rules: bool,
    /// The bundled suite's cases.
    #[arg(long)]
    pub cases: bool,
    /// The reference target's faults and the rules each breaks.
    #[arg(long)]
    pub faults: bool,
    /// The reference target's legal-but-different variants.
    #[arg(long)]
    pub variants: bool,
    /// One rule in full: its statement, the spec's own words, the section it cites, the
    /// cases written for it, the reference faults that break it and the variants it must
    /// pass.
    #[arg(long, value_name = "ID")]
    pub rule: Option<String>,
    /// The JSON Schema of a suite file (for an editor: see the README's "Writing a suite").
    #[arg(long)]
    pub suite_schema: bool,
    /// With --cases, --faults or --variants: the client side's (the client suite, the
    /// reference client's faults and variants).
    #[arg(long)]
    pub client: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--help` describes every argument and option of every command.
    #[test]
    fn every_argument_is_described() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "wireprobe", &mut missing);
        assert!(missing.is_empty(), "undescribed: {missing:#?}");
    }
}
