//! Retrieval-quality evaluation on BEIR datasets.

pub mod beir;
pub mod metrics;
