//! Where a command's target is: a URL, a command to spawn (`--exec`), or `builtin` (the
//! reference target, started here for network protocols, spawned per case for stdio ones).
//! `run` and `fuzz` share this.

use crate::cli::TargetFlags;
use anyhow::{anyhow, Context, Result};
use std::net::SocketAddr;
use std::time::Duration;
use wireprobe::protocol::{Protocol, TransportKind};
use wireprobe::reference::{self, RunningTarget, ServeOptions};
use wireprobe::suite::runner::{Credentials, RunConfig};

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
    /// The transport chosen with `--transport` (checked against the protocol's).
    pub transport: Option<TransportKind>,
    _builtin: Option<RunningTarget>,
}

/// Checks the target arguments against the protocol's transport and starts a builtin target.
pub async fn prepare(p: &dyn Protocol, flags: &TargetFlags) -> Result<Prepared> {
    let is_stdio = p.transport() == TransportKind::Stdio;
    let transport = flags.transport;
    if let Some(kind) = transport.filter(|k| !p.transports().contains(k)) {
        let known: Vec<&str> = p.transports().iter().map(|k| k.name()).collect();
        return Err(anyhow!(
            "{} does not run over {}; its transports: {}",
            p.id(),
            kind.name(),
            known.join(", ")
        ));
    }
    let builtin = flags.target.as_deref() == Some("builtin");
    let claims = match flags.claims.as_deref() {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            Ok(_) => return Err(anyhow!("--claims takes a JSON object, got {text}")),
            Err(e) => return Err(anyhow!("--claims {text:?} is not JSON: {e}")),
        },
    };
    if claims.is_some() && flags.jwt_secret.is_none() && flags.target.as_deref() != Some("builtin")
    {
        return Err(anyhow!(
            "--claims needs --jwt-secret: they go into the tokens wireprobe mints"
        ));
    }
    let mut credentials = Credentials {
        token: flags.token.clone(),
        jwt_secret: flags.jwt_secret.clone(),
        claims,
    };
    let switched = !flags.faults.is_empty() || !flags.variants.is_empty();
    if switched && !builtin {
        return Err(anyhow!(
            "--fault and --variant apply only to --target builtin"
        ));
    }
    let exec = match (flags.exec.as_deref(), is_stdio) {
        (Some(cmd), true) => wireprobe::transport::stdio::split_command(cmd)?,
        (None, true) if builtin => builtin_stdio_command(p, flags)?,
        (None, true) => {
            return Err(anyhow!(
                "{} targets are processes: use --exec \"CMD\" or --target builtin",
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
    if is_stdio {
        let url = match builtin {
            true => format!("builtin ({})", exec.join(" ")),
            false => flags.exec.clone().unwrap_or_default(),
        };
        return Ok(Prepared {
            shown: url.clone(),
            url,
            exec,
            credentials,
            transport,
            _builtin: None,
        });
    }
    if !builtin {
        let url = flags.target.clone().unwrap_or_default();
        return Ok(Prepared {
            shown: url.clone(),
            url,
            exec,
            credentials,
            transport,
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
        ..ServeOptions::default()
    };
    let running = reference::start(p.id(), SocketAddr::from(([127, 0, 0, 1], 0)), &opts).await?;
    let url = RunConfig::scoped_per_case(p, &running.url);
    Ok(Prepared {
        shown: format!("builtin ({url})"),
        url,
        exec,
        credentials,
        transport,
        _builtin: Some(running),
    })
}

/// The command that runs this binary as a stdio protocol's reference target, one database per
/// case (`{tmp}`), with the flags' faults and variants.
fn builtin_stdio_command(p: &dyn Protocol, flags: &TargetFlags) -> Result<Vec<String>> {
    let me = std::env::current_exe().context("cannot find wireprobe's own executable")?;
    let mut argv = vec![
        me.to_string_lossy().into_owned(),
        "serve".into(),
        p.id().into(),
        "--stdio".into(),
        "--db".into(),
        "{tmp}/agent.db".into(),
    ];
    for fault in &flags.faults {
        argv.extend(["--fault".into(), fault.clone()]);
    }
    for variant in &flags.variants {
        argv.extend(["--variant".into(), variant.clone()]);
    }
    Ok(argv)
}
