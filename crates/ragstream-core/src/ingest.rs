//! Bulk ingestion from files: JSON lines of documents, or a BEIR `corpus.jsonl`.

use std::io::BufRead;
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use serde_json::Value;

use crate::engine::{Engine, EngineError};
use crate::index::{DocumentOp, WriteOutcome};
use crate::model::{Document, IndexName};

/// A BEIR corpus line (`_id`, `title`, `text`): `ingest` reads them as documents.
#[derive(Debug, Deserialize)]
pub struct BeirDoc {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub text: String,
}

impl BeirDoc {
    pub fn into_document(self) -> Document {
        Document {
            id: self.id,
            title: (!self.title.is_empty()).then_some(self.title),
            text: Some(self.text),
            source_type: Some("beir".into()),
            ..Default::default()
        }
    }
}

/// A bad input line: its number and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {reason}")]
pub struct LineError {
    pub path: String,
    pub line: usize,
    pub reason: String,
}

/// Reads and validates every line; returns all line errors (not just the first) so that a
/// file can be fixed in one go. Lines with `_id` are read as BEIR corpus documents.
pub fn read_documents(path: &Path, engine: &Engine) -> Result<Vec<Document>, Vec<LineError>> {
    let err = |line: usize, reason: String| LineError {
        path: path.display().to_string(),
        line,
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| vec![err(0, e.to_string())])?;
    let limits = engine.config().limits.document();
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                errors.push(err(n + 1, e.to_string()));
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Result<Document, String> = serde_json::from_str::<Value>(&line)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| {
                if v.get("_id").is_some() {
                    serde_json::from_value::<BeirDoc>(v)
                        .map(BeirDoc::into_document)
                        .map_err(|e| format!("not a BEIR document: {e}"))
                } else {
                    serde_json::from_value::<Document>(v)
                        .map_err(|e| format!("not a document: {e}"))
                }
            })
            .and_then(|d| d.validate(&limits).map(|_| d).map_err(|e| e.to_string()));
        match parsed {
            Ok(d) => docs.push(d),
            Err(reason) => errors.push(err(n + 1, reason)),
        }
    }
    if errors.is_empty() {
        Ok(docs)
    } else {
        Err(errors)
    }
}

pub fn progress_bar(enabled: bool, len: u64, message: &str) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message.to_string());
    bar
}

/// Upserts `docs` in batches of `index.ingest_batch_documents` (one version per batch that
/// changes something) and returns the summed outcome.
pub async fn ingest_documents(
    engine: &Engine,
    index: &IndexName,
    docs: Vec<Document>,
    progress: bool,
) -> Result<WriteOutcome, EngineError> {
    let batch_size = engine.config().index.ingest_batch_documents;
    let bar = progress_bar(progress, docs.len() as u64, "documents");
    let mut total = WriteOutcome {
        index_version: None,
        upserted: 0,
        deleted: 0,
        unchanged: 0,
        chunks_written: 0,
    };
    let mut docs = docs.into_iter().peekable();
    if docs.peek().is_none() {
        engine.create_index(index).await?;
    }
    while docs.peek().is_some() {
        let batch: Vec<DocumentOp> = docs
            .by_ref()
            .take(batch_size)
            .map(DocumentOp::Upsert)
            .collect();
        let n = batch.len() as u64;
        let outcome = engine.write(index, batch).await?;
        total.index_version = outcome.index_version.or(total.index_version);
        total.upserted += outcome.upserted;
        total.unchanged += outcome.unchanged;
        total.chunks_written += outcome.chunks_written;
        bar.inc(n);
    }
    bar.finish_and_clear();
    Ok(total)
}
