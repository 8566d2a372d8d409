//! BEIR datasets (corpus.jsonl, queries.jsonl, qrels/test.tsv) and the evaluation run.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use ragstream::calibration::judgments::read_jsonl;
use ragstream::calibration::metrics::{
    mean, ndcg_at, paired_difference, recall_at, PairedDifference, Qrels, Run,
};
use ragstream::engine::Engine;
use ragstream::index::CalibrationSource;
use ragstream::model::{Document, IndexName};
use ragstream::retrieval::fusion::BranchFusion;
use ragstream::retrieval::profiles::{AutoStart, Profile};
use ragstream::retrieval::SearchRequest;

pub use ragstream::calibration::judgments::{judged, read_qrels, read_queries, BeirQuery, LeftOut};
pub use ragstream::calibration::{CalibrationError, EvalMethod};
pub use ragstream::ingest::BeirDoc;

/// The documents of a BEIR corpus.jsonl.
pub fn read_corpus(path: &Path) -> Result<Vec<Document>, CalibrationError> {
    read_jsonl::<BeirDoc>(path).map(|docs| docs.into_iter().map(BeirDoc::into_document).collect())
}

/// Quality and latency of one retrieval method.
#[derive(Debug, Clone, Serialize)]
pub struct MethodReport {
    pub method: String,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub queries: usize,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    /// nDCG@10 of the queries of each length (words), where any fall.
    pub by_query_length: Vec<LengthBucket>,
    /// nDCG@10 of each query, in the order they ran: what methods are compared on.
    #[serde(skip)]
    pub ndcg_at_10_by_query: Vec<f64>,
}

/// `auto` against the best fixed profile on one set of queries.
#[derive(Debug, Clone, Serialize)]
pub struct AutoAgainstBest {
    /// The fixed profile (`exact`, `balanced` or `semantic`) with the highest nDCG@10.
    pub best_profile: String,
    /// `auto`'s nDCG@10 less the best's, query by query.
    pub auto_minus_best: PairedDifference,
}

impl AutoAgainstBest {
    /// Where `methods` (scored as `reports`) hold `auto` and a fixed profile.
    pub fn of(methods: &[EvalMethod], reports: &[MethodReport]) -> Option<AutoAgainstBest> {
        let profiles = || {
            methods.iter().zip(reports).filter_map(|(m, r)| match m {
                EvalMethod::Profile(p) => Some((*p, r)),
                _ => None,
            })
        };
        let (_, auto) = profiles().find(|(p, _)| *p == Profile::Auto)?;
        let (_, best) = profiles()
            .filter(|(p, _)| *p != Profile::Auto)
            .max_by(|(_, a), (_, b)| a.ndcg_at_10.total_cmp(&b.ndcg_at_10))?;
        Some(AutoAgainstBest {
            best_profile: best.method.clone(),
            auto_minus_best: paired_difference(
                &auto.ndcg_at_10_by_query,
                &best.ndcg_at_10_by_query,
            ),
        })
    }
}

/// nDCG@10 over the queries of one length range.
#[derive(Debug, Clone, Serialize)]
pub struct LengthBucket {
    pub words: &'static str,
    pub queries: usize,
    pub ndcg_at_10: f64,
}

/// The query-length ranges reported apart: keyword-like, question-like, passage-like.
pub const LENGTH_BUCKETS: [(&str, usize, usize); 3] =
    [("1-10", 1, 10), ("11-50", 11, 50), ("51+", 51, usize::MAX)];

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub dataset: String,
    /// Which queries were scored: the dataset's `test` split, `long` (the documents its test
    /// queries cite, as queries; see `eval::long_queries`) or `long-all` (the same from every
    /// judged split).
    pub queries: String,
    pub index: String,
    pub index_version: u64,
    pub documents: usize,
    pub chunks: usize,
    /// Seconds spent chunking, embedding and committing (0 when the index was up to date).
    pub ingest_seconds: f64,
    pub chunks_written: usize,
    pub ingest_chunks_per_second: Option<f64>,
    /// Results requested per query (documents are ranked by their best chunk).
    pub top_k: usize,
    /// The `auto` centre measured on the training queries (`--calibrate`), if it ran.
    pub calibration: Option<ragstream::calibration::calibrate::Calibration>,
    /// The centre `auto` ran from: a calibrated one, the model's measured one, or balanced
    /// (`IndexInfo::query_defaults`).
    pub auto_center: f64,
    /// The weight `auto` gave passages: a calibrated one, or balanced.
    pub auto_passage_weight: f64,
    /// How the profiles fused their branches: the index's fusion (calibrated or set), else
    /// contract 000's way. The `… min_max`-style methods name their own.
    pub fusion: BranchFusion,
    pub methods: Vec<MethodReport>,
    /// Where `auto` and a fixed profile both ran.
    pub auto_against_best: Option<AutoAgainstBest>,
}

