//! The approximate vector index. Below `vector.min_rows` the semantic branch is an exact
//! scan; above it an IVF_PQ index is trained on a snapshot — outside the write lock, so
//! ingestion and queries go on — and committed under the index's write lock, with a keyword
//! snapshot of the same version, as every version needs one. Rows written since the build live in fragments the index does not cover; Lance
//! searches those exactly and merges them in, so a new chunk is findable at once. Queries
//! probe `nprobes` partitions and re-rank `refine_factor × k` candidates by their exact
//! distance. BTrees over `chunk_id` and `document_id` are built before it (from
//! `id_min_rows` rows) and rebuilt with it, so that reading rows by id and planning a batch
//! look rows up rather than scan for them.

use std::sync::Arc;

use lance::dataset::transaction::{Operation, Transaction};
use lance::index::optimize::plan_optimize_indices;
use lance::index::vector::VectorIndexParams;
use lance::index::DatasetIndexExt;
use lance::table::format::IndexMetadata;
use lance::Dataset;
use lance_index::optimize::OptimizeOptions;
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;

use super::rows::VECTOR_COLUMN;
use super::{Maintenance, Reader, StoreError};

/// The index's name in the Lance dataset.
pub const VECTOR_INDEX: &str = "vector_idx";
/// A BTree over `chunk_id`: reading rows by id is then a lookup, not a scan (rows written
/// since are scanned, as for vectors).
pub const ID_INDEX: &str = "chunk_id_idx";
/// A BTree over `document_id`: planning a batch looks up its documents' rows by id.
pub const DOCUMENT_INDEX: &str = "document_id_idx";

/// Which approximate index is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorIndexKind {
    /// Inverted file with product-quantised codes; searched by `nprobes`, re-ranked exactly.
    IvfPq,
    /// Inverted file with an HNSW graph of 8-bit scalar-quantised vectors per partition;
    /// searched by `nprobes` and `ef`, re-ranked exactly.
    #[default]
    IvfHnswSq,
}

/// How the vector index is built and searched: the configuration's `[index.vector]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VectorIndexSettings {
    /// `ivf_hnsw_sq` or `ivf_pq`.
    #[serde(rename = "type")]
    pub kind: VectorIndexKind,
    /// Rows from which an index is built (below: exact search only).
    pub min_rows: usize,
    /// Rows from which the id BTrees are built ahead of the vector index (0: only with it).
    pub id_min_rows: usize,
    /// IVF partitions; 0 picks √rows (clamped to 16..4096) for IVF_PQ and one per 100,000
    /// rows for IVF_HNSW_SQ (whose graphs make big partitions cheap to search).
    pub partitions: usize,
    /// PQ sub-vectors; 0 picks dimensions / 8.
    pub sub_vectors: usize,
    /// Rebuild once the rows the index does not cover exceed this share of those it does
    /// (they are searched exactly meanwhile).
    #[serde(rename = "rebuild_share")]
    pub rebuild_unindexed_share: f64,
    /// Partitions probed per query; 0 probes every one. Probing fewer than all changes
    /// answers once an index has more partitions than that (BENCHMARKS.md, "The vector
    /// index's quality cost on every corpus").
    pub nprobes: usize,
    /// Candidates re-ranked by exact distance, as a multiple of k.
    pub refine_factor: u32,
    /// HNSW search breadth (IVF_HNSW_SQ only).
    pub ef: usize,
    /// HNSW graph: edges per node and build breadth (IVF_HNSW_SQ only). A better-linked
    /// graph reaches the same recall at a smaller search `ef`, for a slower build.
    pub hnsw_m: usize,
    pub hnsw_ef_construction: usize,
    /// Rows an unfiltered search ranks by the resident vectors' byte codes (0: unfiltered
    /// searches walk Lance's index too), and the share of all rows it keeps by Hamming
    /// distance before (at least four shortlists).
    pub resident_shortlist: usize,
    pub resident_hamming_share: f64,
}

