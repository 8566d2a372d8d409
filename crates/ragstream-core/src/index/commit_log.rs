//! Which documents each recent commit of an index gave rows to, kept in memory, so that a
//! write planned against an older version can tell whether the commits made since touched
//! its documents.
//!
//! A batch of new documents is committed as a plain append when nothing stored has rows of
//! those documents; otherwise as a merge against the stored rows, whose cost grows with the
//! index. Planning (stored hashes, chunking, embedding) takes longer than a commit, so a
//! writer that plans the next batch while this one commits would always find a newer
//! version than it planned against, and merge. The log lets it append all the same when the
//! commits in between added no rows to its documents — the common case of a stream of new
//! documents. A version the log does not hold (made before the process started, or by a
//! path that does not record itself) counts as touching everything: the merge is always
//! correct, the append only when the log says so.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

/// Versions remembered: far more than the commits one plan can overlap.
const KEEP: usize = 256;

/// What one commit did to the rows of documents.
#[derive(Debug)]
pub(crate) enum Change {
    /// A write: these documents' rows were replaced, added or marked deleted.
    Documents(HashSet<String>),
    /// No document gained rows: compaction (the same rows, moved), an index update, or a
    /// purge (rows removed for good).
    NoRowsAdded,
}

#[derive(Default)]
pub(crate) struct CommitLog {
    changes: Mutex<BTreeMap<u64, Change>>,
}

impl CommitLog {
    /// Records what the commit that made `version` changed.
    pub fn record(&self, version: u64, change: Change) {
        let mut changes = self.changes.lock().expect("commit log lock");
        changes.insert(version, change);
        while changes.len() > KEEP {
            changes.pop_first();
        }
    }

    /// Whether every version after `since` up to and including `until` is recorded and gave
    /// rows to none of `documents`.
    pub fn no_rows_added(&self, since: u64, until: u64, documents: &[String]) -> bool {
        if until <= since {
            return true;
        }
        let changes = self.changes.lock().expect("commit log lock");
        let between = changes.range(since + 1..=until);
        let mut seen = 0u64;
        for (_, change) in between {
            seen += 1;
            if let Change::Documents(touched) = change {
                if documents.iter().any(|d| touched.contains(d)) {
                    return false;
                }
            }
        }
        seen == until - since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(ids: &[&str]) -> Change {
        Change::Documents(ids.iter().map(|s| s.to_string()).collect())
    }

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commits_of_other_documents_leave_a_plan_untouched() {
        let log = CommitLog::default();
        log.record(4, docs(&["a", "b"]));
        log.record(5, Change::NoRowsAdded);
        log.record(6, docs(&["c"]));
        assert!(log.no_rows_added(3, 6, &ids(&["x", "y"])));
        assert!(log.no_rows_added(6, 6, &ids(&["c"])), "nothing since");
        assert!(
            !log.no_rows_added(3, 6, &ids(&["x", "c"])),
            "c gained rows at 6"
        );
        assert!(!log.no_rows_added(3, 5, &ids(&["b"])), "b gained rows at 4");
        assert!(
            log.no_rows_added(4, 6, &ids(&["a", "b"])),
            "4 is the plan's own base"
        );
    }

    #[test]
    fn a_version_the_log_does_not_hold_counts_as_touching_everything() {
        let log = CommitLog::default();
        log.record(4, docs(&["a"]));
        log.record(6, docs(&["b"]));
        assert!(!log.no_rows_added(3, 6, &ids(&["x"])), "5 is unknown");
        assert!(!log.no_rows_added(6, 7, &ids(&["x"])), "7 is unknown");
        assert!(log.no_rows_added(5, 6, &ids(&["x"])));
    }

    #[test]
    fn only_the_newest_versions_are_kept() {
        let log = CommitLog::default();
        for v in 1..=(KEEP as u64 + 10) {
            log.record(v, Change::NoRowsAdded);
        }
        assert!(
            !log.no_rows_added(0, 20, &ids(&["x"])),
            "the oldest are gone"
        );
        assert!(log.no_rows_added(20, KEEP as u64 + 10, &ids(&["x"])));
    }
}
