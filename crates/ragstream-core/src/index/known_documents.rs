//! The document ids an index may hold rows of, kept in memory, so that planning a batch of
//! new documents looks nothing up in Lance.
//!
//! Planning a batch asks Lance for each document's stored hash and chunk ids by
//! `document_id`. The id BTree covers the rows up to the last maintenance pass only, so
//! during a bulk load every batch scanned every row written since, twice: a cost that grew
//! with the load, and skipping them made a bulk load faster (docs/benchmark-history.md,
//! "Re-run with lookups only for known documents and versions pruned in steps"). A stream
//! of new documents needs none of those lookups if the index knows which ids it holds.
//!
//! The set is a superset of the ids with rows at the newest version: loaded once from the
//! newest version (under the write lock, so no commit is half done), then every write adds
//! its documents before its Lance commit. Nothing else gives a document rows (compaction,
//! index builds and re-embedding keep the rows' documents; purges only remove), and this
//! process is the index's one writer. Removed documents stay in the set: a false positive
//! only costs the lookup that would have run anyway. Ids are kept as 64-bit hashes (about
//! 16 MiB per million documents); a collision is a false positive too.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

#[derive(Default)]
pub(crate) struct KnownDocuments {
    hasher: RandomState,
    /// `None` until loaded: every id may then be stored.
    ids: Mutex<Option<HashSet<u64>>>,
}

impl KnownDocuments {
    pub fn is_loaded(&self) -> bool {
        self.ids.lock().expect("known documents lock").is_some()
    }

    /// What the set keeps of `id`.
    pub fn hash(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    /// Replaces the set with `hashes` (of the documents of every row of the newest version).
    pub fn load(&self, hashes: HashSet<u64>) {
        *self.ids.lock().expect("known documents lock") = Some(hashes);
    }

    /// Records that `ids` may have rows from now on. Call before the commit that writes
    /// them. Before the set is loaded there is nothing to add to: the load reads them.
    pub fn add(&self, ids: &[String]) {
        if let Some(set) = self.ids.lock().expect("known documents lock").as_mut() {
            set.extend(ids.iter().map(|id| self.hash(id)));
        }
    }

    /// The ids of `ids` that may have rows: all of them before the set is loaded.
    pub fn maybe_stored(&self, ids: &[String]) -> Vec<String> {
        let guard = self.ids.lock().expect("known documents lock");
        match guard.as_ref() {
            None => ids.to_vec(),
            Some(set) => ids
                .iter()
                .filter(|id| set.contains(&self.hash(id)))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn before_loading_every_id_may_be_stored_and_adds_are_left_to_the_load() {
        let known = KnownDocuments::default();
        known.add(&ids(&["a"]));
        assert!(!known.is_loaded());
        assert_eq!(known.maybe_stored(&ids(&["a", "b"])), ids(&["a", "b"]));
    }

    #[test]
    fn loaded_ids_and_added_ids_are_stored_and_others_are_not() {
        let known = KnownDocuments::default();
        known.load(["a", "b"].iter().map(|id| known.hash(id)).collect());
        known.add(&ids(&["c"]));
        assert!(known.is_loaded());
        assert_eq!(
            known.maybe_stored(&ids(&["d", "c", "a", "e"])),
            ids(&["c", "a"])
        );
        assert!(known.maybe_stored(&ids(&["x", "y"])).is_empty());
    }
}
