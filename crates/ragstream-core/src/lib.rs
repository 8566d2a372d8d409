//! ragstream-core: the retrieval engine without its transports. Documents are chunked,
//! embedded and written to versioned Lance datasets plus a tantivy keyword index; queries
//! are answered with semantic, keyword or hybrid retrieval pinned to an `index_version`.
//! [`Engine`] is the one entry point: the daemon (the `ragstream` package: HTTP, Kafka, the
//! pipeline), the command line and the benchmarks all call it.
// Lance and DataFusion futures nest deeply; an async fn that awaits several of them
// overflows the default limit of the compiler's type-layout recursion.
#![recursion_limit = "256"]
pub mod auth;
pub mod calibration;
pub mod chunking;
pub mod config;
pub mod data_dir;
pub mod embedders;
pub mod embedding;
pub mod engine;
#[doc(hidden)]
pub mod failpoint;
pub mod graph;
pub mod index;
pub mod ingest;
pub mod model;
pub mod retrieval;
pub mod runtime;
pub mod store;
pub mod telemetry;
pub mod units;

pub use engine::{Engine, EngineError};

/// What a caught panic said (its `&str` or `String` payload).
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}
