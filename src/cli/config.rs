//! `wireprobe.toml` (or `run --config PATH`): a run's settings in a file, so a CI job is one
//! line (`wireprobe run`).
//!
//! Each key is one of `run`'s long options with `_` for `-` (`timeout_ms = 2000`,
//! `known_failing = "ci/known-failing.txt"`); a list repeats the option (`reports = [...]`),
//! `true` sets a flag. Secrets never sit in the file: `token_env = "NAME"`,
//! `jwt_secret_env = "NAME"` and `claims_env = "NAME"` read environment variables. The file's
//! settings come first on the command line, so an option given there wins (a repeatable one,
//! like `--report`, adds to the file's). Relative paths are relative to the file.

use anyhow::{anyhow, bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The file `run` reads when no `--config` is given and it exists in the working directory.
pub const DEFAULT_FILE: &str = "wireprobe.toml";

/// Keys whose values are paths (resolved against the file's directory).
const PATH_KEYS: &[&str] = &["suite", "known_failing", "known_flaky", "cwd"];

/// The options that say where the target is (with `cwd`, which only an `exec` has).
const TARGET_OPTIONS: &[&str] = &["target", "exec", "cwd"];

/// Credentials that may only come from the environment.
const SECRET_KEYS: &[&str] = &["token", "jwt_secret", "claims"];

/// `argv` with a run's configuration file spliced in after `run`; unchanged for every other
/// command, and for a run without a file.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>> {
    if argv.get(1).is_none_or(|a| a != "run") {
        return Ok(argv);
    }
    let rest = &argv[2..];
    let (path, explicit) = match given_path(rest)? {
        Some(path) => (path, true),
        None if Path::new(DEFAULT_FILE).is_file() => (PathBuf::from(DEFAULT_FILE), false),
        None => return Ok(argv),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the configuration {}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("{} is not valid TOML", path.display()))?;
    let base = path.parent().unwrap_or(Path::new(""));
    let settings = Settings::read(&table, base, &run_options())
        .with_context(|| format!("in {}", path.display()))?;
    let named = rest.iter().find_map(|a| {
        let a = a.to_str()?;
        wireprobe::protocol::get(a).map(|p| p.id())
    });
    match (&settings.protocol, named) {
        (Some(theirs), Some(ours)) if theirs != ours => {
            if explicit {
                bail!(
                    "{} configures a {theirs} run; this command runs {ours}",
                    path.display()
                );
            }
            // A file for another protocol in the working directory is not this run's.
            return Ok(argv);
        }
        _ => {}
    }
    if !explicit {
        eprintln!("wireprobe: using {}", path.display());
    }
    let mut out: Vec<OsString> = argv[..2].to_vec();
    if named.is_none() {
        if let Some(protocol) = &settings.protocol {
            out.push(protocol.into());
        }
    }
    // The target is one choice: a command line that names one (`--target` or `--exec`) drops
    // the file's, which would otherwise conflict with it in words about options never typed.
    let picks_target = rest.iter().any(|a| {
        a.to_str().is_some_and(|a| {
            TARGET_OPTIONS
                .iter()
                .any(|o| a == format!("--{o}") || a.starts_with(&format!("--{o}=")))
        })
    });
    for (option, value) in settings.args {
        if picks_target && TARGET_OPTIONS.contains(&option.as_str()) {
            continue;
        }
        out.push(format!("--{option}").into());
        out.extend(value.map(OsString::from));
    }
    out.extend(rest.iter().cloned());
    Ok(out)
}

