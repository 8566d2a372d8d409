//! Where a new query consumer group starts reading. A group with no committed offset on a
//! partition would start at the oldest query the topic keeps (`auto.offset.reset =
//! earliest`) and answer requests whose callers left long ago. Starting at `latest` instead
//! would lose the queries sent between the daemon's start and its partition assignment. So
//! the consumer keeps `earliest`, and on the partitions where its group had no committed
//! offset at start-up it skips the queries produced before the daemon started (less
//! `kafka.query_start_grace_ms`, for clocks a little apart), up to the first one produced
//! after. A partition the group has answered before resumes where it stopped, as any
//! consumer does.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use rdkafka::consumer::Consumer;
use rdkafka::{Offset, TopicPartitionList};

/// The partitions still being read up to the daemon's start, and that start.
#[derive(Debug)]
pub struct QueryStart {
    /// Queries produced before this (milliseconds since the Unix epoch) are old.
    cutoff_ms: i64,
    /// Partitions the group had no committed offset for, until their first new query.
    fresh: Mutex<HashSet<i32>>,
}

impl QueryStart {
    /// Reads which partitions of `topic` `consumer`'s group has no committed offset for.
    /// When the broker cannot say, every query is answered (and a warning logged): a
    /// restarted group would otherwise skip the queries sent while it was down.
    pub fn read(consumer: &impl Consumer, topic: &str, grace: Duration) -> QueryStart {
        let now_ms = (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64;
        let cutoff_ms = now_ms - i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
        let fresh = match uncommitted_partitions(consumer, topic) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(topic, error = %e,
                    "could not read the query group's committed offsets; answering every query in the topic");
                HashSet::new()
            }
        };
        QueryStart {
            cutoff_ms,
            fresh: Mutex::new(fresh),
        }
    }

    /// Whether a query on `partition` produced at `timestamp_ms` was produced before the
    /// daemon started, on a partition new to the group (then it is not answered). The first
    /// later query ends the skipping on its partition.
    pub fn is_old(&self, partition: i32, timestamp_ms: Option<i64>) -> bool {
        let mut fresh = self.fresh.lock().expect("query start lock");
        if !fresh.contains(&partition) {
            return false;
        }
        match timestamp_ms {
            Some(t) if t < self.cutoff_ms => true,
            _ => {
                fresh.remove(&partition);
                false
            }
        }
    }
}

fn uncommitted_partitions(
    consumer: &impl Consumer,
    topic: &str,
) -> Result<HashSet<i32>, rdkafka::error::KafkaError> {
    const TIMEOUT: Duration = Duration::from_secs(10);
    let metadata = consumer.fetch_metadata(Some(topic), TIMEOUT)?;
    let mut partitions = TopicPartitionList::new();
    for t in metadata.topics().iter().filter(|t| t.name() == topic) {
        for p in t.partitions() {
            partitions.add_partition(topic, p.id());
        }
    }
    let committed = consumer.committed_offsets(partitions, TIMEOUT)?;
    Ok(committed
        .elements()
        .iter()
        .filter(|e| !matches!(e.offset(), Offset::Offset(_)))
        .map(|e| e.partition())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(cutoff_ms: i64, fresh: &[i32]) -> QueryStart {
        QueryStart {
            cutoff_ms,
            fresh: Mutex::new(fresh.iter().copied().collect()),
        }
    }

    #[test]
    fn old_queries_are_skipped_only_on_new_partitions_and_only_until_a_new_one() {
        let s = start(1_000, &[0]);
        assert!(s.is_old(0, Some(10)));
        assert!(s.is_old(0, Some(999)));
        // A partition the group has committed on answers everything.
        assert!(!s.is_old(1, Some(10)));
        // The first new query ends the skipping: later ones answer whatever their time.
        assert!(!s.is_old(0, Some(1_000)));
        assert!(!s.is_old(0, Some(10)));
        // A query without a timestamp is answered, and ends the skipping too.
        let s = start(1_000, &[0]);
        assert!(!s.is_old(0, None));
        assert!(!s.is_old(0, Some(10)));
    }
}
