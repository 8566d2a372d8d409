//! Benchmarks run from the command line (`ragstream bench …`); results go to BENCHMARKS.md
//! with the command that produced them.

pub mod embed;
pub mod graph;
pub mod pipeline;
pub mod scale;
pub mod telemetry;
