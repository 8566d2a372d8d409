//! Keeping an index fast under streaming writes: compacting the small fragments each commit
//! leaves behind, purging soft-deleted chunks once their retention has passed, and pruning
//! versions beyond the retention policy (never one a running query, a running compaction or
//! a Lance tag needs).
//!
//! Every step that commits runs under the index's write lock, so maintenance and the writer
//! never race for a version; the slow halves (rewriting fragments, building index updates)
//! run on a snapshot outside it. Compaction also claims the vector-build slot, because a
//! build trained on fragments that compaction then rewrites would point at rows that moved.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lance::dataset::index::DatasetIndexRemapperOptions;
use lance::dataset::optimize::{
    commit_compaction, plan_compaction, CompactionOptions, RewriteResult,
};
use lance::dataset::transaction::{Operation, Transaction};
use lance::dataset::DeleteBuilder;
use serde::Serialize;

use super::commit_log::Change;
use super::info::switch_embedder;
use super::rows::ChunkRow;
use super::rows::DELETED_AT_COLUMN;
use super::writer::{KAFKA_CHECKPOINT, KAFKA_LOG};
use super::{Index, StoreError, EMBEDDER_PROPERTY};

/// When maintenance runs and what it does: the configuration's `[index.maintenance]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaintenanceSettings {
    /// How often the daemon runs a pass over each index it writes (0: never).
    pub interval_ms: u64,
    /// How passes, vector-index builds and keyword merges are scheduled: `idle` (only on
    /// time no query or write wants), `low` (nice 19) or `normal` (`runtime/background.rs`).
    pub background_priority: crate::runtime::background::BackgroundPriority,
    /// Compact once at least this many fragments hold fewer than `target_rows` rows.
    #[serde(rename = "compaction_min_fragments")]
    pub min_small_fragments: usize,
    /// Rows a compacted fragment aims for.
    #[serde(rename = "compaction_target_rows")]
    pub target_rows: usize,
    /// Soft-deleted chunks older than this are removed for good (older versions that
    /// still show them keep them until those versions are pruned).
    #[serde(rename = "purge_deleted_after_seconds", with = "crate::units::seconds")]
    pub purge_deleted_after: Duration,
}

