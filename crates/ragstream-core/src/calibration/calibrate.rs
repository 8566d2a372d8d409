//! Calibrating `auto` for one index: which centre (the semantic weight auto starts from before
//! a sentence's signals move it), which passage weight (the weight of a query of a passage's
//! length) and which fusion (how hybrid scales its two branches) retrieve best on judged
//! queries of that index's own domain. A strong embedder earns a more semantic centre than a
//! weak one; the signals then move each query from there as before. Passages are measured
//! apart: their many words give the keyword branch more to match, so they want their own
//! weight. A model whose similarities sit in a narrow band wants its similarity scaled too,
//! and the fusion follows its scores.
//!
//! Measure on queries other than those you report on (`eval beir --calibrate` uses the
//! training split and reports the test split).

use std::collections::HashMap;

use serde::Serialize;

use super::metrics::{ndcg_at, Qrels, Run};
use super::{BeirQuery, CalibrationError, EvalMethod, LeftOut};
use crate::engine::{Engine, EngineError};
use crate::index::{AutoCalibration, CalibrationSource, IndexDefaults};
use crate::model::{BranchFusion, IndexName};
use crate::retrieval::fusion_input::FusionInput;
use crate::retrieval::profiles::{
    is_passage, Profile, DEFAULT_AUTO_CENTER, DEFAULT_PASSAGE_WEIGHT,
};

/// The weights tried, for the centre and the passage weight alike: from `exact`'s weight to
/// `semantic`'s.
pub const CENTERS: [f64; 7] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

/// The fusions tried: contract 000's way first, then the two that scale the similarity as
/// well. Reciprocal rank fusion was the best on no query set of the harness with any model
/// (BENCHMARKS.md, "A fusion of its own"), so it is not tried; an index may still set it.
pub const FUSIONS: [BranchFusion; 3] = [
    BranchFusion::Contract,
    BranchFusion::MinMax,
    BranchFusion::ZScore,
];

/// Fewer passages than this among the calibration queries measure no passage weight: the
/// index keeps balanced for passages.
pub const MIN_PASSAGE_QUERIES: usize = 30;

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    /// The centre with the best nDCG@10 on the sentence queries (ties go to the one nearest
    /// balanced).
    pub center: f64,
    /// nDCG@10 of `auto` on the sentence queries at each centre tried.
    pub ndcg_at_10_by_center: Vec<(f64, f64)>,
    /// Sentence queries: those shorter than a passage.
    pub queries: usize,
    /// The passage weight with the best nDCG@10 on the passage queries; `None` when fewer
    /// than [`MIN_PASSAGE_QUERIES`] were passages.
    pub passage_weight: Option<f64>,
    /// nDCG@10 of `auto` on the passage queries at each passage weight tried.
    pub ndcg_at_10_by_passage_weight: Vec<(f64, f64)>,
    pub passage_queries: usize,
    /// The fusion whose `auto` scored best over every query, each fusion at its own centre
    /// and passage weight (the two above are the chosen fusion's).
    pub fusion: BranchFusion,
    /// nDCG@10 of `auto` over every query with each fusion tried, at its own centre and
    /// passage weight.
    pub ndcg_at_10_by_fusion: Vec<(BranchFusion, f64)>,
}

impl Calibration {
    /// This calibration's centre and fusion with `other`'s passage weight: for a dataset
    /// whose judged passages are another query set than its sentences.
    pub fn with_passages_of(self, other: Calibration) -> Calibration {
        Calibration {
            passage_weight: other.passage_weight,
            ndcg_at_10_by_passage_weight: other.ndcg_at_10_by_passage_weight,
            passage_queries: other.passage_queries,
            ..self
        }
    }
}

/// Scores `auto` at every weight in [`CENTERS`] with every fusion in [`FUSIONS`] on judged
/// `queries` and picks the best centre, passage weight and fusion.
pub async fn on_judged_queries(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    left_out: LeftOut<'_>,
    progress: bool,
) -> Result<Calibration, CalibrationError> {
    let swept = sweep(engine, index, queries, qrels, left_out, &FUSIONS, progress).await?;
    Ok(calibration(&swept, Evidence::Judged))
}

