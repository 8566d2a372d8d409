//! Retrieval: request semantics, filters, preprocessing, fusion and the search itself.

pub mod diff;
mod error;
pub mod explain;
mod explanation;
pub use crate::store::filters;
pub mod fusion;
pub mod fusion_input;
pub mod hydration;
pub mod preprocessing;
pub mod profiles;
pub mod rerank;
pub mod retrievers;
pub mod search;

pub use error::RetrievalError;
pub use filters::Filters;
pub use preprocessing::QueryPreprocessing;
pub use search::{
    search, Candidates, FoundBy, RelevanceKind, SearchHit, SearchMethod, SearchRequest,
    SearchResult,
};
