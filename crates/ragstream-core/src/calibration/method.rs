//! What a judged run is scored for: a search method, or a contract 002 profile.

use crate::index::IndexDefaults;
use crate::model::BranchFusion;
use crate::retrieval::profiles::Profile;
use crate::retrieval::{SearchMethod, SearchRequest};

/// What a run is scored for: a search method as contract 000 runs it, or a contract 002
/// profile (hybrid at the profile's weight; `auto` resolves per query).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EvalMethod {
    Method(SearchMethod),
    Profile(Profile),
    /// A profile whose hybrid scales its branches another way than contract 000.
    Fused(Profile, BranchFusion),
}

impl EvalMethod {
    pub fn name(&self) -> String {
        match self {
            EvalMethod::Method(m) => format!("{m:?}").to_lowercase(),
            EvalMethod::Profile(p) => format!("profile {}", p.name()),
            EvalMethod::Fused(p, f) => format!("profile {} {}", p.name(), f.name()),
        }
    }

    /// The request contract 002 would run for `query` on an index with `defaults` (`auto`
    /// reads its calibrated centre; every profile its fusion).
    pub fn request(&self, query: &str, top_k: usize, defaults: &IndexDefaults) -> SearchRequest {
        match self {
            EvalMethod::Method(m) => SearchRequest::new(query, *m, top_k),
            EvalMethod::Profile(p) => {
                EvalMethod::Fused(*p, defaults.fusion_for(None)).request(query, top_k, defaults)
            }
            EvalMethod::Fused(p, fusion) => {
                let resolved = crate::retrieval::profiles::resolve(query, Some(*p), None, defaults);
                let mut r = SearchRequest::new(query, SearchMethod::Hybrid, top_k);
                r.hybrid_alpha = resolved.semantic_weight;
                r.fusion = *fusion;
                r
            }
        }
    }
}
