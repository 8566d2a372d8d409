//! `ragstream-bench …`: the performance benchmarks (BENCHMARKS.md names each command).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::json;

use ragstream::cli::{failure, index_name, load_embedder, usage, Failure, ReportArgs};
use ragstream::config::Config;
use ragstream::engine::Engine;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Each embedder alone: chunks/s at 64 and 256 tokens per chunk; the transformer's FLOPs
    /// per chunk and its fraction of a plain f32 GEMM timed in the same run.
    Embed {
        /// Chunk texts are cut from this BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Chunks the transformer embeds.
        #[arg(long, default_value_t = 64)]
        transformer_chunks: usize,
        /// Chunks the static model embeds.
        #[arg(long, default_value_t = 20_000)]
        static_chunks: usize,
        #[command(flatten)]
        output: ReportArgs,
    },
    /// Start a scratch daemon (the embedded broker, or kafka.brokers when set) and measure
    /// ingest throughput, freshness (produce → searchable), HTTP ingest and query latency
    /// over HTTP and over the bus.
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
        /// Then POST this many documents over HTTP, 250 a request, and time them until
        /// searchable (0: skip).
        #[arg(long, default_value_t = 0)]
        http_documents: usize,
        #[command(flatten)]
        output: ReportArgs,
    },
    /// An index of `--chunks` chunks (SciFact passages recombined): ingest throughput, query
    /// latency per method at a concurrency, ANN recall@10 against exact search, RSS, disk.
    Scale {
        /// Documents as BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Query texts as BEIR queries.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        /// Chunks the index holds.
        #[arg(long, default_value_t = 100_000)]
        chunks: usize,
        /// Queries per method.
        #[arg(long, default_value_t = 1000)]
        query_count: usize,
        /// Queries in flight at once.
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
        /// Documents per second in the steady phase.
        #[arg(long, default_value_t = 100)]
        steady_rate: usize,
        /// Also time this many explanations (two targets each) against their queries.
        #[arg(long, default_value_t = 0)]
        explain_queries: usize,
        /// Query with the corpus's own passages (each document's title and text, 41 words
        /// or more) instead of `--queries`: long queries, as in `eval --long-queries`.
        #[arg(long)]
        passage_queries: bool,
        #[command(flatten)]
        output: ReportArgs,
    },
    /// The daemon for N minutes as operators run it: a standalone broker, documents at a
    /// steady rate (some updated), queries over HTTP, the daemon restarted every few
    /// minutes (SIGTERM and SIGKILL in turn). Reports lost and duplicated documents, 5xx,
    /// p99 and RSS per minute, and each incarnation's RSS slope.
    Soak {
        /// How long the soak runs.
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
        #[command(flatten)]
        output: ReportArgs,
    },
    /// Hostile inputs through every parser in process (document events, the five
    /// contracts, configuration from the environment): counts refusals, and fails on any
    /// panic, 5xx or refusal outside the error shape. Seeded: a failure reproduces.
    Fuzz {
        /// Inputs per parser.
        #[arg(long, default_value_t = 100_000)]
        cases: u64,
        /// Seed of the hostile inputs: the same seed gives the same inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        output: ReportArgs,
    },
    /// Write the chunks and vectors of an index (`--data-dir` as `bench scale` left it), and
    /// query texts with their vectors, to plain files a peer can index and search with
    /// (`scripts/compare-lancedb`).
    Export {
        /// The data directory holding the index.
        #[arg(long)]
        data_dir: PathBuf,
        /// The index.
        #[arg(long, default_value = "scale")]
        index: String,
        /// Query texts as BEIR queries.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        /// Queries per method.
        #[arg(long, default_value_t = 1000)]
        query_count: usize,
        /// The directory the files are written to.
        #[arg(long)]
        out: PathBuf,
    },
    /// The keyword store (tantivy) under streaming commits: commit latency (with merges),
    /// searcher opening, segments and query latency per writer budget and merge policy.
    Keyword {
        /// Documents as BEIR corpus.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/corpus.jsonl")]
        corpus: PathBuf,
        /// Query texts as BEIR queries.jsonl.
        #[arg(long, default_value = "../shared/data/scifact/queries.jsonl")]
        queries: PathBuf,
        /// Documents the index holds.
        #[arg(long, default_value_t = 100_000)]
        documents: usize,
        /// Documents per commit.
        #[arg(long, default_value_t = 25)]
        batch: usize,
        /// Queries per method.
        #[arg(long, default_value_t = 300)]
        query_count: usize,
        /// Settings to compare, MEMORY_MB:MERGE_MIN_SEGMENTS[:MERGE_MAX_DOCS[:MAX_QUERY_TERMS]]
        /// (0: never merge; no limit; every term; left out: the defaults), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "64:8")]
        settings: Vec<String>,
        #[command(flatten)]
        output: ReportArgs,
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
        /// Documents the index holds.
        #[arg(long, default_value_t = 5183)]
        documents: usize,
        /// Triples made from each document's own words.
        #[arg(long, default_value_t = 20)]
        triples_per_document: usize,
        /// Queries per round and mode.
        #[arg(long, default_value_t = 300)]
        query_count: usize,
        /// Rounds, each running every query in both modes.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Structural depth of graph mode.
        #[arg(long, default_value_t = 1)]
        depth: usize,
        #[command(flatten)]
        output: ReportArgs,
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
        /// Documents the index holds.
        #[arg(long, default_value_t = 2000)]
        documents: usize,
        /// Queries per round and mode.
        #[arg(long, default_value_t = 200)]
        query_count: usize,
        /// Rounds, each running every query off and then on (after one warm-up round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[command(flatten)]
        output: ReportArgs,
    },
}

