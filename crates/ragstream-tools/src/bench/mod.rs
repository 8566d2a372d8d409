//! Benchmarks run from the command line (`ragstream-bench …`); results go to BENCHMARKS.md
//! with the command that produced them.

pub mod embed;
pub mod explain_cost;
pub mod export;
pub mod fuzz;
pub mod graph;
pub mod keyword;
pub mod pipeline;
pub mod scale;
pub mod soak;
pub mod telemetry;

use std::path::{Path, PathBuf};

/// The first `count` documents of a BEIR corpus, or why there are not that many.
pub(crate) fn corpus_head(
    path: &Path,
    count: usize,
) -> Result<Vec<ragstream::model::Document>, pipeline::BenchError> {
    let mut documents = crate::eval::beir::read_corpus(path)?;
    if documents.len() < count {
        return Err(pipeline::BenchError::SmallCorpus {
            have: documents.len(),
            need: count,
        });
    }
    documents.truncate(count);
    Ok(documents)
}

/// A fresh data directory for a bench under the system's temporary directory.
pub(crate) fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("ragstream-bench-{}", uuid::Uuid::new_v4()))
}
