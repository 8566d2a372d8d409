//! The `ragstream` command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};

use ragstream::config::Config;
use ragstream::contracts::c000_retrieval_calls::{
    parse_request, render_error, render_response, RequestLimits,
};
use ragstream::embedding::{Embedder, HashingEmbedder};
use ragstream::engine::{Engine, EngineError};
use ragstream::model::IndexName;
use ragstream::retrieval::SearchMethod;
use ragstream::telemetry::traces::{LogFormat, Telemetry};

/// jemalloc rather than glibc's malloc: queries, commits and compactions allocate and free
/// on many threads at once, and under steady ingestion glibc spent 13–14 % of the process's
/// CPU in malloc and free, nearly a quarter of that merging fragmented free lists
/// (`malloc_consolidate`, `unlink_chunk`); at a million chunks the daemon also served in
/// ×0.6 of the RSS (BENCHMARKS.md, "The allocator"). The library leaves the choice to
/// whoever embeds it.
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
    /// kafka.brokers is set).
    Serve,
    /// Run only the embedded Kafka-protocol broker, until SIGTERM/SIGINT.
    Broker,
    /// The configuration: show the effective one, or check a file.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Ingest JSON lines of documents (or a BEIR corpus.jsonl) into an index.
    Ingest {
        #[arg(long)]
        index: String,
        file: PathBuf,
    },
    /// Query an index; `--json` prints the contract 000 response.
    Query {
        #[arg(long)]
        index: String,
        text: String,
        #[arg(long, value_enum, default_value_t = Method::Semantic)]
        method: Method,
        #[arg(long, default_value_t = 5)]
        top_k: u64,
        /// Semantic weight for hybrid search.
        #[arg(long)]
        alpha: Option<f64>,
        /// Answer from this index version.
        #[arg(long)]
        version: Option<u64>,
        /// Apply `normalize` query preprocessing.
        #[arg(long)]
        normalize: bool,
        /// Exact-match filter KEY=VALUE (VALUE is JSON if it parses, else a string).
        #[arg(long = "filter")]
        filters: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Index administration.
    Index {
        #[command(subcommand)]
        command: IndexCommand,
    },
    /// Retrieval-quality evaluation.
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
    /// Embedding models.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Performance benchmarks.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Distil the static (model2vec) model from the all-MiniLM-L6-v2 files; deterministic.
    Distill {
        /// all-MiniLM-L6-v2 directory (default: model.dir).
        #[arg(long)]
        from: Option<PathBuf>,
        /// Output directory (default: model.static_dir).
        #[arg(long)]
        to: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Each embedder alone: chunks/s at 64 and 256 tokens per chunk; the transformer's FLOPs
    /// per chunk and its fraction of a plain f32 GEMM timed in the same run.
    Embed {
        /// Chunk texts are cut from this BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        #[arg(long, default_value_t = 64)]
        transformer_chunks: usize,
        #[arg(long, default_value_t = 20_000)]
        static_chunks: usize,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Start a scratch daemon (embedded broker) and measure ingest throughput, freshness
    /// (produce → searchable) and query latency over HTTP and over the bus.
    Pipeline {
        /// Documents as BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Documents produced at once for the throughput figure.
        #[arg(long, default_value_t = 300)]
        documents: usize,
        /// Documents produced at a steady rate for the freshness figure.
        #[arg(long, default_value_t = 60)]
        freshness_documents: usize,
        /// Produce rate for the freshness figure, documents per second.
        #[arg(long, default_value_t = 2.0)]
        rate: f64,
        /// Queries over HTTP and again over the bus.
        #[arg(long, default_value_t = 100)]
        queries: usize,
        /// Measure freshness while the backlog drains (the backlog on every partition but
        /// the first, the freshness documents on the first), not after it.
        #[arg(long)]
        beside_backlog: bool,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// An index of `--chunks` chunks (SciFact passages recombined): ingest throughput, query
    /// latency per method at a concurrency, ANN recall@10 against exact search, RSS, disk.
    Scale {
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        #[arg(long, default_value_t = 100_000)]
        chunks: usize,
        /// Queries per method.
        #[arg(long, default_value_t = 1000)]
        query_count: usize,
        #[arg(long, default_value_t = 1)]
        concurrency: usize,
        /// Queries whose ANN top 10 is compared with an exact scan (recall on 50 queries
        /// moved by 0.02 between two builds of the same data; 200 narrows that).
        #[arg(long, default_value_t = 200)]
        recall_queries: usize,
        /// Keep (and on a rerun reuse) the index here instead of a scratch directory.
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Also measure vector-search recall and latency at these NPROBES:REFINE[:EF]
        /// settings (comma-separated, e.g. 20:10,40:5:200).
        #[arg(long, value_delimiter = ',')]
        sweep: Vec<String>,
        /// Also measure the resident vectors' recall and latency at these
        /// SHORTLIST[:HAMMING_SHARE] settings (comma-separated, e.g. 500,2000:0.05).
        #[arg(long, value_delimiter = ',')]
        shortlists: Vec<String>,
        /// Then ingest `--steady-rate` new documents per second for this many seconds with
        /// hybrid queries running alongside: freshness, fragments, versions, query p99 drift.
        #[arg(long, default_value_t = 0)]
        steady_seconds: u64,
        #[arg(long, default_value_t = 100)]
        steady_rate: usize,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// The daemon for N minutes as operators run it: a standalone broker, documents at a
    /// steady rate (some updated), queries over HTTP, the daemon restarted every few
    /// minutes (SIGTERM and SIGKILL in turn). Reports lost and duplicated documents, 5xx,
    /// p99 and RSS per minute, and each incarnation's RSS slope.
    Soak {
        #[arg(long, default_value_t = 30.0)]
        minutes: f64,
        /// Documents produced per second.
        #[arg(long, default_value_t = 20.0)]
        rate: f64,
        /// Seconds between restarts.
        #[arg(long, default_value_t = 180)]
        restart_every: u64,
        /// The embedder the daemon runs.
        #[arg(long, default_value = "static")]
        embedder: String,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Hostile inputs through every parser in process (document events, the five
    /// contracts, configuration from the environment): counts refusals, and fails on any
    /// panic, 5xx or refusal outside the error shape. Seeded: a failure reproduces.
    Fuzz {
        /// Inputs per parser.
        #[arg(long, default_value_t = 100_000)]
        cases: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the report to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Write the chunks and vectors of an index (`--data-dir` as `bench scale` left it), and
    /// query texts with their vectors, to plain files a peer can index and search with
    /// (`scripts/compare-lancedb`).
    Export {
        /// The data directory holding the index.
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long, default_value = "scale")]
        index: String,
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        #[arg(long, default_value_t = 1000)]
        query_count: usize,
        #[arg(long)]
        out: PathBuf,
    },
    /// The keyword store (tantivy) under streaming commits: commit latency (with merges),
    /// searcher opening, segments and query latency per writer budget and merge policy.
    Keyword {
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        #[arg(long, default_value_t = 100_000)]
        documents: usize,
        /// Documents per commit.
        #[arg(long, default_value_t = 25)]
        batch: usize,
        #[arg(long, default_value_t = 300)]
        query_count: usize,
        /// Settings to compare, MEMORY_MB:MERGE_MIN_SEGMENTS[:MERGE_MAX_DOCS[:MAX_QUERY_TERMS]]
        /// (0: never merge; no limit; every term; left out: the defaults), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "64:8")]
        settings: Vec<String>,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// What graph lookup adds to a contract-001 query: fast mode against graph mode on an
    /// index whose documents carry triples made from their own words.
    Graph {
        /// Documents as BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Query texts as BEIR queries.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        #[arg(long, default_value_t = 5183)]
        documents: usize,
        #[arg(long, default_value_t = 20)]
        triples_per_document: usize,
        /// Queries per round and mode.
        #[arg(long, default_value_t = 300)]
        query_count: usize,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Structural depth of graph mode.
        #[arg(long, default_value_t = 1)]
        depth: usize,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// What metrics and tracing cost a query: the same hybrid queries in alternating rounds
    /// with both off and with both on (every trace exported over OTLP to a local receiver).
    Telemetry {
        /// Documents as BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Query texts as BEIR queries.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        #[arg(long, default_value_t = 2000)]
        documents: usize,
        /// Queries per round and mode.
        #[arg(long, default_value_t = 200)]
        query_count: usize,
        /// Rounds, each running every query off and then on (after one warm-up round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration (defaults, then the file, then `RAGSTREAM_*`
    /// variables) as TOML, every secret shown as `<redacted>`.
    Show,
    /// Check a configuration file as `serve` would load it (with the current environment):
    /// prints `ok` or the error naming the source, the key and the rule (exit code 2).
    Check { file: PathBuf },
}

#[derive(Subcommand)]
enum IndexCommand {
    /// Every index under the data directory with its figures, as `GET /v1/indexes` lists
    /// them (JSON).
    List,
    /// Version, document and chunk counts of an index.
    Stats { name: String },
    /// Rebuild every vector of an index with another embedder, as one new version; the index
    /// then belongs to that embedder (older versions keep theirs). Needs exclusive write
    /// access: stop a daemon that ingests into this index first.
    Reembed {
        name: String,
        /// all-minilm-l6-v2, static, hashing, or the name of an [embedders.<name>] section.
        #[arg(long)]
        embedder: String,
    },
    /// One maintenance pass, as the daemon's maintenance actor runs them: compact small
    /// fragments, remove chunks soft-deleted past `index.purge_deleted_after_seconds`, prune
    /// versions beyond `index.retain_versions`. Prints what it did.
    Maintain { name: String },
    /// Build the vector index anew on the newest version with the configured `index.vector_*`
    /// build settings (type, partitions, sub-vectors, HNSW graph), as one new version: how
    /// changed settings take effect. Needs exclusive write access, as `reembed`: stop a
    /// daemon that ingests into this index first.
    RebuildVectors { name: String },
    /// Keep a version from pruning under a name (a Lance tag); the newest version if
    /// `--version` is not given.
    Tag {
        name: String,
        tag: String,
        #[arg(long)]
        version: Option<u64>,
    },
    /// Remove a tag; its version is pruned by the next retention pass if it is old.
    Untag { name: String, tag: String },
    /// Measure which centre `auto` should start from on this index, on judged queries of its
    /// domain (BEIR queries.jsonl and a qrels TSV), and store the best one.
    Calibrate {
        name: String,
        /// Judged queries of the index's domain (BEIR queries.jsonl); without them, the
        /// index calibrates on queries it cuts from its own chunks.
        #[arg(long, requires = "qrels")]
        queries: Option<PathBuf>,
        /// Their judgments (BEIR qrels TSV).
        #[arg(long, requires = "queries")]
        qrels: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Index BEIR datasets and report nDCG@10, Recall@100 and latency per method, in one
    /// table.
    Beir {
        /// A BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv); repeat for more.
        #[arg(long, required = true)]
        data: Vec<PathBuf>,
        /// Index name (with several datasets, `<index>-1`, `<index>-2`, …).
        #[arg(long, default_value = "beir-eval")]
        index: String,
        /// Also score each dataset's long-query variant: its cited documents as queries.
        #[arg(long)]
        long_queries: bool,
        /// First calibrate `auto` on queries the index cuts from its own chunks (no
        /// judgments seen) and store the centre; the test queries are then scored with it.
        #[arg(long, conflicts_with = "calibrate")]
        self_calibrate: bool,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// First calibrate `auto` on the training queries (qrels/train.tsv) and store the
        /// centre in the index; the test queries are then scored with it.
        #[arg(long)]
        calibrate: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Method {
    Semantic,
    Keyword,
    Hybrid,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Semantic => "semantic",
            Method::Keyword => "keyword",
            Method::Hybrid => "hybrid",
        }
    }
}

/// A failure at the command-line edge, with its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        let code = if matches!(e, EngineError::Invalid(_)) {
            2
        } else {
            1
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// A runtime failure (exit code 1).
fn failure(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: 1,
        message: e.to_string(),
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

/// Logs to stderr: the filter from `RAGSTREAM_LOG` (default `warn,lance=error`), the format
/// from `RAGSTREAM_LOG_FORMAT` (`text`, the default, or `json`: one object per line with the
/// span's fields, for log shippers). Read before the configuration, so that configuration
/// errors are logged in the chosen format too.
/// Logs (`RAGSTREAM_LOG` filter, `RAGSTREAM_LOG_FORMAT` text or json), metrics on or off,
/// and the trace exporter, as `[telemetry]` says. The returned guard flushes traces at exit.
fn init_telemetry(config: &Config) -> Result<Telemetry, Failure> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RAGSTREAM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,lance=error"));
    let format = match std::env::var("RAGSTREAM_LOG_FORMAT") {
        Err(_) => LogFormat::Text,
        Ok(f) => LogFormat::parse(&f).ok_or_else(|| {
            usage(format!(
                "RAGSTREAM_LOG_FORMAT is {f:?}: expected text or json"
            ))
        })?,
    };
    ragstream::telemetry::metrics::set_recording(config.telemetry.metrics);
    let telemetry =
        Telemetry::new(&config.telemetry, format, filter).map_err(|e| usage(e.to_string()))?;
    tracing::dispatcher::set_global_default(telemetry.dispatch.clone())
        .map_err(|e| failure(format!("cannot install the log subscriber: {e}")))?;
    Ok(telemetry)
}

fn main() -> ExitCode {
    // Before any thread starts: see index/lance_cpu_pool.rs.
    ragstream::index::lance_cpu_pool::configure();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn load_embedder(config: &Config) -> Result<Arc<dyn Embedder>, Failure> {
    ragstream::embedders::configured(config).map_err(failure)
}

/// Writes a bench or eval report as JSON to `path`, when one was given.
fn write_report(
    path: Option<&std::path::Path>,
    report: &impl serde::Serialize,
) -> Result<(), Failure> {
    let Some(path) = path else {
        return Ok(());
    };
    std::fs::write(path, serde_json::to_vec_pretty(report).expect("json"))
        .map_err(|e| failure(format!("{}: {e}", path.display())))
}

/// Commands that write an index hold the data directory's lock (see `data_dir`): a second
/// writer is refused, naming the one that holds it.
fn lock_data_dir(
    config: &Config,
    command: &str,
) -> Result<ragstream::data_dir::DataDirLock, Failure> {
    ragstream::data_dir::DataDirLock::acquire(&config.storage.data_dir, command).map_err(failure)
}

fn index_name(name: &str) -> Result<IndexName, Failure> {
    IndexName::parse(name).map_err(|e| usage(format!("--index {e}")))
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let config = Config::load(cli.config.as_deref()).map_err(|e| usage(e.to_string()))?;
    let _telemetry = init_telemetry(&config)?;
    // Before anything builds rayon's global pool (a vector-index build).
    ragstream::index::background_work::configure(config.index.background_priority);
    match cli.command {
        Command::Serve => {
            let _lock = lock_data_dir(&config, "serve")?;
            let engine = Arc::new(
                Engine::new(config.clone(), load_embedder(&config)?).keeping_indexes_warm(),
            );
            ragstream::daemon::serve(config, engine)
                .await
                .map_err(failure)?;
        }
        Command::Config {
            command: ConfigCommand::Show,
        } => print!("{}", config.redacted_toml()),
        Command::Config {
            command: ConfigCommand::Check { file },
        } => {
            Config::load_from(Some(&file), std::env::vars()).map_err(|e| usage(e.to_string()))?;
            println!("ok: {}", file.display());
        }
        Command::Broker => {
            ragstream::daemon::run_broker(config)
                .await
                .map_err(failure)?;
        }
        Command::Ingest { index, file } => {
            let name = index_name(&index)?;
            let _lock = lock_data_dir(&config, "ingest")?;
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            let docs = ragstream::ingest::read_documents(&file, &engine).map_err(|errors| {
                let shown: Vec<String> = errors.iter().take(20).map(|e| e.to_string()).collect();
                let more = errors.len().saturating_sub(20);
                usage(format!(
                    "{} invalid line(s), nothing was ingested:\n  {}{}",
                    errors.len(),
                    shown.join("\n  "),
                    if more > 0 {
                        format!("\n  ... and {more} more")
                    } else {
                        String::new()
                    }
                ))
            })?;
            let started = Instant::now();
            let count = docs.len();
            let outcome = ragstream::ingest::ingest_documents(&engine, &name, docs, true).await?;
            // The last commit may have started a vector index build in the background; the
            // process must not exit under it (the build would be lost and redone next time).
            let index = engine.index(&name).await?;
            if index.build_pending() {
                eprintln!("waiting for the vector index build to finish");
                while index.build_pending() {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
            let (vector_index_rows, _) =
                ragstream::index::vector_index::coverage(&index.lance().latest())
                    .await
                    .map_err(ragstream::engine::EngineError::from)?;
            let secs = started.elapsed().as_secs_f64();
            // Once the index is large enough, and each time it doubles, `auto` calibrates
            // itself on queries cut from the index's own chunks (docs/evaluation.md).
            let calibration = ragstream::eval::calibrate::self_calibrate_if_due(&engine, &name)
                .await
                .map_err(failure)?;
            println!(
                "{}",
                json!({
                    "index": name.as_str(),
                    "documents": count,
                    "upserted": outcome.upserted,
                    "unchanged": outcome.unchanged,
                    "chunks_written": outcome.chunks_written,
                    "index_version": index.latest_version(),
                    "vector_index_rows": vector_index_rows,
                    "auto_calibrated_center": calibration.map(|c| c.center),
                    "embedding": engine.embedding_report(),
                    "seconds": (secs * 1000.0).round() / 1000.0,
                })
            );
        }
        Command::Query {
            index,
            text,
            method,
            top_k,
            alpha,
            version,
            normalize,
            filters,
            json: as_json,
        } => {
            let mut bag = serde_json::Map::new();
            for f in &filters {
                let (k, v) = f
                    .split_once('=')
                    .ok_or_else(|| usage(format!("--filter {f:?}: expected KEY=VALUE")))?;
                let value = serde_json::from_str(v).unwrap_or_else(|_| Value::from(v));
                bag.insert(k.to_string(), value);
            }
            let mut body = json!({"retrieval": {
                "index": index, "query": text, "top_k": top_k, "filters": bag,
                "search_method": method.name(),
                "query_preprocessing": if normalize { "normalize" } else { "none" },
            }});
            if let Some(a) = alpha {
                body["retrieval"]["hybrid_alpha"] = json!(a);
            }
            if let Some(v) = version {
                body["retrieval"]["index_version"] = json!(v);
            }
            let limits = RequestLimits {
                max_top_k: config.limits.max_top_k,
                max_query_bytes: config.limits.max_query_bytes,
            };
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            let started = Instant::now();
            let outcome = match parse_request(&body, limits) {
                Ok((name, request)) => engine
                    .search(&name, &request)
                    .await
                    .map(|result| (name, request, result)),
                Err(e) => Err(e.into()),
            };
            let (name, request, result) = match outcome {
                Ok(ok) => ok,
                Err(e) if as_json => {
                    println!("{}", render_error(&e));
                    return Err(e.into());
                }
                Err(e) => return Err(e.into()),
            };
            let latency = started.elapsed().as_secs_f64() * 1000.0;
            let query_id = uuid::Uuid::new_v4().to_string();
            if as_json {
                let response = render_response(&name, &request, &result, &query_id, latency);
                println!("{}", serde_json::to_string_pretty(&response).expect("json"));
            } else {
                println!(
                    "index {} @ version {} · {} · {} result(s) · {:.1} ms",
                    name,
                    result.index_version,
                    method.name(),
                    result.hits.len(),
                    latency
                );
                for (i, hit) in result.hits.iter().enumerate() {
                    let snippet: String = hit.row.text.chars().take(160).collect();
                    println!(
                        "{:>2}. {:.4}  {} #{}  {}\n    {}",
                        i + 1,
                        hit.score,
                        hit.row.document_id,
                        hit.row.chunk_index,
                        hit.row.title.as_deref().unwrap_or(""),
                        snippet.replace('\n', " ")
                    );
                }
            }
        }
        Command::Index {
            command: IndexCommand::Stats { name },
        } => {
            let name = index_name(&name)?;
            // Stats need no model: open the index with the model-free embedder.
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            let stats = engine.stats(&name).await?;
            println!("{}", serde_json::to_string_pretty(&stats).expect("json"));
        }
        Command::Index {
            command: IndexCommand::List,
        } => {
            // Figures need no model: open the indexes with the model-free embedder.
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            let caller = ragstream::auth::Caller::unrestricted();
            let list = ragstream::contracts::index_list(&engine, &caller).await;
            println!("{}", serde_json::to_string_pretty(&list).expect("json"));
        }
        Command::Index {
            command: IndexCommand::Maintain { name },
        } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index maintain")?;
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            let report = engine
                .index(&name)
                .await?
                .maintain(&config.index.maintenance())
                .await
                .map_err(ragstream::engine::EngineError::from)?;
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        }
        Command::Index {
            command: IndexCommand::RebuildVectors { name },
        } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index rebuild-vectors")?;
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            let started = Instant::now();
            let (version, rows) = engine.rebuild_vector_index(&name).await?;
            let v = config.index.vector();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "index": name.as_str(),
                    "index_version": version,
                    "rows": rows,
                    "seconds": started.elapsed().as_secs_f64(),
                    "settings": {
                        "vector_index_type": v.kind,
                        "vector_index_partitions": v.partitions,
                        "vector_index_sub_vectors": v.sub_vectors,
                        "vector_hnsw_m": v.hnsw_m,
                        "vector_hnsw_ef_construction": v.hnsw_ef_construction,
                    },
                }))
                .expect("json")
            );
        }
        Command::Index {
            command: IndexCommand::Tag { name, tag, version },
        } => {
            let name = index_name(&name)?;
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            let version = engine
                .index(&name)
                .await?
                .tag(&tag, version)
                .await
                .map_err(ragstream::engine::EngineError::from)?;
            println!(
                "{}",
                json!({"index": name.as_str(), "tag": tag, "index_version": version})
            );
        }
        Command::Index {
            command: IndexCommand::Untag { name, tag },
        } => {
            let name = index_name(&name)?;
            let engine = Engine::new(config.clone(), Arc::new(HashingEmbedder::new(384)));
            engine
                .index(&name)
                .await?
                .untag(&tag)
                .await
                .map_err(ragstream::engine::EngineError::from)?;
            println!("{}", json!({"index": name.as_str(), "untagged": tag}));
        }
        Command::Index {
            command: IndexCommand::Reembed { name, embedder },
        } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index reembed")?;
            let target = ragstream::embedders::load(&config, &embedder)
                .map_err(|e| usage(format!("--embedder {embedder}: {e}")))?;
            let engine = Engine::new(config.clone(), target.clone());
            let before = engine.index(&name).await?.info();
            let started = Instant::now();
            let version = engine.reembed(&name).await?;
            println!(
                "{}",
                json!({
                    "index": name.as_str(),
                    "from": {"embedder": before.embedder, "dimensions": before.dimensions},
                    "to": {"embedder": target.id(), "dimensions": target.dimensions()},
                    "index_version": version,
                    "embedding": engine.embedding_report(),
                    "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
                })
            );
        }
        Command::Model {
            command: ModelCommand::Distill { from, to },
        } => {
            let from = from.unwrap_or_else(|| config.model.dir.clone());
            let to = to.unwrap_or_else(|| config.model.static_dir.clone());
            let report = tokio::task::spawn_blocking(move || {
                ragstream::embedding::distill::distill(&from, &to, None)
            })
            .await
            .map_err(failure)?
            .map_err(failure)?;
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        }
        Command::Bench {
            command:
                BenchCommand::Embed {
                    corpus,
                    transformer_chunks,
                    static_chunks,
                    json: out,
                },
        } => {
            if transformer_chunks == 0 || static_chunks == 0 {
                return Err(usage(
                    "--transformer-chunks and --static-chunks must be at least 1",
                ));
            }
            let texts: Vec<String> = ragstream::eval::beir::read_corpus(&corpus)
                .map_err(failure)?
                .into_iter()
                .filter_map(|d| d.text)
                .collect();
            if texts.is_empty() {
                return Err(usage(format!("{}: no document texts", corpus.display())));
            }
            let (model_dir, static_dir) =
                (config.model.dir.clone(), config.model.static_dir.clone());
            let report = tokio::task::spawn_blocking(move || {
                ragstream::bench::embed::run(
                    &model_dir,
                    &static_dir,
                    &texts,
                    transformer_chunks,
                    static_chunks,
                )
            })
            .await
            .map_err(failure)?
            .map_err(failure)?;
            println!(
                "f32 GEMM 8192x384 · 384x1536 (candle): {:.1} GFLOP/s",
                report.gemm_gflops
            );
            for r in &report.rows {
                print!(
                    "{:<26} {:>4} tokens/chunk  {:>6} chunks in {:>7.2} s  {:>10.1} chunks/s",
                    r.embedder, r.tokens_per_chunk, r.chunks, r.seconds, r.chunks_per_second
                );
                match (r.gflop_per_chunk, r.gflops, r.fraction_of_gemm) {
                    (Some(g), Some(rate), Some(f)) => println!(
                        "  {g:.2} GFLOP/chunk  {rate:.1} GFLOP/s  {:.0}% of GEMM",
                        f * 100.0
                    ),
                    _ => println!(),
                }
            }
            write_report(out.as_deref(), &report)?;
        }
        Command::Bench {
            command:
                BenchCommand::Pipeline {
                    corpus,
                    documents,
                    freshness_documents,
                    rate,
                    queries,
                    beside_backlog,
                    json: out,
                },
        } => {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(usage("--rate must be a positive number"));
            }
            if documents == 0 || freshness_documents == 0 || queries == 0 {
                return Err(usage(
                    "--documents, --freshness-documents and --queries must be at least 1",
                ));
            }
            let options = ragstream::bench::pipeline::PipelineBenchOptions {
                corpus,
                documents,
                freshness_documents,
                rate_per_second: rate,
                queries,
                beside_backlog,
            };
            let report =
                ragstream::bench::pipeline::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            println!(
                "embedder {} · batches of {} documents or {} ms",
                report.embedder, report.batch_max_documents, report.batch_max_ms
            );
            println!(
                "ingest: {} documents, {} chunks in {:.1} s: {:.2} documents/s, {:.2} chunks/s",
                report.documents,
                report.chunks,
                report.ingest_seconds,
                report.documents_per_second,
                report.chunks_per_second
            );
            println!(
                "direct ingest of the same documents: {:.1} s, {:.2} chunks/s; Kafka path / direct = {:.2}",
                report.direct_ingest_seconds,
                report.direct_chunks_per_second,
                report.kafka_to_direct_ratio
            );
            println!(
                "after the first commit: {:.2} chunks/s; Kafka path / direct = {:.2}",
                report.steady_chunks_per_second, report.steady_kafka_to_direct_ratio
            );
            let b = &report.breakdown;
            println!(
                "  produced (acknowledged) after {:.1} s, first searchable after {:.1} s; {} commits: Lance {:.1} s, keyword {:.1} s; {} embedding calls: {:.1} s",
                b.produce_seconds,
                b.first_searchable_seconds,
                b.commits,
                b.lance_commit_seconds,
                b.keyword_commit_seconds,
                b.embed_calls,
                b.embed_seconds
            );
            for s in &b.stages {
                println!(
                    "  {:<17} busy {:>7.2} s ({:>5.1} % of the phase), senders waited {:>7.2} s for room",
                    s.stage,
                    s.busy_seconds,
                    s.busy_share * 100.0,
                    s.backpressure_seconds
                );
            }
            let line = |what: &str, l: &ragstream::bench::pipeline::Latency| {
                println!(
                    "{what:<34} n={:<4} p50 {:>8.1} ms  p99 {:>8.1} ms  max {:>8.1} ms",
                    l.count, l.p50_ms, l.p99_ms, l.max_ms
                )
            };
            line(
                &format!(
                    "freshness at {} documents/s{}",
                    report.freshness_rate_per_second,
                    if report.freshness_beside_backlog {
                        format!(
                            " ({:.0} % produced while the backlog drained)",
                            report.freshness_produced_while_draining * 100.0
                        )
                    } else {
                        String::new()
                    }
                ),
                &report.freshness,
            );
            line("query over HTTP (hybrid, top 10)", &report.http_query);
            line("query over the bus (hybrid, top 10)", &report.bus_query);
            write_report(out.as_deref(), &report)?;
        }
        Command::Bench {
            command:
                BenchCommand::Scale {
                    corpus,
                    queries,
                    chunks,
                    query_count,
                    concurrency,
                    recall_queries,
                    data_dir,
                    sweep,
                    shortlists,
                    steady_seconds,
                    steady_rate,
                    json: out,
                },
        } => {
            if chunks == 0 || query_count == 0 || concurrency == 0 || steady_rate == 0 {
                return Err(usage(
                    "--chunks, --query-count, --concurrency and --steady-rate must be at least 1",
                ));
            }
            let share = config.index.vector_resident_hamming_share;
            let shortlists = shortlists
                .iter()
                .map(|p| {
                    let bad = || {
                        usage(format!(
                            "--shortlists {p:?}: expected SHORTLIST[:HAMMING_SHARE], a shortlist of at least 1 row and a share from 0 to 1"
                        ))
                    };
                    let (rows, share) = match p.split_once(':') {
                        Some((r, s)) => (r, s.parse::<f64>().map_err(|_| bad())?),
                        None => (p.as_str(), share),
                    };
                    let shortlist = rows.parse::<usize>().map_err(|_| bad())?;
                    if shortlist == 0 || !(0.0..=1.0).contains(&share) {
                        return Err(bad());
                    }
                    Ok(ragstream::index::ResidentSearch {
                        shortlist,
                        hamming_share: share,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let ef = config.index.vector_ef;
            let sweep = sweep
                .iter()
                .map(|p| {
                    let parts: Vec<Option<usize>> = p
                        .split(':')
                        .map(|n| n.parse().ok().filter(|n| *n > 0))
                        .collect();
                    match parts[..] {
                        [Some(n), Some(r)] => Ok((n, r as u32, ef)),
                        [Some(n), Some(r), Some(e)] => Ok((n, r as u32, e)),
                        _ => Err(usage(format!(
                            "--sweep {p:?}: expected NPROBES:REFINE[:EF], each at least 1"
                        ))),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let options = ragstream::bench::scale::ScaleBenchOptions {
                corpus,
                queries,
                chunks,
                query_count,
                concurrency,
                recall_queries,
                data_dir,
                sweep,
                shortlists,
                steady_seconds,
                steady_rate,
            };
            let report =
                ragstream::bench::scale::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            println!(
                "embedder {} · {} chunks · ingest {:.0} chunks/s ({:.1} s) · vector index over {} rows ({:.1} s) · cache loaded in {:.1} s",
                report.embedder, report.chunks, report.chunks_per_second, report.ingest_seconds,
                report.vector_index_rows, report.index_build_seconds, report.prewarm_seconds
            );
            for l in &report.latency {
                println!(
                    "{:<9} c={} n={:<6} p50 {:>8.2} ms  p99 {:>8.2} ms  p999 {:>8.2} ms  {:>7.1} q/s",
                    l.method, report.concurrency, l.queries, l.p50_ms, l.p99_ms, l.p999_ms,
                    l.queries_per_second
                );
            }
            for p in &report.phases {
                println!(
                    "  phase {:<32} p50 {:>8.2} ms  p99 {:>8.2} ms",
                    p.phase, p.p50_ms, p.p99_ms
                );
            }
            for p in report.sweep.iter().filter(|p| p.resident_shortlist > 0) {
                println!(
                    "  resident shortlist {:>6} hamming share {:.3}: recall@10 {:.4}, vector search p50 {:.2} ms p99 {:.2} ms",
                    p.resident_shortlist, p.resident_hamming_share, p.recall_at_10, p.p50_ms, p.p99_ms
                );
            }
            for p in report.sweep.iter().filter(|p| p.resident_shortlist == 0) {
                println!(
                    "  nprobes {:>4} refine {:>3} ef {:>4}: recall@10 {:.4}, vector search p50 {:.2} ms p99 {:.2} ms",
                    p.nprobes, p.refine_factor, p.ef, p.recall_at_10, p.p50_ms, p.p99_ms
                );
            }
            if let Some(s) = &report.steady {
                println!(
                    "steady {:.0} s at {} docs/s: {} documents, freshness p50 {:.0} ms p99 {:.0} ms max {:.0} ms; fragments max {} end {}; versions max {} end {}; hybrid p99 {:.2} ms -> {:.2} ms (x{:.2}, {} queries); {} maintenance passes",
                    s.seconds, s.rate_documents_per_second, s.documents, s.freshness_p50_ms,
                    s.freshness_p99_ms, s.freshness_max_ms, s.fragments_max, s.fragments_end,
                    s.versions_max, s.versions_end, s.query_p99_start_ms, s.query_p99_end_ms,
                    s.query_p99_end_over_start, s.queries, s.maintenance_passes
                );
                println!(
                    "  hybrid p99 beside a compaction or index build {:.2} ms ({} queries), otherwise {:.2} ms; by 10 s: {}",
                    s.query_p99_beside_background_ms,
                    s.queries_beside_background,
                    s.query_p99_otherwise_ms,
                    s.query_p99_by_10s_ms
                        .iter()
                        .map(|ms| format!("{ms:.0}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                println!(
                    "  keyword segments max {} end {}",
                    s.keyword_segments_max, s.keyword_segments_end
                );
                if let Some(q) = &s.hybrid_quiet_after {
                    println!(
                        "  quiet after, {} chunks: hybrid p50 {:.2} ms p99 {:.2} ms",
                        report.chunks, q.p50_ms, q.p99_ms
                    );
                }
            }
            println!(
                "ANN recall@10 vs exact {:.4} · RSS {:.0} MiB ({:.0} on huge pages) · disk {:.0} MiB",
                report.ann_recall_at_10, report.rss_mib, report.huge_pages_mib, report.disk_mib
            );
            write_report(out.as_deref(), &report)?;
        }
        Command::Bench {
            command:
                BenchCommand::Soak {
                    minutes,
                    rate,
                    restart_every,
                    embedder,
                    json,
                },
        } => {
            if !(minutes > 0.0 && rate > 0.0 && restart_every > 0) {
                return Err(usage(
                    "--minutes, --rate and --restart-every must be above 0",
                ));
            }
            let exe = std::env::current_exe().map_err(failure)?;
            let options = ragstream::bench::soak::SoakOptions {
                minutes,
                rate,
                restart_every: std::time::Duration::from_secs(restart_every),
                embedder,
            };
            let report = ragstream::bench::soak::run(&exe, &options)
                .await
                .map_err(failure)?;
            println!(
                "{}",
                serde_json::to_string_pretty(&report).expect("a report serialises")
            );
            write_report(json.as_deref(), &report)?;
            if report.lost != 0 || report.duplicated != 0 || report.server_errors != 0 {
                return Err(failure(format!(
                    "soak failed: {} lost, {} duplicated, {} answers with a 5xx",
                    report.lost, report.duplicated, report.server_errors
                )));
            }
        }
        Command::Bench {
            command: BenchCommand::Fuzz { cases, seed, json },
        } => {
            if cases == 0 {
                return Err(usage("--cases must be at least 1"));
            }
            let report = ragstream::bench::fuzz::run(cases, seed).await;
            println!(
                "{}",
                serde_json::to_string_pretty(&report).expect("a report serialises")
            );
            write_report(json.as_deref(), &report)?;
            if report.failures() > 0 {
                return Err(failure(format!(
                    "{} inputs panicked or were refused with a 5xx or outside the error shape (seed {seed})",
                    report.failures()
                )));
            }
        }
        Command::Bench {
            command:
                BenchCommand::Export {
                    data_dir,
                    index,
                    queries,
                    query_count,
                    out,
                },
        } => {
            if query_count == 0 {
                return Err(usage("--query-count must be at least 1"));
            }
            let name = index_name(&index)?;
            let mut config = config.clone();
            config.storage.data_dir = data_dir;
            let engine = Arc::new(Engine::new(config.clone(), load_embedder(&config)?));
            let texts: Vec<String> = ragstream::eval::beir::read_queries(&queries)
                .map_err(|e| usage(format!("--queries {}: {e}", queries.display())))?
                .into_iter()
                .map(|q| q.text)
                .collect();
            if texts.is_empty() {
                return Err(usage(format!(
                    "--queries {}: no queries",
                    queries.display()
                )));
            }
            let texts: Vec<String> = texts.iter().cycle().take(query_count).cloned().collect();
            let (chunks, n) = ragstream::bench::export::run(&engine, &name, &texts, &out)
                .await
                .map_err(failure)?;
            println!("{}", json!({"chunks": chunks, "queries": n, "out": out}));
        }
        Command::Bench {
            command:
                BenchCommand::Keyword {
                    corpus,
                    queries,
                    documents,
                    batch,
                    query_count,
                    settings,
                    json: out,
                },
        } => {
            if documents == 0 || batch == 0 || query_count == 0 {
                return Err(usage(
                    "--documents, --batch and --query-count must be at least 1",
                ));
            }
            let defaults = ragstream::index::KeywordSettings::default();
            let settings = settings
                .iter()
                .map(|s| {
                    let parts: Vec<Option<usize>> = s.split(':').map(|n| n.parse().ok()).collect();
                    // Parts left out take the defaults.
                    let part =
                        |i: usize, default: usize| parts.get(i).copied().unwrap_or(Some(default));
                    let settings = match (
                        parts.len(),
                        part(0, 0),
                        part(1, 0),
                        part(2, defaults.merge_max_docs),
                        part(3, defaults.max_query_terms),
                    ) {
                        (2..=4, Some(mb), Some(merge), Some(max_docs), Some(max_terms)) => {
                            ragstream::index::KeywordSettings {
                                max_query_terms: max_terms,
                                ..ragstream::index::KeywordSettings::from_mib(mb, merge, max_docs)
                            }
                        }
                        _ => {
                            return Err(usage(format!(
                                "--settings {s:?}: expected \
                                 MEMORY_MB:MERGE_MIN_SEGMENTS[:MERGE_MAX_DOCS[:MAX_QUERY_TERMS]]"
                            )))
                        }
                    };
                    match settings.problem() {
                        Some((key, reason)) => {
                            Err(usage(format!("--settings {s:?}: {key} {reason}")))
                        }
                        None => Ok(settings),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let options = ragstream::bench::keyword::KeywordBenchOptions {
                corpus,
                queries,
                documents,
                batch,
                query_count,
                settings,
            };
            let chunker = ragstream::chunking::Chunker::new(config.chunking.chunker());
            let report = ragstream::bench::keyword::run(&chunker, &options).map_err(failure)?;
            println!(
                "{} documents ({} chunks) in commits of {}, {} queries (top 30)",
                report.documents, report.chunks, report.batch, report.queries
            );
            for r in &report.rows {
                println!(
                    "memory {:>4} MiB merge {:>2} max docs {:>8} max terms {:>2}: {:>7.0} chunks/s · commit p50 {:>6.2} p99 {:>7.2} max {:>8.2} ms · searcher open p50 {:>5.2} p99 {:>6.2} ms · {:>3} segments (largest {:>8} docs) · query p50 {:>5.2} p99 {:>6.2} ms · {:.0} MiB",
                    r.writer_memory_mb, r.merge_min_segments, r.merge_max_docs, r.max_query_terms,
                    r.chunks_per_second, r.commit_p50_ms, r.commit_p99_ms, r.commit_max_ms,
                    r.searcher_open_p50_ms, r.searcher_open_p99_ms, r.segments_end,
                    r.segment_docs.first().copied().unwrap_or(0), r.query_p50_ms,
                    r.query_p99_ms, r.disk_mib
                );
            }
            write_report(out.as_deref(), &report)?;
        }
        Command::Bench {
            command:
                BenchCommand::Graph {
                    corpus,
                    queries,
                    documents,
                    triples_per_document,
                    query_count,
                    rounds,
                    depth,
                    json: out,
                },
        } => {
            if documents == 0 || query_count == 0 || rounds == 0 || triples_per_document == 0 {
                return Err(usage(
                    "--documents, --triples-per-document, --query-count and --rounds must be at least 1",
                ));
            }
            let options = ragstream::bench::graph::GraphBenchOptions {
                corpus,
                queries,
                documents,
                triples_per_document,
                query_count,
                rounds,
                depth,
            };
            let report =
                ragstream::bench::graph::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            println!(
                "embedder {} · {} documents, {} triples, {} entities (ingest {:.1} s; graph loaded in {:.0} ms)",
                report.embedder, report.documents, report.triples, report.entities,
                report.ingest_seconds, report.graph_load_ms
            );
            println!(
                "{} queries × {} rounds per mode, depth {}: {} linked an entity, {:.1} relations per query",
                report.queries_per_round, report.rounds, report.depth, report.queries_linking,
                report.relations_per_query
            );
            for (what, l) in [
                ("fast mode (chunks)", &report.fast_mode),
                ("graph mode", &report.graph_mode),
            ] {
                println!(
                    "001 {what:<19} n={:<5} p50 {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms",
                    l.count, l.p50_ms, l.p99_ms, l.max_ms
                );
            }
            println!(
                "graph lookup adds {:.3} ms at the median",
                report.added_p50_ms
            );
            write_report(out.as_deref(), &report)?;
        }
        Command::Bench {
            command:
                BenchCommand::Telemetry {
                    corpus,
                    queries,
                    documents,
                    query_count,
                    rounds,
                    json: out,
                },
        } => {
            if documents == 0 || query_count == 0 || rounds == 0 {
                return Err(usage(
                    "--documents, --query-count and --rounds must be at least 1",
                ));
            }
            let options = ragstream::bench::telemetry::TelemetryBenchOptions {
                corpus,
                queries,
                documents,
                query_count,
                rounds,
            };
            let embedder = load_embedder(&config)?;
            let report = tokio::task::spawn_blocking(move || {
                ragstream::bench::telemetry::run(config, embedder, &options)
            })
            .await
            .map_err(failure)?
            .map_err(failure)?;
            println!(
                "embedder {} · {} documents · {} hybrid queries × {} rounds per mode",
                report.embedder, report.documents, report.queries_per_round, report.rounds
            );
            for (what, l) in [("off", &report.off), ("on", &report.on)] {
                println!(
                    "metrics+tracing {what:<4} n={:<5} p50 {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms",
                    l.count, l.p50_ms, l.p99_ms, l.max_ms
                );
            }
            println!(
                "on/off: p50 ×{:.3}, p99 ×{:.3}; {} export requests, {} bytes of spans",
                report.p50_ratio,
                report.p99_ratio,
                report.export_requests,
                report.spans_exported_bytes
            );
            write_report(out.as_deref(), &report)?;
        }
        Command::Index {
            command:
                IndexCommand::Calibrate {
                    name,
                    queries,
                    qrels,
                },
        } => {
            use ragstream::eval::{beir, calibrate};
            use ragstream::index::CalibrationSource;
            let name = index_name(&name)?;
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            engine.index(&name).await?;
            // Always measured, so that a judged calibration is seen next to what the index
            // finds on its own.
            let synthetic = calibrate::synthetic_center(&engine, &name, true)
                .await
                .map_err(failure)?;
            match (queries, qrels) {
                (Some(queries), Some(qrels)) => {
                    let queries = beir::read_queries(&queries).map_err(failure)?;
                    let qrels = beir::read_qrels(&qrels).map_err(failure)?;
                    let judged = beir::judged(&queries, &qrels);
                    if judged.is_empty() {
                        return Err(usage("no query in --queries is judged in --qrels"));
                    }
                    let c = calibrate::auto_center(
                        &engine,
                        &name,
                        &judged,
                        &qrels,
                        beir::LeftOut::Nothing,
                        true,
                    )
                    .await
                    .map_err(failure)?;
                    calibrate::store(&engine, &name, c.center, CalibrationSource::Judged)
                        .await
                        .map_err(failure)?;
                    if let Some(s) = &synthetic {
                        println!("on the index's own queries (not stored):");
                        print_calibration(s);
                    }
                    println!("on the judged queries (stored):");
                    print_calibration(&c);
                }
                _ => match &synthetic {
                    Some(c) => {
                        calibrate::store(&engine, &name, c.center, CalibrationSource::Synthetic)
                            .await
                            .map_err(failure)?;
                        println!("on the index's own queries (stored):");
                        print_calibration(c);
                    }
                    None => {
                        return Err(usage(
                            "the index has too few documents of two or more chunks to cut \
                             calibration queries from; give --queries and --qrels",
                        ))
                    }
                },
            }
        }
        Command::Eval {
            command:
                EvalCommand::Beir {
                    data,
                    index,
                    long_queries,
                    self_calibrate,
                    json: out,
                    calibrate,
                },
        } => {
            use ragstream::eval::beir::Calibrate;
            let calibrate = match (calibrate, self_calibrate) {
                (true, _) => Calibrate::Judged,
                (_, true) => Calibrate::Synthetic,
                _ => Calibrate::No,
            };
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            let methods = eval_methods();
            let mut reports = Vec::new();
            for (n, dir) in data.iter().enumerate() {
                let name = if data.len() == 1 {
                    index_name(&index)?
                } else {
                    index_name(&format!("{index}-{}", n + 1))?
                };
                let scored = ragstream::eval::beir::evaluate(
                    &engine,
                    dir,
                    &name,
                    &methods,
                    calibrate,
                    long_queries,
                    true,
                )
                .await
                .map_err(failure)?;
                if let Some(c) = scored.first().and_then(|r| r.calibration.as_ref()) {
                    print_calibration(c);
                }
                reports.extend(scored);
            }
            print_eval(&reports);
            write_report(out.as_deref(), &reports)?;
        }
    }
    Ok(())
}

/// What `eval beir` scores: each method as contract 000 runs it, each contract 002 profile,
/// and the hybrid profiles with each other way of fusing the branches.
fn eval_methods() -> Vec<ragstream::eval::beir::EvalMethod> {
    use ragstream::eval::beir::EvalMethod;
    use ragstream::retrieval::fusion::BranchFusion;
    use ragstream::retrieval::profiles::Profile;
    let mut methods = vec![
        EvalMethod::Method(SearchMethod::Semantic),
        EvalMethod::Method(SearchMethod::Keyword),
        EvalMethod::Method(SearchMethod::Hybrid),
        EvalMethod::Profile(Profile::Exact),
        EvalMethod::Profile(Profile::Balanced),
        EvalMethod::Profile(Profile::Semantic),
        EvalMethod::Profile(Profile::Auto),
    ];
    for profile in [Profile::Balanced, Profile::Auto] {
        for fusion in &BranchFusion::ALL[1..] {
            methods.push(EvalMethod::Fused(profile, *fusion));
        }
    }
    methods
}

/// One table for every dataset and query set, then nDCG@10 by query length.
fn print_eval(reports: &[ragstream::eval::beir::EvalReport]) {
    for r in reports.iter().filter(|r| r.queries == "test") {
        println!(
            "{} · {} documents · {} chunks · index_version {}",
            r.dataset, r.documents, r.chunks, r.index_version
        );
        if let Some(rate) = r.ingest_chunks_per_second {
            println!(
                "ingest: {} chunks in {:.1} s ({:.1} chunks/s)",
                r.chunks_written, r.ingest_seconds, rate
            );
        }
    }
    let dataset = |r: &ragstream::eval::beir::EvalReport| {
        let name = std::path::Path::new(&r.dataset)
            .file_name()
            .map_or(r.dataset.clone(), |n| n.to_string_lossy().into_owned());
        format!("{name} ({}, {} q)", r.queries, r.methods[0].queries)
    };
    println!(
        "{:<28} {:<26} {:>8} {:>11} {:>9} {:>9}",
        "dataset", "method", "nDCG@10", "Recall@100", "p50 ms", "p99 ms"
    );
    for r in reports {
        for m in &r.methods {
            println!(
                "{:<28} {:<26} {:>8.4} {:>11.4} {:>9.1} {:>9.1}",
                dataset(r),
                m.method,
                m.ndcg_at_10,
                m.recall_at_100,
                m.latency_p50_ms,
                m.latency_p99_ms
            );
        }
    }
    println!("nDCG@10 by query length (words):");
    for r in reports {
        for m in &r.methods {
            let buckets: Vec<String> = m
                .by_query_length
                .iter()
                .map(|b| format!("{} {:.4} ({} q)", b.words, b.ndcg_at_10, b.queries))
                .collect();
            println!("{:<28} {:<26} {}", dataset(r), m.method, buckets.join("  "));
        }
    }
}

fn print_calibration(c: &ragstream::eval::calibrate::Calibration) {
    println!("auto calibrated on {} queries:", c.queries);
    for (center, ndcg) in &c.ndcg_at_10_by_center {
        let mark = if *center == c.center {
            "  <- stored"
        } else {
            ""
        };
        println!("  centre {center:.1}  nDCG@10 {ndcg:.4}{mark}");
    }
}
