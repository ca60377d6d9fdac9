//! Where a command's target is: a URL, a command to spawn (`--exec`), or `builtin` (the
//! reference target, started here for network protocols, spawned per case for stdio ones).
//! `run` and `fuzz` share this.

use crate::cli::args::TargetFlags;
use anyhow::{anyhow, Context, Result};
use std::net::SocketAddr;
use std::time::Duration;
use wireprobe::protocol::Protocol;
use wireprobe::reference::{self, RunningTarget, ServeOptions};
use wireprobe::suite::runner::{Credentials, RunConfig, ToolOffer};
use wireprobe::transport::TransportKind;
use wireprobe::workers::LocalTarget;

/// The faults and variants a builtin target was started with, as the flags that chose them
/// (` --fault epoch-ts`), so a report of a broken reference says it was broken on purpose.
fn builtin_changes(flags: &TargetFlags) -> String {
    let faults = flags.faults.iter().map(|f| format!(" --fault {f}"));
    let variants = flags.variants.iter().map(|v| format!(" --variant {v}"));
    faults.chain(variants).collect()
}

/// A target ready to be driven; a builtin network target runs as long as this lives.
pub struct Prepared {
    /// Where network targets are (for stdio targets, a description).
    pub url: String,
    /// How reports name it.
    pub shown: String,
    /// Stdio targets: the command, split.
    pub exec: Vec<String>,
    /// The credentials, with a minted secret for a builtin target.
    pub credentials: Credentials,
    /// The transport chosen with `--transport` (checked against the protocol's), or the one
    /// the target's form implies when the protocol has a process form and a network form.
    pub transport: Option<TransportKind>,
    /// The part the target plays (`--role`, checked against the protocol's).
    pub role: Option<String>,
    /// Tools the target offers (`--tool`); a builtin client's own when none are given.
    pub tools: Vec<ToolOffer>,
    /// Judging a client: the tools it runs until cancelled (`--slow-tool`).
    pub slow_tools: Vec<ToolOffer>,
    /// A builtin network target as each of a campaign's worker threads starts its own, with the
    /// same options.
    pub on_each_worker: Option<LocalTarget>,
    _builtin: Option<RunningTarget>,
}

/// Checks the target arguments against the protocol's transport and starts a builtin target.
pub async fn prepare(p: &dyn Protocol, flags: &TargetFlags) -> Result<Prepared> {
    if !flags.slow_tools.is_empty() {
        return Err(anyhow!(
            "--slow-tool names a tool of a client under test: it needs --client"
        ));
    }
    if flags.target.is_none() && flags.exec.is_none() {
        return Err(anyhow!(
            "where is the target? --target URL, --target builtin or --exec CMD"
        ));
    }
    let transport = chosen_transport(p, flags)?;
    let is_stdio = transport.unwrap_or(p.transport()) == TransportKind::Stdio;
    let role = chosen_role(p, flags.role.as_deref())?;
    let builtin = is_builtin(flags)?;
    let claims = match flags.claims.as_deref() {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            Ok(_) => return Err(anyhow!("--claims takes a JSON object, got {text}")),
            Err(e) => return Err(anyhow!("--claims {text:?} is not JSON: {e}")),
        },
    };
    if claims.is_some() && flags.jwt_secret.is_none() && !builtin {
        return Err(anyhow!(
            "--claims needs --jwt-secret: they go into the tokens wireprobe mints"
        ));
    }
    let mut credentials = Credentials {
        token: flags.token.clone(),
        jwt_secret: flags.jwt_secret.clone(),
        claims,
    };
    let exec = match (flags.exec.as_deref(), is_stdio) {
        (Some(cmd), true) => wireprobe::transport::stdio::split_command(cmd)?,
        (None, true) if builtin => builtin_stdio_command(p, flags, role.as_deref())?,
        (None, true) => {
            return Err(anyhow!(
                "{} targets over stdio are processes: use --exec \"CMD\" or --target builtin",
                p.id()
            ))
        }
        (Some(_), false) => {
            return Err(anyhow!(
                "{} targets are network servers: use --target URL or --target builtin",
                p.id()
            ))
        }

        (None, false) => Vec::new(),
    };
    // A process is started per case, a network target is already there: neither needs a
    // reference server started here.
    if is_stdio || !builtin {
        let url = match (is_stdio, builtin) {
            (true, true) => format!("builtin ({})", exec.join(" ")),
            (true, false) => flags.exec.clone().unwrap_or_default(),
            (false, _) => {
                let url = flags.target.clone().unwrap_or_default();
                check_scheme(p, transport, &url)?;
                url
            }
        };
        return Ok(Prepared {
            shown: url.clone(),
            url,
            exec,
            credentials,
            transport,
            role: role.clone(),
            tools: flags.tools.clone(),
            slow_tools: Vec::new(),
            on_each_worker: None,
            _builtin: None,
        });
    }
    // The builtin target needs tokens unless told otherwise, so the auth cases run in the demo.
    if !credentials.any() {
        credentials.jwt_secret = Some(format!("wireprobe-demo-{}", uuid::Uuid::new_v4()));
    }
    // The builtin HUMA target waits 2 s, not the spec's 30 s, for a missing confirmation, so
    // the timeout case does not dominate the demo.
    let opts = ServeOptions {
        confirm_timeout: Some(Duration::from_secs(2)),
        faults: flags.faults.clone(),
        variants: flags.variants.clone(),
        jwt_secret: credentials.jwt_secret.clone(),
        role: role.clone(),
        ..ServeOptions::default()
    };
    let reference =
        reference::of(p).ok_or_else(|| anyhow!("{} has no reference target", p.id()))?;
    let running = reference
        .start(SocketAddr::from(([127, 0, 0, 1], 0)), &opts)
        .await?;
    let url = RunConfig::scoped_per_case(p, &running.url);
    Ok(Prepared {
        shown: format!("builtin{} ({url})", builtin_changes(flags)),
        url,
        exec,
        credentials,
        transport,
        role,
        tools: flags.tools.clone(),
        slow_tools: Vec::new(),
        on_each_worker: Some(reference.on_each_worker(opts)),
        _builtin: Some(running),
    })
}

