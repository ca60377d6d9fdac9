//! What each subcommand does; errors become one clear line and an exit code.

use anyhow::{anyhow, Result};
use wireprobe::protocol::{self, Protocol};
use wireprobe::suite::{self as suites, Suite};

/// `println!` that never panics: a reader that went away (`wireprobe list | head`) stops the
/// printing, not the command (reports to files are still written).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod args;
mod check;
mod client;
pub mod config;
mod explain;
mod flaky;
mod fuzz;
mod gen;
mod list;
mod preflight;
mod progress;
mod proxy;
mod report;
mod run;
mod serve;
mod target;

use args::Command;

/// Exit codes of the CLI contract.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAIL: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_UNREACHABLE: u8 = 3;

/// A failure with the exit code it deserves.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

/// A usage or configuration error (exit 2).
pub fn usage(error: anyhow::Error) -> Failure {
    Failure {
        code: EXIT_USAGE,
        error,
    }
}

pub async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::List(args) => list::list(&args).map_err(usage),
        Command::Explain { rule } => explain::explain(None, &rule).map_err(usage),
        Command::Run(args) => run::run(*args).await,
        Command::Check {
            protocol,
            file,
            from,
            cut,
            reports,
            strict,
        } => check::check(&protocol, file, from.as_deref(), cut, &reports, strict),
        Command::Serve(args) => serve::serve(args).await.map_err(usage),
        Command::Client(args) => client::client(args).await,
        Command::Proxy(args) => proxy::proxy(args).await,
        Command::Relay { addr } => match wireprobe::transport::relay::relay(&addr) {
            Ok(()) => Ok(EXIT_OK),
            Err(e) => Err(Failure {
                code: EXIT_UNREACHABLE,
                error: anyhow::anyhow!("{e}"),
            }),
        },
        Command::Gen {
            protocol,
            kind,
            count,
            seed,
            role,
        } => gen::gen(&protocol, kind.as_deref(), count, seed, role.as_deref()).map_err(usage),
        Command::Fuzz(args) => fuzz::command(*args).await,
        Command::Report(args) => report::report(args),
    };
    match result {
        Ok(code) => code,
        Err(Failure { code, error }) => {
            eprintln!("wireprobe: {error:#}");
            code
        }
    }
}

pub(crate) fn protocol_named(id: &str) -> Result<&'static dyn Protocol> {
    protocol::get(id).ok_or_else(|| {
        let known: Vec<&str> = protocol::all().iter().map(|p| p.id()).collect();
        anyhow!("unknown protocol {id:?}; known: {}", known.join(", "))
    })
}

/// The ids of the protocols `has` holds for (`"uae"`), for an error that says which
/// protocols a flag applies to.
pub(crate) fn protocols_where(has: impl Fn(&dyn Protocol) -> bool) -> String {
    let ids: Vec<&str> = protocol::all()
        .iter()
        .filter(|p| has(**p))
        .map(|p| p.id())
        .collect();
    ids.join(", ")
}

/// The case and rule ids listed in the file `flag` names (`--known-failing`), if any.
pub(crate) fn read_ids(
    flag: &str,
    path: Option<&std::path::Path>,
) -> Result<std::collections::BTreeSet<String>, Failure> {
    use anyhow::Context as _;
    match path {
        Some(path) => wireprobe::suite::filter::read_known_failing(path)
            .with_context(|| format!("{flag} {}", path.display()))
            .map_err(usage),
        None => Ok(std::collections::BTreeSet::new()),
    }
}

pub(crate) fn parse_headers(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|h| {
            let (k, v) = h
                .split_once(':')
                .ok_or_else(|| anyhow!("--header takes \"Name: value\", got {h:?}"))?;
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

pub(crate) fn load_suite(p: &dyn Protocol, path: Option<&std::path::Path>) -> Result<Suite> {
    Ok(match path {
        Some(path) => suites::load_path(p, path)?,
        None => suites::load_bundled(p)?,
    })
}
