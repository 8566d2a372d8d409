//! A hybrid query's candidates as fusion saw them, kept so they can be fused again.
//!
//! A hybrid search fetches both branches' pools, then fuses them at one weight with one
//! fusion. Neither pool depends on the weight or the fusion, so one search answers every
//! setting: [`FusionInput::rank`] ranks the kept candidates as a search with another weight
//! and fusion would (the test `a_kept_fusion_input_ranks_as_the_search_at_every_setting`
//! compares them). Calibration uses this to search each query once instead of once per
//! setting it tries.

use std::collections::HashMap;

use super::fusion::{fuse, BranchFusion};
use super::search::rank_order;

/// One candidate of either branch: what the ranking order reads, and its similarity.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionCandidate {
    pub chunk_id: String,
    pub document_id: String,
    pub chunk_index: u32,
    /// The clamped cosine similarity (exact, also for a candidate only the keyword branch
    /// found).
    pub similarity: f64,
}

/// Every candidate of a hybrid query, and the keyword branch's BM25 scores in its order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FusionInput {
    pub candidates: Vec<FusionCandidate>,
    /// Chunk id and BM25 score of the keyword branch's candidates, best first.
    pub keyword: Vec<(String, f64)>,
}

impl FusionInput {
    /// The best `top_k` candidates and their fused scores at semantic weight `alpha` with
    /// `fusion`, in the ranking order a search returns them in.
    pub fn rank(
        &self,
        alpha: f64,
        fusion: BranchFusion,
        top_k: usize,
    ) -> Vec<(&FusionCandidate, f64)> {
        let by_id: HashMap<&str, &FusionCandidate> = self
            .candidates
            .iter()
            .map(|c| (c.chunk_id.as_str(), c))
            .collect();
        let similarity: HashMap<&str, f64> =
            by_id.iter().map(|(id, c)| (*id, c.similarity)).collect();
        let keyword: Vec<(&str, f64)> = self
            .keyword
            .iter()
            .map(|(id, score)| (id.as_str(), *score))
            .collect();
        let mut ranked: Vec<(&FusionCandidate, f64)> = fuse(&similarity, &keyword, alpha, fusion)
            .into_iter()
            .filter_map(|f| by_id.get(f.key).map(|c| (*c, f.score)))
            .collect();
        ranked.sort_by(|(a, sa), (b, sb)| {
            rank_order(
                (*sa, &a.document_id, a.chunk_index, &a.chunk_id),
                (*sb, &b.document_id, b.chunk_index, &b.chunk_id),
            )
        });
        ranked.truncate(top_k);
        ranked
    }
}
