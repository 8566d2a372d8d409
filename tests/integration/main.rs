//! The one integration-test binary (one link of the heavy dependency tree).
// Lance's and DataFusion's futures nest deeply (see src/lib.rs).
#![recursion_limit = "256"]

mod auth;
mod azure_blob;
mod backpressure;
mod cli;
mod common;
mod contracts;
mod corpora;
mod crash;
mod daemon;
mod delete_index;
mod deletes;
mod deploy;
mod diff;
mod dlq_replay;
mod doc_examples;
mod durable_default;
mod embedder;
mod engine;
mod explain;
mod extractor;
mod fair_partitions;
mod fake_provider;
mod faults;
mod graph;
mod hardening;
mod http_fuzz;
mod inspector;
mod layering;
mod maintenance;
mod object_storage;
mod pipeline;
mod providers;
mod query_start;
mod reembed;
mod rerank;
mod retention;
mod retrievers;
mod schemas;
mod telemetry;
mod tenancy_matrix;
mod topics;
mod traces;
mod vector_index;
mod versions;
