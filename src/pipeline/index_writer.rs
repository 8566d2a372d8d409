//! IndexWriter: applies batches to the indexes, exactly once. Each index's commit records the
//! Kafka checkpoint it covers; events an index already committed (offset below its
//! checkpoint) are skipped on re-delivery. Consumer-group offsets are committed afterwards,
//! for lag monitoring only.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::mpsc;

use super::ingest_source::{CheckpointContext, Positions};
use super::{Batch, SourcedEvent};
use crate::engine::{Engine, EngineError};
use crate::index::{DocumentOp, KAFKA_CHECKPOINT};
use crate::model::IndexName;
use crate::transport::dead_letters::{DeadLetters, Origin};

pub struct IndexWriter {
    engine: Arc<Engine>,
    dead_letters: DeadLetters,
    positions: Positions,
    /// Checkpoint per index as last committed (loaded from the index on first use).
    checkpoints: HashMap<IndexName, HashMap<String, i64>>,
}

/// Reads the newest checkpoint of every index: where each partition must resume so that no
/// index misses an event (the minimum over indexes).
pub async fn resume_positions(engine: &Engine) -> Result<HashMap<String, i64>, EngineError> {
    let mut out: HashMap<String, i64> = HashMap::new();
    for name in crate::index::list_indexes(&engine.config().storage.data_dir) {
        let checkpoint = engine.index(&name).await?.kafka_checkpoint().await?;
        for (partition, offset) in checkpoint {
            out.entry(partition)
                .and_modify(|o| *o = (*o).min(offset))
                .or_insert(offset);
        }
    }
    Ok(out)
}

impl IndexWriter {
    pub fn new(engine: Arc<Engine>, dead_letters: DeadLetters, positions: Positions) -> Self {
        IndexWriter {
            engine,
            dead_letters,
            positions,
            checkpoints: HashMap::new(),
        }
    }

    /// Applies batches until the channel closes (the source has stopped and drained).
    pub async fn run(
        mut self,
        mut from_source: mpsc::Receiver<Batch>,
        consumer: Arc<StreamConsumer<CheckpointContext>>,
    ) {
        while let Some(batch) = from_source.recv().await {
            self.apply(&batch).await;
            let mut tpl = TopicPartitionList::new();
            for (key, offset) in &batch.next_offsets {
                if let Some((topic, partition)) = key.rsplit_once(':') {
                    if let Ok(p) = partition.parse() {
                        let _ = tpl.add_partition_offset(topic, p, Offset::Offset(*offset));
                    }
                }
            }
            if let Err(e) = consumer.commit(&tpl, CommitMode::Async) {
                tracing::debug!(error = %e, "consumer-group offset commit (monitoring only) failed");
            }
        }
    }

    /// Applies one batch to every index it touches.
    pub async fn apply(&mut self, batch: &Batch) {
        let mut per_index: BTreeMap<IndexName, Vec<&SourcedEvent>> = BTreeMap::new();
        for e in &batch.events {
            per_index.entry(e.event.index.clone()).or_default().push(e);
        }
        for (index, events) in per_index {
            self.apply_index(&index, &events, &batch.next_offsets).await;
        }
        let mut positions = self.positions.lock().expect("positions lock");
        positions.extend(batch.next_offsets.iter().map(|(k, v)| (k.clone(), *v)));
    }

    async fn apply_index(
        &mut self,
        index: &IndexName,
        events: &[&SourcedEvent],
        next_offsets: &BTreeMap<String, i64>,
    ) {
        let checkpoint = match self.checkpoint(index).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(%index, error = %e, "cannot read the index checkpoint");
                HashMap::new()
            }
        };
        let fresh: Vec<&SourcedEvent> = events
            .iter()
            .copied()
            .filter(|e| {
                let key = super::partition_key(&e.topic, e.partition);
                checkpoint.get(&key).is_none_or(|next| e.offset >= *next)
            })
            .collect();
        if fresh.is_empty() {
            return;
        }
        let mut advanced = checkpoint.clone();
        advanced.extend(next_offsets.iter().map(|(k, v)| (k.clone(), *v)));
        let properties: HashMap<String, String> = [(
            KAFKA_CHECKPOINT.to_string(),
            serde_json::to_string(&advanced).expect("checkpoint serialises"),
        )]
        .into();
        let ops: Vec<DocumentOp> = fresh.iter().map(|e| e.event.op.clone()).collect();
        let mut backoff = Duration::from_millis(200);
        loop {
            match self
                .engine
                .write_with_properties(index, ops.clone(), properties.clone())
                .await
            {
                Ok(outcome) => {
                    tracing::info!(%index, version = ?outcome.index_version, upserted = outcome.upserted,
                        deleted = outcome.deleted, unchanged = outcome.unchanged, chunks = outcome.chunks_written,
                        "batch committed");
                    if outcome.index_version.is_some() {
                        self.checkpoints.insert(index.clone(), advanced);
                    }
                    return;
                }
                Err(e) if is_permanent(&e) => {
                    // The batch can never be written to this index: every event goes to the
                    // DLQ with the reason, and the rest of the pipeline continues.
                    for ev in &fresh {
                        let origin = Origin {
                            topic: ev.topic.clone(),
                            partition: ev.partition,
                            offset: ev.offset,
                        };
                        let payload = event_payload(ev);
                        self.dead_letters
                            .send(
                                &origin,
                                None,
                                Some(payload.as_bytes()),
                                "rejected",
                                &e.to_string(),
                            )
                            .await;
                    }
                    return;
                }
                Err(e) => {
                    tracing::error!(%index, error = %e, retry_in = ?backoff, "write failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                }
            }
        }
    }

    async fn checkpoint(&mut self, index: &IndexName) -> Result<HashMap<String, i64>, EngineError> {
        if let Some(c) = self.checkpoints.get(index) {
            return Ok(c.clone());
        }
        let c = match self.engine.index(index).await {
            Ok(i) => i.kafka_checkpoint().await?,
            Err(EngineError::IndexNotFound(_)) => HashMap::new(),
            Err(e) => return Err(e),
        };
        self.checkpoints.insert(index.clone(), c.clone());
        Ok(c)
    }
}

/// Errors retrying cannot fix (the index was built for another embedder, invalid input).
fn is_permanent(e: &EngineError) -> bool {
    matches!(
        e,
        EngineError::Invalid(_)
            | EngineError::Store(crate::index::StoreError::EmbedderMismatch { .. })
    )
}

fn event_payload(e: &SourcedEvent) -> String {
    match &e.event.op {
        DocumentOp::Upsert(d) => serde_json::json!({"schema_version": 1, "op": "upsert",
            "index": e.event.index.as_str(), "document": d})
        .to_string(),
        DocumentOp::Delete { document_id } => {
            serde_json::json!({"schema_version": 1, "op": "delete",
            "index": e.event.index.as_str(), "document_id": document_id})
            .to_string()
        }
    }
}
