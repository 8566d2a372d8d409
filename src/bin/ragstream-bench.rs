//! `ragstream-bench`: the performance benchmarks, a binary of their own so that the daemon's
//! binary carries none of their code. BENCHMARKS.md names the command behind every figure.
// Lance's and DataFusion's futures nest deeply (see src/lib.rs).
#![recursion_limit = "256"]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use ragstream::cli::{self, bench::BenchCommand, Failure};

/// jemalloc rather than glibc's malloc: queries, commits and compactions allocate and free
/// on many threads at once, and under steady ingestion glibc spent a large share of the
/// process's CPU merging fragmented free lists; jemalloc also serves a large index in less
/// resident memory (docs/benchmark-history.md, "The allocator").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "ragstream-bench",
    version,
    about = "Benchmarks of ragstream (BENCHMARKS.md)"
)]
struct Cli {
    /// Configuration file (default: config/ragstream.toml if present).
    #[arg(long, global = true, env = "RAGSTREAM_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: BenchCommand,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli::execute(run(cli))
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let (config, _telemetry) = cli::start(cli.config.as_deref())?;
    cli::bench::run(config, cli.command).await
}
