//! Two lanes through the ingest pipeline, so that live documents do not queue behind a
//! backfill.
//!
//! A partition whose consumer is near the partition's end is read into the live lane; one
//! with a backlog into the bulk lane. Every stage runs one actor per lane ([`Lane`]), so a
//! live document never waits for a bulk batch, queued or in progress; the two writers take
//! turns only on an index both write to.
//!
//! Order: an index must take a partition's events in offset order (a later checkpoint makes
//! it skip earlier events as committed). Batches of one lane keep their order, but a live
//! batch passes bulk ones. So a partition changes lanes only while none of its events is in
//! flight: the source stops reading it until the batches holding its events are committed,
//! then reads it into the other lane. A batch holds a [`Claim`] on its partitions until it
//! is committed or dropped.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

pub use super::actor::Lane;

#[derive(Debug, Default)]
struct Partition {
    lane: Lane,
    /// Batches holding events of this partition, the one being formed included.
    in_flight: usize,
}

/// The lane of each partition, and how many batches hold its events.
#[derive(Debug)]
pub struct Lanes {
    partitions: Mutex<HashMap<String, Partition>>,
    /// A partition at most this many messages from its end is live.
    live_lag: i64,
    /// Told when a partition's last batch in flight is done: if it waits to change lanes,
    /// the source reads it again.
    drained: tokio::sync::Notify,
}

impl Lanes {
    /// A partition becomes live within `live_lag` messages of its end, and bulk again past
    /// twice that (the gap keeps a partition near the line from changing lanes back and
    /// forth, waiting each time for its batches).
    pub fn new(live_lag: usize) -> Arc<Self> {
        Arc::new(Lanes {
            partitions: Mutex::new(HashMap::new()),
            live_lag: i64::try_from(live_lag).unwrap_or(i64::MAX),
            drained: tokio::sync::Notify::new(),
        })
    }

    fn partitions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Partition>> {
        self.partitions.lock().expect("lanes lock")
    }

    /// The lane partition `key` is read into now, `lag` messages from its end (`None`:
    /// unknown, it keeps its lane); `None` while it waits to change lanes.
    pub fn lane(&self, key: &str, lag: Option<i64>) -> Option<Lane> {
        let mut partitions = self.partitions();
        let p = partitions.entry(key.to_string()).or_default();
        let wanted = self.wanted(p.lane, lag);
        if wanted != p.lane {
            if p.in_flight > 0 {
                tracing::trace!(
                    partition = key,
                    in_flight = p.in_flight,
                    "waits to change lanes"
                );
                return None;
            }
            tracing::debug!(partition = key, lane = ?wanted, ?lag, "partition changes lanes");
            p.lane = wanted;
        }
        Some(p.lane)
    }

    /// The lane a partition in `lane`, `lag` messages from its end, belongs in.
    fn wanted(&self, lane: Lane, lag: Option<i64>) -> Lane {
        match (lane, lag) {
            (Lane::Bulk, Some(lag)) if lag <= self.live_lag => Lane::Live,
            (Lane::Live, Some(lag)) if lag > self.live_lag.saturating_mul(2) => Lane::Bulk,
            (lane, _) => lane,
        }
    }

    /// The lane a message of partition `key`, `lag` messages from its end, is taken into.
    /// A partition read before its end was known (no lag at [`Lanes::lane`]) changes lanes
    /// here, at its first message: unless it has events in flight, or its lane has no
    /// `room`.
    pub fn take_into(&self, key: &str, lag: Option<i64>, room: impl Fn(Lane) -> bool) -> Lane {
        let mut partitions = self.partitions();
        let p = partitions.entry(key.to_string()).or_default();
        let wanted = self.wanted(p.lane, lag);
        if wanted != p.lane && p.in_flight == 0 && room(wanted) {
            tracing::debug!(partition = key, lane = ?wanted, ?lag, "partition changes lanes");
            p.lane = wanted;
        }
        p.lane
    }

    /// The lane partition `key` was last read into (bulk if never).
    pub fn current(&self, key: &str) -> Lane {
        self.partitions().get(key).map_or(Lane::Bulk, |p| p.lane)
    }

    fn hold(&self, key: &str) {
        self.partitions()
            .entry(key.to_string())
            .or_default()
            .in_flight += 1;
    }