/// Percentile of sorted samples (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Runs `queries` (those `qrels` judges) with the request `request` makes of each, and scores
/// them: nDCG@10, Recall@100 and latency. A document scores as its best chunk not
/// `left_out`.
#[allow(clippy::too_many_arguments)]
pub async fn score(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    name: String,
    progress: bool,
    left_out: LeftOut<'_>,
    request: impl Fn(&str) -> SearchRequest,
) -> Result<MethodReport, CalibrationError> {
    let (run, mut latencies) =
        run_queries(engine, index, queries, &name, progress, left_out, request).await?;
    latencies.sort_by(f64::total_cmp);
    let empty = HashMap::new();
    // Each query's nDCG@10, where something judges it.
    let per_query: Vec<Option<f64>> = queries
        .iter()
        .map(|q| {
            let judged = qrels.get(&q.id)?;
            Some(ndcg_at(run.get(&q.id).unwrap_or(&empty), judged, 10))
        })
        .collect();
    let by_query_length = LENGTH_BUCKETS
        .iter()
        .filter_map(|&(label, min, max)| {
            let within: Vec<f64> = queries
                .iter()
                .zip(&per_query)
                .filter(|(q, _)| (min..=max).contains(&words(&q.text)))
                .filter_map(|(_, ndcg)| *ndcg)
                .collect();
            (!within.is_empty()).then(|| LengthBucket {
                words: label,
                queries: within.len(),
                ndcg_at_10: within.iter().sum::<f64>() / within.len() as f64,
            })
        })
        .collect();
    let ndcg_at_10_by_query = per_query.into_iter().map(|n| n.unwrap_or(0.0)).collect();
    Ok(MethodReport {
        method: name,
        ndcg_at_10: mean(qrels, &run, |r, j| ndcg_at(r, j, 10)),
        recall_at_100: mean(qrels, &run, |r, j| recall_at(r, j, 100)),
        queries: queries.len(),
        latency_p50_ms: percentile(&latencies, 50.0),
        latency_p99_ms: percentile(&latencies, 99.0),
        by_query_length,
        ndcg_at_10_by_query,
    })
}

