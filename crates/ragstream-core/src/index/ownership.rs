//! Which daemon writes an index on an object store, and the fence that stops any other.
//!
//! Several ingest daemons share one prefix; Kafka gives each the partitions it reads, and an
//! index's events share one partition, so each index has one writer at a time. Ownership
//! moves with the partitions. The fence makes that safe when a daemon does not know yet that
//! it lost them (it stalled, or its network did):
//!
//! - Every commit of documents records its writer's claim: an ownership epoch and the
//!   writing process ([`OWNER_EPOCH`], [`OWNER`]).
//! - A daemon claims an index at its first commit: one more than the newest recorded epoch.
//!   It keeps the claim until its Kafka partitions are revoked.
//! - Before committing, a writer reads the newest version in the store. A commit by another
//!   process since its own view means it must look again (reopen the index); one made
//!   under a later claim means the index is someone else's now, and nothing is committed.
//! - The commit itself lands only as the version after the one checked
//!   (`store::strict_commit`), so nothing can slip in between.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::StoreError;

/// The commit property holding the writer's ownership epoch.
pub const OWNER_EPOCH: &str = "ragstream.owner_epoch";
/// The commit property naming the writing process.
pub const OWNER: &str = "ragstream.owner";

/// This process, as commits name it: unique per run.
pub fn this_process() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "an unknown host".into());
        format!(
            "pid {} on {host}, started {}",
            std::process::id(),
            crate::model::now_timestamp()
        )
    })
}

/// A claim recorded in a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub epoch: u64,
    pub holder: String,
}

impl Owner {
    /// The claim a commit's properties record, if any.
    pub fn of(properties: &HashMap<String, String>) -> Option<Owner> {
        Some(Owner {
            epoch: properties.get(OWNER_EPOCH)?.parse().ok()?,
            holder: properties.get(OWNER)?.clone(),
        })
    }

    /// The properties recording this claim.
    pub fn properties(&self) -> [(String, String); 2] {
        [
            (OWNER_EPOCH.to_string(), self.epoch.to_string()),
            (OWNER.to_string(), self.holder.clone()),
        ]
    }

    fn is_this_process(&self) -> bool {
        self.holder == this_process()
    }
}

/// One index's ownership as this process sees it.
#[derive(Debug)]
pub struct Ownership {
    /// The claim the newest commit this handle knows of records.
    seen: Mutex<Option<Owner>>,
    /// This process's claim, and the revocation count it was made under.
    claim: Mutex<Option<(u64, u64)>>,
    /// How many times this process's Kafka partitions were revoked: a claim made before the
    /// latest revocation is void.
    revocations: Arc<AtomicU64>,
}

impl Ownership {
    pub fn new(seen: Option<Owner>, revocations: Arc<AtomicU64>) -> Self {
        Ownership {
            seen: Mutex::new(seen),
            claim: Mutex::new(None),
            revocations,
        }
    }

    fn live_claim(&self) -> Option<u64> {
        let revoked = self.revocations.load(Ordering::SeqCst);
        self.claim
            .lock()
            .expect("ownership lock")
            .filter(|(_, under)| *under == revoked)
            .map(|(epoch, _)| epoch)
    }

    /// Whether this process holds a live claim (maintenance runs on the owner only).
    pub fn is_claimed(&self) -> bool {
        self.live_claim().is_some()
    }

    /// Looks at the claims of commits made since this handle's newest version (`since`,
    /// their properties in order). Commits by this process under its own claim, and commits
    /// that claim nothing (its own maintenance), are fine. Another writer's commit under a
    /// later claim: [`StoreError::NotOwner`]. Any other writer's commit: this handle is
    /// behind ([`StoreError::ChangedElsewhere`]) and must be opened again.
    pub fn check_since(
        &self,
        index: &str,
        dataset: &str,
        read_version: u64,
        since: &[HashMap<String, String>],
    ) -> Result<(), StoreError> {
        let ours = self.live_claim();
        let foreign = since
            .iter()
            .filter_map(Owner::of)
            .filter(|o| !(o.is_this_process() && Some(o.epoch) == ours))
            .max_by_key(|o| o.epoch);
        let Some(foreign) = foreign else {
            return Ok(());
        };
        *self.seen.lock().expect("ownership lock") = Some(foreign.clone());
        match ours {
            Some(ours) if foreign.epoch >= ours => Err(StoreError::NotOwner {
                index: index.to_string(),
                holder: foreign.holder,
                epoch: foreign.epoch,
                ours,
            }),
            _ => Err(StoreError::ChangedElsewhere {
                dataset: dataset.to_string(),
                read_version,
            }),
        }
    }

