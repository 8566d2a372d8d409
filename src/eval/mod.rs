//! Retrieval-quality evaluation on BEIR datasets.

pub mod beir;
pub mod calibrate;
pub mod long_queries;
pub mod metrics;
pub mod synthetic;
