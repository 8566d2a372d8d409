//! `ragstream bench scale`: an index of a given size, built from SciFact passages recombined
//! (one chunk per document), measured for ingest throughput, query latency per method at a
//! concurrency (p50/p99/p999), recall@10 of the approximate vector index against exact
//! search (the version before the index was built), RSS and disk use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::pipeline::{failed, BenchError};
use crate::eval::beir::{percentile, read_corpus, read_queries};
use ragstream::config::Config;
use ragstream::embedding::Embedder;
use ragstream::engine::Engine;
use ragstream::index::vector_index::coverage;
use ragstream::index::{DocumentOp, ResidentSearch};
use ragstream::model::{Document, IndexName};
use ragstream::retrieval::profiles::is_passage;
use ragstream::retrieval::{SearchMethod, SearchRequest};

#[derive(Debug, Clone)]
pub struct ScaleBenchOptions {
    pub corpus: PathBuf,
    pub queries: PathBuf,
    pub chunks: usize,
    pub query_count: usize,
    pub concurrency: usize,
    pub recall_queries: usize,
    /// Keep the data directory here (and reuse it when it already holds the index).
    pub data_dir: Option<PathBuf>,
    /// Also measure recall@10 and latency of the vector search for each of these
    /// (nprobes, refine factor, HNSW ef) settings of Lance's index...
    pub sweep: Vec<(usize, u32, usize)>,
    /// ...and for each of these settings of the resident vectors.
    pub shortlists: Vec<ResidentSearch>,
    /// After the measurements: this long a steady ingestion of `steady_rate` new documents
    /// per second, with hybrid queries running alongside (0: none).
    pub steady_seconds: u64,
    pub steady_rate: usize,
    /// Queries whose explanation is timed against the query itself (0: none).
    pub explain_queries: usize,
    /// Query with the corpus's own passages (each document's title and text, when `auto`
    /// would read it as a passage) instead of `queries`: the long-query variant's kind.
    pub passage_queries: bool,
}

#[derive(Debug, Serialize)]
pub struct MethodLatency {
    pub method: String,
    pub queries: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub queries_per_second: f64,
}

