//! Which partitions this daemon owns, where each resumes, and the fence that keeps a revoked
//! partition's in-flight batch from being committed by its old owner.
//!
//! Every assignment of a partition gets a new epoch. A batch records, per partition, the epoch
//! its events were read under. Before committing, the writer enters the commit gate and keeps
//! only partitions whose epoch is still current; a revocation bumps the epoch and then waits
//! for a commit already inside the gate to finish. Either the writer sees the new epoch and
//! drops the partition's events (the new owner re-reads them from the stored checkpoint), or
//! the revocation waits until the commit, checkpoint included, is durable.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a revocation waits for a commit in progress before giving up the partition anyway.
const REVOKE_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
struct State {
    /// Next offset to read per `"topic:partition"`: the committed checkpoint.
    positions: HashMap<String, i64>,
    /// Current epoch per assigned partition; absent = not assigned.
    epochs: HashMap<String, u64>,
    next_epoch: u64,
    /// Revoked since the source last looked: it drops their events from its open batch.
    revoked: BTreeSet<String>,
    /// Next offset the source reads per assigned partition: where it resumed, then past
    /// each message it read. Absent: the partition started at the beginning, unread.
    reading: HashMap<String, i64>,
    /// The partitions whose resume position a commit advanced.
    advanced: BTreeSet<String>,
}

#[derive(Debug, Default)]
pub struct Assignment {
    state: Mutex<State>,
    /// Commits in progress (one per lane's writer at most).
    committing: AtomicUsize,
}

