//! Calibrating `auto` for one index: which centre (the semantic weight auto starts from before
//! a query's signals move it) retrieves best on judged queries of that index's own domain. A
//! strong embedder earns a more semantic centre than a weak one; the signals then move each
//! query from there as before.
//!
//! Measure on queries other than those you report on (`eval beir --calibrate` uses the
//! training split and reports the test split).

use serde::Serialize;

use super::beir::{score, BeirError, BeirQuery, EvalMethod};
use super::metrics::Qrels;
use crate::engine::Engine;
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
            false,
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

/// Records `center` as the index's `auto_semantic_center`, keeping its other defaults.
pub async fn store(engine: &Engine, index: &IndexName, center: f64) -> Result<(), BeirError> {
    let handle = engine.index(index).await?;
    let mut defaults = handle.info().defaults;
    defaults.auto_semantic_center = Some(center);
    handle
        .set_defaults(defaults)
        .map_err(crate::engine::EngineError::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::best;

    #[test]
    fn the_best_centre_wins_and_ties_go_nearest_balanced() {
        assert_eq!(best(&[(0.2, 0.5), (0.5, 0.6), (0.8, 0.7)]), 0.8);
        assert_eq!(best(&[(0.2, 0.7), (0.5, 0.6), (0.8, 0.5)]), 0.2);
        assert_eq!(best(&[(0.3, 0.7), (0.5, 0.7), (0.8, 0.7)]), 0.5);
        assert_eq!(best(&[(0.4, 0.7), (0.7, 0.7)]), 0.4);
        assert_eq!(best(&[]), 0.5);
    }
}
