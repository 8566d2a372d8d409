//! TripleExtractor (optional, `[extractor] enabled`): between the Chunker and the
//! EmbedderClient, asks a language model for the triples each new chunk states and adds them
//! to the document's graph rows (as `Document::extracted`, so that the writer's re-plan keeps
//! them and the document's content hash does not change).
//!
//! Failures as the EmbedderClient's: an unavailable model holds the batch (retried with
//! capped backoff; the source pauses Kafka meanwhile); a refusal dead-letters the document's
//! events; malformed output is retried `malformed_retries` times, then the chunk is indexed
//! without extracted triples (counted in `ragstream_graph_extraction_failures_total` and
//! logged with the document).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::actor::{Actor, ActorError, Mailbox};
use super::{IndexWork, PlannedBatch};
use crate::graph::extractor::{ExtractError, TripleExtractor};
use crate::index::{ChunkRow, DocumentOp};
use crate::kafka::dead_letters::DeadLetters;
use crate::model::Triple;

const MAX_WAIT: Duration = Duration::from_secs(10);

pub struct TripleExtraction {
    pub extractor: Arc<dyn TripleExtractor>,
    pub malformed_retries: u32,
    /// Where documents the model refuses go (none in unit tests: they fail the actor).
    pub dead_letters: Option<DeadLetters>,
    pub next: Mailbox<PlannedBatch>,
}

impl Actor for TripleExtraction {
    type Message = PlannedBatch;
    const NAME: &'static str = "triple-extractor";

    async fn handle(&mut self, mut batch: PlannedBatch) -> Result<(), ActorError> {
        for work in &mut batch.work {
            self.extract_work(work).await?;
        }
        self.next
            .send(batch)
            .await
            .map_err(|_| ActorError::Downstream { actor: Self::NAME })
    }
}

/// What extraction made of one document.
enum Outcome {
    Triples(Vec<Triple>),
    Refused(String),
}

impl TripleExtraction {
    async fn extract_work(&self, work: &mut IndexWork) -> Result<(), ActorError> {
        let mut by_document: BTreeMap<String, Vec<ChunkRow>> = BTreeMap::new();
        for row in work.rows.iter().filter(|r| r.deleted_at.is_none()) {
            by_document
                .entry(row.document_id.clone())
                .or_default()
                .push(row.clone());
        }
        let mut refused: BTreeMap<String, String> = BTreeMap::new();
        for (document, chunks) in by_document {
            match self.extract_document(&document, &chunks).await? {
                Outcome::Refused(reason) => {
                    refused.insert(document, reason);
                }
                Outcome::Triples(triples) => {
                    // The graph rows of this document again, with the extracted triples.
                    let mut latest = None;
                    for e in &mut work.events {
                        if let DocumentOp::Upsert(doc) = &mut e.event.op {
                            if doc.id == document {
                                doc.extracted = triples.clone();
                                latest = Some(doc.clone());
                            }
                        }
                    }
                    if let Some(doc) = latest {
                        let (rows, _) = crate::graph::rows::document_rows(&doc, &chunks);
                        work.triples.retain(|t| t.document_id != document);
                        work.triples.extend(rows);
                    }
                }
            }
        }
        self.dead_letter(work, &refused).await
    }

    async fn extract_document(
        &self,
        document: &str,
        chunks: &[ChunkRow],
    ) -> Result<Outcome, ActorError> {
        let mut triples = Vec::new();
        for chunk in chunks {
            let mut malformed = 0;
            let mut unavailable: u32 = 0;
            loop {
                let (extractor, text) = (self.extractor.clone(), chunk.text.clone());
                let result = tokio::task::spawn_blocking(move || extractor.extract(&text))
                    .await
                    .map_err(|e| ActorError::failed(Self::NAME, e))?;
                match result {
                    Ok(found) => {
                        triples.extend(found.into_iter().map(|t| Triple {
                            chunk: Some(chunk.chunk_index),
                            ..t
                        }));
                        break;
                    }
                    Err(ExtractError::Refused(reason)) => return Ok(Outcome::Refused(reason)),
                    Err(ExtractError::Malformed(reason)) => {
                        malformed += 1;
                        if malformed > self.malformed_retries {
                            if let Some(m) = crate::telemetry::metrics() {
                                m.graph_extraction_failures_total
                                    .with_label_values(&["malformed"])
                                    .inc();
                            }
                            tracing::warn!(document, chunk = %chunk.chunk_id, %reason,
                                "extractor output malformed; chunk indexed without extracted triples");
                            break;
                        }
                    }
                    Err(e @ ExtractError::Unavailable(_)) => {
                        unavailable += 1;
                        let wait = Duration::from_millis(500)
                            .saturating_mul(1 << unavailable.min(6))
                            .min(MAX_WAIT);
                        tracing::warn!(error = %e, attempt = unavailable, retry_in = ?wait,
                            "extractor unavailable; holding the batch (Kafka consumption is paused)");
                        tokio::time::sleep(wait).await;
                    }
                }
            }
        }
        Ok(Outcome::Triples(triples))
    }

    /// Sends the events of refused documents to the DLQ and drops them from the work, as the
    /// EmbedderClient does with documents its provider rejects.
    async fn dead_letter(
        &self,
        work: &mut IndexWork,
        refused: &BTreeMap<String, String>,
    ) -> Result<(), ActorError> {
        if refused.is_empty() {
            return Ok(());
        }
        let Some(dead_letters) = &self.dead_letters else {
            return Err(ActorError::failed(
                Self::NAME,
                format!("extraction refused for {refused:?} and no dead-letter topic"),
            ));
        };
        if let Some(m) = crate::telemetry::metrics() {
            m.graph_extraction_failures_total
                .with_label_values(&["refused"])
                .inc_by(refused.len() as u64);
        }
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut work.events)
            .into_iter()
            .partition(|e| refused.contains_key(e.event.op.document_id()));
        work.events = kept;
        work.rows
            .retain(|r| !refused.contains_key(r.document_id.as_str()));
        work.triples
            .retain(|t| !refused.contains_key(t.document_id.as_str()));
        for ev in gone {
            ev.dead_letter(
                dead_letters,
                super::events::later_codes::EXTRACTION_REJECTED,
                &refused[ev.event.op.document_id()],
            )
            .await;
        }
        Ok(())
    }
}