#[derive(Debug, Serialize)]
pub struct SweepPoint {
    /// Rows ranked by the resident vectors' byte codes, and the share kept by Hamming
    /// distance before; a shortlist of 0 when Lance's index searched (with the next three
    /// settings).
    pub resident_shortlist: usize,
    pub resident_hamming_share: f64,
    pub nprobes: usize,
    pub refine_factor: u32,
    pub ef: usize,
    pub recall_at_10: f64,
    /// Vector search of the 30 candidates a top-10 hybrid query fetches.
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// A steady ingestion with queries alongside (the daemon's maintenance running).
#[derive(Debug, Serialize)]
pub struct SteadyReport {
    pub seconds: f64,
    pub rate_documents_per_second: usize,
    pub documents: usize,
    /// Due (the moment a document was to be produced) → committed and searchable.
    pub freshness_p50_ms: f64,
    pub freshness_p99_ms: f64,
    pub freshness_max_ms: f64,
    /// Lance fragments and retained versions, sampled every second.
    pub fragments_max: usize,
    pub fragments_end: usize,
    pub versions_max: usize,
    pub versions_end: usize,
    /// Segments of the keyword store's latest commit, sampled with the fragments.
    pub keyword_segments_max: usize,
    pub keyword_segments_end: usize,
    /// Hybrid top-10 latency once ingestion stopped, measured quiet (no ingestion, no
    /// maintenance pass) over the index as it then was (the report's `chunks`) and the same
    /// queries as the quiet latency before the run: how much of the rise is the grown index
    /// rather than the work beside it.
    pub hybrid_quiet_after: Option<MethodLatency>,
    /// The query phases timed over the grown index at the same moment (the report's
    /// `phases` were timed before the run): which part of a query the growth made dearer.
    pub phases_quiet_after: Vec<PhaseTime>,
    /// Hybrid top-10 latency over the first and the last minute (or sixth of the run).
    pub queries: usize,
    pub query_p99_start_ms: f64,
    pub query_p99_end_ms: f64,
    pub query_p99_end_over_start: f64,
    /// Hybrid top-10 p99 in consecutive 10-second windows, to see where the tail rises.
    pub query_p99_by_10s_ms: Vec<f64>,
    /// Queries that started while a compaction or vector-index build was running, and the
    /// others: what background work costs the queries beside it.
    pub queries_beside_background: usize,
    pub query_p99_beside_background_ms: f64,
    pub query_p99_otherwise_ms: f64,
    pub maintenance_passes: usize,
}

#[derive(Debug, Serialize)]
pub struct PhaseTime {
    pub phase: String,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct ScaleBenchReport {
    pub embedder: String,
    pub chunks: usize,
    /// What the timed queries were: `claims` (the query file) or `passages` (the corpus's).
    pub query_kind: &'static str,
    /// Words per timed query, the median.
    pub query_words_p50: usize,
    pub ingest_seconds: f64,
    pub chunks_per_second: f64,
    pub index_build_seconds: f64,
    /// Seconds spent loading the search indexes into the cache before the queries.
    pub prewarm_seconds: f64,
    pub vector_index_rows: usize,
    /// Fragments of the newest version when queries ran.
    pub fragments: usize,
    /// Keyword segments of the newest version when queries ran (each query searches each).
    pub keyword_segments: usize,
    pub concurrency: usize,
    pub latency: Vec<MethodLatency>,
    pub ann_recall_at_10: f64,
    /// Milliseconds of each step a hybrid query takes (and of alternatives), timed alone.
    pub phases: Vec<PhaseTime>,
    /// Recall@10 and latency of the vector search per (nprobes, refine factor).
    pub sweep: Vec<SweepPoint>,
    pub steady: Option<SteadyReport>,
    pub explain: Option<super::explain_cost::ExplainCost>,
    pub rss_mib: f64,
    /// Of the RSS, MiB on transparent huge pages.
    pub huge_pages_mib: f64,
    pub disk_mib: f64,
}

/// Documents of about 120 words, each made of sentences of other SciFact passages, made on
/// demand (a million of them would otherwise sit in memory during the measurement).
pub(crate) fn documents(corpus: &[Document]) -> impl Iterator<Item = Document> + '_ {
    let sentences: Vec<&str> = corpus
        .iter()
        .filter_map(|d| d.text.as_deref())
        .flat_map(|t| t.split(". "))
        .filter(|s| s.split_whitespace().count() >= 6)
        .collect();
    let mut rng = fastrand::Rng::with_seed(7);
    (0..).map(move |i| {
        let mut text = String::new();
        while text.split_whitespace().count() < 120 {
            text.push_str(sentences[rng.usize(..sentences.len())]);
            text.push_str(". ");
        }
        Document {
            id: format!("s{i}"),
            text: Some(text),
            ..Default::default()
        }
    })
}

/// The corpus's documents that `auto` reads as passages (title and text joined, as the
/// long-query variant asks them), in corpus order.
fn passage_queries(corpus: &[Document]) -> Vec<String> {
    corpus
        .iter()
        .map(crate::eval::long_queries::as_query)
        .filter(|text| is_passage(text))
        .collect()
}

/// MiB of the line `key` (a value in kB) of a /proc file of this process; 0 where there is
/// none.
fn proc_mib(file: &str, key: &str) -> f64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn rss_mib() -> f64 {
    proc_mib("/proc/self/status", "VmRSS:")
}

/// Resident memory on transparent huge pages (the resident vectors' code buffers ask for
/// them; where the kernel has none to give, this stays 0 and the codes work on small pages).
fn huge_pages_mib() -> f64 {
    proc_mib("/proc/self/smaps_rollup", "AnonHugePages:")
}

pub(crate) fn disk_mib(dir: &Path) -> f64 {
    fn walk(p: &Path) -> u64 {
        std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir) as f64 / (1024.0 * 1024.0)
}

pub async fn run(
    mut config: Config,
    embedder: Arc<dyn Embedder>,
    options: &ScaleBenchOptions,
) -> Result<ScaleBenchReport, BenchError> {
    let scratch = options.data_dir.clone().unwrap_or_else(super::scratch_dir);
    config.storage.data_dir = scratch.clone();
    let engine = Arc::new(Engine::new(config.clone(), embedder));
    let result = measure(&engine, &config, options).await;
    if options.data_dir.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    result
}

async fn measure(
    engine: &Arc<Engine>,
    config: &Config,
    options: &ScaleBenchOptions,
) -> Result<ScaleBenchReport, BenchError> {
    let name = IndexName::parse("scale").expect("a valid name");
    let corpus = read_corpus(&options.corpus)?;
    let have = match engine.index(&name).await {
        Ok(index) => {
            index
                .reader()
                .stats()
                .await
                .map_err(|e| failed("stats", &e))?
                .documents
        }
        Err(_) => 0,
    };
    let started = Instant::now();
    let mut written = 0;
    // The daemon's maintenance actor runs alongside (every `index.maintenance.interval_ms`).
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let maintenance = tokio::spawn(ragstream::pipeline::maintenance::run(
        engine.clone(),
        stopped,
    ));
    if have < options.chunks {
        let mut docs = documents(&corpus)
            .take(options.chunks)
            .skip(have)
            .peekable();
        let batch = config.index.ingest_batch_documents.max(1);
        let mut n = 0;
        // As the daemon's actors do: the next batch is planned and embedded while this one
        // commits (new documents are still appended: index/commit_log.rs).
        let prepare = |ops: Vec<DocumentOp>| {
            let (engine, name) = (engine.clone(), name.clone());
            tokio::spawn(async move { engine.prepare_write(&name, ops).await })
        };
        let first: Vec<DocumentOp> = docs.by_ref().take(batch).map(DocumentOp::Upsert).collect();
        let mut next = (!first.is_empty()).then(|| prepare(first));
        while let Some(this) = next.take() {
            let prepared = this
                .await
                .map_err(|e| failed("ingest", &e))?
                .map_err(|e| failed("ingest", &e))?;
            if docs.peek().is_some() {
                let ops = docs.by_ref().take(batch).map(DocumentOp::Upsert).collect();
                next = Some(prepare(ops));
            }
            n += 1;
            let outcome = engine
                .commit_prepared(prepared, HashMap::new())
                .await
                .map_err(|e| failed("ingest", &e))?;
            written += outcome.chunks_written;
            if n % 20 == 0 {
                eprintln!(
                    "ingested {} of {} chunks ({:.0}/s)",
                    have + written,
                    options.chunks,
                    written as f64 / started.elapsed().as_secs_f64()
                );
            }
        }
    }
    let ingest_seconds = started.elapsed().as_secs_f64();
    let index = engine.index(&name).await.map_err(|e| failed("index", &e))?;
    // The background build (started by the last commit) or, if none is due yet, nothing.
    let building = Instant::now();
    let settings = config.index.vector;
    if index
        .reader()
        .stats()
        .await
        .map_err(|e| failed("stats", &e))?
        .chunks
        >= settings.min_rows
    {
        loop {
            let (covered, total) = coverage(&index.lance().latest())
                .await
                .map_err(|e| failed("coverage", &e))?;
            if covered > 0
                && (total - covered) as f64 <= covered as f64 * settings.rebuild_unindexed_share
            {
                break;
            }
            engine.maintain_vector_index(&index);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let index_build_seconds = building.elapsed().as_secs_f64();
    // One more pass, as the actor's next tick would: compact and index what is left. A pass
    // that finds the build slot held (the actor's own pass, or a build a commit started)
    // defers its work; the queries are not timed until one has run it.
    let mut tidy = engine
        .maintain(&name)
        .await
        .map_err(|e| failed("maintenance", &e))?;
    let waiting = Instant::now();
    while tidy.deferred {
        if waiting.elapsed() > Duration::from_secs(600) {
            return Err(BenchError::Stalled(
                "maintenance: the vector-build slot stayed held for 10 minutes".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        tidy = engine
            .maintain(&name)
            .await
            .map_err(|e| failed("maintenance", &e))?;
    }
    eprintln!(
        "maintenance: {} fragments compacted into {}, {} rows indexed, keyword merges taken: {}, {} keyword segments ({:.1} s)",
        tidy.fragments_compacted,
        tidy.fragments_written,
        tidy.rows_indexed,
        tidy.keyword_merges_adopted,
        tidy.keyword_segments,
        tidy.seconds
    );

    // What a serving daemon does once it opens an index: load the search indexes into
    // Lance's cache (`Engine::keeping_indexes_warm`), here before the queries are timed.
    let warming = Instant::now();
    index
        .reader()
        .prewarm_search_indexes()
        .await
        .map_err(|e| failed("prewarm", &e))?;
    let prewarm_seconds = warming.elapsed().as_secs_f64();

    let queries = if options.passage_queries {
        passage_queries(&corpus)
    } else {
        read_queries(&options.queries)?
            .into_iter()
            .map(|q| q.text)
            .collect()
    };
    if queries.is_empty() {
        return Err(BenchError::Usage(
            if options.passage_queries {
                "--passage-queries: no document of the corpus is a passage"
            } else {
                "--queries: the query file holds no query"
            }
            .to_string(),
        ));
    }
    let queries: Vec<String> = queries
        .iter()
        .cycle()
        .take(options.query_count)
        .cloned()
        .collect();
    let mut words: Vec<usize> = queries
        .iter()
        .map(|q| q.split_whitespace().count())
        .collect();
    words.sort_unstable();
    let query_words_p50 = words[words.len() / 2];
    let mut latency = Vec::new();
    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        latency.push(time_queries(engine, &name, &queries, method, options.concurrency).await?);
    }

    // Recall@10 of the semantic branch's search (the ANN index, plus an exact scan of rows it
    // does not cover) against an exact scan of every row, on the same version.
    let settings = config.index.vector;
    let recall_queries = &queries[..queries.len().min(options.recall_queries)];
    let off = ResidentSearch {
        shortlist: 0,
        ..settings.resident_search()
    };
    let mut points = vec![(
        settings.nprobes,
        settings.refine_factor,
        settings.ef,
        settings.resident_search(),
    )];
    points.extend(options.sweep.iter().map(|&(n, r, e)| (n, r, e, off)));
    points.extend(
        options
            .shortlists
            .iter()
            .map(|s| (settings.nprobes, settings.refine_factor, settings.ef, *s)),
    );
    let mut sweep = measure_recall(engine, &index, recall_queries, &points)
        .await
        .map_err(|e| failed("recall", &e))?;
    let recall = sweep.remove(0).recall_at_10;
    index
        .lance()
        .set_vector_search(settings.nprobes, settings.refine_factor, settings.ef);
    index
        .lance()
        .set_resident_search(settings.resident_search());
    let phases = time_phases(engine, &index, &queries[..queries.len().min(100)])
        .await
        .map_err(|e| failed("phases", &e))?;
    let explain = if options.explain_queries > 0 {
        let sample = &queries[..queries.len().min(options.explain_queries)];
        Some(super::explain_cost::measure(engine, &name, sample).await?)
    } else {
        None
    };
    let mut steady = if options.steady_seconds > 0 {
        let first = index
            .reader()
            .stats()
            .await
            .map_err(|e| failed("stats", &e))?
            .documents;
        Some(
            steady(engine, &index, &corpus, &queries, first, options)
                .await
                .map_err(|e| failed("steady ingestion", &e))?,
        )
    } else {
        None
    };
    let _ = stop.send(true);
    maintenance.await.map_err(|e| failed("maintenance", &e))?;
    if let Some(report) = steady.as_mut() {
        // The same queries once ingestion has stopped, before any pass tidies up: what the
        // grown index costs on its own, against the quiet hybrid latency before the run.
        let waiting = Instant::now();
        while index.maintenance().vector_build_running()
            && waiting.elapsed() < Duration::from_secs(300)
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        report.hybrid_quiet_after = Some(
            time_queries(
                engine,
                &name,
                &queries,
                SearchMethod::Hybrid,
                options.concurrency,
            )
            .await?,
        );
        report.phases_quiet_after = time_phases(engine, &index, &queries[..queries.len().min(100)])
            .await
            .map_err(|e| failed("phases", &e))?;
    }
    let chunks = index
        .reader()
        .stats()
        .await
        .map_err(|e| failed("stats", &e))?
        .chunks;
    Ok(ScaleBenchReport {
        embedder: engine.embedder().id().to_string(),
        chunks,
        query_kind: if options.passage_queries {
            "passages"
        } else {
            "claims"
        },
        query_words_p50,
        ingest_seconds,
        chunks_per_second: written as f64 / ingest_seconds.max(1e-9),
        index_build_seconds,
        prewarm_seconds,
        vector_index_rows: coverage(&index.lance().latest())
            .await
            .map_err(|e| failed("coverage", &e))?
            .0,
        fragments: index.lance().latest().get_fragments().len(),
        keyword_segments: tidy.keyword_segments,
        concurrency: options.concurrency,
        latency,
        ann_recall_at_10: recall,
        phases,
        sweep,
        steady,
        explain,
        rss_mib: rss_mib(),
        huge_pages_mib: huge_pages_mib(),
        disk_mib: disk_mib(&config.storage.data_dir),
    })
}

/// Times `queries` of `method` (top 10) on `concurrency` clients, each taking the next query
/// from one queue.
async fn time_queries(
    engine: &Arc<Engine>,
    name: &IndexName,
    queries: &[String],
    method: SearchMethod,
    concurrency: usize,
) -> Result<MethodLatency, BenchError> {
    let queue = Arc::new(std::sync::Mutex::new(queries.to_vec()));
    let times = Arc::new(std::sync::Mutex::new(Vec::new()));
    let wall = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (engine, queue, times, name) =
            (engine.clone(), queue.clone(), times.clone(), name.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let Some(q) = queue.lock().expect("queue").pop() else {
                    return Ok::<(), EngineErrorText>(());
                };
                let t = Instant::now();
                engine
                    .search(&name, &SearchRequest::new(q, method, 10))
                    .await
                    .map_err(|e| EngineErrorText(e.to_string()))?;
                times
                    .lock()
                    .expect("times")
                    .push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }));
    }
    for t in tasks {
        t.await
            .map_err(|e| failed("query task", &e))?
            .map_err(|e| failed("query", &e.0))?;
    }
    let mut ms = times.lock().expect("times").clone();
    ms.sort_by(f64::total_cmp);
    Ok(MethodLatency {
        method: method.name().to_string(),
        queries: ms.len(),
        p50_ms: percentile(&ms, 50.0),
        p99_ms: percentile(&ms, 99.0),
        p999_ms: percentile(&ms, 99.9),
        queries_per_second: ms.len() as f64 / wall.elapsed().as_secs_f64(),
    })
}

#[derive(Debug)]
struct EngineErrorText(String);

/// Writes `rate` new documents per second (a batch every 250 ms, as a pipeline batch closes)
/// for `seconds` while one client runs hybrid queries back to back; samples fragments and
/// versions every second. Maintenance keeps running (the caller's task).
async fn steady(
    engine: &Arc<Engine>,
    index: &Arc<ragstream::index::Index>,
    corpus: &[Document],
    queries: &[String],
    first: usize,
    options: &ScaleBenchOptions,
) -> Result<SteadyReport, ragstream::engine::EngineError> {
    const TICK: Duration = Duration::from_millis(250);
    let name = index.name().clone();
    // The generator is positioned before the clock starts: skipping the documents already
    // written is generating them, seconds for a large index.
    let mut docs = documents(corpus);
    for _ in 0..first {
        docs.next();
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(options.steady_seconds);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let querying = {
        let (engine, index, name, done, queries) = (
            engine.clone(),
            index.clone(),
            name.clone(),
            done.clone(),
            queries.to_vec(),
        );
        tokio::spawn(async move {
            let mut times = Vec::new();
            for q in queries.iter().cycle() {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let background = index.maintenance().vector_build_running();
                let t = Instant::now();
                engine
                    .search(
                        &name,
                        &SearchRequest::new(q.clone(), SearchMethod::Hybrid, 10),
                    )
                    .await?;
                times.push((
                    t.duration_since(started),
                    t.elapsed().as_secs_f64() * 1000.0,
                    background,
                ));
            }
            Ok::<_, ragstream::engine::EngineError>(times)
        })
    };
    let sampling = {
        let (index, done) = (index.clone(), done.clone());
        tokio::spawn(async move {
            let mut samples = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let fragments = index.lance().latest().get_fragments().len();
                let versions = index.lance().versions().await?.len();
                // A version the keyword store has just pruned is skipped, not an error.
                let segments = match index.keyword().latest_version()? {
                    Some(v) => index.keyword().segments(v).unwrap_or(0),
                    None => 0,
                };
                samples.push((fragments, versions, segments));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Ok::<_, ragstream::index::StoreError>(samples)
        })
    };
    let passes = ragstream::telemetry::metrics().map(|m| {
        m.maintenance_runs_total
            .with_label_values(&[name.as_str()])
            .get()
    });
    let mut freshness = Vec::new();
    let (mut due, mut written) = (0usize, 0usize);
    while Instant::now() < until {
        let elapsed = started.elapsed().as_secs_f64();
        let target = (elapsed * options.steady_rate as f64) as usize;
        // Every document due by now, each stamped with the moment it was due.
        let batch: Vec<(Instant, Document)> = (due..target)
            .map(|i| {
                let at = started + Duration::from_secs_f64(i as f64 / options.steady_rate as f64);
                (at, docs.next().expect("an endless generator"))
            })
            .collect();
        due = target;
        if !batch.is_empty() {
            let stamps: Vec<Instant> = batch.iter().map(|(t, _)| *t).collect();
            let ops = batch
                .into_iter()
                .map(|(_, d)| DocumentOp::Upsert(d))
                .collect();
            engine.write(&name, ops).await?;
            written += stamps.len();
            freshness.extend(stamps.iter().map(|t| t.elapsed().as_secs_f64() * 1000.0));
        }
        tokio::time::sleep(TICK).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let times = querying
        .await
        .map_err(|e| ragstream::engine::EngineError::Internal(e.to_string()))??;
    let samples = sampling
        .await
        .map_err(|e| ragstream::engine::EngineError::Internal(e.to_string()))??;
    let window = Duration::from_secs_f64((seconds / 6.0).min(60.0));
    let p99_of = |pick: &dyn Fn(Duration, bool) -> bool| {
        let mut ms: Vec<f64> = times
            .iter()
            .filter(|(at, _, background)| pick(*at, *background))
            .map(|(_, ms, _)| *ms)
            .collect();
        ms.sort_by(f64::total_cmp);
        percentile(&ms, 99.0)
    };
    let end = Duration::from_secs_f64(seconds) - window;
    let (start_p99, end_p99) = (p99_of(&|at, _| at < window), p99_of(&|at, _| at >= end));
    let by_10s = (0..(seconds / 10.0).ceil() as u64)
        .map(|w| {
            let from = Duration::from_secs(w * 10);
            p99_of(&|at, _| at >= from && at < from + Duration::from_secs(10))
        })
        .collect();
    freshness.sort_by(f64::total_cmp);
    let passes_after = ragstream::telemetry::metrics().map(|m| {
        m.maintenance_runs_total
            .with_label_values(&[name.as_str()])
            .get()
    });
    Ok(SteadyReport {
        seconds,
        rate_documents_per_second: options.steady_rate,
        documents: written,
        freshness_p50_ms: percentile(&freshness, 50.0),
        freshness_p99_ms: percentile(&freshness, 99.0),
        freshness_max_ms: freshness.last().copied().unwrap_or(0.0),
        fragments_max: samples.iter().map(|s| s.0).max().unwrap_or(0),
        fragments_end: samples.last().map_or(0, |s| s.0),
        versions_max: samples.iter().map(|s| s.1).max().unwrap_or(0),
        versions_end: samples.last().map_or(0, |s| s.1),
        keyword_segments_max: samples.iter().map(|s| s.2).max().unwrap_or(0),
        keyword_segments_end: samples.last().map_or(0, |s| s.2),
        hybrid_quiet_after: None,
        phases_quiet_after: Vec::new(),
        queries: times.len(),
        query_p99_start_ms: start_p99,
        query_p99_end_ms: end_p99,
        query_p99_end_over_start: end_p99 / start_p99.max(1e-9),
        query_p99_by_10s_ms: by_10s,
        queries_beside_background: times.iter().filter(|t| t.2).count(),
        query_p99_beside_background_ms: p99_of(&|_, background| background),
        query_p99_otherwise_ms: p99_of(&|_, background| !background),
        maintenance_passes: match (passes, passes_after) {
            (Some(a), Some(b)) => (b - a) as usize,
            _ => 0,
        },
    })
}

/// Recall@10 of the vector search against an exact scan, and its latency at the hybrid
/// over-fetch, for each (nprobes, refine factor, ef, resident shortlist).
async fn measure_recall(
    engine: &Arc<Engine>,
    index: &Arc<ragstream::index::Index>,
    queries: &[String],
    points: &[(usize, u32, usize, ResidentSearch)],
) -> Result<Vec<SweepPoint>, ragstream::engine::EngineError> {
    let ds = index.lance().latest();
    let ids = |found: Vec<ragstream::index::rows::CandidateRow>| -> Vec<String> {
        found.into_iter().map(|c| c.chunk_id).collect()
    };
    let mut vectors = Vec::new();
    let mut exact = Vec::new();
    for q in queries {
        let v = engine.embedder().embed(&[q.as_str()])?.remove(0);
        exact.push(ids(index.lance().nearest_exact(&ds, &v, 10).await?));
        vectors.push(v);
    }
    let fetch = ragstream::retrieval::fusion::overfetch(10);
    let everything = ragstream::store::filters::Filters {
        visibility: ragstream::store::filters::Visibility::All,
        ..Default::default()
    };
    let mut out = Vec::new();
    for &(nprobes, refine_factor, ef, resident) in points {
        index.lance().set_vector_search(nprobes, refine_factor, ef);
        index.lance().set_resident_search(resident);
        let (mut found, mut wanted, mut ms) = (0, 0, Vec::new());
        for (v, exact) in vectors.iter().zip(&exact) {
            let approx = ids(index.lance().nearest(&ds, v, 10, &everything).await?);
            wanted += exact.len();
            found += exact.iter().filter(|id| approx.contains(id)).count();
            let t = Instant::now();
            index.lance().nearest(&ds, v, fetch, &everything).await?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        out.push(SweepPoint {
            resident_shortlist: resident.shortlist,
            resident_hamming_share: resident.hamming_share,
            nprobes,
            refine_factor,
            ef,
            recall_at_10: found as f64 / wanted.max(1) as f64,
            p50_ms: percentile(&ms, 50.0),
            p99_ms: percentile(&ms, 99.0),
        });
    }
    Ok(out)
}

/// Times the steps of a hybrid query one at a time (p50 and p99 over `queries`): where the
/// latency goes. Beside what a query runs, the alternatives that decide what to change: the
/// vector search with a "not deleted" pre-filter, and the full rows of every keyword
/// candidate read by chunk id (what hybrid queries read before late hydration).
async fn time_phases(
    engine: &Arc<Engine>,
    index: &Arc<ragstream::index::Index>,
    queries: &[String],
) -> Result<Vec<PhaseTime>, ragstream::engine::EngineError> {
    use ragstream::index::DisjunctionSearch;
    use ragstream::store::filters::Filters;
    let fetch = ragstream::retrieval::fusion::overfetch(10);
    let what_runs = |search| match index.keyword().disjunction_search() == search {
        true => ": what runs",
        false => "",
    };
    let wand = format!(
        "keyword (tantivy, block-max WAND{})",
        what_runs(DisjunctionSearch::BlockMaxWand)
    );
    let max_score = format!(
        "keyword (tantivy, MaxScore{})",
        what_runs(DisjunctionSearch::MaxScore)
    );
    let mut times: Vec<(&str, Vec<f64>)> = [
        "embed query",
        "snapshot",
        "vector search (live rows filter)",
        "vector search (what runs)",
        "vector search (Lance's index)",
        wand.as_str(),
        max_score.as_str(),
        "keyword candidates by id (what runs)",
        "keyword candidates by id (Lance's id index)",
        "keyword rows by id, with vectors",
        "30 candidates by address, Lance's four candidate columns (before)",
        "30 candidates by address, the vector column alone (before the scratch files)",
        "10 rows by address, from the scratch files (what runs)",
        "10 rows by address, from Lance (before the scratch files held them)",
    ]
    .into_iter()
    .map(|p| (p, Vec::new()))
    .collect();
    // Nothing is deleted here: what a query's keyword branch runs then (no visibility clause).
    let filters = Filters {
        visibility: ragstream::store::filters::Visibility::All,
        ..Filters::default()
    };
    for (n, q) in queries.iter().enumerate() {
        let mut t = Instant::now();
        let mut lap = |i: usize, times: &mut Vec<(&str, Vec<f64>)>| {
            times[i].1.push(t.elapsed().as_secs_f64() * 1000.0);
            t = Instant::now();
        };
        let v = engine.embedder().embed(&[q.as_str()])?.remove(0);
        lap(0, &mut times);
        let snapshot = index.reader().snapshot(None).await?;
        lap(1, &mut times);
        let lance = index.lance();
        lance
            .nearest(&snapshot.dataset, &v, fetch, &Filters::default())
            .await?;
        lap(2, &mut times);
        let found = lance
            .nearest(&snapshot.dataset, &v, fetch, &filters)
            .await?;
        lap(3, &mut times);
        let resident = lance.set_resident_search(ResidentSearch {
            shortlist: 0,
            ..lance.resident_search()
        });
        let lance_index = lance.nearest(&snapshot.dataset, &v, fetch, &filters).await;
        lance.set_resident_search(resident);
        lance_index?;
        lap(4, &mut times);
        let keyword_top = |search| match index.keyword().prepare(&snapshot.searcher, q, &filters) {
            Ok(Some(prepared)) => prepared.top_by(fetch, search),
            Ok(None) => Ok(Vec::new()),
            Err(e) => Err(e),
        };
        // The second search finds the postings the first one read in the CPU's caches (the
        // vector search before evicted them), so each goes first for half the queries.
        let mut order = [
            (DisjunctionSearch::BlockMaxWand, 5),
            (DisjunctionSearch::MaxScore, 6),
        ];
        if n % 2 == 1 {
            order.reverse();
        }
        let mut ranked = Vec::new();
        for (search, phase) in order {
            ranked = keyword_top(search)?;
            lap(phase, &mut times);
        }
        let ids: Vec<String> = ranked.into_iter().map(|(id, _)| id).collect();
        lance.candidates(&snapshot.dataset, &ids).await?;
        lap(7, &mut times);
        let resident = lance.set_resident_search(ResidentSearch {
            shortlist: 0,
            ..lance.resident_search()
        });
        let by_index = lance.candidates(&snapshot.dataset, &ids).await;
        lance.set_resident_search(resident);
        by_index?;
        lap(8, &mut times);
        lance.rows(&snapshot.dataset, &ids, true).await?;
        lap(9, &mut times);
        // Lance's own read by address, what the scratch files replaced.
        let take = |addresses: Vec<u64>, columns: Vec<&'static str>| {
            let ds = &snapshot.dataset;
            async move {
                let columns = ds.schema().project(&columns)?;
                ds.take_rows(&addresses, columns).await.map(drop)
            }
        };
        let addresses: Vec<u64> = found.iter().map(|c| c.address).collect();
        let reads = [
            ragstream::index::rows::CANDIDATE_COLUMNS.to_vec(),
            vec![ragstream::index::rows::VECTOR_COLUMN],
        ];
        for (i, columns) in reads.into_iter().enumerate() {
            take(addresses.clone(), columns)
                .await
                .map_err(ragstream::index::StoreError::from)?;
            lap(10 + i, &mut times);
        }
        let addresses: Vec<u64> = found.iter().take(10).map(|c| c.address).collect();
        lance.rows_at(&snapshot.dataset, &addresses, false).await?;
        lap(12, &mut times);
        take(addresses, ragstream::index::rows::columns_without_vector())
            .await
            .map_err(ragstream::index::StoreError::from)?;
        lap(13, &mut times);
    }
    Ok(times
        .into_iter()
        .map(|(phase, mut ms)| {
            ms.sort_by(f64::total_cmp);
            PhaseTime {
                phase: phase.to_string(),
                p50_ms: percentile(&ms, 50.0),
                p99_ms: percentile(&ms, 99.0),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passage_queries_are_the_documents_auto_reads_as_passages_title_first() {
        let document = |id: &str, title: Option<&str>, words: usize| Document {
            id: id.into(),
            title: title.map(str::to_string),
            text: Some(vec!["word"; words].join(" ")),
            ..Default::default()
        };
        let corpus = vec![
            document("short", None, 10),
            document("long", Some("A title"), 60),
            // The title's two words make this one a passage.
            document(
                "edge",
                Some("Two words"),
                ragstream::retrieval::profiles::PASSAGE_MIN_WORDS - 2,
            ),
        ];
        let queries = passage_queries(&corpus);
        assert_eq!(queries.len(), 2);
        assert!(queries[0].starts_with("A title word"));
        assert!(queries[1].starts_with("Two words word"));
        assert!(queries.iter().all(|q| is_passage(q)));
    }

    #[test]
    fn recombined_documents_are_deterministic_and_about_a_chunk_long() {
        let corpus = vec![Document {
            id: "a".into(),
            text: Some(
                "One two three four five six. Seven eight nine ten eleven twelve. ".repeat(5),
            ),
            ..Default::default()
        }];
        let a: Vec<Document> = documents(&corpus).take(3).collect();
        assert_eq!(a, documents(&corpus).take(3).collect::<Vec<_>>());
        assert_eq!(a.len(), 3);
        assert!(a
            .iter()
            .all(|d| d.text.as_ref().unwrap().split_whitespace().count() >= 120));
    }
}
