//! Retrieval-quality evaluation on BEIR datasets (`ragstream-bench eval`); the calibration
//! and the metrics it scores with are the library's (`ragstream::calibration`).

pub mod beir;
pub mod long_queries;