    fn release(&self, key: &str) {
        let drained = self.partitions().get_mut(key).is_some_and(|p| {
            p.in_flight = p.in_flight.saturating_sub(1);
            p.in_flight == 0
        });
        if drained {
            self.drained.notify_one();
        }
    }

    /// Returns once a partition has no batch in flight any more (at once if one had since
    /// the last call).
    pub async fn drained(&self) {
        self.drained.notified().await;
    }
}

/// The partitions a batch holds events of, in flight until the claim is dropped (after the
/// batch is committed, or when it is given up).
#[derive(Debug, Default)]
pub struct Claim {
    lanes: Option<Arc<Lanes>>,
    partitions: BTreeSet<String>,
}

impl Claim {
    pub fn new(lanes: &Arc<Lanes>) -> Self {
        Claim {
            lanes: Some(lanes.clone()),
            partitions: BTreeSet::new(),
        }
    }

    /// Counts the batch among those holding partition `key`'s events (once per batch).
    pub fn add(&mut self, key: &str) {
        if let Some(lanes) = &self.lanes {
            if self.partitions.insert(key.to_string()) {
                lanes.hold(key);
            }
        }
    }
}

/// A copy of a batch holds its partitions as well.
impl Clone for Claim {
    fn clone(&self) -> Self {
        if let Some(lanes) = &self.lanes {
            for key in &self.partitions {
                lanes.hold(key);
            }
        }
        Claim {
            lanes: self.lanes.clone(),
            partitions: self.partitions.clone(),
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(lanes) = &self.lanes {
            for key in &self.partitions {
                lanes.release(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_whose_end_was_unknown_takes_its_lane_at_its_first_message() {
        let lanes = Lanes::new(10);
        assert_eq!(
            lanes.lane("t:0", None),
            Some(Lane::Bulk),
            "unknown: it keeps the default"
        );
        assert_eq!(
            lanes.take_into("t:0", Some(1), |_| false),
            Lane::Bulk,
            "no room: stays"
        );
        assert_eq!(lanes.take_into("t:0", Some(1), |_| true), Lane::Live);
        lanes.hold("t:0");
        assert_eq!(
            lanes.take_into("t:0", Some(1_000), |_| true),
            Lane::Live,
            "events in flight: stays"
        );
        lanes.release("t:0");
        assert_eq!(lanes.take_into("t:0", Some(1_000), |_| true), Lane::Bulk);
    }

    /// Waits (up to a deadline) for `lanes` to say a partition has drained.
    fn wait_drained(lanes: &Lanes) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let woken = runtime.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(10), lanes.drained()).await
        });
        assert!(woken.is_ok(), "no partition drained");
    }

    #[test]
    fn a_partition_near_its_end_is_live_and_one_with_a_backlog_bulk() {
        let lanes = Lanes::new(100);
        assert_eq!(lanes.lane("t:0", Some(5)), Some(Lane::Live));
        assert_eq!(lanes.lane("t:1", Some(5_000)), Some(Lane::Bulk));
        assert_eq!(lanes.lane("t:2", None), Some(Lane::Bulk), "unknown: bulk");
        // Between the two lines each keeps its lane.
        assert_eq!(lanes.lane("t:0", Some(150)), Some(Lane::Live));
        assert_eq!(lanes.lane("t:1", Some(150)), Some(Lane::Bulk));
        assert_eq!(lanes.lane("t:0", Some(201)), Some(Lane::Bulk));
    }

    #[test]
    fn a_partition_changes_lanes_only_when_no_batch_holds_its_events() {
        let lanes = Lanes::new(100);
        assert_eq!(lanes.lane("t:0", Some(5_000)), Some(Lane::Bulk));
        let mut first = Claim::new(&lanes);
        first.add("t:0");
        first.add("t:0");
        let second = first.clone();
        assert_eq!(lanes.lane("t:0", Some(10)), None, "two batches hold it");
        assert_eq!(lanes.current("t:0"), Lane::Bulk);
        drop(first);
        assert_eq!(lanes.lane("t:0", Some(10)), None, "one batch holds it");
        drop(second);
        // The source, waiting for something to read, is woken.
        wait_drained(&lanes);
        assert_eq!(lanes.lane("t:0", Some(10)), Some(Lane::Live));
        assert_eq!(lanes.current("t:0"), Lane::Live);
    }
}
