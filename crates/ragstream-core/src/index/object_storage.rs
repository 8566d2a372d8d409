//! An index on an object store: a query replica's view of what its writer published
//! ([`Index::open_replica`], [`Index::refresh`]), and the writer's publication of its
//! keyword versions ([`Index::publish_keyword`]).

use std::collections::BTreeSet;

use super::{keyword_mirror, ownership, read_info, Index, IndexStorage, StoreError, StoreOptions};
use crate::model::IndexName;

/// What a query replica keeps of an index: its keyword cache, and the newest version whose
/// files in both stores it has read.
pub(super) struct Replica {
    pub(super) cache: keyword_mirror::KeywordCache,
    pub(super) visible: std::sync::atomic::AtomicU64,
}

impl Index {
    /// Opens an existing index on an object store to serve queries only (`serve --role
    /// query`): it never writes, reads the keyword versions the writer published through a
    /// local cache of at most `cache_bytes`, and shows a version once [`Index::refresh`]
    /// has made both stores' files for it readable. An index whose writer has not finished
    /// creating it is unknown.
    pub async fn open_replica(
        storage: &IndexStorage,
        name: &IndexName,
        options: &StoreOptions,
        cache_bytes: u64,
    ) -> Result<Self, StoreError> {
        let Some(root) = storage.object() else {
            return Err(StoreError::Storage {
                uri: storage.describe(),
                reason: "a query replica reads indexes from an object store; set storage.uri"
                    .into(),
            });
        };
        let info = read_info(storage, name).await?;
        // One cache per incarnation: an index deleted and made again under the same name
        // numbers its versions from 1 again.
        let made: String = info
            .created_at
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let cache = keyword_mirror::KeywordCache::new(
            root.clone(),
            name.clone(),
            storage.local_dir(name).join(format!("keyword-{made}")),
            cache_bytes,
        );
        let index = Self::open_stores(storage, name.clone(), info, options, Some(cache)).await?;
        if index.refresh().await? == 0 {
            // Its writer has published no version yet: not an index to serve so far.
            return Err(StoreError::UnknownIndex(name.to_string()));
        }
        Ok(index)
    }

    /// Whether this process writes the index now: on an object store, while it holds an
    /// ownership claim ([`super::ownership`]); elsewhere, unless it is a replica.
    pub fn is_owned_here(&self) -> bool {
        match &self.ownership {
            Some(ownership) => ownership.is_claimed(),
            None => self.replica.is_none(),
        }
    }

    /// The ownership claim the newest commit that records one was made under.
    pub(super) async fn recorded_owner(&self) -> Result<Option<ownership::Owner>, StoreError> {
        let mut versions = self.lance.versions().await?;
        versions.reverse();
        for v in versions {
            if let Some(owner) = ownership::Owner::of(&self.lance.commit_properties(v).await?) {
                return Ok(Some(owner));
            }
        }
        Ok(None)
    }

    /// A writer's handle on an object store: fails with [`StoreError::ChangedElsewhere`]
    /// (or [`StoreError::NotOwner`]) when another process committed since this handle's
    /// newest version, so that the caller opens the index again before planning or
    /// committing. Commits this process made meanwhile (its own maintenance) are taken
    /// in. A version between that cannot be read any more (pruned) counts as another
    /// process's. Elsewhere, and on a replica, there is nothing to check.
    pub async fn check_current(&self) -> Result<(), StoreError> {
        let Some(owner) = &self.ownership else {
            return Ok(());
        };
        let ours = self.lance.latest_version();
        let newest = self.lance.newest_in_store().await?;
        if newest.version_id() <= ours {
            return Ok(());
        }
        let behind = || StoreError::ChangedElsewhere {
            dataset: newest.uri().to_string(),
            read_version: ours,
        };
        let mut since = Vec::new();
        for v in ours + 1..=newest.version_id() {
            match newest.read_transaction_by_version(v).await {
                Ok(Some(tx)) => since.push(
                    tx.transaction_properties
                        .map(|p| (*p).clone())
                        .unwrap_or_default(),
                ),
                // Pruned meanwhile: who made it is unknown, so open the index again.
                _ => return Err(behind()),
            }
        }
        owner.check_since(self.name.as_str(), newest.uri(), ours, &since)?;
        self.lance.replace_latest(newest);
        Ok(())
    }

    /// [`Index::check_current`], then the claim to commit under (on an object store).
    pub(super) async fn check_ownership(&self) -> Result<Option<ownership::Owner>, StoreError> {
        self.check_current().await?;
        Ok(self.ownership.as_ref().map(ownership::Ownership::claim))
    }

