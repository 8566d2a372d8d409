//! ragstream: retrieval as infrastructure. Documents are chunked, embedded and written to
//! versioned Lance datasets plus a tantivy keyword index; queries are answered with
//! semantic, keyword or hybrid retrieval pinned to an `index_version`.
// Lance and DataFusion futures nest deeply; an async fn that awaits several of them
// overflows the default limit of the compiler's type-layout recursion.
#![recursion_limit = "256"]
pub mod auth;
pub mod bench;
pub mod chunking;
pub mod config;
pub mod contracts;
pub mod daemon;
pub mod data_dir;
pub mod embedding;
pub mod engine;
pub mod eval;
pub mod graph;
pub mod health;
pub mod index;
pub mod ingest;
pub mod model;
pub mod pipeline;
#[cfg(test)]
mod properties;
pub mod retrieval;
pub mod telemetry;
pub mod transport;

pub use engine::{Engine, EngineError};