/// True for `--target builtin`; `--fault` and `--variant` are refused anywhere else.
fn is_builtin(flags: &TargetFlags) -> Result<bool> {
    let builtin = flags.target.as_deref() == Some("builtin");
    let switched = !flags.faults.is_empty() || !flags.variants.is_empty();
    if switched && !builtin {
        return Err(anyhow!(
            "--fault and --variant apply only to --target builtin"
        ));
    }
    Ok(builtin)
}

/// The client under test of a `--client` run: `--exec CMD` (with `{url}` where it connects, and
/// `{token}`), or `--target builtin`, the protocol's reference client.
pub fn prepare_client(
    p: &dyn Protocol,
    flags: &TargetFlags,
    listen: Option<&str>,
) -> Result<Prepared> {
    let serves: Vec<TransportKind> = p
        .transports()
        .iter()
        .copied()
        .filter(|t| p.serving_session(*t).is_some())
        .collect();
    let transport = match flags.transport {
        None => serves.first().copied(),
        Some(asked) if serves.contains(&asked) => Some(asked),
        Some(asked) => {
            let names: Vec<&str> = serves.iter().map(|t| t.name()).collect();
            return Err(anyhow!(
                "{} serves clients over {} only, not {}",
                p.id(),
                names.join(" and "),
                asked.name()
            ));
        }
    }
    .ok_or_else(|| anyhow!("{} cannot judge clients yet", p.id()))?;
    let builtin = is_builtin(flags)?;
    // The builtin client's tools are named for it, unless the user names others.
    let mut tools = (flags.tools.clone(), flags.slow_tools.clone());
    if builtin && listen.is_none() && tools.0.is_empty() && tools.1.is_empty() {
        if let Some(client) = reference::of(p).and_then(|r| r.client.as_ref()) {
            let offers = |names: &[&str]| -> Vec<ToolOffer> {
                names
                    .iter()
                    .map(|n| ToolOffer {
                        name: (*n).to_owned(),
                        params: None,
                    })
                    .collect()
            };
            tools = (offers(client.tools), offers(client.slow_tools));
        }
    }
    let (shown, exec) = match (flags.exec.as_deref(), builtin) {
        _ if listen.is_some() => (
            format!("clients connecting to {}", listen.unwrap_or_default()),
            Vec::new(),
        ),
        (Some(cmd), _) => (
            cmd.to_owned(),
            wireprobe::transport::stdio::split_command(cmd)?,
        ),
        (None, true) => {
            reference::of(p)
                .and_then(|r| r.client.as_ref())
                .ok_or_else(|| anyhow!("{} has no reference client yet", p.id()))?;
            // A host of a stdio protocol is given the agent to start, not a server to dial.
            let at = match transport {
                TransportKind::Stdio => "{agent}",
                _ => "{url}",
            };
            // The token it is handed (`{token}`: empty when there is none).
            let argv = builtin_command(
                &["client", p.id(), "--target", at, "--token", "{token}"],
                flags,
            )?;
            (format!("builtin{}", builtin_changes(flags)), argv)
        }
        (None, false) => {
            return Err(anyhow!(
            "--client needs the client: --exec \"CMD {{url}}\", --listen ADDR or --target builtin"
        ))
        }
    };
    Ok(Prepared {
        url: shown.clone(),
        shown,
        exec,
        credentials: Credentials {
            token: flags.token.clone(),
            jwt_secret: flags.jwt_secret.clone(),
            claims: None,
        },
        transport: Some(transport),
        role: None,
        tools: tools.0,
        slow_tools: tools.1,
        on_each_worker: None,
        _builtin: None,
    })
}

