//! Calibrating `auto` for one index: which centre (the semantic weight auto starts from before
//! a sentence's signals move it) and which passage weight (the weight of a query of a
//! passage's length) retrieve best on judged queries of that index's own domain. A strong
//! embedder earns a more semantic centre than a weak one; the signals then move each query
//! from there as before. Passages are measured apart: their many words give the keyword
//! branch more to match, so they want their own weight.
//!
//! Measure on queries other than those you report on (`eval beir --calibrate` uses the
//! training split and reports the test split).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::beir::{run_queries, BeirError, BeirQuery, EvalMethod, LeftOut};
use super::metrics::{ndcg_at, Qrels};
use crate::engine::{Engine, EngineError};
use crate::index::{AutoCalibration, CalibrationSource, IndexDefaults};
use crate::model::IndexName;
use crate::retrieval::profiles::{is_passage, Profile, DEFAULT_AUTO_CENTER};

/// The weights tried, for the centre and the passage weight alike: from `exact`'s weight to
/// `semantic`'s.
pub const CENTERS: [f64; 7] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

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
}

impl Calibration {
    /// This calibration's centre with `other`'s passage weight: for a dataset whose judged
    /// passages are another query set than its sentences.
    pub fn with_passages_of(self, other: Calibration) -> Calibration {
        Calibration {
            passage_weight: other.passage_weight,
            ndcg_at_10_by_passage_weight: other.ndcg_at_10_by_passage_weight,
            passage_queries: other.passage_queries,
            ..self
        }
    }
}

/// Scores `auto` at every weight in [`CENTERS`] on judged `queries` and picks the best
/// centre and passage weight.
pub async fn on_judged_queries(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    left_out: LeftOut<'_>,
    progress: bool,
) -> Result<Calibration, BeirError> {
    let swept = sweep(engine, index, queries, qrels, left_out, progress).await?;
    Ok(calibration(&swept, |by_query| best(&means(by_query))))
}

/// Per weight tried, `auto`'s nDCG@10 on each judged query, the sentences and the passages
/// apart, in one query order for every weight.
struct Sweep {
    sentences: Vec<(f64, Vec<f64>)>,
    passages: Vec<(f64, Vec<f64>)>,
}