impl Default for MaintenanceSettings {
    fn default() -> Self {
        MaintenanceSettings {
            interval_ms: 30_000,
            background_priority: Default::default(),
            min_small_fragments: 16,
            target_rows: 250_000,
            purge_deleted_after: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// Fragments rewritten from a snapshot, waiting for [`Maintenance::commit_rewrite`].
pub struct FragmentRewrite {
    options: CompactionOptions,
    rewritten: Vec<RewriteResult>,
    /// The snapshot's version, kept until the commit rebases over the versions since.
    _snapshot: super::VersionPin,
}

/// What one maintenance pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MaintenanceReport {
    pub index: String,
    /// Fragments before and after the pass.
    pub fragments_before: usize,
    pub fragments_after: usize,
    /// Fragments rewritten by compaction, and the fragments they became.
    pub fragments_compacted: usize,
    pub fragments_written: usize,
    /// Soft-deleted chunks removed for good.
    pub chunks_purged: usize,
    /// Versions pruned (Lance versions and keyword commit points alike).
    pub versions_pruned: usize,
    /// Versions still on disk after the pass.
    pub versions_retained: usize,
    /// The newest version after the pass (maintenance commits make new versions with the
    /// same live chunks).
    pub index_version: u64,
    /// Rows written since the indexes were last built or updated, added to them (the vector
    /// index's new rows go to their nearest existing partitions; id indexes merge them in).
    pub rows_indexed: usize,
    /// Keyword merges that ended since the newest commit were made searchable, as a new
    /// version with the same chunks ([`Maintenance::adopt_keyword_merges`]).
    pub keyword_merges_adopted: bool,
    /// Segments the newest version's keyword snapshot holds after the pass.
    pub keyword_segments: usize,
    /// Compaction or index updates were due but a vector-index build held the slot, or a
    /// write made while compaction ran touched the fragments it rewrote; they run next time.
    pub deferred: bool,
    pub seconds: f64,
}

/// Fragments under this many rows always join the newest run ([`newest_run`]): what
/// streaming commits leave, cheap to rewrite.
const TIER_FLOOR_ROWS: usize = 8_192;

/// Size-tiered compaction: where the run of fragments a compaction merges starts, given each
/// fragment's rows, oldest first.
///
/// Streaming commits append small fragments after the large ones earlier compactions made.
/// Merging every fragment below the target size would rewrite the large ones at every pass
/// (in an index smaller than the target, every row at every pass, and the vector index
/// remapped and the resident codes re-read with them), and that is what slowed queries
/// beside a pass (docs/benchmark-history.md, "Size-tiered compaction, the release build").
/// Walking back from the newest fragment instead, one joins the run while it holds no more
/// rows than the run so far (or fewer than [`TIER_FLOOR_ROWS`]); the first that holds more
/// ends it. Merged runs double like a binary counter, so a row is rewritten about
/// log2(rows / commit) times, most passes rewrite about what was written since the pass
/// before, and the fragments left are the small run plus one per doubling.
fn newest_run(rows: &[usize]) -> usize {
    let mut run = 0;
    let mut start = rows.len();
    for (i, &r) in rows.iter().enumerate().rev() {
        if r > run.max(TIER_FLOOR_ROWS) {
            break;
        }
        run += r;
        start = i;
    }
    start
}

/// Each fragment's physical rows, oldest first (a fragment whose count is not recorded
/// counts as large: it is left alone).
fn fragment_rows(ds: &lance::Dataset) -> Vec<usize> {
    ds.get_fragments()
        .iter()
        .map(|f| f.metadata().physical_rows.unwrap_or(usize::MAX))
        .collect()
}

/// Counts the pass in the metrics (when they are on).
fn record(report: &MaintenanceReport) {
    let Some(m) = crate::telemetry::metrics() else {
        return;
    };
    let name = report.index.as_str();
    m.maintenance_runs_total.with_label_values(&[name]).inc();
    m.maintenance_duration_seconds
        .with_label_values(&[name])
        .observe(report.seconds);
    m.maintenance_fragments_compacted_total
        .with_label_values(&[name])
        .inc_by(report.fragments_compacted as u64);
    m.maintenance_chunks_purged_total
        .with_label_values(&[name])
        .inc_by(report.chunks_purged as u64);
    m.maintenance_versions_pruned_total
        .with_label_values(&[name])
        .inc_by(report.versions_pruned as u64);
}

/// Maintenance of an index, borrowed from it: compaction, purges, pruning, index builds,
/// tags and full rebuilds ([`Index::maintenance`]).
#[derive(Clone, Copy)]
pub struct Maintenance<'a> {
    pub(super) index: &'a Index,
}

impl Maintenance<'_> {
    /// One maintenance pass: purge, compact, take keyword merges, prune. Returns what it did.
    pub async fn maintain(
        &self,
        settings: &MaintenanceSettings,
    ) -> Result<MaintenanceReport, StoreError> {
        let started = Instant::now();
        {
            let _guard = self.index.lock_for_write().await?;
            self.index.repair_if_behind().await?;
        }
        let versions_before = self.index.lance.versions().await?;
        let mut report = MaintenanceReport {
            index: self.index.name.to_string(),
            fragments_before: self.index.lance.latest().get_fragments().len(),
            ..Default::default()
        };
        report.chunks_purged = self.purge_deleted(settings.purge_deleted_after).await?;
        let compact = (self.small_fragments(settings.target_rows) >= settings.min_small_fragments)
            .then_some(settings.target_rows);
        let (covered, total) =
            super::vector_index::index_coverage(&self.index.lance.latest()).await?;
        let update = covered > 0 && covered < total;
        if compact.is_some() || update {
            if self.begin_vector_build() {
                let done = self.compact_and_update(compact, update).await;
                self.end_vector_build();
                let (compacted, indexed) = done?;
                match compacted {
                    Some((removed, added)) => {
                        report.fragments_compacted = removed;
                        report.fragments_written = added;
                    }
                    None => report.deferred = true,
                }
                report.rows_indexed = indexed;
            } else {
                report.deferred = true;
            }
        }
        report.keyword_merges_adopted = self.adopt_keyword_merges().await?;
        {
            let _guard = self.index.lock_for_write().await?;
            self.index.apply_retention(0).await?;
            // Read under the lock: a write's keyword snapshot lands after its Lance commit.
            report.index_version = self.index.lance.latest_version();
            report.keyword_segments = self.index.keyword.segments(report.index_version)?;
            self.index
                .maintained_version
                .store(report.index_version, std::sync::atomic::Ordering::SeqCst);
        }
        let versions_after = self.index.lance.versions().await?;
        // Pruned: the versions there when the pass began and gone now (the pass's own
        // commits and writes meanwhile add versions, so counts would not tell).
        report.versions_pruned = versions_before
            .iter()
            .filter(|v| versions_after.binary_search(v).is_err())
            .count();
        report.versions_retained = versions_after.len();
        report.fragments_after = self.index.lance.latest().get_fragments().len();
        report.seconds = started.elapsed().as_secs_f64();
        record(&report);
        self.index.record_shape().await?;
        Ok(report)
    }