/// `run`'s long options: the keys a configuration file may set.
fn run_options() -> Vec<String> {
    use clap::CommandFactory;
    crate::cli::args::Cli::command()
        .find_subcommand("run")
        .map(|run| {
            run.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The path after `--config` (or in `--config=PATH`), if the command line has one.
fn given_path(args: &[OsString]) -> Result<Option<PathBuf>> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let Some(text) = arg.to_str() else { continue };
        if text == "--config" {
            let path = iter
                .next()
                .ok_or_else(|| anyhow!("--config needs a PATH"))?;
            return Ok(Some(PathBuf::from(path)));
        }
        if let Some(path) = text.strip_prefix("--config=") {
            return Ok(Some(PathBuf::from(path)));
        }
    }
    Ok(None)
}

/// A configuration file read into command-line options.
struct Settings {
    protocol: Option<String>,
    /// Each option once per occurrence, with its value unless it is a flag.
    args: Vec<(String, Option<String>)>,
}

impl Settings {
    fn read(table: &toml::Table, base: &Path, run_options: &[String]) -> Result<Settings> {
        let mut settings = Settings {
            protocol: None,
            args: Vec::new(),
        };
        for (key, value) in table {
            if key == "protocol" {
                let id = value
                    .as_str()
                    .ok_or_else(|| anyhow!("protocol is a string"))?;
                wireprobe::protocol::get(id)
                    .ok_or_else(|| anyhow!("protocol {id:?} is not one wireprobe knows"))?;
                settings.protocol = Some(id.to_owned());
                continue;
            }
            if SECRET_KEYS.contains(&key.as_str()) {
                bail!(
                    "`{key}` would put a credential in the file: name an environment variable \
                     with `{key}_env = \"NAME\"`"
                );
            }
            if let Some(secret) = key.strip_suffix("_env") {
                if !SECRET_KEYS.contains(&secret) {
                    bail!(
                        "`{key}`: only {} are read from the environment",
                        SECRET_KEYS.join(", ")
                    );
                }
                let name = value
                    .as_str()
                    .ok_or_else(|| anyhow!("`{key}` names an environment variable"))?;
                let secret_value = std::env::var(name).map_err(|_| {
                    anyhow!("`{key}` names the environment variable {name}, which is not set")
                })?;
                settings.push(&secret.replace('_', "-"), secret_value);
                continue;
            }
            // `reports = [...]` and the other repeatable options read naturally in the plural.
            let option = option_name(key, run_options).ok_or_else(|| {
                anyhow!(
                    "unknown key `{key}` (keys are run's long options: {})",
                    run_options.join(", ")
                )
            })?;
            let values = match value {
                toml::Value::Array(items) => items.iter().collect(),
                single => vec![single],
            };
            for item in values {
                settings.add(&option, key, item, base)?;
            }
        }
        Ok(settings)
    }

    fn push(&mut self, option: &str, value: String) {
        self.args.push((option.to_owned(), Some(value)));
    }

    /// One occurrence of `--option` with `value`.
    fn add(&mut self, option: &str, key: &str, value: &toml::Value, base: &Path) -> Result<()> {
        let text = match value {
            toml::Value::Boolean(true) => {
                self.args.push((option.to_owned(), None));
                return Ok(());
            }
            toml::Value::Boolean(false) => return Ok(()),
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            other => bail!(
                "`{key}` takes strings, numbers or true, not {}",
                other.type_str()
            ),
        };
        let text = if PATH_KEYS.contains(&key) {
            resolve(base, &text)
        } else if option == "report" {
            match text.split_once('=') {
                Some((format, path)) if path != "-" => format!("{format}={}", resolve(base, path)),
                _ => text,
            }
        } else {
            text
        };
        self.push(option, text);
        Ok(())
    }
}

/// The long option a key names: itself with `-` for `_`, or its singular (`reports`).
fn option_name(key: &str, run_options: &[String]) -> Option<String> {
    let option = key.replace('_', "-");
    let singular = option.strip_suffix('s').map(str::to_owned);
    [Some(option), singular]
        .into_iter()
        .flatten()
        .find(|o| run_options.contains(o) && o != "config")
}

fn resolve(base: &Path, path: &str) -> String {
    if base.as_os_str().is_empty() || Path::new(path).is_absolute() {
        path.to_owned()
    } else {
        base.join(path).display().to_string()
    }
}