impl Assignment {
    /// Starts from the checkpoints stored in the indexes.
    pub fn new(positions: HashMap<String, i64>) -> Self {
        Assignment {
            state: Mutex::new(State {
                positions,
                ..State::default()
            }),
            committing: AtomicUsize::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("assignment lock")
    }

    /// Records an assignment; returns where the partition resumes (`None`: from the start).
    pub fn assign(&self, key: &str) -> Option<i64> {
        let mut s = self.state();
        s.next_epoch += 1;
        let epoch = s.next_epoch;
        // A partition revoked and assigned again stays in `revoked`: the source still has to
        // drop what it read under the old epoch.
        s.epochs.insert(key.to_string(), epoch);
        let resume = s.positions.get(key).copied();
        match resume {
            Some(offset) => s.reading.insert(key.to_string(), offset),
            None => s.reading.remove(key),
        };
        resume
    }

    /// Records that the source read `key`'s message at `offset`.
    pub fn read(&self, key: &str, offset: i64) {
        self.state().reading.insert(key.to_string(), offset + 1);
    }

    /// The next offset the source reads, per partition that has one.
    pub fn reading(&self) -> HashMap<String, i64> {
        self.state().reading.clone()
    }

    /// Records a revocation, then waits (bounded) for a commit in progress to finish.
    pub fn revoke(&self, keys: &[String]) {
        {
            let mut s = self.state();
            for k in keys {
                s.epochs.remove(k);
                s.reading.remove(k);
                s.revoked.insert(k.clone());
            }
        }
        let started = Instant::now();
        while self.committing.load(Ordering::SeqCst) > 0 {
            if started.elapsed() > REVOKE_WAIT {
                tracing::error!("a commit is still running after {REVOKE_WAIT:?}; giving up the partitions anyway");
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Counts assignments: it changes whenever partitions were assigned since the last look.
    pub fn generation(&self) -> u64 {
        self.state().next_epoch
    }

    /// The partitions of `topic` assigned now.
    pub fn assigned(&self, topic: &str) -> Vec<i32> {
        let mut partitions: Vec<i32> = self
            .state()
            .epochs
            .keys()
            .filter_map(|key| key.rsplit_once(':'))
            .filter(|(t, _)| *t == topic)
            .filter_map(|(_, p)| p.parse().ok())
            .collect();
        partitions.sort_unstable();
        partitions
    }

    /// The epoch a partition is read under now; `None` if it is not assigned.
    pub fn epoch(&self, key: &str) -> Option<u64> {
        self.state().epochs.get(key).copied()
    }

    /// Partitions revoked since the last call.
    pub fn take_revoked(&self) -> BTreeSet<String> {
        std::mem::take(&mut self.state().revoked)
    }

    /// Enters the commit gate and returns the partitions of `epochs` still owned under the
    /// same epoch. Hold the returned gate until the commit is durable.
    pub fn begin_commit(
        &self,
        epochs: &BTreeMap<String, u64>,
    ) -> (CommitGate<'_>, BTreeSet<String>) {
        self.committing.fetch_add(1, Ordering::SeqCst);
        let gate = CommitGate { assignment: self };
        let s = self.state();
        let live = epochs
            .iter()
            .filter(|(k, e)| s.epochs.get(*k) == Some(e))
            .map(|(k, _)| k.clone())
            .collect();
        (gate, live)
    }

    /// The resume positions that commits advanced, of the partitions assigned now: what the
    /// consumer group's offsets may be committed at (a position never advanced may be
    /// behind the group's offset, which must not go back).
    pub fn advanced_positions(&self) -> BTreeMap<String, i64> {
        let s = self.state();
        s.positions
            .iter()
            .filter(|(key, _)| s.epochs.contains_key(*key) && s.advanced.contains(*key))
            .map(|(key, offset)| (key.clone(), *offset))
            .collect()
    }

    /// Advances the resume positions after a durable commit.
    pub fn advance(&self, offsets: impl IntoIterator<Item = (String, i64)>) {
        let mut s = self.state();
        for (key, offset) in offsets {
            s.advanced.insert(key.clone());
            s.positions.insert(key, offset);
        }
    }

    /// Replaces the resume positions (after a pipeline restart re-read them from the indexes).
    pub fn reset(&self, positions: HashMap<String, i64>) {
        let mut s = self.state();
        s.positions = positions;
        s.epochs.clear();
        s.reading.clear();
        s.revoked.clear();
        s.advanced.clear();
    }
}

/// Held while a commit is in progress; revocations wait for it.
pub struct CommitGate<'a> {
    assignment: &'a Assignment,
}

impl Drop for CommitGate<'_> {
    fn drop(&mut self) {
        self.assignment.committing.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn key(p: i32) -> String {
        format!("docs:{p}")
    }

    #[test]
    fn assignment_resumes_at_the_checkpoint_and_gets_a_fresh_epoch() {
        let a = Assignment::new([(key(0), 42)].into());
        assert_eq!(a.assign(&key(0)), Some(42));
        assert_eq!(a.assign(&key(1)), None, "no checkpoint: from the start");
        let first = a.epoch(&key(0)).unwrap();
        a.revoke(&[key(0)]);
        assert_eq!(a.epoch(&key(0)), None);
        a.assign(&key(0));
        assert_ne!(
            a.epoch(&key(0)),
            Some(first),
            "re-assignment is a new epoch"
        );
        a.advance([(key(0), 50)]);
        a.revoke(&[key(0)]);
        assert_eq!(a.assign(&key(0)), Some(50), "resumes after the last commit");
    }

    #[test]
    fn a_batch_read_under_a_revoked_epoch_is_fenced_off() {
        let a = Assignment::new(HashMap::new());
        a.assign(&key(0));
        a.assign(&key(1));
        let batch: BTreeMap<String, u64> = [
            (key(0), a.epoch(&key(0)).unwrap()),
            (key(1), a.epoch(&key(1)).unwrap()),
        ]
        .into();
        a.revoke(&[key(0)]);
        assert_eq!(a.take_revoked(), [key(0)].into());
        assert!(a.take_revoked().is_empty(), "reported once");
        a.assign(&key(0)); // back, but under a new epoch
        let (_gate, live) = a.begin_commit(&batch);
        assert_eq!(live, [key(1)].into(), "only partition 1 may be committed");
    }

    #[test]
    fn revocation_waits_for_a_commit_inside_the_gate() {
        let a = Arc::new(Assignment::new(HashMap::new()));
        a.assign(&key(0));
        let batch: BTreeMap<String, u64> = [(key(0), a.epoch(&key(0)).unwrap())].into();
        let (gate, live) = a.begin_commit(&batch);
        assert_eq!(live.len(), 1);
        // Whether the commit was over when the revocation returned: timing-independent, so a
        // loaded machine cannot make it flaky.
        let committed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let revoker = {
            let (a, committed) = (a.clone(), committed.clone());
            std::thread::spawn(move || {
                a.revoke(&[key(0)]);
                committed.load(std::sync::atomic::Ordering::SeqCst)
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(!revoker.is_finished(), "revoke waits while the commit runs");
        committed.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(gate);
        assert!(
            revoker.join().unwrap(),
            "revoke returned only after the commit"
        );
        let (_gate, live) = a.begin_commit(&batch);
        assert!(
            live.is_empty(),
            "after the revocation the old batch is fenced"
        );
    }
}
