//! Calibrating `auto` for one index: which centre (the semantic weight auto starts from before
//! a query's signals move it) retrieves best on judged queries of that index's own domain. A
//! strong embedder earns a more semantic centre than a weak one; the signals then move each
//! query from there as before.
//!
//! Measure on queries other than those you report on (`eval beir --calibrate` uses the
//! training split and reports the test split).

use serde::Serialize;

use super::beir::{score, BeirError, BeirQuery, EvalMethod, LeftOut};
use super::metrics::Qrels;
use crate::engine::{Engine, EngineError};
use crate::index::{AutoCalibration, CalibrationSource, IndexDefaults};
use crate::model::IndexName;
use crate::retrieval::profiles::{Profile, DEFAULT_AUTO_CENTER};

/// The centres tried: from `exact`'s weight to `semantic`'s.
pub const CENTERS: [f64; 7] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    /// The centre with the best nDCG@10 (ties go to the one nearest balanced).
    pub center: f64,
    /// nDCG@10 of `auto` at each centre tried.
    pub ndcg_at_10_by_center: Vec<(f64, f64)>,
    pub queries: usize,
}

/// Scores `auto` at every centre in [`CENTERS`] on `queries` and picks the best.
pub async fn auto_center(
    engine: &Engine,
    index: &IndexName,
    queries: &[&BeirQuery],
    qrels: &Qrels,
    left_out: LeftOut<'_>,
    progress: bool,
) -> Result<Calibration, BeirError> {
    let top_k = engine.config().limits.max_top_k.min(100);
    let mut defaults = engine.index(index).await?.info().defaults;
    let mut by_center = Vec::with_capacity(CENTERS.len());
    for center in CENTERS {
        defaults.auto_semantic_center = Some(center);
        let auto = EvalMethod::Profile(Profile::Auto);
        let report = score(
            engine,
            index,
            queries,
            qrels,
            format!("auto at {center}"),
            progress,
            left_out,
            |q| auto.request(q, top_k, &defaults),
        )
        .await?;
        by_center.push((center, report.ndcg_at_10));
    }
    Ok(Calibration {
        center: best(&by_center),
        ndcg_at_10_by_center: by_center,
        queries: queries.len(),
    })
}

/// The centre with the highest score; ties go to the centre nearest balanced.
pub fn best(by_center: &[(f64, f64)]) -> f64 {
    by_center
        .iter()
        .copied()
        .fold(None, |best: Option<(f64, f64)>, (c, s)| match best {
            Some((bc, bs))
                if bs > s
                    || bs == s
                        && (bc - DEFAULT_AUTO_CENTER).abs() <= (c - DEFAULT_AUTO_CENTER).abs() =>
            {
                Some((bc, bs))
            }
            _ => Some((c, s)),
        })
        .map_or(DEFAULT_AUTO_CENTER, |(c, _)| c)
}

/// Fewer synthetic queries than this calibrate nothing: too few documents with two chunks.
pub const MIN_SYNTHETIC_QUERIES: usize = 60;

/// Calibrates `auto` on queries cut from the index's own chunks ([`super::synthetic`]): no
/// judgments needed. `None` when the index has too few documents to cut them from.
pub async fn synthetic_center(
    engine: &Engine,
    index: &IndexName,
    progress: bool,
) -> Result<Option<Calibration>, BeirError> {
    let set = super::synthetic::from_index(engine, index).await?;
    if set.queries.len() < MIN_SYNTHETIC_QUERIES {
        return Ok(None);
    }
    let queries: Vec<&BeirQuery> = set.queries.iter().collect();
    let c = auto_center(
        engine,
        index,
        &queries,
        &set.qrels,
        LeftOut::Chunks(&set.left_out),
        progress,
    )
    .await?;
    Ok(Some(c))
}

/// An index calibrates itself once it holds this many chunks: fewer rarely give enough
/// documents of two chunks to cut queries from.
pub const SELF_CALIBRATE_MIN_ROWS: u64 = 1_000;

/// Calibrates `auto` on the index's own queries when it is due, and stores the centre: when
/// it has never been calibrated (and no centre was set by hand) once it holds
/// [`SELF_CALIBRATE_MIN_ROWS`] chunks, and again whenever its chunks have doubled since its
/// last synthetic calibration. A judged or hand-set centre is never replaced, and an index
/// whose embedder has a measured centre does not calibrate itself. Returns the calibration
/// when one ran.
pub async fn self_calibrate_if_due(
    engine: &Engine,
    index: &IndexName,
) -> Result<Option<Calibration>, BeirError> {
    let handle = engine.index(index).await?;
    let info = handle.info();
    // A model's measured centre beats synthetic queries (`IndexInfo::query_defaults`).
    if crate::embedding::measured_auto_center(&info.embedder).is_some() {
        return Ok(None);
    }
    // The manifest's row count (deleted rows included): no data is read, and this runs
    // after every maintenance pass.
    let rows = handle.lance().shape().await.map_err(EngineError::from)?.1 as u64;
    if !calibration_due(&info.defaults, rows) {
        return Ok(None);
    }
    let Some(c) = synthetic_center(engine, index, false).await? else {
        return Ok(None);
    };
    store(engine, index, c.center, CalibrationSource::Synthetic).await?;
    tracing::info!(index = %index, center = c.center, queries = c.queries, rows,
        "auto calibrated on the index's own queries");
    Ok(Some(c))
}

/// Whether an index with `defaults` and `rows` chunks calibrates itself now (see
/// [`self_calibrate_if_due`]).
pub fn calibration_due(defaults: &IndexDefaults, rows: u64) -> bool {
    match defaults.auto_calibration {
        None => defaults.auto_semantic_center.is_none() && rows >= SELF_CALIBRATE_MIN_ROWS,
        Some(AutoCalibration {
            source: CalibrationSource::Synthetic,
            rows: then,
        }) => rows >= then.saturating_mul(2).max(SELF_CALIBRATE_MIN_ROWS),
        Some(_) => false,
    }
}

/// Records `center` as the index's `auto_semantic_center`, keeping its other defaults, with
/// where it came from and the rows the index had.
pub async fn store(
    engine: &Engine,
    index: &IndexName,
    center: f64,
    source: CalibrationSource,
) -> Result<(), BeirError> {
    let handle = engine.index(index).await?;
    // The manifest's row count (deleted rows included): no data is read, and this runs
    // after every maintenance pass.
    let rows = handle.lance().shape().await.map_err(EngineError::from)?.1 as u64;
    let mut defaults = handle.info().defaults;
    defaults.auto_semantic_center = Some(center);
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
    fn the_best_centre_wins_and_ties_go_nearest_balanced() {
        assert_eq!(best(&[(0.2, 0.5), (0.5, 0.6), (0.8, 0.7)]), 0.8);
        assert_eq!(best(&[(0.2, 0.7), (0.5, 0.6), (0.8, 0.5)]), 0.2);
        assert_eq!(best(&[(0.3, 0.7), (0.5, 0.7), (0.8, 0.7)]), 0.5);
        assert_eq!(best(&[(0.4, 0.7), (0.7, 0.7)]), 0.4);
        assert_eq!(best(&[]), 0.5);
    }
}
