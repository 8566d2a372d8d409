//! The one integration-test binary (one link of the heavy dependency tree).

mod common;
mod cli;
mod embedder;
mod engine;
mod versions;
