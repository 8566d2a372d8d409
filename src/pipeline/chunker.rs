//! Chunker: splits a batch by index, drops events the index has already committed, and plans
//! each index's change against its newest version, so that only new or changed documents are
//! chunked and passed on to be embedded. Events an index can never take (it was built with
//! another embedder) go to the DLQ here.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::actor::{Actor, ActorError, Mailbox};
use super::checkpoints::{not_yet_committed, Checkpoints};
use super::{store_outage, Batch, IndexWork, PlannedBatch, SourcedEvent};
use crate::engine::{Engine, EngineError};
use crate::kafka::dead_letters::DeadLetters;
use crate::model::IndexName;

pub struct Chunker {
    pub engine: Arc<Engine>,
    pub checkpoints: Arc<Checkpoints>,
    pub dead_letters: DeadLetters,
    pub next: Mailbox<PlannedBatch>,
    /// Told while planning waits for the object store, and when it goes on.
    pub health: Option<Arc<crate::health::Health>>,
}

impl Actor for Chunker {
    type Message = Batch;
    const NAME: &'static str = "chunker";

    async fn handle(&mut self, batch: Batch) -> Result<(), ActorError> {
        let mut per_index: BTreeMap<IndexName, Vec<SourcedEvent>> = BTreeMap::new();
        for e in batch.events {
            per_index.entry(e.event.index.clone()).or_default().push(e);
        }
        let mut work = Vec::new();
        for (index, events) in per_index {
            if let Some(w) = self.plan_waiting(index, events).await? {
                work.push(w);
            }
        }
        self.next
            .send(PlannedBatch {
                work,
                next_offsets: batch.next_offsets,
                epochs: batch.epochs,
                lane: batch.lane,
                claim: batch.claim,
            })
            .await
            .map_err(|_| ActorError::Downstream { actor: Self::NAME })
    }
}

impl Chunker {
    /// Plans, waiting out an object store that does not answer (`store_outage`).
    async fn plan_waiting(
        &self,
        index: IndexName,
        events: Vec<SourcedEvent>,
    ) -> Result<Option<IndexWork>, ActorError> {
        let mut backoff = store_outage::Backoff::default();
        let part = format!("pipeline.planning.{index}");
        loop {
            match self.plan(&index, &events).await {
                Ok(work) => {
                    if let Some(h) = &self.health {
                        h.clear(&part);
                    }
                    return Ok(work);
                }
                Err(e) if store_outage::is_outage(&self.engine, &e).await => {
                    // Not ready while planning waits: ingestion makes no progress.
                    if let Some(h) = &self.health {
                        h.report(
                            &part,
                            crate::health::Impact::Unready,
                            format!("planning for index {index} waits for the object store: {e}"),
                        );
                    }
                    let wait = backoff.next_wait();
                    tracing::warn!(index = %index, error = %e, retry_in = ?wait,
                        "the object store is unavailable; holding the batch (Kafka consumption is paused)");
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(ActorError::failed(Self::NAME, format!("{index}: {e}"))),
            }
        }
    }

    async fn plan(
        &self,
        index: &IndexName,
        events: &[SourcedEvent],
    ) -> Result<Option<IndexWork>, EngineError> {
        // Opened (or found stale and opened again) before its checkpoint is read.
        let handle = self.engine.current_index(index, true).await?;
        let checkpoint = self.checkpoints.get(&self.engine, index).await?;
        let events: Vec<SourcedEvent> = not_yet_committed(events, &checkpoint)
            .into_iter()
            .cloned()
            .collect();
        if events.is_empty() {
            return Ok(None);
        }
        let _spans: Vec<tracing::Span> = events.iter().map(|e| e.span("chunk")).collect();
        let embedder = self.engine.embedder();
        if let Err(e) = handle.check_embedder(embedder.id(), embedder.dimensions()) {
            // Permanent: this index can never take these events. They go to the DLQ with the
            // reason, and the pipeline continues.
            for ev in &events {
                ev.dead_letter(
                    &self.dead_letters,
                    super::events::later_codes::EMBEDDER_MISMATCH,
                    &e.to_string(),
                )
                .await;
            }
            return Ok(None);
        }
        let ops = events.iter().map(|e| e.event.op.clone()).collect();
        let plan = handle.writer().plan(ops, self.engine.chunker()).await?;
        Ok(Some(IndexWork {
            index: index.clone(),
            events,
            rows: plan.rows,
            triples: plan.graph.triples,
        }))
    }
}
