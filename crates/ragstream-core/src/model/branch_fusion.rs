//! The names of the ways hybrid search can put its two branches on one scale. An index stores
//! the one its queries use (every contract but 000), so the name lives here; what each does
//! is `retrieval::fusion`.

use serde::{Deserialize, Serialize};

/// How a hybrid search scales its branches before the weighted sum. Contract 000 states
/// [`BranchFusion::Contract`]; the others are measured alternatives (BENCHMARKS.md, "A
/// fusion of its own") that an index or a contract 002 request picks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(
    description = "How hybrid search scales its two branches before the weighted sum. \
                          contract: the similarity as is, keyword scores min-max scaled per \
                          result set (contract 000's rule); min_max: both branches min-max \
                          scaled; z_score: each branch from its mean - 3 sd (0) to mean + 3 \
                          sd (1), clipped; rrf: 1 / (60 + rank) in each branch."
)]
pub enum BranchFusion {
    /// Similarity as is (already in [0, 1]); keyword scores min-max scaled per result set.
    #[default]
    Contract,
    /// Both branches min-max scaled per result set.
    MinMax,
    /// Distribution-based (DBSF): each branch scaled from its mean − 3σ (0) to mean + 3σ (1),
    /// clipped to [0, 1].
    ZScore,
    /// Reciprocal rank, 1 / (60 + rank), each branch by its own order: every candidate by
    /// similarity (all have one), the keyword branch's results by their scores.
    Rrf,
}

impl BranchFusion {
    pub const ALL: [BranchFusion; 4] = [
        BranchFusion::Contract,
        BranchFusion::MinMax,
        BranchFusion::ZScore,
        BranchFusion::Rrf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BranchFusion::Contract => "contract",
            BranchFusion::MinMax => "min_max",
            BranchFusion::ZScore => "z_score",
            BranchFusion::Rrf => "rrf",
        }
    }
}