/// Per weight tried, `auto`'s nDCG@10 on each judged query with one fusion, the sentences and
/// the passages apart, in one query order for every weight.
struct Sweep {
    sentences: Vec<(f64, Vec<f64>)>,
    passages: Vec<(f64, Vec<f64>)>,
}

/// Scores every judged query with `auto` started at each weight in [`CENTERS`], centre and
/// passage weight alike, with each fusion in [`FUSIONS`]: a sentence reads only the centre, a
/// passage only the passage weight, so one ranking per weight and fusion measures both. Each
/// query is searched once with its candidates kept, and every setting ranks them again
/// ([`FusionInput::rank`]: what a search at that setting returns).
async fn sweep(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    left_out: LeftOut<'_>,
    fusions: &[BranchFusion],
    progress: bool,
) -> Result<Vec<(BranchFusion, Sweep)>, CalibrationError> {
    let top_k = engine.config().limits.max_top_k.min(100);
    let mut defaults = engine.index(index).await?.info().defaults;
    let auto = EvalMethod::Profile(Profile::Auto);
    let kept = kept_candidates(engine, index, queries, top_k, &defaults, progress).await?;
    let passage: HashMap<&str, bool> = queries
        .iter()
        .map(|q| (q.id.as_str(), is_passage(&q.text)))
        .collect();
    let mut judged: Vec<(&String, &HashMap<String, i64>)> = qrels
        .iter()
        .filter(|(q, _)| passage.contains_key(q.as_str()))
        .collect();
    judged.sort_by_key(|(q, _)| *q);
    let empty = HashMap::new();
    let mut by_fusion = Vec::with_capacity(fusions.len());
    for &fusion in fusions {
        let mut swept = Sweep {
            sentences: Vec::with_capacity(CENTERS.len()),
            passages: Vec::with_capacity(CENTERS.len()),
        };
        defaults.fusion = Some(fusion);
        for weight in CENTERS {
            defaults.auto_semantic_center = Some(weight);
            defaults.auto_passage_weight = Some(weight);
            let mut run: Run = HashMap::with_capacity(queries.len());
            for (q, input) in queries.iter().zip(&kept) {
                let request = auto.request(&q.text, top_k, &defaults);
                let docs = run.entry(q.id.clone()).or_default();
                for (c, score) in input.rank(request.hybrid_alpha, request.fusion, top_k) {
                    if !left_out.excludes(&q.id, &c.document_id, &c.chunk_id) {
                        docs.entry(c.document_id.clone()).or_insert(score);
                    }
                }
            }
            let (mut sentences, mut passages) = (Vec::new(), Vec::new());
            for (q, j) in &judged {
                let score = ndcg_at(run.get(*q).unwrap_or(&empty), j, 10);
                if passage[q.as_str()] {
                    passages.push(score);
                } else {
                    sentences.push(score);
                }
            }
            swept.sentences.push((weight, sentences));
            swept.passages.push((weight, passages));
        }
        by_fusion.push((fusion, swept));
    }
    Ok(by_fusion)
}

/// Each query's hybrid candidates as `auto` on an index with `defaults` fetches them, in
/// query order: a hybrid query's pools do not depend on its weight or fusion.
async fn kept_candidates(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    top_k: usize,
    defaults: &IndexDefaults,
    progress: bool,
) -> Result<Vec<FusionInput>, CalibrationError> {
    let bar = crate::ingest::progress_bar(progress, queries.len() as u64, "calibration queries");
    let mut kept = Vec::with_capacity(queries.len());
    for q in queries {
        let mut request = EvalMethod::Profile(Profile::Auto).request(&q.text, top_k, defaults);
        request.keep_pools = true;
        let result = engine.search(index, &request).await?;
        kept.push(result.pools.fusion_input);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(kept)
}

/// Each weight with its mean score.
fn means(by_query: &[(f64, Vec<f64>)]) -> Vec<(f64, f64)> {
    by_query.iter().map(|(c, s)| (*c, mean(s))).collect()
}

fn mean(scores: &[f64]) -> f64 {
    scores.iter().sum::<f64>() / scores.len().max(1) as f64
}

/// How much a calibration's queries are trusted: judged queries pick the best score;
/// synthetic ones only stand in for real queries, so they move a setting from its default
/// only as far as their noise allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    Judged,
    Synthetic,
}