impl Default for VectorIndexSettings {
    fn default() -> Self {
        VectorIndexSettings {
            kind: VectorIndexKind::IvfHnswSq,
            min_rows: 100_000,
            id_min_rows: 10_000,
            partitions: 0,
            sub_vectors: 0,
            rebuild_unindexed_share: 0.2,
            nprobes: 0,
            refine_factor: 2,
            ef: 500,
            hnsw_m: 20,
            hnsw_ef_construction: 150,
            resident_shortlist: 2000,
            resident_hamming_share: 0.005,
        }
    }
}

impl VectorIndexSettings {
    pub fn resident_search(&self) -> super::ResidentSearch {
        super::ResidentSearch {
            shortlist: self.resident_shortlist,
            hamming_share: self.resident_hamming_share,
        }
    }

    pub fn check(&self, dimensions: Option<usize>) -> Result<(), (String, String)> {
        for (key, value) in [
            ("refine_factor", self.refine_factor as usize),
            ("ef", self.ef),
        ] {
            if value == 0 {
                return Err((format!("index.vector.{key}"), "must be at least 1".into()));
            }
        }
        if self.hnsw_m < 2 || self.hnsw_ef_construction < self.hnsw_m {
            return Err((
                "index.vector.hnsw_m".into(),
                "hnsw_m must be at least 2 and hnsw_ef_construction at least hnsw_m".into(),
            ));
        }
        // A negative share would rebuild after every write; NaN would never rebuild.
        if !(self.rebuild_unindexed_share >= 0.0 && self.rebuild_unindexed_share.is_finite()) {
            return Err((
                "index.vector.rebuild_share".into(),
                "must be a share of the indexed rows, 0 or more".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.resident_hamming_share) {
            return Err((
                "index.vector.resident_hamming_share".into(),
                "must be a share of the rows, from 0 to 1".into(),
            ));
        }
        if let (Some(d), s) = (dimensions, self.sub_vectors) {
            if s != 0 && !d.is_multiple_of(s) {
                return Err((
                    "index.vector.sub_vectors".into(),
                    format!("must divide the embedder's {d} dimensions"),
                ));
            }
        }
        Ok(())
    }

    fn params(&self, rows: usize, dimensions: usize) -> VectorIndexParams {
        let cosine = lance_linalg::distance::DistanceType::Cosine;
        let partitions = match (self.partitions, self.kind) {
            (0, VectorIndexKind::IvfPq) => ((rows as f64).sqrt() as usize).clamp(16, 4096),
            (0, VectorIndexKind::IvfHnswSq) => (rows / 100_000).clamp(1, 4096),
            (p, _) => p,
        };
        match self.kind {
            VectorIndexKind::IvfPq => {
                let sub_vectors = if self.sub_vectors > 0 {
                    self.sub_vectors
                } else if dimensions.is_multiple_of(8) {
                    dimensions / 8
                } else {
                    1
                };
                VectorIndexParams::ivf_pq(partitions, 8, sub_vectors, cosine, 50)
            }
            VectorIndexKind::IvfHnswSq => VectorIndexParams::with_ivf_hnsw_sq_params(
                cosine,
                IvfBuildParams::new(partitions),
                HnswBuildParams::default()
                    .num_edges(self.hnsw_m)
                    .ef_construction(self.hnsw_ef_construction),
                SQBuildParams::default(),
            ),
        }
    }
}

/// Rows the vector index covers (all its segments) and rows the dataset has (live or not).
pub async fn coverage(ds: &Dataset) -> Result<(usize, usize), StoreError> {
    coverage_of(ds, &ds.load_indices().await?, VECTOR_INDEX).await
}

/// Rows the indexes cover, and rows the dataset has: the vector index's coverage, or the id
/// index's while there is no vector index (maintenance adds new rows to whichever exist).
pub async fn index_coverage(ds: &Dataset) -> Result<(usize, usize), StoreError> {
    let indices = ds.load_indices().await?;
    coverage_of(ds, &indices, maintained_index(&indices)).await
}

/// The index whose coverage maintenance follows among `indices`: the vector index, or the
/// id index while there is none.
fn maintained_index(indices: &[IndexMetadata]) -> &'static str {
    if indices.iter().any(|i| i.name == VECTOR_INDEX) {
        VECTOR_INDEX
    } else {
        ID_INDEX
    }
}

/// Rows the index `name` (among `indices`, those of `ds`) covers, and rows `ds` has.
async fn coverage_of(
    ds: &Dataset,
    indices: &[IndexMetadata],
    name: &str,
) -> Result<(usize, usize), StoreError> {
    let total = ds.count_rows(None).await?;
    let mut fragments = std::collections::HashSet::new();
    for segment in indices {
        if let (true, Some(bitmap)) = (segment.name == name, &segment.fragment_bitmap) {
            fragments.extend(bitmap.iter());
        }
    }
    Ok((rows_in(ds, |id| fragments.contains(&id)).await?, total))
}

/// Physical rows (deleted ones too) of the fragments of `ds` whose ids `holds` accepts.
async fn rows_in(ds: &Dataset, holds: impl Fn(u32) -> bool) -> Result<usize, StoreError> {
    let mut rows = 0;
    for fragment in ds.get_fragments() {
        if holds(fragment.id() as u32) {
            rows += fragment.count_rows(None).await?;
        }
    }
    Ok(rows)
}

/// Most segments an index has after an update (the trained one and its deltas); an
/// unfiltered search does not walk them (the resident vectors serve it), a filtered one
/// searches each.
const MAX_SEGMENTS: usize = 10;
/// Delta segments below this many rows are merged into the next update's (unless that
/// merge would pass the cap, [`merge_cap`]).
const SEGMENT_FLOOR_ROWS: usize = 10_000;
/// No merge makes a delta segment larger than this share of the trained segment's rows
/// (nor smaller than twice the floor): rebuilding a graph costs more than its rows
/// (n log n), so a large merge takes disproportionately long, in a pass beside the queries
/// (BENCHMARKS.md, "Hits' rows from the scratch files").
/// A quarter keeps the segments within [`MAX_SEGMENTS`] until retraining (at twice the trained
/// rows, so at most the trained rows in deltas: four full segments and a tail that doubles
/// up to the cap; simulated in the tests at 100,000 and a million trained rows).
const MERGE_SHARE_OF_TRAINED: usize = 4;

/// The most rows a merged delta segment may hold, given the trained segment's rows.
fn merge_cap(trained_rows: usize) -> usize {
    (trained_rows / MERGE_SHARE_OF_TRAINED).max(2 * SEGMENT_FLOOR_ROWS)
}

/// How many of the newest delta segments an update folds its `new_rows` into (0: they make
/// a segment of their own), given the delta segments' rows, newest first, and the most rows
/// a merge may make ([`merge_cap`]).
///
/// Size-tiered, as compaction is (maintenance.rs, `newest_run`): merging a delta segment
/// rebuilds its graph from every row it holds, so always merging into the newest delta would
/// rebuild everything written since training at every other pass: a graph that grows with
/// each pass, rebuilt beside the queries (docs/benchmark-history.md, "Vector-index updates
/// size-tiered"). Walking back from the newest, a segment joins while it holds no more rows
/// than the merge so far (or fewer than [`SEGMENT_FLOOR_ROWS`]) and the merge stays within
/// `cap`: segments double like a binary counter up to the cap, a row is rebuilt about
/// log2(cap / pass) times, and there are about log2(cap / floor) + deltas / cap segments.
/// Should that reach [`MAX_SEGMENTS`] (many times more rows written than trained on, which
/// retraining makes rare), just enough of the newest (the smallest) are merged to stay
/// within it, whatever their size.
fn segments_to_merge(new_rows: usize, deltas: &[usize], cap: usize) -> usize {
    let mut run = new_rows;
    let mut n = 0;
    for &rows in deltas {
        if rows > run.max(SEGMENT_FLOOR_ROWS) || run + rows > cap {
            break;
        }
        run += rows;
        n += 1;
    }
    // The trained segment, the deltas left and the merged (or new) one.
    n.max((deltas.len() + 2).saturating_sub(MAX_SEGMENTS))
}

/// Whether `ds` has a vector index (queries then set nprobes and refine).
pub async fn has_index(ds: &Dataset) -> Result<bool, StoreError> {
    Ok(ds
        .load_indices()
        .await?
        .iter()
        .any(|i| i.name == VECTOR_INDEX))
}

/// The `chunk_id` and `document_id` BTrees of `snapshot`, built but not committed.
async fn id_index_segments(snapshot: &Dataset) -> Result<Vec<IndexMetadata>, StoreError> {
    let mut by_id = snapshot.clone();
    let params = lance_index::scalar::ScalarIndexParams::default();
    let mut segments = Vec::new();
    for (column, name) in [("chunk_id", ID_INDEX), ("document_id", DOCUMENT_INDEX)] {
        segments.push(
            lance::index::CreateIndexBuilder::new(&mut by_id, &[column], IndexType::BTree, &params)
                .name(name.to_string())
                .replace(true)
                .execute_uncommitted()
                .await?,
        );
    }
    Ok(segments)
}

impl Reader<'_> {
    /// Reads the newest version's resident vectors, and loads its vector and chunk-id indexes
    /// into Lance's index cache, so that the first queries after opening an index or building
    /// its vector index do not read them partition by partition: on a large index that made
    /// the first queries far slower than the rest (docs/benchmark-history.md, "Where a hybrid
    /// query's time goes at a million chunks").
    /// Returns whether anything was loaded: segments loaded before are not loaded again, and
    /// a caller arriving during a load waits for it.
    pub async fn prewarm_search_indexes(&self) -> Result<bool, StoreError> {
        let mut warmed = self.index.warmed.lock().await;
        let ds = self.index.lance().latest();
        // The newest version's resident vectors (a view built before is not read again).
        self.index.read_resident().await?;
        let indices = ds.load_indices().await?;
        let mut segments: Vec<String> = indices
            .iter()
            .filter(|i| i.name == VECTOR_INDEX || i.name == ID_INDEX)
            .map(|i| i.uuid.to_string())
            .collect();
        segments.sort();
        if segments.is_empty() || *warmed == segments {
            return Ok(false);
        }
        for name in [VECTOR_INDEX, ID_INDEX] {
            if indices.iter().any(|i| i.name == name) {
                ds.prewarm_index(name).await?;
            }
        }
        *warmed = segments;
        Ok(true)
    }
}

