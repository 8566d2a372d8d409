//! EmbedderClient: fills in the vectors of a planned batch's new chunks. The embedder is the
//! slowest stage and the most fragile outside dependency; while it works (or waits for a
//! provider to come back) its mailbox stays full and the source pauses Kafka, so a backlog
//! waits in Kafka, not in memory.
//!
//! - Transient failures (provider down, rate-limited, timing out) are retried with capped
//!   exponential backoff for as long as they last: nothing is lost or dead-lettered for an
//!   outage.
//! - A permanent failure (the provider rejects the request or answers with the wrong shape)
//!   is narrowed down to the documents that cause it, by embedding one document at a time;
//!   those documents' events go to the dead-letter topic with the reason, the rest of the
//!   batch goes on.
//!
//! Embedding is CPU-bound or blocking I/O, so it runs on the blocking pool and never holds up
//! the async workers that answer queries.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use super::actor::{Actor, ActorError, Lane, Laned, Mailbox};
use super::{IndexWork, PlannedBatch};
use crate::embedding::{EmbedError, Embedder};
use crate::graph::rows::TripleRow;
use crate::index::{ChunkRow, WritePlan};
use crate::kafka::dead_letters::DeadLetters;
use crate::runtime::compute_pool;

/// Longest wait between two attempts while a provider is unavailable.
const MAX_WAIT: Duration = Duration::from_secs(10);

pub struct EmbedderClient {
    pub embedder: Arc<dyn Embedder>,
    /// Where documents the embedder permanently rejects go (none in unit tests: they fail).
    pub dead_letters: Option<DeadLetters>,
    pub next: Mailbox<PlannedBatch>,
}

impl Actor for EmbedderClient {
    type Message = PlannedBatch;
    const NAME: &'static str = "embedder-client";

    async fn handle(&mut self, mut batch: PlannedBatch) -> Result<(), ActorError> {
        let live = batch.lane() == Lane::Live;
        for work in &mut batch.work {
            self.embed_work(work, live).await?;
        }
        self.next
            .send(batch)
            .await
            .map_err(|_| ActorError::Downstream { actor: Self::NAME })
    }
}

impl EmbedderClient {
    /// Embeds `work`'s rows, on the live pool when `live` (`runtime::compute_pool::live`).
    async fn embed_work(&self, work: &mut IndexWork, live: bool) -> Result<(), ActorError> {
        let _spans: Vec<tracing::Span> = work.events.iter().map(|e| e.span("embed")).collect();
        let rows = std::mem::take(&mut work.rows);
        let triples = std::mem::take(&mut work.triples);
        let rejected = match self.embed(rows.clone(), triples.clone(), live).await? {
            Ok((rows, triples)) => {
                work.rows = rows;
                work.triples = triples;
                return Ok(());
            }
            Err(e) => e,
        };
        tracing::error!(index = %work.index, error = %rejected,
            "embedding rejected; finding the documents that cause it");
        let mut by_document: BTreeMap<String, (Vec<ChunkRow>, Vec<TripleRow>)> = BTreeMap::new();
        for row in rows {
            let entry = by_document.entry(row.document_id.clone()).or_default();
            entry.0.push(row);
        }
        for triple in triples {
            let entry = by_document.entry(triple.document_id.clone()).or_default();
            entry.1.push(triple);
        }
        let mut failed: BTreeMap<String, String> = BTreeMap::new();
        for (document, (rows, triples)) in by_document {
            match self.embed(rows, triples, live).await? {
                Ok((rows, triples)) => {
                    work.rows.extend(rows);
                    work.triples.extend(triples);
                }
                Err(e) => {
                    failed.insert(document, e.to_string());
                }
            }
        }
        self.dead_letter(work, &failed).await
    }

    /// Sends the events of documents the embedder rejected to the DLQ and drops them from the
    /// work: their offsets are still committed (they are handled, as poison messages are).
    async fn dead_letter(
        &self,
        work: &mut IndexWork,
        failed: &BTreeMap<String, String>,
    ) -> Result<(), ActorError> {
        if failed.is_empty() {
            return Ok(());
        }
        let Some(dead_letters) = &self.dead_letters else {
            return Err(ActorError::failed(
                Self::NAME,
                format!("embedding rejected for {failed:?} and no dead-letter topic"),
            ));
        };
        let (rejected, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut work.events)
            .into_iter()
            .partition(|e| failed.contains_key(e.event.op.document_id()));
        work.events = kept;
        let dropped: BTreeSet<&str> = failed.keys().map(String::as_str).collect();
        work.rows
            .retain(|r| !dropped.contains(r.document_id.as_str()));
        work.triples
            .retain(|t| !dropped.contains(t.document_id.as_str()));
        for ev in rejected {
            ev.dead_letter(
                dead_letters,
                super::events::later_codes::EMBEDDING_REJECTED,
                &failed[ev.event.op.document_id()],
            )
            .await;
        }
        Ok(())
    }

    /// Embeds `rows` and `triples`, waiting out transient failures; `Ok(Err(_))` is a
    /// permanent failure.
    #[allow(clippy::type_complexity)]
    async fn embed(
        &self,
        rows: Vec<ChunkRow>,
        triples: Vec<TripleRow>,
        live: bool,
    ) -> Result<Result<(Vec<ChunkRow>, Vec<TripleRow>), EmbedError>, ActorError> {
        let mut plan = WritePlan {
            rows,
            ..WritePlan::default()
        };
        plan.graph.triples = triples;
        let mut attempt: u32 = 0;
        loop {
            let embedder = self.embedder.clone();
            let (returned, result) = tokio::task::spawn_blocking(move || {
                let r = if live {
                    compute_pool::live(|| plan.embed(embedder.as_ref()))
                } else {
                    plan.embed(embedder.as_ref())
                };
                (plan, r)
            })
            .await
            .map_err(|e| ActorError::failed(Self::NAME, e))?;
            plan = returned;
            match result {
                Ok(()) => return Ok(Ok((plan.rows, plan.graph.triples))),
                Err(e) if !e.is_transient() => return Ok(Err(e)),
                Err(e) => {
                    attempt += 1;
                    let wait = Duration::from_millis(500)
                        .saturating_mul(1 << attempt.min(6))
                        .min(MAX_WAIT);
                    tracing::warn!(error = %e, attempt, retry_in = ?wait,
                        "embedder unavailable; holding the batch (Kafka consumption is paused)");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}