impl Evidence {
    /// The weight (a centre, or a passage weight) these queries pick.
    fn weight(self, by_query: &[(f64, Vec<f64>)]) -> f64 {
        match self {
            Evidence::Judged => best(&means(by_query)),
            Evidence::Synthetic => clearly_best(by_query),
        }
    }

    /// The fusion these queries pick: the best mean score (ties to the first listed); from
    /// synthetic queries, contract 000's way unless another beats it by more than one
    /// standard error of their paired per-query differences.
    fn fusion(self, by_query: &[(BranchFusion, Vec<f64>)]) -> BranchFusion {
        let Some((top, top_scores)) =
            by_query
                .iter()
                .reduce(|a, b| if mean(&b.1) > mean(&a.1) { b } else { a })
        else {
            return BranchFusion::Contract;
        };
        let contract = by_query.iter().find(|(f, _)| *f == BranchFusion::Contract);
        match (self, contract) {
            (Evidence::Synthetic, Some((_, scores)))
                if within_one_standard_error(top_scores, scores) =>
            {
                BranchFusion::Contract
            }
            _ => *top,
        }
    }
}

/// The calibration of a sweep: for each fusion, the centre from the sentences and the passage
/// weight from the passages when there are enough of them; then the fusion from every query,
/// each fusion at its own weights.
fn calibration(swept: &[(BranchFusion, Sweep)], evidence: Evidence) -> Calibration {
    let (per_fusion, by_fusion): (Vec<Calibration>, Vec<(BranchFusion, Vec<f64>)>) = swept
        .iter()
        .map(|(fusion, s)| {
            let c = with_one_fusion(s, *fusion, evidence);
            let scores = scores_at(s, &c);
            (c, (*fusion, scores))
        })
        .unzip();
    let chosen = evidence.fusion(&by_fusion);
    let ndcg_at_10_by_fusion = by_fusion.iter().map(|(f, s)| (*f, mean(s))).collect();
    per_fusion
        .into_iter()
        .find(|c| c.fusion == chosen)
        .map(|c| Calibration {
            ndcg_at_10_by_fusion,
            ..c
        })
        .expect("the chosen fusion is one of those swept")
}

/// The centre and passage weight of one fusion's sweep.
fn with_one_fusion(swept: &Sweep, fusion: BranchFusion, evidence: Evidence) -> Calibration {
    let count = |by_query: &[(f64, Vec<f64>)]| by_query.first().map_or(0, |(_, s)| s.len());
    let passage_queries = count(&swept.passages);
    Calibration {
        center: evidence.weight(&swept.sentences),
        ndcg_at_10_by_center: means(&swept.sentences),
        queries: count(&swept.sentences),
        passage_weight: (passage_queries >= MIN_PASSAGE_QUERIES)
            .then(|| evidence.weight(&swept.passages)),
        ndcg_at_10_by_passage_weight: means(&swept.passages),
        passage_queries,
        fusion,
        ndcg_at_10_by_fusion: Vec::new(),
    }
}

/// Every query's score with `c`'s centre and passage weight (balanced when none was
/// measured): the sentences, then the passages.
fn scores_at(swept: &Sweep, c: &Calibration) -> Vec<f64> {
    let at = |by_query: &[(f64, Vec<f64>)], weight: f64| {
        by_query
            .iter()
            .find(|(w, _)| *w == weight)
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    };
    let mut scores = at(&swept.sentences, c.center);
    scores.extend(at(
        &swept.passages,
        c.passage_weight.unwrap_or(DEFAULT_PASSAGE_WEIGHT),
    ));
    scores
}

