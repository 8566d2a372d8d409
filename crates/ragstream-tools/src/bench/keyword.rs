//! `ragstream bench keyword`: the keyword store (tantivy) under streaming commits, for a set
//! of writer budgets and merge policies. Each setting indexes the same generated documents
//! (SciFact sentences recombined, as `bench scale` makes them) in commits of `batch`
//! documents into a fresh store, opening the new version's searcher after every commit as
//! the first query after a commit does, and keeping the newest 100 versions as an index
//! does; then runs SciFact queries (top 30, the pool a
//! hybrid top-10 query fetches) on the last version.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::pipeline::BenchError;
use crate::eval::beir::{percentile, read_corpus, read_queries};
use ragstream::chunking::Chunker;
use ragstream::index::{ChunkRow, KeywordSettings, KeywordStore};
use ragstream::store::filters::Filters;

#[derive(Debug, Clone)]
pub struct KeywordBenchOptions {
    pub corpus: PathBuf,
    pub queries: PathBuf,
    pub documents: usize,
    /// Documents per commit.
    pub batch: usize,
    pub query_count: usize,
    pub settings: Vec<KeywordSettings>,
}

#[derive(Debug, Serialize)]
pub struct KeywordBenchRow {
    pub writer_memory_mb: usize,
    /// 0: never merge.
    pub merge_min_segments: usize,
    /// 0: no limit.
    pub merge_max_docs: usize,
    /// 0: every term.
    pub max_query_terms: usize,
    pub commits: usize,
    pub chunks_per_second: f64,
    /// One commit: delete and add the batch, commit, and run the merges the policy picks.
    pub commit_p50_ms: f64,
    pub commit_p99_ms: f64,
    pub commit_max_ms: f64,
    /// Opening the searcher of the version just committed.
    pub searcher_open_p50_ms: f64,
    pub searcher_open_p99_ms: f64,
    pub segments_end: usize,
    /// Documents per segment of the last version, largest first.
    pub segment_docs: Vec<u32>,
    pub query_p50_ms: f64,
    pub query_p99_ms: f64,
    /// The slowest queries (ms, text): what the tail is made of.
    pub slowest_queries: Vec<(f64, String)>,
    pub disk_mib: f64,
}

#[derive(Debug, Serialize)]
pub struct KeywordBenchReport {
    pub documents: usize,
    pub chunks: usize,
    pub batch: usize,
    pub queries: usize,
    pub rows: Vec<KeywordBenchRow>,
}

pub fn run(
    chunker: &Chunker,
    options: &KeywordBenchOptions,
) -> Result<KeywordBenchReport, BenchError> {
    let corpus = read_corpus(&options.corpus)?;
    let queries: Vec<String> = read_queries(&options.queries)?
        .into_iter()
        .map(|q| q.text)
        .take(options.query_count)
        .collect();
    // The same rows for every setting, made once.
    let batches: Vec<Vec<ChunkRow>> = {
        let docs: Vec<_> = super::scale::documents(&corpus)
            .take(options.documents)
            .collect();
        docs.chunks(options.batch.max(1))
            .map(|batch| {
                batch
                    .iter()
                    .flat_map(|doc| {
                        let hash = doc.content_hash();
                        chunker
                            .chunk(doc)
                            .into_iter()
                            .map(move |c| ChunkRow::new("bench", doc, &hash, c))
                    })
                    .collect()
            })
            .collect()
    };
    let chunks = batches.iter().map(Vec::len).sum();
    let mut rows = Vec::new();
    for settings in &options.settings {
        let row = measure(settings, &batches, &queries)?;
        tracing::info!(
            memory_mb = row.writer_memory_mb,
            merge_min_segments = row.merge_min_segments,
            merge_max_docs = row.merge_max_docs,
            seconds = chunks as f64 / row.chunks_per_second,
            "keyword bench setting measured"
        );
        rows.push(row);
    }
    Ok(KeywordBenchReport {
        documents: options.documents,
        chunks,
        batch: options.batch,
        queries: queries.len(),
        rows,
    })
}

/// Slowest queries listed per setting.
const SLOWEST_QUERIES: usize = 20;

/// Versions kept readable, as `index.retain_versions` (default) does.
const RETAIN: u64 = 100;

fn measure(
    settings: &KeywordSettings,
    batches: &[Vec<ChunkRow>],
    queries: &[String],
) -> Result<KeywordBenchRow, BenchError> {
    let dir = super::scratch_dir();
    let store = KeywordStore::open(&dir, settings)?;
    let (mut commits, mut opens) = (Vec::new(), Vec::new());
    let started = Instant::now();
    let mut version = 0;
    for batch in batches {
        version += 1;
        let t = Instant::now();
        store.apply(version, &[], batch)?;
        commits.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        store.searcher(version)?;
        opens.push(t.elapsed().as_secs_f64() * 1000.0);
        // As an index does after each write: the newest `RETAIN` versions stay readable
        // and files no retained version needs are deleted.
        if version > RETAIN {
            store.retain(&(version + 1 - RETAIN..=version).collect())?;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let searcher = store.searcher(version)?;
    let segments_end = searcher.segment_readers().len();
    let mut segment_docs: Vec<u32> = searcher
        .segment_readers()
        .iter()
        .map(|s| s.num_docs())
        .collect();
    segment_docs.sort_unstable_by(|a, b| b.cmp(a));
    // Nothing is deleted here: what a query's keyword branch runs then (no visibility clause).
    let filters = Filters {
        visibility: ragstream::store::filters::Visibility::All,
        ..Filters::default()
    };
    let mut times = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        store.search(&searcher, q, &filters, 30)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut slowest: Vec<(f64, String)> =
        times.iter().copied().zip(queries.iter().cloned()).collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    slowest.truncate(SLOWEST_QUERIES);
    let chunks: usize = batches.iter().map(Vec::len).sum();
    for v in [&mut commits, &mut opens, &mut times] {
        v.sort_by(f64::total_cmp);
    }
    let row = KeywordBenchRow {
        writer_memory_mb: settings.writer_memory_bytes >> 20,
        merge_min_segments: settings.merge_min_segments,
        merge_max_docs: settings.merge_max_docs,
        max_query_terms: settings.max_query_terms,
        commits: batches.len(),
        chunks_per_second: chunks as f64 / seconds,
        commit_p50_ms: percentile(&commits, 50.0),
        commit_p99_ms: percentile(&commits, 99.0),
        commit_max_ms: commits.last().copied().unwrap_or(0.0),
        searcher_open_p50_ms: percentile(&opens, 50.0),
        searcher_open_p99_ms: percentile(&opens, 99.0),
        segments_end,
        segment_docs,
        query_p50_ms: percentile(&times, 50.0),
        query_p99_ms: percentile(&times, 99.0),
        slowest_queries: slowest,
        disk_mib: super::scale::disk_mib(&dir),
    };
    drop(searcher);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(row)
}
