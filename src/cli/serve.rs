//! `wireprobe serve`: a reference target, with faults and variants.

use super::args::ServeArgs;
use super::target::chosen_role;
use super::{protocol_named, protocols_where, EXIT_OK};
use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;
use std::time::Duration;
use wireprobe::reference::{self, Reference, ServeOptions, StdioPipes};

pub(super) async fn serve(args: ServeArgs) -> Result<u8> {
    let p = protocol_named(&args.protocol)?;
    let r = reference::of(p).ok_or_else(|| anyhow!("{} has no reference target", p.id()))?;
    let role = chosen_role(p, args.role.as_deref())?;
    let on_network = r.listen.is_some();
    if !args.stdio && !on_network {
        bail!(
            "{} is served over stdio: use `serve {} --stdio{}`",
            p.id(),
            p.id(),
            if r.keeps_database { " [--db PATH]" } else { "" }
        );
    }
    if args.db.is_some() && !r.keeps_database {
        bail!(
            "--db applies to {}, whose agent keeps its identity in a database",
            protocols_where(|p| reference::of(p).is_some_and(|r| r.keeps_database))
        );
    }
    if args.prefix.is_some() && p.http_routes().is_none() {
        bail!(
            "--prefix applies to protocols with HTTP routes ({}), not {}",
            protocols_where(|p| p.http_routes().is_some()),
            p.id()
        );
    }
    let opts = ServeOptions {
        faults: args.faults,
        variants: args.variants,
        jwt_secret: args.jwt_secret,
        confirm_timeout: args.confirm_timeout_ms.map(Duration::from_millis),
        prefix: args.prefix,
        role,
        db: args.db,
    };
    if args.stdio {
        return serve_stdio(r, &opts).await;
    }
    let listen = args
        .listen
        .ok_or_else(|| anyhow!("serve needs --listen ADDR (e.g. 127.0.0.1:9000)"))?;
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen:?} is not HOST:PORT"))?;
    let running = r.start(addr, &opts).await?;
    say!(
        "wireprobe: {} reference target listening on {}",
        p.title(),
        running.url
    );
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = running.wait() => {}
    }
    Ok(EXIT_OK)
}

/// Serves a stdio protocol's reference target on this process's stdin and stdout, then exits
/// the process at once: tokio's stdin reader is a blocking thread that would keep a faulted
/// agent (one that stops with stdin still open) from exiting.
async fn serve_stdio(r: &Reference, opts: &ServeOptions) -> Result<u8> {
    let Some(stdio) = r.stdio else {
        bail!(
            "{} is served over the network: use --listen ADDR",
            r.protocol.id()
        );
    };
    let pipes = StdioPipes {
        input: Box::new(tokio::io::stdin()),
        output: Box::new(tokio::io::stdout()),
    };
    let status = stdio(pipes, opts).await?;
    std::process::exit(status)
}
