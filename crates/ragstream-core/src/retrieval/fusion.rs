//! Hybrid fusion exactly as contract 000 states it.
//!
//! - over-fetch both branches with `min(max(top_k * 3, 10), 50)`;
//! - the semantic branch is used as similarity (already in [0, 1], see `semantic_similarity`);
//! - the keyword branch is min-max scaled per result set; if all keyword scores are equal (and
//!   there are keyword results) every keyword match gets 1.0;
//! - `hybrid = alpha * semantic + (1 - alpha) * keyword`.
//!
//! A candidate found only by the keyword branch still has an exact semantic similarity (the
//! engine computes it from the stored vector); a candidate found only by the semantic branch is
//! not a keyword match and takes keyword 0.0, the bottom of the min-max scale.

use std::collections::HashMap;

/// Candidates fetched per branch for a hybrid query of `top_k` results.
pub fn overfetch(top_k: usize) -> usize {
    (top_k * 3).clamp(10, 50)
}

pub use crate::store::similarity::semantic_similarity;

/// Min-max scaling of one keyword result set; all-equal scores become 1.0.
pub fn min_max(scores: &[f64]) -> Vec<f64> {
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    scores
        .iter()
        .map(|s| {
            if max > min {
                (s - min) / (max - min)
            } else {
                1.0
            }
        })
        .collect()
}

/// One fused candidate and the normalised branch scores that produced its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub score: f64,
    pub semantic: f64,
    pub keyword: f64,
}

pub use crate::model::BranchFusion;

impl BranchFusion {
    /// The keyword branch's scores on the fusion scale; `scores` in any order.
    pub fn scale_keyword(self, scores: &[f64]) -> Vec<f64> {
        self.scale(scores, false)
    }

    /// One branch's scores on the fusion scale; `scores` in any order.
    fn scale(self, scores: &[f64], is_similarity: bool) -> Vec<f64> {
        match self {
            BranchFusion::Contract if is_similarity => scores.to_vec(),
            BranchFusion::Contract | BranchFusion::MinMax => min_max(scores),
            BranchFusion::ZScore => z_score(scores),
            BranchFusion::Rrf => reciprocal_ranks(scores),
        }
    }
}

/// Scores scaled from mean − 3σ to mean + 3σ and clipped to [0, 1]; all equal → 1.0.
pub fn z_score(scores: &[f64]) -> Vec<f64> {
    let n = scores.len() as f64;
    let mean = scores.iter().sum::<f64>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    scores
        .iter()
        .map(|s| {
            if sd > 0.0 {
                ((s - (mean - 3.0 * sd)) / (6.0 * sd)).clamp(0.0, 1.0)
            } else {
                1.0
            }
        })
        .collect()
}

/// 1 / (60 + rank) by descending score (rank 1 is the best; ties share the better rank).
pub fn reciprocal_ranks(scores: &[f64]) -> Vec<f64> {
    scores
        .iter()
        .map(|s| {
            let better = scores.iter().filter(|o| *o > s).count();
            1.0 / (60.0 + better as f64 + 1.0)
        })
        .collect()
}

