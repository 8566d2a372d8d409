//! The `ragstream` command line: the daemon and its administration (`src/cli/`). The
//! benchmarks are `ragstream-bench` (`src/bin/ragstream-bench.rs`).
// Lance's and DataFusion's futures nest deeply (see src/lib.rs).
#![recursion_limit = "256"]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ragstream::cli::{self, Failure};

/// jemalloc rather than glibc's malloc: queries, commits and compactions allocate and free
/// on many threads at once, and under steady ingestion glibc spent a large share of the
/// process's CPU merging fragmented free lists; jemalloc also serves a large index in less
/// resident memory (docs/benchmark-history.md, "The allocator").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(name = "ragstream", version, about = "Retrieval as infrastructure")]
struct Cli {
    /// Configuration file (default: config/ragstream.toml if present).
    #[arg(long, global = true, env = "RAGSTREAM_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the daemon: Kafka pipeline, queries over the bus, HTTP (embedded broker unless
    /// kafka.brokers is set); `--role query` runs a query replica.
    Serve(cli::serve::ServeArgs),
    /// Run only the embedded Kafka-protocol broker, until SIGTERM/SIGINT.
    Broker,
    /// The configuration: show the effective one, or check a file.
    #[command(subcommand)]
    Config(cli::config::ConfigCommand),
    /// Ingest JSON lines of documents (or a BEIR corpus.jsonl) into an index.
    Ingest(cli::ingest::IngestArgs),
    /// Query an index; `--json` prints the contract 000 response.
    Query(cli::query::QueryArgs),
    /// Why documents, chunks or snippets were or were not retrieved by a query (JSON).
    Explain(cli::explain::ExplainArgs),
    /// Index administration.
    #[command(subcommand)]
    Index(cli::index::IndexCommand),
    /// Embedding models.
    #[command(subcommand)]
    Model(cli::model::ModelCommand),
    /// The dead-letter topic: replay letters to the documents topic.
    #[command(subcommand)]
    Dlq(cli::dlq::DlqCommand),
    /// JSON Schemas of document events, bus queries and replies, errors and dead letters.
    Schema(cli::schema::SchemaArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli::execute(run(cli))
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let (config, _telemetry) = cli::start(cli.config.as_deref())?;
    match cli.command {
        Command::Serve(args) => cli::serve::serve(config, args).await,
        Command::Broker => cli::serve::broker(config).await,
        Command::Config(command) => cli::config::run(config, command).await,
        Command::Ingest(args) => cli::ingest::run(config, args).await,
        Command::Query(args) => cli::query::run(config, args).await,
        Command::Explain(args) => cli::explain::run(config, args).await,
        Command::Index(command) => cli::index::run(config, command).await,
        Command::Model(command) => cli::model::run(config, command).await,
        Command::Schema(args) => cli::schema::run(args).await,
        Command::Dlq(command) => cli::dlq::run(config, command).await,
    }
}
