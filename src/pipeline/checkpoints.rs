//! The Kafka checkpoint each index has committed (`"topic:partition"` → next offset), read
//! from the index once and then kept current by the IndexWriter. Events below an index's
//! checkpoint are already in it: the Chunker skips them to save embedding work, and the
//! IndexWriter skips them again right before committing, which is what makes re-delivery
//! exactly-once.
//!
//! Offsets only mean something in the log they were read from. Every commit records that
//! log's identity next to its checkpoint ([`KafkaLog`]); a checkpoint recorded against
//! another log (another cluster; the in-memory broker of earlier versions) does not apply: it is reported loudly and the index reads every partition of
//! this log from its start (upserts are idempotent, so nothing is indexed twice).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tokio::sync::Mutex;

use super::{partition_key, SourcedEvent};
use crate::engine::{Engine, EngineError};
use crate::index::StoredCheckpoint;
use crate::model::IndexName;

pub type Checkpoint = HashMap<String, i64>;

/// The log the pipeline reads: its identity, and where each of its partitions stood when
/// the pipeline started (`"topic:partition"` → offset).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KafkaLog {
    pub id: String,
    /// The end of each partition (the offset the next message gets).
    pub ends: HashMap<String, i64>,
    /// The pipeline's consumer group's committed offsets: committed after every index of a
    /// batch has committed, so everything before them is in every index it belongs to.
    pub committed: HashMap<String, i64>,
}

impl KafkaLog {
    /// Where each partition must resume at the latest: the group's committed offset, or
    /// the start for a partition the group has not committed in this log. Resuming at the
    /// smaller of this and the indexes' checkpoints covers indexes that do not exist yet
    /// (a batch that failed after another index committed) and checkpoints that did not
    /// apply.
    pub fn floors(&self) -> HashMap<String, i64> {
        self.ends
            .iter()
            .map(|(p, end)| {
                let committed = self.committed.get(p).copied().filter(|c| c <= end);
                (p.clone(), committed.unwrap_or(0))
            })
            .collect()
    }
}

impl KafkaLog {
    /// Whether `stored` was read from this log. A checkpoint that names its log must name
    /// this one (older checkpoints name none). And no checkpoint may point past the end of
    /// a partition: a log's offsets never go back, so such an offset came from another log
    /// (an older checkpoint's broker, or a topic deleted and created again).
    pub fn check(&self, stored: &StoredCheckpoint) -> Result<(), String> {
        if let Some(log) = stored.log.as_ref().filter(|log| **log != self.id) {
            return Err(format!(
                "it was recorded against Kafka log {log}, and this is log {}",
                self.id
            ));
        }
        match stored
            .offsets
            .iter()
            .find(|(p, next)| self.ends.get(*p).is_some_and(|end| **next > *end))
        {
            Some((p, next)) => Err(format!(
                "it resumes {p} at offset {next}, past the end of that partition ({})",
                self.ends[p]
            )),
            None => Ok(()),
        }
    }
}

/// Where the log's partitions end now (`"topic:partition"` → offset), asked of Kafka;
/// `None` when it does not answer. Blocking.
pub type EndsNow = Arc<dyn Fn() -> Option<HashMap<String, i64>> + Send + Sync>;

#[derive(Default)]
pub struct Checkpoints {
    /// The log this pipeline reads (none: every stored checkpoint applies).
    log: Option<KafkaLog>,
    /// Asked when a checkpoint points past where the log ended at the pipeline's start:
    /// another daemon may have read and committed further since (indexes on an object
    /// store), which only a look at the log's ends now tells from another log.
    ends_now: Option<EndsNow>,
    /// Each index's checkpoint, with the version of the index handle it was read from or
    /// committed with: a handle at another version (opened again after another daemon's
    /// commits, or moved on by maintenance) has its checkpoint read again.
    by_index: Mutex<HashMap<IndexName, (u64, Checkpoint)>>,
    /// One turn per index: the lanes' writers commit to one index one at a time, each
    /// reading the checkpoint the other left.
    turns: std::sync::Mutex<HashMap<IndexName, Arc<Mutex<()>>>>,
}

impl Checkpoints {
    /// Checkpoints of the indexes as they apply to `log`.
    pub fn for_log(log: KafkaLog, ends_now: Option<EndsNow>) -> Self {
        Checkpoints {
            log: Some(log),
            ends_now,
            by_index: Mutex::default(),
            turns: Default::default(),
        }
    }

    /// Waits for `index`'s turn to commit: hold it from reading the index's checkpoint until
    /// the checkpoint committed with it is set.
    pub async fn turn(&self, index: &IndexName) -> tokio::sync::OwnedMutexGuard<()> {
        let turn = self
            .turns
            .lock()
            .expect("turns lock")
            .entry(index.clone())
            .or_default()
            .clone();
        turn.lock_owned().await
    }

    /// Whether `stored` belongs to this log, looking at the log's ends again before
    /// concluding that a checkpoint past them comes from another log.
    async fn check(&self, stored: &StoredCheckpoint) -> Option<Result<(), String>> {
        let log = self.log.as_ref()?;
        let first = log.check(stored);
        let (Err(_), Some(ends_now)) = (&first, &self.ends_now) else {
            return Some(first);
        };
        let ends_now = ends_now.clone();
        let Ok(Some(ends)) = tokio::task::spawn_blocking(move || ends_now()).await else {
            return Some(first);
        };
        Some(
            KafkaLog {
                ends,
                ..log.clone()
            }
            .check(stored),
        )
    }

    /// The identity of the log, recorded with every checkpoint committed.
    pub fn log_id(&self) -> Option<&str> {
        self.log.as_ref().map(|l| l.id.as_str())
    }