/// The centre with the highest score; ties go to the centre nearest balanced, then to the
/// first listed.
pub fn best(by_center: &[(f64, f64)]) -> f64 {
    by_center
        .iter()
        .copied()
        .min_by(|(a, sa), (b, sb)| {
            sb.total_cmp(sa)
                .then(distance_from_balanced(*a).cmp(&distance_from_balanced(*b)))
        })
        .map_or(DEFAULT_AUTO_CENTER, |(c, _)| c)
}

/// How far a centre lies from balanced, in thousandths, so that centres as near on either
/// side compare equal (0.3's and 0.7's f64 distances differ in the last bit).
fn distance_from_balanced(center: f64) -> i64 {
    ((center - DEFAULT_AUTO_CENTER).abs() * 1000.0).round() as i64
}

/// Fewer synthetic queries than this calibrate nothing: too few documents with two chunks.
pub const MIN_SYNTHETIC_QUERIES: usize = 60;

/// Calibrates `auto` on queries cut from the index's own chunks ([`super::synthetic`]): no
/// judgments needed. `None` when the index has too few documents to cut them from. An index
/// whose model has a measured centre runs at that centre with contract 000's fusion
/// (`IndexInfo::query_defaults`), so only that fusion is tried: its passage weight must be
/// measured with the fusion it runs with.
pub async fn on_own_queries(
    engine: &Engine,
    index: &IndexName,
    progress: bool,
) -> Result<Option<Calibration>, CalibrationError> {
    let set = super::synthetic::from_index(engine, index).await?;
    if set.queries.len() < MIN_SYNTHETIC_QUERIES {
        return Ok(None);
    }
    let queries: Vec<&BeirQuery> = set.queries.iter().collect();
    let left_out = LeftOut::Chunks(&set.left_out);
    let embedder = engine.index(index).await?.info().embedder;
    let fusions: &[BranchFusion] = match crate::embedding::measured_auto_center(&embedder) {
        Some(_) => &[BranchFusion::Contract],
        None => &FUSIONS,
    };
    let swept = sweep(
        engine, index, &queries, &set.qrels, left_out, fusions, progress,
    )
    .await?;
    Ok(Some(calibration(&swept, Evidence::Synthetic)))
}

/// The weight (a centre, or a passage weight) synthetic queries clearly prefer. They only
/// stand in for real queries, and where weights score alike their order is chance. So
/// `auto` moves from balanced only as far as the evidence goes: of the weights whose mean
/// score is within one standard error of the best (the error of their paired per-query
/// differences), the one nearest balanced; between two as near, the better one
/// (BENCHMARKS.md, "A third domain: Rust libraries' READMEs" and "Synthetic calibration
/// moves only as far as its noise allows").
pub fn clearly_best(by_query: &[(f64, Vec<f64>)]) -> f64 {
    let top = best(&means(by_query));
    let Some((_, top_scores)) = by_query.iter().find(|(c, _)| *c == top) else {
        return DEFAULT_AUTO_CENTER;
    };
    by_query
        .iter()
        .filter(|(_, scores)| within_one_standard_error(top_scores, scores))
        .min_by(|(a, sa), (b, sb)| {
            distance_from_balanced(*a)
                .cmp(&distance_from_balanced(*b))
                .then(mean(sb).total_cmp(&mean(sa)))
        })
        .map_or(top, |(c, _)| *c)
}

/// Whether `other` trails `best` by no more than one standard error of their paired
/// per-query differences.
fn within_one_standard_error(best: &[f64], other: &[f64]) -> bool {
    let trail = super::metrics::paired_difference(best, other);
    trail.mean <= trail.standard_error
}

/// An index calibrates itself once it holds this many chunks: fewer rarely give enough
/// documents of two chunks to cut queries from.
pub const SELF_CALIBRATE_MIN_ROWS: u64 = 1_000;