    /// On an index no write reached since the last pass, makes the keyword merges that
    /// ended since its newest commit searchable, as a new version; then starts the merges
    /// still due. Returns whether a version was made.
    ///
    /// Queries search a version's keyword snapshot as it was committed. Merges rewrite the
    /// live commit only, so queries see them from the next commit on. Under writes that is
    /// soon. An index whose writes stopped (a drained backlog) would search the small
    /// segments of its last batches until its next write. The new version holds the same
    /// chunks with the same scores, unless a merge dropped deleted chunks: BM25's term
    /// counts then no longer include them, as at any later commit. Older versions keep
    /// their snapshots. (BENCHMARKS.md, "An idle index takes its keyword merges".)
    async fn adopt_keyword_merges(&self) -> Result<bool, StoreError> {
        let _guard = self.index.lock_for_write().await?;
        let keyword = &self.index.keyword;
        let latest = self.index.lance.latest();
        // A process's first pass counts as idle: `index maintain` runs alone.
        let previous = self
            .index
            .maintained_version
            .load(std::sync::atomic::Ordering::SeqCst);
        let idle = previous == 0 || previous == latest.version_id();
        let adopted = idle && keyword.merged_since(latest.version_id())?;
        if adopted {
            // An empty change of the table's configuration: a new version, the same rows.
            let transaction = Transaction::new(
                latest.version_id(),
                Operation::UpdateConfig {
                    config_updates: None,
                    table_metadata_updates: None,
                    schema_metadata_updates: None,
                    field_metadata_updates: Default::default(),
                },
                None,
            );
            let version = self
                .index
                .commit_without_new_rows(
                    Arc::new(latest),
                    transaction,
                    &[],
                    Some("after-keyword-merges-commit"),
                )
                .await?;
            tracing::info!(index = %self.index.name, version, "keyword merges made searchable");
        }
        keyword.start_due_merges()?;
        Ok(adopted)
    }

    /// Fragments of the newest version a compaction would merge: those of the newest run
    /// (see [`newest_run`]) below `target_rows` rows.
    pub fn small_fragments(&self, target_rows: usize) -> usize {
        let latest = self.index.lance.latest();
        let rows = fragment_rows(&latest);
        let start = newest_run(&rows);
        rows[start..].iter().filter(|r| **r < target_rows).count()
    }

    /// Rewrites small fragments (and fragments with many deleted rows) into fragments of
    /// about `compact` rows (if given), the indexes remapped to the moved rows; then adds rows
    /// no index covers yet to the existing indexes (see [`Maintenance::update_indices`]). Each is
    /// one commit that carries the newest version's properties. Returns fragments removed and
    /// added, and rows newly indexed; compaction is skipped (`None`) when a write that landed
    /// while it ran touched the fragments it rewrote.
    async fn compact_and_update(
        &self,
        compact: Option<usize>,
        update: bool,
    ) -> Result<(Option<(usize, usize)>, usize), StoreError> {
        let compacted = match compact {
            Some(target_rows) => self.compact(target_rows).await?,
            None => Some((0, 0)),
        };
        let indexed = if update {
            self.update_indices().await?
        } else {
            0
        };
        tracing::info!(index = %self.index.name, ?compacted, indexed,
            "compacted fragments and updated indexes");
        Ok((compacted, indexed))
    }

