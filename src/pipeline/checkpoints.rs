//! The Kafka checkpoint each index has committed (`"topic:partition"` → next offset), read
//! from the index once and then kept current by the IndexWriter. Events below an index's
//! checkpoint are already in it: the Chunker skips them to save embedding work, and the
//! IndexWriter skips them again right before committing, which is what makes re-delivery
//! exactly-once.

use std::collections::{BTreeMap, HashMap};

use tokio::sync::Mutex;

use super::{partition_key, SourcedEvent};
use crate::engine::{Engine, EngineError};
use crate::model::IndexName;

pub type Checkpoint = HashMap<String, i64>;

#[derive(Debug, Default)]
pub struct Checkpoints {
    by_index: Mutex<HashMap<IndexName, Checkpoint>>,
}

impl Checkpoints {
    /// The index's checkpoint (empty for an index that does not exist yet).
    pub async fn get(&self, engine: &Engine, index: &IndexName) -> Result<Checkpoint, EngineError> {
        let mut map = self.by_index.lock().await;
        if let Some(c) = map.get(index) {
            return Ok(c.clone());
        }
        let c = match engine.index(index).await {
            Ok(i) => i.kafka_checkpoint().await?,
            Err(EngineError::IndexNotFound(_)) => Checkpoint::new(),
            Err(e) => return Err(e),
        };
        map.insert(index.clone(), c.clone());
        Ok(c)
    }

    pub async fn set(&self, index: &IndexName, checkpoint: Checkpoint) {
        self.by_index.lock().await.insert(index.clone(), checkpoint);
    }
}

/// Events the checkpoint does not cover yet.
pub fn not_yet_committed<'a>(
    events: impl IntoIterator<Item = &'a SourcedEvent>,
    checkpoint: &Checkpoint,
) -> Vec<&'a SourcedEvent> {
    events
        .into_iter()
        .filter(|e| {
            checkpoint
                .get(&partition_key(&e.topic, e.partition))
                .is_none_or(|next| e.offset >= *next)
        })
        .collect()
}

/// `checkpoint` advanced to `next_offsets`.
pub fn advanced(checkpoint: &Checkpoint, next_offsets: &BTreeMap<String, i64>) -> Checkpoint {
    let mut out = checkpoint.clone();
    out.extend(next_offsets.iter().map(|(k, v)| (k.clone(), *v)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::DocumentOp;
    use crate::pipeline::events::DocumentEvent;

    fn event(partition: i32, offset: i64) -> SourcedEvent {
        SourcedEvent {
            event: DocumentEvent {
                index: IndexName::parse("docs").unwrap(),
                op: DocumentOp::Delete {
                    document_id: format!("d{offset}"),
                },
            },
            topic: "t".into(),
            produced_at_ms: None,
            trace: Default::default(),
            partition,
            offset,
        }
    }

    #[test]
    fn events_below_the_checkpoint_are_skipped_per_partition() {
        let events = [event(0, 4), event(0, 5), event(1, 2), event(2, 0)];
        let checkpoint: Checkpoint = [("t:0".into(), 5), ("t:1".into(), 3)].into();
        let fresh: Vec<(i32, i64)> = not_yet_committed(&events, &checkpoint)
            .iter()
            .map(|e| (e.partition, e.offset))
            .collect();
        assert_eq!(fresh, vec![(0, 5), (2, 0)]);
    }

    #[test]
    fn advancing_keeps_partitions_the_batch_did_not_touch() {
        let checkpoint: Checkpoint = [("t:0".into(), 5), ("t:1".into(), 3)].into();
        let next: BTreeMap<String, i64> = [("t:1".into(), 9), ("t:2".into(), 1)].into();
        let got = advanced(&checkpoint, &next);
        assert_eq!(
            got,
            [("t:0".into(), 5), ("t:1".into(), 9), ("t:2".into(), 1)].into()
        );
    }
}
