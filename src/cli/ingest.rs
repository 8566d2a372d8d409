//! `ragstream ingest`: JSON lines of documents (or a BEIR corpus) into an index.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

use super::{failure, index_name, load_embedder, lock_data_dir, usage, Failure};
use crate::config::Config;
use crate::engine::Engine;

#[derive(clap::Args)]
pub struct IngestArgs {
    /// The index.
    #[arg(long)]
    index: String,
    /// JSON lines of documents, or a BEIR corpus.jsonl.
    file: PathBuf,
}

pub async fn run(config: Config, args: IngestArgs) -> Result<(), Failure> {
    let IngestArgs { index, file } = args;

    let name = index_name(&index)?;
    let _lock = lock_data_dir(&config, "ingest")?;
    let engine = Engine::new(config.clone(), load_embedder(&config)?);
    let docs = crate::ingest::read_documents(&file, &engine).map_err(|errors| {
        let shown: Vec<String> = errors.iter().take(20).map(|e| e.to_string()).collect();
        let more = errors.len().saturating_sub(20);
        usage(format!(
            "{} invalid line(s), nothing was ingested:\n  {}{}",
            errors.len(),
            shown.join("\n  "),
            if more > 0 {
                format!("\n  ... and {more} more")
            } else {
                String::new()
            }
        ))
    })?;
    let started = Instant::now();
    let count = docs.len();
    let outcome = crate::ingest::ingest_documents(&engine, &name, docs, true).await?;
    // The last commit may have started a vector index build in the background; the
    // process must not exit under it (the build would be lost and redone next time).
    let index = engine.index(&name).await?;
    if index.maintenance().build_pending() {
        eprintln!("waiting for the vector index build to finish");
        while index.maintenance().build_pending() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    let (vector_index_rows, _) = crate::index::vector_index::coverage(&index.lance().latest())
        .await
        .map_err(crate::engine::EngineError::from)?;
    let secs = started.elapsed().as_secs_f64();
    // Once the index is large enough, and each time it doubles, `auto` calibrates
    // itself on queries cut from the index's own chunks (docs/evaluation.md).
    let calibration = crate::calibration::calibrate::self_calibrate_if_due(&engine, &name)
        .await
        .map_err(failure)?;
    println!(
        "{}",
        json!({
            "index": name.as_str(),
            "documents": count,
            "upserted": outcome.upserted,
            "unchanged": outcome.unchanged,
            "chunks_written": outcome.chunks_written,
            "index_version": index.latest_version(),
            "vector_index_rows": vector_index_rows,
            "auto_calibrated_center": calibration.as_ref().map(|c| c.center),
            "auto_calibrated_passage_weight": calibration.as_ref().and_then(|c| c.passage_weight),
            "auto_calibrated_fusion": calibration.as_ref().map(|c| c.fusion),
            "embedding": engine.embedding_report(),
            "seconds": (secs * 1000.0).round() / 1000.0,
        })
    );

    Ok(())
}