/// Runs every judged query with `auto` started at each weight in [`CENTERS`], centre and
/// passage weight alike: a sentence reads only the centre, a passage only the passage
/// weight, so one run per weight measures both. Each query is embedded once for all the
/// weights.
async fn sweep(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    left_out: LeftOut<'_>,
    progress: bool,
) -> Result<Sweep, BeirError> {
    let top_k = engine.config().limits.max_top_k.min(100);
    let mut defaults = engine.index(index).await?.info().defaults;
    let auto = EvalMethod::Profile(Profile::Auto);
    let mut vectors: HashMap<&str, Option<Arc<Vec<f32>>>> = HashMap::new();
    for q in queries {
        let request = auto.request(&q.text, top_k, &defaults);
        let embedded = engine.with_query_vector(&request).await?;
        vectors.insert(q.text.as_str(), embedded.query_vector);
    }
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
    let mut swept = Sweep {
        sentences: Vec::with_capacity(CENTERS.len()),
        passages: Vec::with_capacity(CENTERS.len()),
    };
    for weight in CENTERS {
        defaults.auto_semantic_center = Some(weight);
        defaults.auto_passage_weight = Some(weight);
        let name = format!("auto at {weight}");
        let (run, _) = run_queries(engine, index, queries, &name, progress, left_out, |q| {
            let mut request = auto.request(q, top_k, &defaults);
            request.query_vector = vectors.get(q).cloned().flatten();
            request
        })
        .await?;
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
    Ok(swept)
}

/// Each weight with its mean score.
fn means(by_query: &[(f64, Vec<f64>)]) -> Vec<(f64, f64)> {
    by_query.iter().map(|(c, s)| (*c, mean(s))).collect()
}

fn mean(scores: &[f64]) -> f64 {
    scores.iter().sum::<f64>() / scores.len().max(1) as f64
}

/// The calibration `pick` makes of a sweep: the centre from the sentences, the passage
/// weight from the passages when there are enough of them.
fn calibration(swept: &Sweep, pick: impl Fn(&[(f64, Vec<f64>)]) -> f64) -> Calibration {
    let count = |by_query: &[(f64, Vec<f64>)]| by_query.first().map_or(0, |(_, s)| s.len());
    let passage_queries = count(&swept.passages);
    Calibration {
        center: pick(&swept.sentences),
        ndcg_at_10_by_center: means(&swept.sentences),
        queries: count(&swept.sentences),
        passage_weight: (passage_queries >= MIN_PASSAGE_QUERIES).then(|| pick(&swept.passages)),
        ndcg_at_10_by_passage_weight: means(&swept.passages),
        passage_queries,
    }
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
/// judgments needed. `None` when the index has too few documents to cut them from.
pub async fn on_own_queries(
    engine: &Engine,
    index: &IndexName,
    progress: bool,
) -> Result<Option<Calibration>, BeirError> {
    let set = super::synthetic::from_index(engine, index).await?;
    if set.queries.len() < MIN_SYNTHETIC_QUERIES {
        return Ok(None);
    }
    let queries: Vec<&BeirQuery> = set.queries.iter().collect();
    let left_out = LeftOut::Chunks(&set.left_out);
    let swept = sweep(engine, index, &queries, &set.qrels, left_out, progress).await?;
    Ok(Some(calibration(&swept, clearly_best)))
}

/// The weight (a centre, or a passage weight) synthetic queries clearly prefer. They only
/// stand in for real queries, and where weights score alike their order is chance. So
/// `auto` moves from balanced only as far as the evidence goes: of the weights whose mean
/// score is within one standard error of the best (the error of their paired per-query
/// differences), the one nearest balanced; between two as near, the better one
/// (BENCHMARKS.md, "A third domain: Rust libraries' READMEs", and the section after it).
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

/// Calibrates `auto` on the index's own queries when it is due, and stores the centre and
/// passage weight: when it has never been calibrated (and neither was set by hand) once it
/// holds [`SELF_CALIBRATE_MIN_ROWS`] chunks, and again whenever its chunks have doubled since
/// its last synthetic calibration. A judged or hand-set calibration is never replaced. An
/// index whose embedder has a measured centre calibrates itself too, for its passage weight:
/// the model's centre still beats the synthetic one (`IndexInfo::query_defaults`). Returns
/// the calibration when one ran.
pub async fn self_calibrate_if_due(
    engine: &Engine,
    index: &IndexName,
) -> Result<Option<Calibration>, BeirError> {
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
    store(engine, index, &c, CalibrationSource::Synthetic).await?;
    tracing::info!(index = %index, center = c.center, passage_weight = c.passage_weight,
        queries = c.queries, passage_queries = c.passage_queries, rows,
        "auto calibrated on the index's own queries");
    Ok(Some(c))
}

/// Whether an index with `defaults` and `rows` chunks calibrates itself now (see
/// [`self_calibrate_if_due`]).
pub fn calibration_due(defaults: &IndexDefaults, rows: u64) -> bool {
    match defaults.auto_calibration {
        None => {
            defaults.auto_semantic_center.is_none()
                && defaults.auto_passage_weight.is_none()
                && rows >= SELF_CALIBRATE_MIN_ROWS
        }
        Some(AutoCalibration {
            source: CalibrationSource::Synthetic,
            rows: then,
        }) => rows >= then.saturating_mul(2).max(SELF_CALIBRATE_MIN_ROWS),
        Some(_) => false,
    }
}

/// Records a calibration's centre and passage weight as the index's `auto_semantic_center`
/// and `auto_passage_weight` (no passage weight measured: balanced), keeping its other
/// defaults, with where they came from and the rows the index had.
pub async fn store(
    engine: &Engine,
    index: &IndexName,
    calibration: &Calibration,
    source: CalibrationSource,
) -> Result<(), BeirError> {
    let handle = engine.index(index).await?;
    // The manifest's row count (deleted rows included): no data is read, and this runs
    // after every maintenance pass.
    let rows = handle.lance().shape().await.map_err(EngineError::from)?.1 as u64;
    let mut defaults = handle.info().defaults;
    defaults.auto_semantic_center = Some(calibration.center);
    defaults.auto_passage_weight = calibration.passage_weight;
    defaults.auto_calibration = Some(AutoCalibration { source, rows });
    handle
        .writer()
        .set_defaults(defaults)
        .await
        .map_err(crate::engine::EngineError::from)?;
    Ok(())
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
        let pick = |by_query: &[(f64, Vec<f64>)]| best(&means(by_query));
        let enough = Sweep {
            sentences: sentences.clone(),
            passages: passages(MIN_PASSAGE_QUERIES),
        };
        let c = calibration(&enough, pick);
        assert_eq!((c.center, c.passage_weight), (0.8, Some(0.2)));
        assert_eq!((c.queries, c.passage_queries), (40, MIN_PASSAGE_QUERIES));
        let few = Sweep {
            sentences,
            passages: passages(MIN_PASSAGE_QUERIES - 1),
        };
        let c = calibration(&few, pick);
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
}