impl Maintenance<'_> {
    /// Claims the right to run a build; false if one is running.
    pub fn begin_vector_build(&self) -> bool {
        !self
            .index
            .vector_build
            .swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    /// A vector-index build (or a compaction) is running.
    pub fn vector_build_running(&self) -> bool {
        self.index
            .vector_build
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn end_vector_build(&self) {
        self.index
            .vector_build
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// A check for a due build has started (it ends with [`Maintenance::end_build_check`]); counted
    /// so that a process about to exit can wait for a build a commit is about to start.
    pub fn begin_build_check(&self) {
        self.index
            .build_checks
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn end_build_check(&self) {
        self.index
            .build_checks
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// A build is running, or a check that may start one has not finished.
    pub fn build_pending(&self) -> bool {
        self.index
            .build_checks
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
            || self.vector_build_running()
    }

    /// Whether a build is due on the newest version: the id BTrees on their own
    /// ([`Maintenance::build_id_indices`]) or the vector index ([`Maintenance::build_vector_index`]).
    /// Read without the build slot, so that the check after every commit does not hold it:
    /// a maintenance pass that found it held deferred its work to the next pass.
    pub async fn index_build_due(
        &self,
        settings: &VectorIndexSettings,
    ) -> Result<bool, StoreError> {
        let snapshot = self.index.lance.latest();
        Ok(self.id_indices_due(&snapshot, settings).await?
            || self.vector_index_due(&snapshot, settings).await?)
    }

    /// Whether `snapshot` calls for a vector-index build: it has `min_rows` and no index, or
    /// twice the rows the index was trained on, or more unindexed rows than
    /// `rebuild_unindexed_share` of the indexed ones.
    async fn vector_index_due(
        &self,
        snapshot: &Dataset,
        settings: &VectorIndexSettings,
    ) -> Result<bool, StoreError> {
        // Called after every commit: the row count (manifest metadata) settles most calls
        // before the per-fragment coverage walk.
        if snapshot.count_rows(None).await? < settings.min_rows {
            return Ok(false);
        }
        let (covered, total) = coverage(snapshot).await?;
        // Rows added after training go to the partitions it made; once the index has doubled
        // it is retrained, so that partitions grow with it.
        // (An index built before this was recorded counts as trained on the rows it covers.)
        let trained = self
            .index
            .info()
            .vector_index_trained_rows
            .unwrap_or(covered);
        Ok(total >= settings.min_rows
            && (covered == 0
                || total >= 2 * trained
                || (total - covered) as f64 > covered as f64 * settings.rebuild_unindexed_share))
    }

    /// Whether `snapshot` calls for the id BTrees on their own: `id_min_rows` rows and none yet.
    async fn id_indices_due(
        &self,
        snapshot: &Dataset,
        settings: &VectorIndexSettings,
    ) -> Result<bool, StoreError> {
        Ok(settings.id_min_rows > 0
            && snapshot.count_rows(None).await? >= settings.id_min_rows
            && !snapshot
                .load_indices()
                .await?
                .iter()
                .any(|i| i.name == ID_INDEX))
    }

    /// Builds (or rebuilds) the vector index when `settings` say it is due; returns the
    /// version that carries it. Training reads a snapshot without the write lock; only the
    /// commit takes it.
    pub async fn build_vector_index(
        &self,
        settings: &VectorIndexSettings,
    ) -> Result<Option<u64>, StoreError> {
        let snapshot = self.index.lance.latest();
        if !self.vector_index_due(&snapshot, settings).await? {
            return Ok(None);
        }
        let (version, _) = self.build_vector_index_on(snapshot, settings).await?;
        Ok(Some(version))
    }

    /// Builds the vector index anew on the newest version with `settings`, due or not —
    /// how changed build settings (type, partitions, HNSW graph) take effect. Like a
    /// background build it trains outside the write lock and commits under it;
    /// returns the version that carries the index and the rows it covers. A build or
    /// compaction of this index already running in this process is waited for first (one
    /// build at a time: two would train on the same rows twice).
    pub async fn rebuild_vector_index(
        &self,
        settings: &VectorIndexSettings,
    ) -> Result<(u64, usize), StoreError> {
        while !self.begin_vector_build() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let built = self
            .build_vector_index_on(self.index.lance.latest(), settings)
            .await;
        self.end_vector_build();
        built
    }

    /// Trains the vector index (and the id BTrees) on `snapshot` and commits them, replacing
    /// any built before; returns the version that carries them and the rows trained on.
    async fn build_vector_index_on(
        &self,
        snapshot: Dataset,
        settings: &VectorIndexSettings,
    ) -> Result<(u64, usize), StoreError> {
        let total = snapshot.count_rows(None).await?;
        let dimensions = self.index.info().dimensions;
        let params = settings.params(total, dimensions);
        let id_indices = id_index_segments(&snapshot).await?;
        self.index.record_resident_center(&snapshot).await?;
        let mut training = snapshot;
        let metadata = lance::index::CreateIndexBuilder::new(
            &mut training,
            &[VECTOR_COLUMN],
            IndexType::Vector,
            &params,
        )
        .name(VECTOR_INDEX.to_string())
        .replace(true)
        .execute_uncommitted()
        .await?;

        let built = [vec![metadata], id_indices].concat();
        // A rebuild replaces every index of these names.
        let version = self
            .commit_indices(built, |i| {
                [VECTOR_INDEX, ID_INDEX, DOCUMENT_INDEX].contains(&i.name.as_str())
            })
            .await?;
        crate::failpoint::abort_at("after-vector-index-commit");
        self.index
            .update_info(|info| info.vector_index_trained_rows = Some(total))
            .await?;
        tracing::info!(index = %self.index.name, version, rows = total, "vector index built");
        Ok((version, total))
    }

    /// Builds the id BTrees on their own, once the index has `settings.id_min_rows` rows and
    /// has none yet (the vector index, built later, rebuilds them with it); returns the
    /// version that carries them. Built on a snapshot outside the write lock like a vector
    /// build; rows written since are scanned until maintenance adds them.
    pub async fn build_id_indices(
        &self,
        settings: &VectorIndexSettings,
    ) -> Result<Option<u64>, StoreError> {
        let snapshot = self.index.lance.latest();
        if !self.id_indices_due(&snapshot, settings).await? {
            return Ok(None);
        }
        let rows = snapshot.count_rows(None).await?;
        let built = id_index_segments(&snapshot).await?;
        let version = self
            .commit_indices(built, |i| {
                [ID_INDEX, DOCUMENT_INDEX].contains(&i.name.as_str())
            })
            .await?;
        tracing::info!(index = %self.index.name, version, rows, "id indexes built");
        Ok(Some(version))
    }

    /// Adds rows written since the indexes were built (or last updated) to them: trained on
    /// a snapshot outside the write lock like a build, using the existing model (IVF
    /// centroids, quantiser), committed under the write lock. New rows make a delta segment or
    /// merge with the newest ones ([`segments_to_merge`]), so a filtered query never searches
    /// more than [`MAX_SEGMENTS`]. Returns the rows newly indexed.
    pub async fn update_indices(&self) -> Result<usize, StoreError> {
        let snapshot = self.index.lance.latest();
        let (before, total) = index_coverage(&snapshot).await?;
        if before == 0 || before == total {
            return Ok(0);
        }
        let indices = snapshot.load_indices().await?;
        let name = maintained_index(&indices);
        // Segments oldest first (the manifest's order: a merge's segment goes last); the
        // first is the one trained on most rows, never merged here.
        let mut deltas = Vec::new();
        for segment in indices.iter().filter(|i| i.name == name) {
            let covered = |id| {
                segment
                    .fragment_bitmap
                    .as_ref()
                    .is_some_and(|b| b.contains(id))
            };
            deltas.push(rows_in(&snapshot, covered).await?);
        }
        let trained = if deltas.is_empty() {
            0
        } else {
            deltas.remove(0)
        };
        deltas.reverse();
        let options = match segments_to_merge(total - before, &deltas, merge_cap(trained)) {
            0 => OptimizeOptions::append(),
            n => OptimizeOptions::merge(n),
        };
        let plan = plan_optimize_indices(&snapshot, &options).await?;
        let mut built = Vec::new();
        for task in &plan.tasks {
            built.extend(task.execute(&snapshot).await?);
        }
        let mut merged = Vec::new();
        for merge in &plan.merges {
            merged.extend(merge.execute(&snapshot, &built).await?);
        }
        if merged.is_empty() {
            return Ok(0);
        }
        let replaced: std::collections::HashSet<uuid::Uuid> = merged
            .iter()
            .flat_map(|r| r.replaces.iter().copied())
            .collect();
        let new_indices = merged.into_iter().map(|r| r.segment).collect();
        self.commit_indices(new_indices, |i| replaced.contains(&i.uuid))
            .await?;
        let (after, _) = index_coverage(&self.index.lance.latest()).await?;
        Ok(after.saturating_sub(before))
    }

    /// Commits index segments made on an earlier snapshot, removing the existing segments
    /// `replaces` picks, as a new version made under the write lock; returns the version.
    async fn commit_indices(
        &self,
        new_indices: Vec<IndexMetadata>,
        replaces: impl Fn(&IndexMetadata) -> bool,
    ) -> Result<u64, StoreError> {
        let _guard = self.index.lock_for_write().await?;
        let latest = self.index.lance.latest();
        // Replaced segments are removed explicitly: two with overlapping fragments make
        // Lance 14's commit try to recompute coverage, which its IVF index cannot do.
        let removed_indices: Vec<IndexMetadata> = latest
            .load_indices()
            .await?
            .iter()
            .filter(|i| replaces(i))
            .cloned()
            .collect();
        // Committed as if read at the newest version: commits since the snapshot only appended
        // fragments (searched exactly until the next update) or marked rows deleted in covered
        // ones (deletion files, which searches apply to the index's rows too). Compaction,
        // which moves rows, holds the same build slot and so never runs in between.
        let transaction = Transaction::new(
            latest.version_id(),
            Operation::CreateIndex {
                new_indices,
                removed_indices,
            },
            None,
        );
        let version = self
            .index
            .commit_without_new_rows(Arc::new(latest), transaction, &[], None)
            .await?;
        self.index
            .apply_retention(self.index.commit_retention_slack())
            .await?;
        Ok(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_settings_name_the_key_at_fault_and_nprobes_0_means_every_partition() {
        let ok = VectorIndexSettings::default();
        assert_eq!(ok.nprobes, 0);
        assert!(ok.check(None).is_ok());
        for (key, settings) in [
            ("index.vector.ef", VectorIndexSettings { ef: 0, ..ok }),
            (
                "index.vector.refine_factor",
                VectorIndexSettings {
                    refine_factor: 0,
                    ..ok
                },
            ),
        ] {
            assert_eq!(settings.check(None).unwrap_err().0, key);
        }
    }

    #[test]
    fn new_rows_merge_with_the_newest_deltas_no_larger_than_the_merge_so_far() {
        let cap = usize::MAX;
        // Nothing yet but the trained segment: the new rows make a delta.
        assert_eq!(segments_to_merge(3_000, &[], cap), 0);
        // Small deltas below the floor are merged.
        assert_eq!(segments_to_merge(3_000, &[3_000, 6_000], cap), 2);
        // A delta larger than the merge so far ends the run.
        assert_eq!(segments_to_merge(3_000, &[12_000, 3_000], cap), 0);
        assert_eq!(segments_to_merge(20_000, &[12_000, 40_000], cap), 1);
        // The limit: the trained segment and nine deltas are ten; an eleventh is not made,
        // the newest is merged instead (the smallest, whatever the rule and the cap).
        let full = [
            10_500,
            21_000,
            42_000,
            84_000,
            168_000,
            336_000,
            672_000,
            1 << 21,
            1 << 22,
        ];
        assert_eq!(segments_to_merge(3_000, &full[..8], cap), 0);
        assert_eq!(segments_to_merge(3_000, &full, cap), 1);
        assert_eq!(segments_to_merge(3_000, &full, 5_000), 1);
    }

    #[test]
    fn a_merge_stops_at_the_cap() {
        // The steady bench's sixteenth pass: 3,125 new rows beside deltas of 3, 6, 12 and
        // 25 thousand rows would rebuild 50,000; with a 25,000 cap the 25,000 stays.
        let deltas = [3_125, 6_250, 12_500, 25_000];
        assert_eq!(segments_to_merge(3_125, &deltas, usize::MAX), 4);
        assert_eq!(segments_to_merge(3_125, &deltas, merge_cap(100_000)), 3);
        // Below the floor, a delta merges whatever the cap says: the cap is at least twice
        // the floor.
        assert_eq!(merge_cap(1_000), 2 * SEGMENT_FLOOR_ROWS);
        assert_eq!(segments_to_merge(3_000, &[9_000], merge_cap(1_000)), 1);
    }

    #[test]
    fn streaming_updates_keep_segments_bounded_and_rebuild_each_row_a_few_times() {
        // 3,000 rows a pass up to the trained rows (retraining then rebuilds it all), and
        // for 300 passes (900,000 rows) with no retraining at all: the segments stay
        // bounded, but rows are rebuilt more often there.
        for (trained, passes) in [(100_000, 33), (1_000_000, 333), (100_000, 300)] {
            let cap = merge_cap(trained);
            let mut deltas: Vec<usize> = Vec::new(); // newest first
            let (mut rebuilt, mut written, mut largest) = (0usize, 0usize, 0usize);
            for _ in 0..passes {
                let n = segments_to_merge(3_000, &deltas, cap);
                let merged = 3_000 + deltas.drain(..n).sum::<usize>();
                rebuilt += merged;
                largest = largest.max(merged);
                written += 3_000;
                deltas.insert(0, merged);
                assert!(deltas.len() < MAX_SEGMENTS, "{deltas:?}");
            }
            let per_row = rebuilt as f64 / written as f64;
            assert!(per_row > 1.0);
            // Until retraining, no merge exceeds the cap, and a row is rebuilt a few times
            // (merging into one delta every time would rebuild it ~150 times at 300 passes).
            if written <= trained {
                assert!(largest <= cap, "a merge of {largest} rows over {cap}");
                assert!(per_row < 10.0, "each row rebuilt {per_row:.1} times");
            }
        }
    }
}