/// Runs `queries` one after another: each query's documents with their best hit's score (the
/// left-out hits dropped), and each query's latency in milliseconds, in query order.
pub async fn run_queries(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    name: &str,
    progress: bool,
    left_out: LeftOut<'_>,
    request: impl Fn(&str) -> SearchRequest,
) -> Result<(Run, Vec<f64>), CalibrationError> {
    let bar =
        ragstream::ingest::progress_bar(progress, queries.len() as u64, &format!("{name} queries"));
    let mut run: Run = HashMap::new();
    let mut latencies = Vec::with_capacity(queries.len());
    for q in queries {
        let request = request(&q.text);
        let t = Instant::now();
        let result = engine.search(index, &request).await?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        // Hits arrive best first.
        let docs = run.entry(q.id.clone()).or_default();
        for hit in result.hits {
            if !left_out.excludes(&q.id, &hit.row.document_id, &hit.row.chunk_id) {
                docs.entry(hit.row.document_id).or_insert(hit.score);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok((run, latencies))
}

/// How `evaluate` calibrates `auto` before scoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibrate {
    /// Not at all: the index keeps the centre it has.
    No,
    /// On the training queries (`qrels/train.tsv`, disjoint from the test queries).
    Judged,
    /// On queries the index cuts from its own chunks: no judgments seen.
    Synthetic,
}

/// Indexes the corpus (unchanged documents are skipped, so a re-run only queries),
/// calibrates `auto` as `calibrate` says and stores the centre in the index, then runs the
/// test queries with every method and scores them. With `long`, the dataset's long-query variant
/// ([`super::long_queries`]) is scored too, on the same index: one report per query set.
pub async fn evaluate(
    engine: &Engine,
    data: &Path,
    index: &IndexName,
    methods: &[EvalMethod],
    calibrate: Calibrate,
    long: bool,
    progress: bool,
) -> Result<Vec<EvalReport>, CalibrationError> {
    let corpus = read_corpus(&data.join("corpus.jsonl"))?;
    let queries = read_queries(&data.join("queries.jsonl"))?;
    let qrels = read_qrels(&data.join("qrels").join("test.tsv"))?;
    let documents = corpus.len();
    let long_set = long.then(|| super::long_queries::long_queries(&corpus, &[&qrels]));
    let train_path = data.join("qrels").join("train.tsv");
    let train = match calibrate {
        Calibrate::Judged => Some(read_qrels(&train_path)?),
        _ => None,
    };
    // With `long`, the passage weight is measured on the training split's long queries.
    let train_long = train
        .as_ref()
        .zip(long_set.as_ref())
        .map(|(train, (test, _))| {
            let set = super::long_queries::long_queries(&corpus, &[train]);
            super::long_queries::without(set, test)
        });
    // The variant from every judged split, where calibration read none of their judgments:
    // a larger sample than the test split's alone. Where the other splits add nothing, it
    // is the test split's variant, which is scored once.
    let long_all = match (long, calibrate) {
        (true, Calibrate::No | Calibrate::Synthetic) if train_path.exists() => {
            let train = read_qrels(&train_path)?;
            let all = super::long_queries::long_queries(&corpus, &[&qrels, &train]);
            let adds = long_set.as_ref().is_none_or(|(_, test)| *test != all.1);
            adds.then_some(all)
        }
        _ => None,
    };

    let started = Instant::now();
    let outcome = ragstream::ingest::ingest_documents(engine, index, corpus, progress).await?;
    let ingest_seconds = started.elapsed().as_secs_f64();

    let top_k = engine.config().limits.max_top_k.min(100);
    let calibration = match calibrate {
        Calibrate::No => None,
        Calibrate::Judged => {
            let train = train.unwrap_or_default();
            let mut c = ragstream::calibration::calibrate::on_judged_queries(
                engine,
                index,
                &judged(&queries, &train),
                &train,
                LeftOut::Nothing,
                progress,
            )
            .await?;
            if let Some((long_queries, long_qrels)) = &train_long {
                let passages = ragstream::calibration::calibrate::on_judged_queries(
                    engine,
                    index,
                    &judged(long_queries, long_qrels),
                    long_qrels,
                    LeftOut::QueryDocument,
                    progress,
                )
                .await?;
                c = c.with_passages_of(passages);
            }
            ragstream::calibration::calibrate::store(engine, index, &c, CalibrationSource::Judged)
                .await?;
            Some(c)
        }
        Calibrate::Synthetic => {
            let c =
                ragstream::calibration::calibrate::on_own_queries(engine, index, progress).await?;
            if let Some(c) = &c {
                ragstream::calibration::calibrate::store(
                    engine,
                    index,
                    c,
                    CalibrationSource::Synthetic,
                )
                .await?;
            }
            c
        }
    };
    let defaults = engine.index(index).await?.query_defaults();
    let start = AutoStart::of(&defaults);
    let stats = engine.stats(index).await?;
    let mut sets = vec![("test", queries, qrels, LeftOut::Nothing)];
    // A dataset where no query cites two documents has no long-query variant: nothing to report.
    for (set, long_set) in [("long", long_set), ("long-all", long_all)] {
        if let Some((long_queries, long_qrels)) = long_set.filter(|(q, _)| !q.is_empty()) {
            sets.push((set, long_queries, long_qrels, LeftOut::QueryDocument));
        }
    }
    let mut out = Vec::new();
    for (set, queries, qrels, left_out) in &sets {
        let scored = judged(queries, qrels);
        let mut reports = Vec::new();
        for &method in methods {
            let name = method.name();
            reports.push(
                score(
                    engine,
                    index,
                    &scored,
                    qrels,
                    name,
                    progress,
                    *left_out,
                    |q| method.request(q, top_k, &defaults),
                )
                .await?,
            );
        }
        out.push(EvalReport {
            dataset: data.display().to_string(),
            queries: set.to_string(),
            index: index.to_string(),
            index_version: stats.index_version,
            documents,
            chunks: stats.chunks,
            ingest_seconds,
            chunks_written: outcome.chunks_written,
            ingest_chunks_per_second: (outcome.chunks_written > 0)
                .then(|| outcome.chunks_written as f64 / ingest_seconds),
            top_k,
            calibration: calibration.clone(),
            auto_center: start.center,
            auto_passage_weight: start.passage_weight,
            fusion: defaults.fusion_for(None),
            auto_against_best: AutoAgainstBest::of(methods, &reports),
            methods: reports,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstream::retrieval::SearchMethod;

    #[test]
    fn auto_is_compared_with_the_best_fixed_profile_query_by_query() {
        let report = |method: &str, by_query: Vec<f64>| MethodReport {
            method: method.to_string(),
            ndcg_at_10: by_query.iter().sum::<f64>() / by_query.len() as f64,
            recall_at_100: 0.0,
            queries: by_query.len(),
            latency_p50_ms: 0.0,
            latency_p99_ms: 0.0,
            by_query_length: Vec::new(),
            ndcg_at_10_by_query: by_query,
        };
        let methods = [
            EvalMethod::Method(SearchMethod::Hybrid),
            EvalMethod::Profile(Profile::Exact),
            EvalMethod::Profile(Profile::Semantic),
            EvalMethod::Fused(Profile::Balanced, BranchFusion::Rrf),
            EvalMethod::Profile(Profile::Auto),
        ];
        let reports = [
            // Neither a method nor another fusion counts as a fixed profile, however good.
            report("hybrid", vec![1.0, 1.0]),
            report("profile exact", vec![0.6, 0.4]),
            report("profile semantic", vec![0.8, 0.4]),
            report("profile balanced rrf", vec![1.0, 1.0]),
            report("profile auto", vec![0.6, 0.4]),
        ];
        let gap = AutoAgainstBest::of(&methods, &reports).unwrap();
        assert_eq!(gap.best_profile, "profile semantic");
        assert!((gap.auto_minus_best.mean + 0.1).abs() < 1e-12);
        assert!((gap.auto_minus_best.standard_error - 0.1).abs() < 1e-12);
        // Without `auto`, or without a fixed profile, there is nothing to compare.
        assert!(AutoAgainstBest::of(&methods[..4], &reports[..4]).is_none());
        assert!(AutoAgainstBest::of(&methods[4..], &reports[4..]).is_none());
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&s, 50.0), 50.0);
        assert_eq!(percentile(&s, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
    }
}