/// Fuses branch results. `semantic` holds the similarity of every candidate (both branches);
/// `keyword` holds raw keyword scores of the keyword branch. The output is unordered. A
/// candidate the keyword branch did not return takes keyword 0.0.
pub fn fuse<K: Clone + Ord + std::hash::Hash>(
    semantic: &HashMap<K, f64>,
    keyword: &[(K, f64)],
    alpha: f64,
    how: BranchFusion,
) -> Vec<Fused<K>> {
    let raw: Vec<f64> = keyword.iter().map(|(_, s)| *s).collect();
    let scaled: HashMap<&K, f64> = keyword
        .iter()
        .map(|(k, _)| k)
        .zip(how.scale_keyword(&raw))
        .collect();
    // In key order, not the map's: a z-score's mean is a sum, and a sum's last bit depends
    // on its order, so the same candidates always fuse to the same scores.
    let mut keys: Vec<&K> = semantic.keys().collect();
    keys.sort_unstable();
    keys.extend(
        keyword
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !semantic.contains_key(*k)),
    );
    let similarities: Vec<f64> = keys
        .iter()
        .map(|k| semantic.get(*k).copied().unwrap_or(0.0))
        .collect();
    keys.into_iter()
        .zip(how.scale(&similarities, true))
        .map(|(k, sem)| {
            let kw = scaled.get(k).copied().unwrap_or(0.0);
            Fused {
                key: k.clone(),
                score: alpha * sem + (1.0 - alpha) * kw,
                semantic: sem,
                keyword: kw,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overfetch_follows_the_contract_formula() {
        assert_eq!(overfetch(1), 10);
        assert_eq!(overfetch(3), 10);
        assert_eq!(overfetch(4), 12);
        assert_eq!(overfetch(5), 15);
        assert_eq!(overfetch(16), 48);
        assert_eq!(overfetch(17), 50);
        assert_eq!(overfetch(100), 50);
    }

    #[test]
    fn min_max_scales_each_result_set() {
        assert_eq!(min_max(&[10.0, 5.0, 0.0]), vec![1.0, 0.5, 0.0]);
        assert_eq!(min_max(&[4.0, 2.0]), vec![1.0, 0.0]);
    }

    #[test]
    fn all_equal_keyword_scores_become_one() {
        assert_eq!(min_max(&[3.2, 3.2, 3.2]), vec![1.0, 1.0, 1.0]);
        assert_eq!(min_max(&[7.0]), vec![1.0]);
        assert!(min_max(&[]).is_empty());
    }

    #[test]
    fn semantic_similarity_is_clamped_cosine() {
        assert_eq!(semantic_similarity(0.75), 0.75f32 as f64);
        assert_eq!(semantic_similarity(-0.2), 0.0);
        assert_eq!(semantic_similarity(1.0000001), 1.0);
    }

    #[test]
    fn fusion_is_alpha_weighted_sum_of_normalised_scores() {
        let semantic: HashMap<&str, f64> = [("a", 0.9), ("b", 0.5), ("c", 0.2)].into();
        let keyword = vec![("b", 12.0), ("c", 4.0), ("a", 8.0)];
        let mut fused = fuse(&semantic, &keyword, 0.25, BranchFusion::Contract);
        fused.sort_by(|x, y| x.key.cmp(y.key));
        // keyword min-max: b = 1.0, a = 0.5, c = 0.0
        assert_eq!(fused[0].keyword, 0.5);
        assert_eq!(fused[0].score, 0.25 * 0.9 + 0.75 * 0.5);
        assert_eq!(fused[1].keyword, 1.0);
        assert_eq!(fused[1].score, 0.25 * 0.5 + 0.75 * 1.0);
        assert_eq!(fused[2].keyword, 0.0);
        assert_eq!(fused[2].score, 0.25 * 0.2);
    }

    #[test]
    fn semantic_only_candidates_get_keyword_zero_and_all_equal_keyword_gets_one() {
        let semantic: HashMap<&str, f64> = [("a", 0.8), ("b", 0.6)].into();
        let keyword = vec![("b", 2.5)];
        let mut fused = fuse(&semantic, &keyword, 0.5, BranchFusion::Contract);
        fused.sort_by(|x, y| x.key.cmp(y.key));
        assert_eq!((fused[0].semantic, fused[0].keyword), (0.8, 0.0));
        assert_eq!((fused[1].semantic, fused[1].keyword), (0.6, 1.0));
        assert_eq!(fused[1].score, 0.5 * 0.6 + 0.5 * 1.0);
    }

    #[test]
    fn alpha_one_and_zero_select_a_branch() {
        let semantic: HashMap<&str, f64> = [("a", 0.3), ("b", 0.7)].into();
        let keyword = vec![("a", 9.0), ("b", 1.0)];
        let best = |alpha| {
            fuse(&semantic, &keyword, alpha, BranchFusion::Contract)
                .into_iter()
                .max_by(|x, y| x.score.total_cmp(&y.score))
                .unwrap()
                .key
        };
        assert_eq!(best(1.0), "b");
        assert_eq!(best(0.0), "a");
    }

    #[test]
    fn the_alternatives_scale_each_branch_their_own_way() {
        let semantic: HashMap<&str, f64> = [("a", 0.9), ("b", 0.5), ("c", 0.1)].into();
        let keyword = vec![("b", 12.0), ("c", 4.0)];
        let by_key = |how| {
            let mut f = fuse(&semantic, &keyword, 0.5, how);
            f.sort_by(|x, y| x.key.cmp(y.key));
            f
        };
        let min_max = by_key(BranchFusion::MinMax);
        assert_eq!(
            [
                min_max[0].semantic,
                min_max[1].semantic,
                min_max[2].semantic
            ],
            [1.0, 0.5, 0.0]
        );
        assert_eq!([min_max[1].keyword, min_max[2].keyword], [1.0, 0.0]);
        let rrf = by_key(BranchFusion::Rrf);
        assert_eq!(rrf[0].semantic, 1.0 / 61.0);
        assert_eq!(rrf[2].semantic, 1.0 / 63.0);
        assert_eq!((rrf[0].keyword, rrf[1].keyword), (0.0, 1.0 / 61.0));
        let z = by_key(BranchFusion::ZScore);
        assert_eq!(z[1].semantic, 0.5, "the mean sits in the middle");
        assert!(z[0].semantic > 0.5 && z[2].semantic < 0.5);
        assert_eq!(z_score(&[2.0, 2.0]), vec![1.0, 1.0]);
    }
}