/// Calibrates `auto` on the index's own queries when it is due, and stores the centre,
/// passage weight and fusion: when it has never been calibrated (and none was set by hand)
/// once it holds [`SELF_CALIBRATE_MIN_ROWS`] chunks, and again whenever its chunks have
/// doubled since its last synthetic calibration. A judged or hand-set calibration is never
/// replaced. An index whose embedder has a measured centre calibrates itself too, for its
/// passage weight: the model's centre (with contract 000's fusion) still beats the synthetic
/// one (`IndexInfo::query_defaults`). Returns the calibration when one ran.
pub async fn self_calibrate_if_due(
    engine: &Engine,
    index: &IndexName,
) -> Result<Option<Calibration>, CalibrationError> {
    let handle = engine.index(index).await?;
    let info = handle.info();
    // The manifest's row count (deleted rows included): no data is read, and this runs
    // after every maintenance pass.
    let rows = handle.lance().shape().await.map_err(EngineError::from)?.1 as u64;
    if !calibration_due(&info.defaults, rows) {
        return Ok(None);
    }
    let Some(c) = on_own_queries(engine, index, false).await? else {
        return Ok(None);
    };
    if !store_own(engine, index, &c).await? {
        tracing::info!(index = %index, "settings changed while auto calibrated; they stand");
        return Ok(None);
    }
    tracing::info!(index = %index, center = c.center, passage_weight = c.passage_weight,
        queries = c.queries, passage_queries = c.passage_queries, rows,
        "auto calibrated on the index's own queries");
    Ok(Some(c))
}

/// Whether a calibration on the index's own queries may replace `defaults`: nothing of
/// theirs was set by hand or measured on judged queries.
pub fn may_self_calibrate(defaults: &IndexDefaults) -> bool {
    match defaults.auto_calibration {
        None => {
            defaults.auto_semantic_center.is_none()
                && defaults.auto_passage_weight.is_none()
                && defaults.fusion.is_none()
        }
        Some(AutoCalibration { source, .. }) => source == CalibrationSource::Synthetic,
    }
}

/// Whether an index with `defaults` and `rows` chunks calibrates itself now (see
/// [`self_calibrate_if_due`]).
pub fn calibration_due(defaults: &IndexDefaults, rows: u64) -> bool {
    match defaults.auto_calibration {
        None => may_self_calibrate(defaults) && rows >= SELF_CALIBRATE_MIN_ROWS,
        Some(AutoCalibration {
            source: CalibrationSource::Synthetic,
            rows: then,
        }) => rows >= then.saturating_mul(2).max(SELF_CALIBRATE_MIN_ROWS),
        Some(_) => false,
    }
}

/// Records a calibration's centre, passage weight and fusion as the index's
/// `auto_semantic_center`, `auto_passage_weight` (no passage weight measured: balanced) and
/// `fusion`, keeping its other defaults, with where they came from and the rows the index had.
pub async fn store(
    engine: &Engine,
    index: &IndexName,
    calibration: &Calibration,
    source: CalibrationSource,
) -> Result<(), CalibrationError> {
    store_if(engine, index, calibration, source, |_| true).await?;
    Ok(())
}

/// Records a calibration on the index's own queries as [`store`] does, unless the defaults
/// were set by hand or calibrated on judged queries while it ran ([`may_self_calibrate`]);
/// returns whether it stored.
pub async fn store_own(
    engine: &Engine,
    index: &IndexName,
    calibration: &Calibration,
) -> Result<bool, CalibrationError> {
    store_if(
        engine,
        index,
        calibration,
        CalibrationSource::Synthetic,
        may_self_calibrate,
    )
    .await
}