    /// Compaction in two halves: [`Maintenance::rewrite_small_fragments`] outside the write lock
    /// (the slow part: every row is read and written again) and
    /// [`Maintenance::commit_rewrite`] under it, so the writer waits for a commit and not for a
    /// rewrite.
    async fn compact(&self, target_rows: usize) -> Result<Option<(usize, usize)>, StoreError> {
        match self.rewrite_small_fragments(target_rows).await? {
            Some(rewrite) => self.commit_rewrite(rewrite).await,
            None => Ok(Some((0, 0))),
        }
    }

    /// Plans a compaction of the newest version and rewrites its fragments, without
    /// committing and without the write lock. `None` when there is nothing to compact.
    pub async fn rewrite_small_fragments(
        &self,
        target_rows: usize,
    ) -> Result<Option<FragmentRewrite>, StoreError> {
        let (snapshot, pin) = self.index.latest_pinned();
        let mut options = CompactionOptions {
            target_rows_per_fragment: target_rows,
            materialize_deletions: true,
            // One rewrite at a time: the other core stays with queries and the writer.
            num_threads: Some(1),
            ..Default::default()
        };
        // Fragments older than the newest run stay as they are, unless enough of their rows
        // are deleted that Lance rewrites them on their own.
        let start = newest_run(&fragment_rows(&snapshot));
        options.excluded_fragment_ids = snapshot.get_fragments()[..start]
            .iter()
            .filter(|f| {
                let meta = f.metadata();
                let deleted = meta
                    .deletion_file
                    .as_ref()
                    .and_then(|d| d.num_deleted_rows)
                    .unwrap_or(0);
                let rows = meta.physical_rows.unwrap_or(0).max(1);
                deleted as f32 / rows as f32 <= options.materialize_deletions_threshold
            })
            .filter_map(|f| u32::try_from(f.id()).ok())
            .collect();
        let plan = plan_compaction(&snapshot, &options).await?;
        if plan.num_tasks() == 0 {
            return Ok(None);
        }
        let mut rewritten = Vec::with_capacity(plan.num_tasks());
        for task in plan.compaction_tasks() {
            rewritten.push(task.execute(&snapshot).await?);
        }
        Ok(Some(FragmentRewrite {
            options,
            rewritten,
            _snapshot: pin,
        }))
    }