    /// The claim to record in the next commit: the live one, or a new one past the newest
    /// seen.
    pub fn claim(&self) -> Owner {
        let revoked = self.revocations.load(Ordering::SeqCst);
        let mut claim = self.claim.lock().expect("ownership lock");
        let epoch = match *claim {
            Some((epoch, under)) if under == revoked => epoch,
            _ => {
                let seen = self.seen.lock().expect("ownership lock");
                let epoch = seen.as_ref().map_or(1, |o| o.epoch + 1);
                *claim = Some((epoch, revoked));
                epoch
            }
        };
        Owner {
            epoch,
            holder: this_process().to_string(),
        }
    }

    /// Records a commit made under `owner`.
    pub fn committed(&self, owner: Owner) {
        *self.seen.lock().expect("ownership lock") = Some(owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(epoch: u64, holder: &str) -> HashMap<String, String> {
        Owner {
            epoch,
            holder: holder.into(),
        }
        .properties()
        .into_iter()
        .collect()
    }

    #[test]
    fn a_claim_goes_past_the_newest_seen_and_lasts_until_a_revocation() {
        let revocations = Arc::new(AtomicU64::new(0));
        let seen = Owner {
            epoch: 4,
            holder: "another".into(),
        };
        let o = Ownership::new(Some(seen), revocations.clone());
        assert!(!o.is_claimed());
        let first = o.claim();
        assert_eq!(first.epoch, 5);
        assert_eq!(first.holder, this_process());
        o.committed(first.clone());
        assert_eq!(o.claim().epoch, 5, "kept while the partitions are kept");
        assert!(o.is_claimed());
        revocations.fetch_add(1, Ordering::SeqCst);
        assert!(!o.is_claimed(), "void after a revocation");
        assert_eq!(o.claim().epoch, 6, "a new claim past its own last one");
    }

    #[test]
    fn commits_by_others_since_the_last_look_fence_this_writer() {
        let o = Ownership::new(None, Arc::default());
        // Unclaimed: its own maintenance (no claim) is fine, a claim recorded by another
        // writer means the handle is behind.
        assert!(o.check_since("i", "d", 3, &[HashMap::new()]).is_ok());
        let behind = o.check_since("i", "d", 3, &[props(1, "another")]);
        assert!(matches!(
            behind,
            Err(StoreError::ChangedElsewhere {
                read_version: 3,
                ..
            })
        ));
        let mine = o.claim();
        assert_eq!(mine.epoch, 2, "past the claim just seen");
        let own: HashMap<String, String> = mine.properties().into_iter().collect();
        assert!(
            o.check_since("i", "d", 4, &[own]).is_ok(),
            "its own commits"
        );
        // A writer that claimed later: the index is not this writer's any more.
        match o.check_since("i", "d", 5, &[props(3, "another")]) {
            Err(StoreError::NotOwner { epoch, ours, .. }) => assert_eq!((epoch, ours), (3, 2)),
            other => panic!("expected NotOwner, got {other:?}"),
        }
        // An older claim than this writer's (a stale writer that slipped in before this one
        // claimed): look again, but the index stays this writer's.
        let o = Ownership::new(None, Arc::default());
        o.claim();
        o.claim();
        let older = o.check_since("i", "d", 9, &[props(0, "another")]);
        assert!(matches!(older, Err(StoreError::ChangedElsewhere { .. })));
    }
}
