//! ragstream: retrieval as infrastructure. The daemon around the engine of `ragstream-core`:
//! the contracts, HTTP, Kafka, the ingest pipeline's actors and the command line. The
//! engine's modules are re-exported under their own names, so `ragstream::index` is
//! `ragstream_core::index`.
// Lance and DataFusion futures nest deeply; an async fn that awaits several of them
// overflows the default limit of the compiler's type-layout recursion.
#![recursion_limit = "256"]
pub mod cli;
pub mod contracts;
pub mod daemon;
pub mod health;
pub mod http;
pub mod kafka;
pub mod pipeline;
#[cfg(test)]
mod properties;

use ragstream_core::failpoint;
pub use ragstream_core::{
    auth, calibration, chunking, config, data_dir, embedders, embedding, engine, graph, index,
    ingest, model, panic_message, retrieval, runtime, store, telemetry, units, Engine, EngineError,
};