/// [`store`], when `may_replace` holds for the defaults as they are at the write (not as
/// they were when the calibration began: a setting made while it ran stands); returns whether
/// it stored.
async fn store_if(
    engine: &Engine,
    index: &IndexName,
    calibration: &Calibration,
    source: CalibrationSource,
    may_replace: impl FnOnce(&IndexDefaults) -> bool,
) -> Result<bool, CalibrationError> {
    let handle = engine.index(index).await?;
    // The manifest's row count (deleted rows included): no data is read, and this runs
    // after every maintenance pass.
    let rows = handle.lance().shape().await.map_err(EngineError::from)?.1 as u64;
    let mut stored = false;
    handle
        .writer()
        .update_defaults(|defaults| {
            if may_replace(defaults) {
                defaults.auto_semantic_center = Some(calibration.center);
                defaults.auto_passage_weight = calibration.passage_weight;
                defaults.fusion = Some(calibration.fusion);
                defaults.auto_calibration = Some(AutoCalibration { source, rows });
                stored = true;
            }
        })
        .await
        .map_err(crate::engine::EngineError::from)?;
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_calibrates_itself_first_at_a_thousand_chunks_then_each_time_it_doubles() {
        let fresh = IndexDefaults::default();
        assert!(!calibration_due(&fresh, 999));
        assert!(calibration_due(&fresh, 1_000));
        let by_hand = IndexDefaults {
            auto_semantic_center: Some(0.3),
            ..Default::default()
        };
        assert!(
            !calibration_due(&by_hand, 1_000_000),
            "a hand-set centre stays"
        );
        let passages_by_hand = IndexDefaults {
            auto_passage_weight: Some(0.3),
            ..Default::default()
        };
        assert!(
            !calibration_due(&passages_by_hand, 1_000_000),
            "a hand-set passage weight stays"
        );
        let fusion_by_hand = IndexDefaults {
            fusion: Some(BranchFusion::Rrf),
            ..Default::default()
        };
        assert!(
            !calibration_due(&fusion_by_hand, 1_000_000),
            "a hand-set fusion stays"
        );
        let calibrated = |source, rows| IndexDefaults {
            auto_semantic_center: Some(0.4),
            auto_calibration: Some(AutoCalibration { source, rows }),
            ..Default::default()
        };
        let synthetic = calibrated(CalibrationSource::Synthetic, 5_000);
        assert!(!calibration_due(&synthetic, 9_999));
        assert!(calibration_due(&synthetic, 10_000));
        let judged = calibrated(CalibrationSource::Judged, 5_000);
        assert!(
            !calibration_due(&judged, 1_000_000),
            "judgments beat synthetic queries"
        );
    }

    #[test]
    fn sentences_pick_the_centre_and_enough_passages_pick_the_passage_weight() {
        let sentences = vec![(0.2, vec![0.1; 40]), (0.8, vec![0.9; 40])];
        let passages = |n: usize| vec![(0.2, vec![0.75; n]), (0.8, vec![0.25; n])];
        let enough = [(
            BranchFusion::Contract,
            Sweep {
                sentences: sentences.clone(),
                passages: passages(MIN_PASSAGE_QUERIES),
            },
        )];
        let c = calibration(&enough, Evidence::Judged);
        assert_eq!((c.center, c.passage_weight), (0.8, Some(0.2)));
        assert_eq!((c.queries, c.passage_queries), (40, MIN_PASSAGE_QUERIES));
        let few = [(
            BranchFusion::Contract,
            Sweep {
                sentences,
                passages: passages(MIN_PASSAGE_QUERIES - 1),
            },
        )];
        let c = calibration(&few, Evidence::Judged);
        assert_eq!((c.center, c.passage_weight), (0.8, None));
        assert_eq!(
            c.ndcg_at_10_by_passage_weight,
            vec![(0.2, 0.75), (0.8, 0.25)]
        );
    }

    #[test]
    fn the_best_centre_wins_and_ties_go_nearest_balanced() {
        assert_eq!(best(&[(0.2, 0.5), (0.5, 0.6), (0.8, 0.7)]), 0.8);
        assert_eq!(best(&[(0.2, 0.7), (0.5, 0.6), (0.8, 0.5)]), 0.2);
        assert_eq!(best(&[(0.3, 0.7), (0.5, 0.7), (0.8, 0.7)]), 0.5);
        assert_eq!(best(&[(0.4, 0.7), (0.7, 0.7)]), 0.4);
        assert_eq!(
            best(&[(0.7, 0.7), (0.3, 0.7)]),
            0.7,
            "as near: the first listed"
        );
        assert_eq!(
            best(&[(0.3, 0.7), (0.7, 0.7)]),
            0.3,
            "as near: the first listed"
        );
        assert_eq!(best(&[]), 0.5);
    }

    #[test]
    fn synthetic_queries_move_auto_from_balanced_only_as_far_as_their_noise_allows() {
        // 0.2 wins on every query: a clear preference.
        let clear = [
            (0.2, vec![0.9, 0.8, 0.7, 0.9]),
            (0.5, vec![0.6, 0.5, 0.4, 0.6]),
            (0.8, vec![0.3, 0.2, 0.1, 0.3]),
        ];
        assert_eq!(clearly_best(&clear), 0.2);
        // 0.6 has the best mean, but 0.5 wins on half the queries: chance.
        let noisy = [
            (0.2, vec![0.0, 0.0, 0.0, 0.0]),
            (0.5, vec![1.0, 0.0, 1.0, 0.0]),
            (0.6, vec![0.0, 1.0, 1.0, 0.1]),
        ];
        assert_eq!(best(&means(&noisy)), 0.6);
        assert_eq!(clearly_best(&noisy), 0.5);
        // As near balanced on both sides: the better of the two.
        let sides = [
            (0.3, vec![0.5, 0.5, 0.5, 0.5]),
            (0.4, vec![0.4, 0.6, 0.5, 0.6]),
            (0.6, vec![0.6, 0.4, 0.6, 0.4]),
            (0.8, vec![0.0, 0.0, 0.0, 0.0]),
        ];
        assert_eq!(clearly_best(&sides), 0.4);
        let far_sides = [
            (0.3, vec![0.6, 0.4, 0.6, 0.5]),
            (0.5, vec![0.0, 0.0, 0.0, 0.0]),
            (0.7, vec![0.5, 0.5, 0.5, 0.5]),
        ];
        assert_eq!(clearly_best(&far_sides), 0.3, "0.3 and 0.7 are as near");
        assert_eq!(clearly_best(&[]), 0.5);
    }

    /// A sweep of one fusion whose every query scores `score` at `at` and 0.0 elsewhere.
    fn flat(at: f64, scores: Vec<f64>) -> Sweep {
        let row = |w: f64| {
            (
                w,
                if w == at {
                    scores.clone()
                } else {
                    vec![0.0; scores.len()]
                },
            )
        };
        Sweep {
            sentences: CENTERS.iter().map(|w| row(*w)).collect(),
            passages: Vec::new(),
        }
    }

    #[test]
    fn each_fusion_keeps_its_own_centre_and_the_best_fusion_wins() {
        let swept = [
            (BranchFusion::Contract, flat(0.7, vec![0.5; 4])),
            (BranchFusion::MinMax, flat(0.4, vec![0.75; 4])),
            (BranchFusion::ZScore, flat(0.5, vec![0.625; 4])),
        ];
        for evidence in [Evidence::Judged, Evidence::Synthetic] {
            let c = calibration(&swept, evidence);
            assert_eq!(c.fusion, BranchFusion::MinMax, "{evidence:?}");
            assert_eq!(c.center, 0.4, "the chosen fusion's own centre");
            assert_eq!(
                c.ndcg_at_10_by_fusion,
                vec![
                    (BranchFusion::Contract, 0.5),
                    (BranchFusion::MinMax, 0.75),
                    (BranchFusion::ZScore, 0.625)
                ]
            );
        }
    }

    #[test]
    fn synthetic_queries_leave_the_contracts_fusion_only_on_clear_evidence() {
        // min-max has the better mean, but wins on half the queries: chance.
        let swept = [
            (BranchFusion::Contract, flat(0.5, vec![1.0, 0.0, 1.0, 0.0])),
            (BranchFusion::MinMax, flat(0.5, vec![0.0, 1.0, 1.0, 0.1])),
        ];
        assert_eq!(
            calibration(&swept, Evidence::Judged).fusion,
            BranchFusion::MinMax
        );
        assert_eq!(
            calibration(&swept, Evidence::Synthetic).fusion,
            BranchFusion::Contract
        );
        // As good: the first listed, contract 000's way.
        let tie = [
            (BranchFusion::Contract, flat(0.5, vec![0.5; 4])),
            (BranchFusion::ZScore, flat(0.5, vec![0.5; 4])),
        ];
        assert_eq!(
            calibration(&tie, Evidence::Judged).fusion,
            BranchFusion::Contract
        );
    }
}
