//! The one integration-test binary (one link of the heavy dependency tree).

mod auth;
mod backpressure;
mod cli;
mod common;
mod contracts;
mod crash;
mod daemon;
mod deletes;
mod embedder;
mod engine;
mod extractor;
mod fake_provider;
mod graph;
mod maintenance;
mod pipeline;
mod providers;
mod reembed;
mod rerank;
mod retrievers;
mod telemetry;
mod traces;
mod vector_index;
mod versions;
