//! `wireprobe serve`: a reference target, with faults and variants.

use super::args::ServeArgs;
use super::{protocol_named, EXIT_OK};
use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;
use std::time::Duration;
use wireprobe::protocol::{self, Protocol};
use wireprobe::reference::{self, ServeOptions};

pub(super) async fn serve(args: ServeArgs) -> Result<u8> {
    let p = protocol_named(&args.protocol)?;
    let kinds = p.transports();
    if args.role.is_some() && p.roles().is_empty() {
        bail!("--role applies to uae, not {}", p.id());
    }
    if kinds == [protocol::TransportKind::Stdio] && !args.stdio {
        bail!(
            "{} is served over stdio: use `serve {} --stdio [--db PATH]`",
            p.id(),
            p.id()
        );
    }
    if args.stdio {
        if !kinds.contains(&protocol::TransportKind::Stdio) {
            bail!("{} is served over the network: use --listen ADDR", p.id());
        }
        return serve_stdio(p, args).await;
    }
    let listen = args
        .listen
        .ok_or_else(|| anyhow!("serve needs --listen ADDR (e.g. 127.0.0.1:9000)"))?;
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen:?} is not HOST:PORT"))?;
    if args.prefix.is_some() && p.http_routes().is_none() {
        bail!(
            "--prefix applies to protocols with HTTP routes (hpd), not {}",
            p.id()
        );
    }
    let opts = ServeOptions {
        faults: args.faults,
        variants: args.variants,
        jwt_secret: args.jwt_secret,
        confirm_timeout: args.confirm_timeout_ms.map(Duration::from_millis),
        prefix: args.prefix,
        role: args.role,
    };
    let running = reference::start(p.id(), addr, &opts).await?;
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
async fn serve_stdio(p: &dyn Protocol, args: ServeArgs) -> Result<u8> {
    if p.id() == "uae" {
        if args.db.is_some() {
            bail!("--db applies to nuum, whose agent keeps its identity in a database");
        }
        let opts = ServeOptions {
            faults: args.faults,
            variants: args.variants,
            role: args.role,
            ..ServeOptions::default()
        };
        reference::uae::serve_stdio(tokio::io::stdin(), tokio::io::stdout(), &opts).await?;
        std::process::exit(0);
    }
    let opts = reference::nuum::NuumOptions {
        db: args.db,
        faults: args.faults,
        variants: args.variants,
    };
    let stop = reference::nuum::serve(tokio::io::stdin(), tokio::io::stdout(), &opts).await?;
    std::process::exit(match stop {
        reference::nuum::Stop::InputClosed => 0,
        reference::nuum::Stop::Fault(code) => code,
    })
}