/// Runs one benchmark.
pub async fn run(config: Config, command: BenchCommand) -> Result<(), Failure> {
    match command {
        BenchCommand::Embed {
            corpus,
            transformer_chunks,
            static_chunks,
            output,
        } => {
            if transformer_chunks == 0 || static_chunks == 0 {
                return Err(usage(
                    "--transformer-chunks and --static-chunks must be at least 1",
                ));
            }
            let texts: Vec<String> = crate::eval::beir::read_corpus(&corpus)
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
                crate::bench::embed::run(
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
            if output.table() {
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
            }
            output.finish(&report)?;
        }
        BenchCommand::Pipeline {
            corpus,
            documents,
            freshness_documents,
            rate,
            queries,
            beside_backlog,
            http_documents,
            output,
        } => {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(usage("--rate must be a positive number"));
            }
            if documents == 0 || freshness_documents == 0 || queries == 0 {
                return Err(usage(
                    "--documents, --freshness-documents and --queries must be at least 1",
                ));
            }
            let options = crate::bench::pipeline::PipelineBenchOptions {
                corpus,
                documents,
                freshness_documents,
                rate_per_second: rate,
                queries,
                beside_backlog,
                http_documents,
            };
            let report =
                crate::bench::pipeline::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            if output.table() {
                println!(
                    "embedder {} · broker {} · batches of {} documents or {} ms",
                    report.embedder, report.broker, report.batch_max_documents, report.batch_max_ms
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
                println!(
                    "  the process used {:.1} CPU seconds: {:.2} of {} cores busy on average",
                    b.cpu_seconds, b.cores_busy, b.cores
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
                let line = |what: &str, l: &crate::bench::pipeline::Latency| {
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
                if let Some(h) = &report.http_ingest {
                    println!(
                        "HTTP ingest: {} documents in requests of {}, posted to searchable in {:.1} s: {:.2} documents/s; HTTP / Kafka path = {:.2}",
                        h.documents, h.request_documents, h.seconds, h.documents_per_second, h.http_to_kafka_ratio
                    );
                }
                line("query over HTTP (hybrid, top 10)", &report.http_query);
                line("query over the bus (hybrid, top 10)", &report.bus_query);
            }
            output.finish(&report)?;
        }
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
            explain_queries,
            passage_queries,
            output,
        } => {
            if chunks == 0 || query_count == 0 || concurrency == 0 || steady_rate == 0 {
                return Err(usage(
                    "--chunks, --query-count, --concurrency and --steady-rate must be at least 1",
                ));
            }
            let share = config.index.vector.resident_hamming_share;
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
            let ef = config.index.vector.ef;
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
            let options = crate::bench::scale::ScaleBenchOptions {
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
                explain_queries,
                passage_queries,
            };
            let report =
                crate::bench::scale::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            if output.table() {
                println!(
                    "embedder {} · {} chunks · ingest {:.0} chunks/s ({:.1} s) · vector index over {} rows ({:.1} s) · cache loaded in {:.1} s",
                    report.embedder, report.chunks, report.chunks_per_second, report.ingest_seconds,
                    report.vector_index_rows, report.index_build_seconds, report.prewarm_seconds
                );
                println!(
                    "queries: {} of {} words (median)",
                    report.query_kind, report.query_words_p50
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
                if let Some(e) = &report.explain {
                    println!(
                        "explain (2 targets) n={}: p50 {:.2} ms p99 {:.2} ms against its query's p50 {:.2} ms p99 {:.2} ms: x{:.2} p50, x{:.2} p99",
                        e.queries, e.explain_p50_ms, e.explain_p99_ms, e.query_p50_ms, e.query_p99_ms,
                        e.ratio_p50, e.ratio_p99
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
            }
            output.finish(&report)?;
        }
        BenchCommand::Soak {
            minutes,
            rate,
            restart_every,
            embedder,
            output,
        } => {
            if !(minutes > 0.0 && rate > 0.0 && restart_every > 0) {
                return Err(usage(
                    "--minutes, --rate and --restart-every must be above 0",
                ));
            }
            // The soak runs the daemon's own binary, built beside this one.
            let exe = std::env::current_exe()
                .map_err(failure)?
                .with_file_name("ragstream");
            if !exe.is_file() {
                return Err(usage(format!(
                    "the soak runs {}, which is missing: cargo build --bin ragstream",
                    exe.display()
                )));
            }
            let options = crate::bench::soak::SoakOptions {
                minutes,
                rate,
                restart_every: std::time::Duration::from_secs(restart_every),
                embedder,
            };
            let report = crate::bench::soak::run(&exe, &options)
                .await
                .map_err(failure)?;
            if output.table() {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).expect("a report serialises")
                );
            }
            output.finish(&report)?;
            if report.lost != 0 || report.duplicated != 0 || report.server_errors != 0 {
                return Err(failure(format!(
                    "soak failed: {} lost, {} duplicated, {} answers with a 5xx",
                    report.lost, report.duplicated, report.server_errors
                )));
            }
        }
        BenchCommand::Fuzz {
            cases,
            seed,
            output,
        } => {
            if cases == 0 {
                return Err(usage("--cases must be at least 1"));
            }
            let report = crate::bench::fuzz::run(cases, seed).await;
            if output.table() {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).expect("a report serialises")
                );
            }
            output.finish(&report)?;
            if report.failures() > 0 {
                return Err(failure(format!(
                    "{} inputs panicked or were refused with a 5xx or outside the error shape (seed {seed})",
                    report.failures()
                )));
            }
        }
        BenchCommand::Export {
            data_dir,
            index,
            queries,
            query_count,
            out,
        } => {
            if query_count == 0 {
                return Err(usage("--query-count must be at least 1"));
            }
            let name = index_name(&index)?;
            let mut config = config.clone();
            config.storage.data_dir = data_dir;
            let engine = Arc::new(Engine::new(config.clone(), load_embedder(&config)?));
            let texts: Vec<String> = crate::eval::beir::read_queries(&queries)
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
            let (chunks, n) = crate::bench::export::run(&engine, &name, &texts, &out)
                .await
                .map_err(failure)?;
            println!("{}", json!({"chunks": chunks, "queries": n, "out": out}));
        }
        BenchCommand::Keyword {
            corpus,
            queries,
            documents,
            batch,
            query_count,
            settings,
            output,
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
            let options = crate::bench::keyword::KeywordBenchOptions {
                corpus,
                queries,
                documents,
                batch,
                query_count,
                settings,
            };
            let chunker = ragstream::chunking::Chunker::new(config.chunking.chunker());
            let report = crate::bench::keyword::run(&chunker, &options).map_err(failure)?;
            if output.table() {
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
            }
            output.finish(&report)?;
        }
        BenchCommand::Graph {
            corpus,
            queries,
            documents,
            triples_per_document,
            query_count,
            rounds,
            depth,
            output,
        } => {
            if documents == 0 || query_count == 0 || rounds == 0 || triples_per_document == 0 {
                return Err(usage(
                    "--documents, --triples-per-document, --query-count and --rounds must be at least 1",
                ));
            }
            let options = crate::bench::graph::GraphBenchOptions {
                corpus,
                queries,
                documents,
                triples_per_document,
                query_count,
                rounds,
                depth,
            };
            let report =
                crate::bench::graph::run(config.clone(), load_embedder(&config)?, &options)
                    .await
                    .map_err(failure)?;
            if output.table() {
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
            }
            output.finish(&report)?;
        }
        BenchCommand::Telemetry {
            corpus,
            queries,
            documents,
            query_count,
            rounds,
            output,
        } => {
            if documents == 0 || query_count == 0 || rounds == 0 {
                return Err(usage(
                    "--documents, --query-count and --rounds must be at least 1",
                ));
            }
            let options = crate::bench::telemetry::TelemetryBenchOptions {
                corpus,
                queries,
                documents,
                query_count,
                rounds,
            };
            let embedder = load_embedder(&config)?;
            let report = tokio::task::spawn_blocking(move || {
                crate::bench::telemetry::run(config, embedder, &options)
            })
            .await
            .map_err(failure)?
            .map_err(failure)?;
            if output.table() {
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
            }
            output.finish(&report)?;
        }
    }
    Ok(())
}