    /// The claim a commit that changes no document (maintenance) is made under, on an
    /// object store: only the owner, holding a live claim, changes the index there, and
    /// only on top of the newest version. `Ok(None)` elsewhere.
    pub(super) async fn check_maintenance_ownership(
        &self,
    ) -> Result<Option<ownership::Owner>, StoreError> {
        let Some(owner) = &self.ownership else {
            return Ok(None);
        };
        if !owner.is_claimed() {
            return Err(StoreError::NotOwned(self.name.to_string()));
        }
        self.check_ownership().await
    }

    /// Marks a writer's handle closed by the engine (the index changed elsewhere): it takes
    /// no more writes; a fresh handle does.
    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether this handle serves queries only (`serve --role query`).
    pub fn is_replica(&self) -> bool {
        self.replica.is_some()
    }

    /// A query replica's look for versions its writer committed: fetches the newest
    /// version that both stores hold (its keyword files through the cache), re-reads
    /// `index.json`, and only then shows it. Returns the version shown. On a writer, the
    /// newest version.
    pub async fn refresh(&self) -> Result<u64, StoreError> {
        use std::sync::atomic::Ordering::SeqCst;
        let Some(replica) = &self.replica else {
            return Ok(self.latest_version());
        };
        let shown = replica.visible.load(SeqCst);
        // Read at every look: query defaults change without a commit.
        let info = read_info(&self.storage, &self.name).await?;
        if info.created_at != self.info().created_at {
            // Deleted and made again by its writer: another index under the same name.
            return Err(StoreError::UnknownIndex(self.name.to_string()));
        }
        let mut newest = self.lance.latest();
        newest.checkout_latest().await?;
        let lance_newest = newest.version_id();
        if lance_newest <= shown {
            *self.info.write().expect("index info lock") = info;
            return Ok(shown);
        }
        let published = replica.cache.published().await?;
        let Some(target) = published.into_iter().rev().find(|v| *v <= lance_newest) else {
            return Ok(shown);
        };
        if target <= shown {
            *self.info.write().expect("index info lock") = info;
            return Ok(shown);
        }
        replica.cache.ensure(target, || self.in_use()).await?;
        // Opened once before it is shown: a snapshot tantivy cannot read is not served.
        self.keyword.searcher(target)?;
        let dataset = if target == lance_newest {
            newest
        } else {
            newest.checkout_version(target).await?
        };
        self.lance.set_dimensions(info.embedder_at(target).1);
        self.lance.set_resident_center(info.resident_center.clone());
        *self.info.write().expect("index info lock") = info;
        self.graph.refresh().await?;
        self.lance.replace_latest(dataset);
        replica.visible.store(target, SeqCst);
        self.prepare_resident().await;
        Ok(target)
    }

    /// The versions queries hold, and the one a replica shows: its cache keeps them.
    pub(super) fn in_use(&self) -> BTreeSet<u64> {
        let mut versions = self.pins.all();
        if let Some(replica) = &self.replica {
            versions.insert(replica.visible.load(std::sync::atomic::Ordering::SeqCst));
        }
        versions
    }

    /// Publishes to the object store the keyword versions it lacks (a writer on an object
    /// store; elsewhere nothing to do). A failure is logged and counted, and the next call
    /// tries again: queries on the writer never depend on it, and a replica keeps serving
    /// the versions already published.
    pub async fn publish_keyword(&self) -> Option<u64> {
        let root = self.storage.object()?;
        // Only the owner publishes: two publishers of one index would remove each other's
        // files.
        if self.replica.is_some() || !self.is_owned_here() {
            return None;
        }
        let mut published = self.published.lock().await;
        if self.deleted.load(std::sync::atomic::Ordering::SeqCst) || self.check_writable().is_err()
        {
            return None;
        }
        let newest = self.keyword.latest_version().ok().flatten()?;
        if *published == Some(newest) {
            return None;
        }
        match keyword_mirror::publish(root, &self.name, &self.dir.join("keyword")).await {
            Ok(_) => {
                *published = Some(newest);
                Some(newest)
            }
            Err(e) => {
                tracing::warn!(index = %self.name, error = %e,
                    "publishing the keyword index to the object store failed; retrying with the next commit");
                if let Some(m) = crate::telemetry::metrics() {
                    m.keyword_publish_failures_total
                        .with_label_values(&[self.name.as_str()])
                        .inc();
                }
                None
            }
        }
    }

    /// Waits for a publication in flight and holds off the next (an index being deleted).
    pub async fn hold_publication(&self) -> tokio::sync::MutexGuard<'_, Option<u64>> {
        self.published.lock().await
    }
}