/// `--transport`, checked against the protocol's; without it, for a protocol whose targets
/// are either a process or a server, the one the target's form says (`--exec`: stdio).
fn chosen_transport(p: &dyn Protocol, flags: &TargetFlags) -> Result<Option<TransportKind>> {
    let kinds = p.transports();
    if let Some(kind) = flags.transport {
        if !kinds.contains(&kind) {
            let known: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            return Err(anyhow!(
                "{} does not run over {}; its transports: {}",
                p.id(),
                kind.name(),
                known.join(", ")
            ));
        }
        if flags.exec.is_some() && kind != TransportKind::Stdio {
            return Err(anyhow!(
                "--exec starts a process, which speaks stdio, not {}",
                kind.name()
            ));
        }
        return Ok(Some(kind));
    }
    Ok(wireprobe::protocol::transport_of_form(
        p,
        flags.exec.is_some(),
    ))
}

/// A target URL whose scheme the run's transport cannot speak is a usage error that says which
/// scheme to use, not a target that could not be reached.
fn check_scheme(p: &dyn Protocol, transport: Option<TransportKind>, url: &str) -> Result<()> {
    let scheme = url
        .split_once("://")
        .map_or("", |(s, _)| s)
        .to_ascii_lowercase();
    let kind = transport.unwrap_or(p.transport());
    let (allowed, example): (&[&str], &str) = match kind {
        // The SSE binding's URL is the routes' base; its WebSocket route is derived from it.
        _ if p.http_routes().is_some() => (&["http", "https"], "http://HOST:PORT/PREFIX"),
        TransportKind::WebSocket => (&["ws", "wss"], "ws://HOST:PORT/PATH"),
        TransportKind::SocketIo => (&["http", "https", "ws", "wss"], "http://HOST:PORT"),
        TransportKind::Sse | TransportKind::Protobuf => {
            (&["http", "https"], "http://HOST:PORT/PREFIX")
        }
        TransportKind::Stdio => return Ok(()),
    };
    if allowed.contains(&scheme.as_str()) {
        return Ok(());
    }
    Err(anyhow!(
        "--target {url:?}: {} targets are {} URLs ({example}), not {}",
        p.id(),
        allowed.join("/"),
        match scheme.as_str() {
            "" => "a URL without a scheme".to_owned(),
            other => format!("{other}://"),
        }
    ))
}

/// `--role`, checked against the parts the protocol's targets play; without it, the
/// protocol's default part (`None` for a protocol whose targets play one).
pub fn chosen_role(p: &dyn Protocol, role: Option<&str>) -> Result<Option<String>> {
    let Some(role) = role else {
        return Ok(p.roles().first().map(|r| (*r).to_owned()));
    };
    match p.roles() {
        [] => Err(anyhow!(
            "--role applies to protocols whose targets play one of several parts ({}), not {}",
            super::protocols_where(|p| !p.roles().is_empty()),
            p.id()
        )),
        roles if roles.contains(&role) => Ok(Some(role.to_owned())),
        roles => Err(anyhow!(
            "{} targets play no role {role:?}; roles: {}",
            p.id(),
            roles.join(", ")
        )),
    }
}

/// The command that runs this binary as a stdio protocol's reference target, with the flags'
/// faults, variants and role. A reference that keeps its identity in a database (its
/// `keeps_database`) gets one per case (`{tmp}`).
fn builtin_stdio_command(
    p: &dyn Protocol,
    flags: &TargetFlags,
    role: Option<&str>,
) -> Result<Vec<String>> {
    let mut args = vec!["serve", p.id(), "--stdio"];
    if reference::of(p).is_some_and(|r| r.keeps_database) {
        args.extend(["--db", "{tmp}/agent.db"]);
    }
    if let Some(role) = role {
        args.extend(["--role", role]);
    }
    builtin_command(&args, flags)
}

/// This binary with `args`, then the flags' faults and variants: how a builtin target or
/// client that runs as a process is started.
fn builtin_command(args: &[&str], flags: &TargetFlags) -> Result<Vec<String>> {
    let me = std::env::current_exe().context("cannot find wireprobe's own executable")?;
    let mut argv = vec![me.to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    for fault in &flags.faults {
        argv.extend(["--fault".into(), fault.clone()]);
    }
    for variant in &flags.variants {
        argv.extend(["--variant".into(), variant.clone()]);
    }
    Ok(argv)
}