    /// Commits a rewrite under the write lock, the indexes remapped to the moved rows.
    /// Appends that landed since the rewrite's snapshot are kept (Lance rebases a rewrite
    /// over them); a replace or delete of a rewritten fragment makes the commit conflict, and
    /// the rewrite is dropped (`None`) to be planned again next pass. Returns fragments
    /// removed and added.
    pub async fn commit_rewrite(
        &self,
        rewrite: FragmentRewrite,
    ) -> Result<Option<(usize, usize)>, StoreError> {
        let FragmentRewrite {
            mut options,
            rewritten,
            _snapshot,
        } = rewrite;
        let _guard = self.index.lock_for_write().await?;
        let mut ds = self.index.lance.latest();
        options.transaction_properties = Some(Arc::new(self.index.carried_properties().await?));
        let remap = Arc::new(DatasetIndexRemapperOptions::default());
        match commit_compaction(&mut ds, rewritten, remap, &options).await {
            Ok(metrics) => {
                // Same rows, new version: the keyword store records the version unchanged.
                let version = ds.version_id();
                self.index.lance.replace_latest(ds);
                crate::failpoint::abort_at("after-compaction-commit");
                self.index.commits.record(version, Change::NoRowsAdded);
                self.index.prepare_resident().await;
                self.index.commit_keyword(version, &[], &[])?;
                Ok(Some((metrics.fragments_removed, metrics.fragments_added)))
            }
            Err(
                e @ (lance::Error::CommitConflict { .. }
                | lance::Error::RetryableCommitConflict { .. }
                | lance::Error::IncompatibleTransaction { .. }),
            ) => {
                tracing::info!(index = %self.index.name, error = %e,
                    "compaction conflicted with a write made while it ran; planned again next pass");
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes chunks soft-deleted more than `after` ago, from Lance and the keyword store,
    /// in one new version. Returns how many.
    async fn purge_deleted(&self, after: Duration) -> Result<usize, StoreError> {
        let cutoff = crate::model::timestamp_before(after);
        let filter = format!(
            "{DELETED_AT_COLUMN} IS NOT NULL AND {DELETED_AT_COLUMN} < {}",
            crate::store::filters::sql_string(&cutoff)
        );
        let _guard = self.index.lock_for_write().await?;
        let latest = Arc::new(self.index.lance.latest());
        // The keyword store knows (a term lookup) whether anything is deleted at all; only
        // then is the column scanned.
        let searcher = self.index.keyword.searcher(latest.version_id())?;
        if !self.index.keyword.may_hold_deleted(&searcher)? {
            return Ok(0);
        }
        let ids = self
            .index
            .lance
            .chunk_ids_where(&latest, Some(filter.clone()))
            .await?;
        if ids.is_empty() {
            return Ok(0);
        }
        let transaction = DeleteBuilder::new(latest.clone(), filter)
            .execute_uncommitted()
            .await?
            .transaction;
        let version = self
            .index
            .commit_without_new_rows(latest, transaction, &ids, None)
            .await?;
        tracing::info!(index = %self.index.name, version, chunks = ids.len(), "purged deleted chunks");
        Ok(ids.len())
    }

    /// Names a retained version (the newest if `None`) `tag`, so that retention keeps it
    /// (and its keyword snapshot and graph) until the tag is removed. Returns the version.
    pub async fn tag(&self, tag: &str, version: Option<u64>) -> Result<u64, StoreError> {
        let _guard = self.index.lock_for_write().await?;
        let version = version.unwrap_or_else(|| self.index.lance.latest_version());
        // An unknown or pruned version is the usual VersionUnavailable error.
        self.index.reader().snapshot(Some(version)).await?;
        self.index.lance.tag(tag, version).await?;
        Ok(version)
    }

    /// Removes `tag`; its version is pruned by the next retention pass if it is old.
    pub async fn untag(&self, tag: &str) -> Result<(), StoreError> {
        let _guard = self.index.lock_for_write().await?;
        self.index.lance.untag(tag).await
    }

    /// Rebuilds the keyword store's view of the newest version from Lance, the source of
    /// truth (contract 002's rebuild). Returns the version and the rows indexed.
    pub async fn rebuild_keyword(&self) -> Result<(u64, usize), StoreError> {
        let _guard = self.index.lock_for_write().await?;
        let version = self.index.lance.latest_version();
        let rows = self
            .index
            .lance
            .rows_where(&self.index.lance.latest(), None, false)
            .await?;
        self.index.keyword.replace_all(version, &rows)?;
        Ok((version, rows.len()))
    }

    /// Re-embeds every chunk of the newest version with `embedder` and writes them as one new
    /// version (the rows are otherwise unchanged, so the keyword store only tags the version).
    /// The index then belongs to `embedder`; older versions keep their vectors and their
    /// model. The Kafka checkpoint is carried forward. Returns the new version.
    pub async fn reembed(
        &self,
        embedder: std::sync::Arc<dyn crate::embedding::Embedder>,
    ) -> Result<u64, StoreError> {
        let _guard = self.index.lock_for_write().await?;
        let (id, dimensions) = (embedder.id().to_string(), embedder.dimensions());
        let mut properties = std::collections::HashMap::from([(
            EMBEDDER_PROPERTY.to_string(),
            format!("{id}/{dimensions}"),
        )]);
        let checkpoint = self.index.reader().stored_checkpoint().await?;
        if !checkpoint.offsets.is_empty() {
            properties.insert(
                KAFKA_CHECKPOINT.to_string(),
                serde_json::to_string(&checkpoint.offsets).expect("a checkpoint serialises"),
            );
            if let Some(log) = checkpoint.log {
                properties.insert(KAFKA_LOG.to_string(), log);
            }
        }
        // The graph is not re-embedded: its relation vectors keep the old model's (their
        // semantic scores then fall back to 0; see docs/limitations.md), its rows stay.
        if let Some(graph) = self.index.graph.latest() {
            properties.insert(
                crate::graph::store::GRAPH_PROPERTY.to_string(),
                graph.to_property(),
            );
        }
        // A scan batch in one call, on the blocking pool: the embedder cuts it into its own
        // batches (and an HTTP provider's client sends them in parallel).
        let rewrite = move |mut rows: Vec<ChunkRow>| {
            let embedder = embedder.clone();
            async move {
                let texts: Vec<String> = rows.iter().map(ChunkRow::search_text).collect();
                let vectors = tokio::task::spawn_blocking(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    embedder.embed(&refs)
                })
                .await
                .map_err(|e| StoreError::TaskFailed(e.to_string()))??;
                for (row, v) in rows.iter_mut().zip(vectors) {
                    row.vector = Some(v);
                }
                Ok(rows)
            }
        };
        let latest = self.index.lance.latest();
        let version = self
            .index
            .lance
            .overwrite_rewritten(&latest, dimensions, properties, rewrite)
            .await?;
        crate::failpoint::abort_at("after-reembed-commit");
        self.index.commit_keyword(version, &[], &[])?;
        self.index
            .update_info(|info| switch_embedder(info, id, dimensions, version))
            .await?;
        self.index.lance.set_resident_center(None);
        self.index.apply_retention(0).await?;
        Ok(version)
    }
}

#[cfg(test)]
mod tests {
    use super::{newest_run, TIER_FLOOR_ROWS};

    #[test]
    fn the_newest_run_stops_at_the_first_fragment_larger_than_the_run() {
        let small = 500;
        // A bulk load compacted into 104,000 rows, then sixteen commits: only the commits.
        let mut rows = vec![104_000];
        rows.extend([small; 16]);
        assert_eq!(newest_run(&rows), 1);
        // Streaming from empty: everything is small, everything merges.
        assert_eq!(newest_run(&[small; 20]), 0);
        // A run as large as the one before it joins it (runs double)...
        let mut rows = vec![104_000, 16 * small];
        rows.extend([small; 16]);
        assert_eq!(newest_run(&rows), 1);
        // ...one twice as large does not.
        let mut rows = vec![104_000, 32 * small];
        rows.extend([small; 16]);
        assert_eq!(newest_run(&rows), 2);
        // Below the floor a fragment joins whatever its size against the run.
        assert_eq!(newest_run(&[TIER_FLOOR_ROWS, 10]), 0);
        assert_eq!(newest_run(&[TIER_FLOOR_ROWS + 1, 10]), 1);
        assert_eq!(newest_run(&[]), 0);
    }

    #[test]
    fn streaming_commits_leave_a_bounded_number_of_fragments_and_rewrite_each_row_a_few_times() {
        // Simulate commits of 500 rows and a compaction whenever sixteen fragments of the
        // newest run are below the target, merging the run (target 250,000 rows).
        let target = 250_000;
        let mut rows: Vec<usize> = Vec::new();
        let (mut written, mut rewritten, mut most) = (0usize, 0usize, 0usize);
        for _ in 0..2_000 {
            rows.push(500);
            written += 500;
            let start = newest_run(&rows);
            if rows[start..].iter().filter(|r| **r < target).count() >= 16 {
                let merged: usize = rows.drain(start..).sum();
                rewritten += merged;
                rows.push(merged);
            }
            most = most.max(rows.len());
        }
        assert!(most <= 24, "fragments peaked at {most}");
        let per_row = rewritten as f64 / written as f64;
        assert!(per_row < 6.0, "each row rewritten {per_row:.1} times");
    }
}
