//! `ragstream bench export`: the chunks and vectors of an index, and query texts with their
//! vectors, in plain files, so that a peer (the LanceDB comparison,
//! `scripts/compare-lancedb`) indexes exactly the same rows and searches with exactly the
//! same query vectors.
//!
//! Files: `chunks.jsonl` (`{"chunk_id", "text"}` per line), `vectors.f32` (row-major
//! little-endian f32, one row per chunk line), `queries.jsonl` (`{"text"}`),
//! `query_vectors.f32`, and `meta.json` (`{"dimensions", "chunks", "queries", "embedder",
//! "vector_search": {"nprobes", "refine_factor", "ef"}}`): the approximate search settings
//! the index searches with, so that the peer searches with the same ones.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::pipeline::{failed, BenchError};
use ragstream::engine::Engine;
use ragstream::model::IndexName;

fn io(what: &Path, e: std::io::Error) -> BenchError {
    BenchError::Stalled(format!("{}: {e}", what.display()))
}

fn write_vectors(path: &Path, vectors: &[&[f32]]) -> Result<(), BenchError> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| io(path, e))?);
    for v in vectors {
        for x in *v {
            out.write_all(&x.to_le_bytes()).map_err(|e| io(path, e))?;
        }
    }
    out.flush().map_err(|e| io(path, e))
}

fn write_lines(
    path: &Path,
    lines: impl Iterator<Item = serde_json::Value>,
) -> Result<(), BenchError> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| io(path, e))?);
    for line in lines {
        writeln!(out, "{line}").map_err(|e| io(path, e))?;
    }
    out.flush().map_err(|e| io(path, e))
}

/// Exports the live chunks of `index` at its newest version and the first `query_count`
/// queries (cycled) into `out`. Returns (chunks, queries).
pub async fn run(
    engine: &Arc<Engine>,
    index: &IndexName,
    queries: &[String],
    out: &Path,
) -> Result<(usize, usize), BenchError> {
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let index = engine.index(index).await.map_err(|e| failed("index", &e))?;
    let ds = index.lance().latest();
    let rows = index
        .lance()
        .rows_where(&ds, Some(ragstream::store::filters::LIVE_ROWS.into()), true)
        .await
        .map_err(|e| failed("rows", &e))?;
    let dimensions = index.info().dimensions;
    if let Some(r) = rows
        .iter()
        .find(|r| r.vector.as_ref().map(Vec::len) != Some(dimensions))
    {
        return Err(failed(
            "rows",
            &format!("chunk {} has no {dimensions}-d vector", r.chunk_id),
        ));
    }
    write_lines(
        &out.join("chunks.jsonl"),
        rows.iter()
            .map(|r| serde_json::json!({"chunk_id": r.chunk_id, "text": r.search_text()})),
    )?;
    let vectors: Vec<&[f32]> = rows.iter().filter_map(|r| r.vector.as_deref()).collect();
    write_vectors(&out.join("vectors.f32"), &vectors)?;
    let refs: Vec<&str> = queries.iter().map(String::as_str).collect();
    let query_vectors = engine
        .embedder()
        .embed(&refs)
        .map_err(|e| failed("embed", &e))?;
    write_lines(
        &out.join("queries.jsonl"),
        queries.iter().map(|q| serde_json::json!({"text": q})),
    )?;
    let qv: Vec<&[f32]> = query_vectors.iter().map(Vec::as_slice).collect();
    write_vectors(&out.join("query_vectors.f32"), &qv)?;
    let (nprobes, refine_factor, ef) = index.lance().vector_search();
    let meta = serde_json::json!({
        "dimensions": dimensions,
        "chunks": rows.len(),
        "queries": queries.len(),
        "embedder": engine.embedder().id(),
        "vector_search": {"nprobes": nprobes, "refine_factor": refine_factor, "ef": ef},
    });
    std::fs::write(out.join("meta.json"), meta.to_string()).map_err(|e| io(out, e))?;
    Ok((rows.len(), queries.len()))
}