    pub fn log(&self) -> Option<&KafkaLog> {
        self.log.as_ref()
    }

    /// The index's checkpoint in this log (empty for an index that does not exist yet, and
    /// for one whose checkpoint belongs to another log).
    pub async fn get(&self, engine: &Engine, index: &IndexName) -> Result<Checkpoint, EngineError> {
        let mut map = self.by_index.lock().await;
        let handle = match engine.index(index).await {
            Ok(i) => Some(i),
            Err(EngineError::IndexNotFound(_)) => None,
            Err(e) => return Err(e),
        };
        let version = handle.as_ref().map_or(0, |i| i.latest_version());
        if let Some((_, c)) = map.get(index).filter(|(v, _)| *v == version) {
            return Ok(c.clone());
        }
        let stored = match handle {
            Some(i) => i.reader().stored_checkpoint().await?,
            // A deleted index's events up to its last commit must not come back: they are
            // skipped as if committed (`index::deleted`).
            None => crate::index::deleted::checkpoint(&engine.config().storage.data_dir, index)?
                .unwrap_or_default(),
        };
        let c = match self.check(&stored).await {
            Some(Err(why)) => {
                // Expected once after an upgrade from the in-memory broker of earlier
                // versions (its logs were named `embedded-…` and died with the process);
                // anything else (another cluster, a topic made again) deserves attention.
                let expected = stored
                    .log
                    .as_deref()
                    .is_some_and(|l| l.starts_with("embedded-"));
                if expected {
                    tracing::warn!(index = %index, reason = %why,
                        "the checkpoint belongs to the in-memory broker of an earlier version; reading the log from the start");
                } else {
                    tracing::error!(index = %index, reason = %why,
                        "the index's Kafka checkpoint does not apply to this log; reading every partition from its start");
                }
                if let Some(m) = crate::telemetry::metrics() {
                    m.checkpoint_resets_total
                        .with_label_values(&[index.as_str()])
                        .inc();
                }
                Checkpoint::new()
            }
            _ => stored.offsets,
        };
        map.insert(index.clone(), (version, c.clone()));
        Ok(c)
    }

    /// Records the checkpoint the index's commit of `version` carries.
    pub async fn set(&self, index: &IndexName, version: u64, checkpoint: Checkpoint) {
        self.by_index
            .lock()
            .await
            .insert(index.clone(), (version, checkpoint));
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
    fn a_checkpoint_of_another_log_does_not_apply() {
        let log = KafkaLog {
            id: "embedded-b".into(),
            ends: [("t:0".into(), 7), ("t:1".into(), 0)].into(),
            committed: Default::default(),
        };
        let stored = |log: Option<&str>, offsets: &[(&str, i64)]| StoredCheckpoint {
            offsets: offsets.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            log: log.map(str::to_string),
        };
        assert_eq!(
            log.check(&stored(Some("embedded-b"), &[("t:0", 7)])),
            Ok(())
        );
        // The same log's name, but past a partition's end: the topic was made again.
        assert!(log
            .check(&stored(Some("embedded-b"), &[("t:0", 99)]))
            .is_err());
        let why = log
            .check(&stored(Some("embedded-a"), &[("t:0", 5)]))
            .unwrap_err();
        assert!(
            why.contains("embedded-a") && why.contains("embedded-b"),
            "{why}"
        );
        // Unnamed (older) checkpoints: within the log's ends they apply...
        assert_eq!(log.check(&stored(None, &[("t:0", 7), ("t:9", 3)])), Ok(()));
        // ...past a partition's end they cannot come from this log.
        let why = log.check(&stored(None, &[("t:1", 5)])).unwrap_err();
        assert!(why.contains("t:1") && why.contains("past the end"), "{why}");
    }

    #[tokio::test]
    async fn a_checkpoint_past_the_ends_seen_at_start_is_checked_against_the_ends_now() {
        let log = KafkaLog {
            id: "kafka-cluster-x".into(),
            ends: [("t:0".into(), 7)].into(),
            committed: Default::default(),
        };
        // Another daemon committed up to offset 50 since this pipeline started.
        let stored = StoredCheckpoint {
            offsets: [("t:0".to_string(), 50)].into(),
            log: Some("kafka-cluster-x".into()),
        };
        let moved_on: EndsNow = Arc::new(|| Some([("t:0".to_string(), 60)].into()));
        let checkpoints = Checkpoints::for_log(log.clone(), Some(moved_on));
        assert_eq!(checkpoints.check(&stored).await, Some(Ok(())));
        // The log really ends before it (the topic was made again): it does not apply.
        let made_again: EndsNow = Arc::new(|| Some([("t:0".to_string(), 7)].into()));
        let checkpoints = Checkpoints::for_log(log.clone(), Some(made_again));
        assert!(matches!(checkpoints.check(&stored).await, Some(Err(_))));
        // Kafka not answering: the first verdict stands.
        let silent: EndsNow = Arc::new(|| None);
        let checkpoints = Checkpoints::for_log(log, Some(silent));
        assert!(matches!(checkpoints.check(&stored).await, Some(Err(_))));
    }

    #[test]
    fn the_group_offsets_are_the_floor_where_they_belong_to_this_log() {
        let log = KafkaLog {
            id: "x".into(),
            ends: [("t:0".into(), 10), ("t:1".into(), 4), ("t:2".into(), 3)].into(),
            committed: [("t:0".into(), 8), ("t:1".into(), 9)].into(),
        };
        let floors = log.floors();
        assert_eq!(floors["t:0"], 8);
        assert_eq!(floors["t:1"], 0, "past the end: another log's offset");
        assert_eq!(floors["t:2"], 0, "never committed");
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
