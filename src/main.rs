//! The `wireprobe` binary: parse the command line, call the library, map outcomes to exit codes.

mod cli;

use std::process::ExitCode;

/// jemalloc, not the system's malloc: see Cargo.toml.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let argv = match cli::config::expand(std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("wireprobe: {e:#}");
            return ExitCode::from(2);
        }
    };
    let cli = cli::args::parse(argv);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wireprobe: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(cli::dispatch(cli.command));
    // Connections still closing must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    ExitCode::from(code)
}
