//! `ragstream-bench`: the performance benchmarks and the retrieval-quality evaluation, a
//! crate of their own so that the daemon carries none of their code. BENCHMARKS.md names the
//! command behind every figure.
// Lance's and DataFusion's futures nest deeply (see src/lib.rs).
#![recursion_limit = "256"]

mod bench;
mod cli;
mod eval;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use cli::bench::BenchCommand;
use cli::eval::EvalCommand;
use ragstream::cli::Failure;

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
    about = "Benchmarks and retrieval-quality evaluation of ragstream (BENCHMARKS.md)"
)]
struct Cli {
    /// Configuration file (default: config/ragstream.toml if present).
    #[arg(long, global = true, env = "RAGSTREAM_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Bench(BenchCommand),
    /// Retrieval-quality evaluation (docs/evaluation.md).
    #[command(subcommand)]
    Eval(EvalCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    ragstream::cli::execute(run(cli))
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let (config, _telemetry) = ragstream::cli::start(cli.config.as_deref())?;
    match cli.command {
        Command::Bench(command) => cli::bench::run(config, command).await,
        Command::Eval(command) => cli::eval::run(config, command).await,
    }
}
