//! The Lance store: chunk rows, metadata and vectors; the source of truth. Every commit is a
//! new dataset version, and that version number is the `index_version` of an answer.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::{Array, Float32Array, RecordBatch, RecordBatchIterator};
use futures::TryStreamExt;
use lance::dataset::cleanup::CleanupPolicy;
use lance::dataset::transaction::Transaction;
use lance::dataset::{CommitBuilder, InsertBuilder, NewColumnTransform, WriteMode, WriteParams};
use lance::session::Session;
use lance::Dataset;

use super::resident_vectors::{ResidentVectors, Stages};
use super::rows::{
    batch_to_candidates, batch_to_rows, chunk_schema, columns_without_vector, rows_to_batch,
    CandidateRow, ChunkRow, CANDIDATE_COLUMNS, DELETED_AT_COLUMN,
};
use super::StoreError;
use crate::store::filters::{Filters, Visibility, LIVE_ROWS};
use crate::store::index_storage::DatasetLocation;
use crate::store::{in_list, replace_documents};

/// Checked-out versions kept open for pinned queries.
const VERSION_CACHE: usize = 8;

pub struct LanceStore {
    /// Vector dimensions of new rows (changes only with a reembed).
    dimensions: std::sync::atomic::AtomicUsize,
    /// Partitions probed, refine factor and HNSW ef of searches on a version with a vector
    /// index.
    vector_search: Mutex<(usize, u32, usize)>,
    latest: Mutex<Dataset>,
    versions: Mutex<Vec<(u64, Dataset)>>,
    /// How an unfiltered search on a version with a vector index narrows the resident
    /// vectors down (a shortlist of 0: such searches walk Lance's index instead).
    resident_search: Mutex<ResidentSearch>,
    /// The centre of the index's sign codes, once the index has recorded one.
    resident_center: Mutex<Option<Arc<Vec<f32>>>>,
    resident: ResidentVectors,
    /// Where the dataset lives (for writes that make it anew: `overwrite`).
    location: DatasetLocation,
}

/// The resident vectors' search settings: rows ranked by the byte codes (`shortlist`), and
/// the share of all rows kept by Hamming distance before (at least four shortlists).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResidentSearch {
    pub shortlist: usize,
    pub hamming_share: f64,
}

impl ResidentSearch {
    /// The stages' sizes for a view of `rows` rows. `shortlist` is the shortlist at a million
    /// rows and above; below, it shrinks with the square root of the rows (down to 500, or
    /// `shortlist` if less): the share of the true top 10 a shortlist holds falls slowly as
    /// rows grow, so a smaller index needs a smaller shortlist for the same recall
    /// (docs/benchmark-history.md, "Resident vectors: the semantic branch scans codes in
    /// memory"), and a million-row shortlist at 100,000 rows only costs time.
    fn stages(&self, rows: usize) -> Stages {
        let scaled = (self.shortlist as f64 * (rows as f64 / 1e6).sqrt()).ceil() as usize;
        let shortlist = scaled.clamp(self.shortlist.min(500), self.shortlist);
        Stages {
            by_hamming: ((rows as f64 * self.hamming_share) as usize).max(4 * shortlist),
            by_signs: shortlist,
        }
    }
}

/// How many documents and chunks a version holds, live and soft-deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    pub documents: usize,
    pub chunks: usize,
    pub deleted_documents: usize,
    pub deleted_chunks: usize,
}

/// What a version holds of some documents (see [`LanceStore::stored_documents`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredDocuments {
    /// `document_id → doc_hash` of the documents with live (not deleted) rows.
    pub hashes: HashMap<String, String>,
    /// `document_id → chunk ids` of every row, live or soft-deleted.
    pub chunk_ids: HashMap<String, Vec<String>>,
}

/// `filter`, restricted to rows that are not soft-deleted.
fn live(filter: String) -> String {
    format!("{filter} AND {LIVE_ROWS}")
}

/// The columns of a [`ChunkRow`], with or without its vector.
fn row_columns(with_vector: bool) -> Vec<&'static str> {
    let mut columns = columns_without_vector();
    if with_vector {
        columns.push(super::rows::VECTOR_COLUMN);
    }
    columns
}

/// The candidates a scan projecting [`CANDIDATE_COLUMNS`] with row addresses reads.
async fn candidates_of(
    scanner: lance::dataset::scanner::Scanner,
) -> Result<Vec<CandidateRow>, StoreError> {
    let batches: Vec<RecordBatch> = scanner.try_into_stream().await?.try_collect().await?;
    let mut out = Vec::new();
    for b in &batches {
        out.extend(batch_to_candidates(b).map_err(StoreError::Corrupt)?);
    }
    Ok(out)
}

/// DataFusion partitions for the reads of a query's few dozen candidates (the indexed vector
/// search, candidates by id). Lance's default, one per core, puts a round-robin repartition
/// and a merge around a few dozen rows: hand-offs between threads that cost more than they
/// split, so one partition makes the vector search faster (docs/benchmark-history.md,
/// "Where a vector search's 9 ms go at 100,000 chunks"). HNSW searches its partitions on
/// Lance's CPU pool either way; the exact scan of rows not indexed yet (a tail that
/// maintenance keeps short) may then run on one thread; whole-index exact scans (below the
/// vector index threshold, recall checks) keep the default.
const TOP_K_READ_PARALLELISM: usize = 1;

impl LanceStore {
    /// Opens the dataset at `location`; with `create`, makes an empty one (version 1) if
    /// there is none, and otherwise a missing dataset is [`StoreError::UnknownIndex`] (a
    /// query replica never creates one). Every version it opens shares `session`'s caches;
    /// the resident vectors' scratch files go to `scratch`.
    pub async fn open(
        location: &DatasetLocation,
        dimensions: usize,
        session: Arc<Session>,
        scratch: std::path::PathBuf,
        create: bool,
    ) -> Result<Self, StoreError> {
        let uri = location.uri.as_str();
        let opened = location
            .builder()
            .with_session(session.clone())
            .load()
            .await;
        let dataset = match opened {
            Ok(ds) => ds,
            Err(lance::Error::DatasetNotFound { .. }) | Err(lance::Error::NotFound { .. })
                if !create =>
            {
                return Err(StoreError::UnknownIndex(uri.to_string()));
            }
            Err(lance::Error::DatasetNotFound { .. }) | Err(lance::Error::NotFound { .. }) => {
                let schema = chunk_schema(dimensions);
                let empty = RecordBatchIterator::new(Vec::<Result<RecordBatch, _>>::new(), schema);
                let params = WriteParams {
                    mode: WriteMode::Create,
                    session: Some(session),
                    store_params: location.store_params(),
                    ..Default::default()
                };
                Dataset::write(empty, uri, Some(params)).await?
            }
            Err(e) => return Err(e.into()),
        };
        let mut dataset = dataset;
        if dataset.schema().field(DELETED_AT_COLUMN).is_none() {
            // Written before soft deletes: add the column (metadata only; every row reads as
            // live) in a new version.
            tracing::warn!(
                uri,
                "adding the deleted_at column to an index written before soft deletes"
            );
            let column = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
                DELETED_AT_COLUMN,
                arrow_schema::DataType::Utf8,
                true,
            )]);
            // Boxed: the future is deep enough to overflow the compiler's layout recursion
            // inside callers' futures.
            Box::pin(dataset.add_columns(
                NewColumnTransform::AllNulls(Arc::new(column)),
                None,
                None,
            ))
            .await?;
        }
        Ok(LanceStore {
            dimensions: dimensions.into(),
            vector_search: Mutex::new((20, 10, 100)),
            latest: Mutex::new(dataset),
            versions: Mutex::new(Vec::new()),
            resident_search: Mutex::new(ResidentSearch {
                shortlist: 0,
                hamming_share: 0.0,
            }),
            resident_center: Mutex::new(None),
            resident: ResidentVectors::new(scratch),
            location: location.clone(),
        })
    }

    /// Sets how unfiltered (or visibility-only) searches on a version with a vector index
    /// narrow the resident vectors down; a shortlist of 0 sends them to Lance's index.
    /// Returns the settings it replaces.
    pub fn set_resident_search(&self, search: ResidentSearch) -> ResidentSearch {
        std::mem::replace(
            &mut *self.resident_search.lock().expect("resident search lock"),
            search,
        )
    }

    pub fn resident_search(&self) -> ResidentSearch {
        *self.resident_search.lock().expect("resident search lock")
    }

    /// The centre of the sign codes (what the index records; `None` until it has one).
    pub fn set_resident_center(&self, center: Option<Vec<f32>>) {
        *self.resident_center.lock().expect("resident centre lock") = center.map(Arc::new);
    }

    fn resident_center(&self) -> Option<Arc<Vec<f32>>> {
        self.resident_center
            .lock()
            .expect("resident centre lock")
            .clone()
    }

    /// The mean of the first `rows` vectors of `ds`, for the index to record as the centre.
    pub async fn center_of(&self, ds: &Dataset, rows: usize) -> Result<Vec<f32>, StoreError> {
        super::resident_vectors::center_of(ds, self.dimensions_of(ds)?, rows).await
    }

    /// Whether a search on `ds` with `filters` scans the resident vectors: resident search
    /// is on, the index has its centre, `ds` has a vector index, and the filter is at most a
    /// visibility. Decided by the version and the settings alone, so that a pinned query
    /// takes the same path every time.
    async fn resident_for(
        &self,
        ds: &Dataset,
        filters: &Filters,
    ) -> Result<Option<(Arc<Vec<f32>>, Visibility)>, StoreError> {
        let (Some(visibility), Some(center)) = (filters.visibility_only(), self.resident_center())
        else {
            return Ok(None);
        };
        if self.resident_search().shortlist == 0
            || center.len() != self.dimensions_of(ds)?
            || !super::vector_index::has_index(ds).await?
        {
            return Ok(None);
        }
        Ok(Some((center, visibility)))
    }

    /// Builds the resident vectors' view of `ds` (when its searches use them), so that the
    /// first query on it does not read its new fragments. Returns the rows the view holds
    /// and the bytes of its codes.
    pub async fn prewarm_resident(
        &self,
        ds: &Dataset,
    ) -> Result<Option<(usize, usize)>, StoreError> {
        let Some((center, _)) = self.resident_for(ds, &Filters::default()).await? else {
            return Ok(None);
        };
        let view = self.resident.view(ds, &center).await?;
        Ok(Some((view.rows(), view.bytes_in_memory())))
    }

    /// The vector dimensions of `ds`'s schema.
    fn dimensions_of(&self, ds: &Dataset) -> Result<usize, StoreError> {
        let field = ds
            .schema()
            .field(super::rows::VECTOR_COLUMN)
            .ok_or_else(|| StoreError::Corrupt("no vector column".into()))?;
        match field.data_type() {
            arrow_schema::DataType::FixedSizeList(_, n) if n > 0 => Ok(n as usize),
            other => Err(StoreError::Corrupt(format!(
                "vector column is {other}, not a fixed-size list"
            ))),
        }
    }

    /// The `k` nearest candidates from the resident vectors: their addresses, then the
    /// candidates' columns read by address (in the order found).
    async fn resident_nearest(
        &self,
        ds: &Dataset,
        query: &[f32],
        k: usize,
        center: &Arc<Vec<f32>>,
        visibility: Visibility,
    ) -> Result<Vec<CandidateRow>, StoreError> {
        let view = self.resident.view(ds, center).await?;
        let stages = self.resident_search().stages(view.rows());
        // A scan of every row's code: CPU work, off the async worker that runs the query.
        let span = tracing::info_span!("resident_scan", rows = view.rows());
        let (q, scanned) = (query.to_vec(), view.clone());
        let addresses = tokio::task::spawn_blocking(move || {
            span.in_scope(|| scanned.nearest(&q, k, stages, visibility))
        })
        .await
        .map_err(|e| StoreError::TaskFailed(format!("resident vector scan: {e}")))?;
        // Nearest first by the exact vectors (the byte codes ordered them approximately), in
        // the arithmetic the semantic branch scores them with; ties by address.
        let mut scored: Vec<(f32, CandidateRow)> = view
            .candidates(ds, &addresses)
            .await?
            .into_iter()
            .map(|c| (crate::store::similarity::dot(query, &c.vector), c))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.address.cmp(&b.1.address)));
        Ok(scored.into_iter().map(|(_, c)| c).collect())
    }

    /// Searches on a version with a vector index probe `nprobes` partitions (with HNSW
    /// breadth `ef`) and re-rank `refine_factor × k` candidates exactly.
    pub fn set_vector_search(&self, nprobes: usize, refine_factor: u32, ef: usize) {
        *self.vector_search.lock().expect("vector search lock") = (nprobes, refine_factor, ef);
    }

    /// The approximate search's (nprobes, refine factor, ef).
    pub fn vector_search(&self) -> (usize, u32, usize) {
        *self.vector_search.lock().expect("vector search lock")
    }

    /// Makes `ds` (a commit made outside [`LanceStore::commit`]) the newest version.
    pub fn replace_latest(&self, ds: Dataset) {
        *self.latest.lock().expect("lance latest lock") = ds;
    }

    pub fn latest(&self) -> Dataset {
        self.latest.lock().expect("lance latest lock").clone()
    }

    pub fn latest_version(&self) -> u64 {
        self.latest.lock().expect("lance latest lock").version_id()
    }

    /// Every version still on disk, ascending.
    pub async fn versions(&self) -> Result<Vec<u64>, StoreError> {
        let refs = self.latest().version_refs().await?;
        Ok(refs.into_iter().map(|r| r.version).collect())
    }

    /// The dataset as it was at `version`; a pruned or unknown version is an error naming the
    /// oldest available one.
    pub async fn at(&self, version: u64) -> Result<Dataset, StoreError> {
        let latest = self.latest();
        if version == latest.version_id() {
            return Ok(latest);
        }
        if let Some((_, ds)) = self
            .versions
            .lock()
            .expect("lance version cache lock")
            .iter()
            .find(|(v, _)| *v == version)
        {
            return Ok(ds.clone());
        }
        let available = self.versions().await?;
        if !available.contains(&version) {
            return Err(StoreError::VersionUnavailable {
                requested: version,
                oldest: available.first().copied().unwrap_or(latest.version_id()),
                latest: latest.version_id(),
            });
        }
        let ds = latest.checkout_version(version).await?;
        let mut cache = self.versions.lock().expect("lance version cache lock");
        if cache.len() >= VERSION_CACHE {
            cache.remove(0);
        }
        cache.push((version, ds.clone()));
        Ok(ds)
    }

    /// What `ds` holds of the given documents, in one scan of their rows by `document_id`.
    pub async fn stored_documents(
        &self,
        ds: &Dataset,
        document_ids: &[String],
    ) -> Result<StoredDocuments, StoreError> {
        let mut out = StoredDocuments::default();
        if document_ids.is_empty() {
            return Ok(out);
        }
        let batches = self
            .scan(
                ds,
                &["document_id", "doc_hash", "chunk_id", DELETED_AT_COLUMN],
                Some(in_list("document_id", document_ids)),
            )
            .await?;
        for b in batches {
            let ids = b.column(0).as_string::<i32>();
            let hashes = b.column(1).as_string::<i32>();
            let chunks = b.column(2).as_string::<i32>();
            let deleted = b.column(3);
            for i in 0..b.num_rows() {
                let id = ids.value(i);
                if deleted.is_null(i) {
                    out.hashes
                        .insert(id.to_string(), hashes.value(i).to_string());
                }
                out.chunk_ids
                    .entry(id.to_string())
                    .or_default()
                    .push(chunks.value(i).to_string());
            }
        }
        Ok(out)
    }

    /// Calls `f` with the document id of every row at `ds` (live or soft-deleted), a batch
    /// at a time: at a million rows, collecting them first would hold every id as a string.
    pub async fn each_document_id(
        &self,
        ds: &Dataset,
        mut f: impl FnMut(&str),
    ) -> Result<(), StoreError> {
        let mut batches = self.stream(ds, &["document_id"], None).await?;
        while let Some(b) = batches.try_next().await? {
            b.column(0)
                .as_string::<i32>()
                .iter()
                .flatten()
                .for_each(&mut f);
        }
        Ok(())
    }

    /// Every chunk id at `ds`, sorted.
    pub async fn all_chunk_ids(&self, ds: &Dataset) -> Result<Vec<String>, StoreError> {
        let mut ids = self.string_column(ds, "chunk_id", None).await?;
        ids.sort();
        Ok(ids)
    }

    /// Chunk ids of the rows matching `filter` at `ds`.
    pub async fn chunk_ids_where(
        &self,
        ds: &Dataset,
        filter: Option<String>,
    ) -> Result<Vec<String>, StoreError> {
        self.string_column(ds, "chunk_id", filter).await
    }

    /// Commits a change read at `read` (made with this store's other writes held off) and
    /// makes it the newest version. On an object store the commit is strict
    /// (`store::strict_commit`).
    pub async fn commit_transaction(
        &self,
        read: Arc<Dataset>,
        transaction: Transaction,
    ) -> Result<u64, StoreError> {
        let committed = if self.location.is_shared() {
            // Other daemons commit to this dataset too: land right after the version read,
            // or not at all (see index/ownership.rs).
            crate::store::strict_commit::commit_next(&self.location, read, transaction).await?
        } else {
            CommitBuilder::new(read).execute(transaction).await?
        };
        let version = committed.version_id();
        *self.latest.lock().expect("lance latest lock") = committed;
        Ok(version)
    }

    async fn string_column(
        &self,
        ds: &Dataset,
        column: &str,
        filter: Option<String>,
    ) -> Result<Vec<String>, StoreError> {
        let batches = self.scan(ds, &[column], filter).await?;
        Ok(batches
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_string::<i32>();
                (0..a.len())
                    .map(|i| a.value(i).to_string())
                    .collect::<Vec<_>>()
            })
            .collect())
    }

    async fn scan(
        &self,
        ds: &Dataset,
        columns: &[&str],
        filter: Option<String>,
    ) -> Result<Vec<RecordBatch>, StoreError> {
        Ok(self
            .stream(ds, columns, filter)
            .await?
            .try_collect()
            .await?)
    }

    /// `columns` of the rows matching `filter` at `ds`, a batch at a time.
    async fn stream(
        &self,
        ds: &Dataset,
        columns: &[&str],
        filter: Option<String>,
    ) -> Result<lance::dataset::scanner::DatasetRecordBatchStream, StoreError> {
        let mut scanner = ds.scan();
        scanner.project(columns)?;
        if let Some(f) = filter {
            scanner.filter(&f)?;
        }
        Ok(scanner.try_into_stream().await?)
    }

    /// Full rows (optionally with vectors) for the given chunk ids at `ds`.
    pub async fn rows(
        &self,
        ds: &Dataset,
        chunk_ids: &[String],
        with_vector: bool,
    ) -> Result<Vec<ChunkRow>, StoreError> {
        if chunk_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.rows_where(ds, Some(in_list("chunk_id", chunk_ids)), with_vector)
            .await
    }

    /// The live (not deleted) rows of the given documents at `ds`.
    pub async fn live_rows_of(
        &self,
        ds: &Dataset,
        document_ids: &[String],
        with_vector: bool,
    ) -> Result<Vec<ChunkRow>, StoreError> {
        if document_ids.is_empty() {
            return Ok(Vec::new());
        }
        let filter = live(in_list("document_id", document_ids));
        self.rows_where(ds, Some(filter), with_vector).await
    }

    /// The live rows of the given documents at `ds`, by document, each in chunk order.
    pub async fn live_documents(
        &self,
        ds: &Dataset,
        document_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<ChunkRow>>, StoreError> {
        let mut out: BTreeMap<String, Vec<ChunkRow>> = BTreeMap::new();
        for r in self.live_rows_of(ds, document_ids, false).await? {
            out.entry(r.document_id.clone()).or_default().push(r);
        }
        for rows in out.values_mut() {
            rows.sort_by_key(|r| r.chunk_index);
        }
        Ok(out)
    }

    /// Full rows matching `filter` (all rows for `None`).
    pub async fn rows_where(
        &self,
        ds: &Dataset,
        filter: Option<String>,
        with_vector: bool,
    ) -> Result<Vec<ChunkRow>, StoreError> {
        let batches = self.scan(ds, &row_columns(with_vector), filter).await?;
        let mut rows = Vec::new();
        for b in &batches {
            rows.extend(batch_to_rows(b).map_err(StoreError::Corrupt)?);
        }
        Ok(rows)
    }

    /// Fragments and rows of the newest version (from the manifest; no data is read).
    pub async fn shape(&self) -> Result<(usize, usize), StoreError> {
        let ds = self.latest();
        Ok((ds.get_fragments().len(), ds.count_rows(None).await?))
    }

    /// Live and soft-deleted documents and chunks at `ds`.
    pub async fn census(&self, ds: &Dataset) -> Result<Census, StoreError> {
        let batches = self
            .scan(ds, &["document_id", DELETED_AT_COLUMN], None)
            .await?;
        let (mut live, mut deleted) = (HashSet::new(), HashSet::new());
        let mut census = Census::default();
        for b in &batches {
            let ids = b.column(0).as_string::<i32>();
            let deleted_at = b.column(1);
            for i in 0..b.num_rows() {
                if deleted_at.is_null(i) {
                    census.chunks += 1;
                    live.insert(ids.value(i).to_string());
                } else {
                    census.deleted_chunks += 1;
                    deleted.insert(ids.value(i).to_string());
                }
            }
        }
        census.documents = live.len();
        census.deleted_documents = deleted.len();
        Ok(census)
    }

    /// The `k` cosine nearest neighbours among rows matching `filter`, best first, as
    /// candidates (ids, vectors, row addresses; [`Self::rows_at`] reads the rest of the rows
    /// a ranking keeps). The filter is applied before the search so that it never starves
    /// the result: exact below the vector index's threshold, approximate above (the index,
    /// plus an exact scan of rows it does not cover).
    pub async fn nearest(
        &self,
        ds: &Dataset,
        query: &[f32],
        k: usize,
        filters: &Filters,
    ) -> Result<Vec<CandidateRow>, StoreError> {
        if let Some((center, visibility)) = self.resident_for(ds, filters).await? {
            return self
                .resident_nearest(ds, query, k, &center, visibility)
                .await;
        }
        let sql = filters.to_sql();
        self.search_vectors(ds, query, k, sql.as_deref(), true)
            .await
    }

    /// Whether [`LanceStore::nearest`] on `ds` is approximate: it searches through the
    /// vector index (and the resident shortlists) once `ds` has one, and may then miss a
    /// near row; without one it compares every vector.
    pub async fn nearest_is_approximate(&self, ds: &Dataset) -> Result<bool, StoreError> {
        super::vector_index::has_index(ds).await
    }

    /// Exact nearest neighbours over every row, ignoring the vector index (what the
    /// index's recall is measured against).
    pub async fn nearest_exact(
        &self,
        ds: &Dataset,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<CandidateRow>, StoreError> {
        self.search_vectors(ds, query, k, None, false).await
    }

    /// Candidates (ids, vectors, row addresses) of the given chunk ids at `ds`, in no
    /// particular order; ids without a row are left out.
    pub async fn candidates(
        &self,
        ds: &Dataset,
        chunk_ids: &[String],
    ) -> Result<Vec<CandidateRow>, StoreError> {
        if chunk_ids.is_empty() {
            return Ok(Vec::new());
        }
        // Where the resident vectors hold this version, they know each id's rows: a read by
        // address instead of a walk of the chunk-id index (7 of a hybrid query's milliseconds
        // at a million chunks).
        if let Some((center, _)) = self.resident_for(ds, &Filters::default()).await? {
            let view = self.resident.view(ds, &center).await?;
            return view.candidates(ds, &view.addresses_of(chunk_ids)).await;
        }
        let mut scanner = ds.scan();
        scanner
            .project(&CANDIDATE_COLUMNS)?
            .with_row_address()
            .filter(&in_list("chunk_id", chunk_ids))?
            .target_parallelism(TOP_K_READ_PARALLELISM);
        candidates_of(scanner).await
    }

    /// The rows at `addresses` of `ds` (addresses from a search of that same version), in
    /// the order given.
    pub async fn rows_at(
        &self,
        ds: &Dataset,
        addresses: &[u64],
        with_vector: bool,
    ) -> Result<Vec<ChunkRow>, StoreError> {
        if addresses.is_empty() {
            return Ok(Vec::new());
        }
        // Where the resident vectors hold this version, its rows are in their scratch files:
        // a read on this thread instead of Lance's hand-offs by fragment.
        if !with_vector {
            if let Some((center, _)) = self.resident_for(ds, &Filters::default()).await? {
                let view = self.resident.view(ds, &center).await?;
                return view.rows_at(ds, addresses).await;
            }
        }
        let columns = row_columns(with_vector);
        let batch = ds
            .take_rows(addresses, ds.schema().project(&columns)?)
            .await?;
        batch_to_rows(&batch).map_err(StoreError::Corrupt)
    }

    /// The `k` cosine nearest candidates: exact without `use_index`; otherwise with this
    /// store's search settings when `ds` has a vector index.
    async fn search_vectors(
        &self,
        ds: &Dataset,
        query: &[f32],
        k: usize,
        filter: Option<&str>,
        use_index: bool,
    ) -> Result<Vec<CandidateRow>, StoreError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let q = Float32Array::from(query.to_vec());
        let mut scanner = ds.scan();
        scanner
            .nearest(super::rows::VECTOR_COLUMN, &q, k)?
            .distance_metric(lance_linalg::distance::DistanceType::Cosine);
        if !use_index {
            scanner.use_index(false);
        } else if super::vector_index::has_index(ds).await? {
            let (nprobes, refine, ef) = *self.vector_search.lock().expect("vector search lock");
            // 0 probes every partition (Lance clamps the count to the partitions there are).
            let nprobes = if nprobes == 0 { 1 << 20 } else { nprobes };
            // HNSW must look at least as wide as the candidates it hands to the re-ranking.
            scanner
                .nprobes(nprobes)
                .refine(refine)
                .ef(ef.max(k * refine as usize))
                .target_parallelism(TOP_K_READ_PARALLELISM);
        }
        let mut columns = CANDIDATE_COLUMNS.to_vec();
        columns.push("_distance");
        scanner
            .prefilter(true)
            .project(&columns)?
            .with_row_address();
        if let Some(f) = filter {
            scanner.filter(f)?;
        }
        candidates_of(scanner).await
    }

    /// One commit: replaces every chunk of `documents` with `rows` (documents without rows
    /// are deleted), records `properties` in the commit, and returns the new version.
    /// `append`: the caller knows none of `documents` has rows, so `rows` are appended.
    pub async fn commit(
        &self,
        documents: &[String],
        rows: &[ChunkRow],
        properties: HashMap<String, String>,
        append: bool,
    ) -> Result<u64, StoreError> {
        let ds = Arc::new(self.latest());
        let batch = if rows.is_empty() {
            None
        } else {
            // Identical chunk ids within one batch would make the merge ambiguous.
            let mut seen = HashSet::new();
            if let Some(dup) = rows.iter().find(|r| !seen.insert(r.chunk_id.as_str())) {
                return Err(StoreError::Corrupt(format!(
                    "chunk id {} appears twice in one batch",
                    dup.chunk_id
                )));
            }
            let dimensions = self.dimensions.load(std::sync::atomic::Ordering::SeqCst);
            Some(rows_to_batch(rows, dimensions).map_err(StoreError::Corrupt)?)
        };
        let mut transaction = match batch {
            Some(batch) if append => {
                let params = WriteParams {
                    mode: WriteMode::Append,
                    ..Default::default()
                };
                InsertBuilder::new(ds.clone())
                    .with_params(&params)
                    .execute_uncommitted(vec![batch])
                    .await?
            }
            batch => replace_documents(&ds, "chunk_id", documents, batch).await?,
        };
        transaction.transaction_properties = Some(Arc::new(properties));
        self.commit_transaction(ds, transaction).await
    }

    /// The newest version in the store, which another process may have committed.
    pub async fn newest_in_store(&self) -> Result<Dataset, StoreError> {
        let mut newest = self.latest();
        newest.checkout_latest().await?;
        Ok(newest)
    }

    pub fn set_dimensions(&self, dimensions: usize) {
        self.dimensions
            .store(dimensions, std::sync::atomic::Ordering::SeqCst);
    }

    /// Rewrites every row of `ds` as one new version, each scanned batch passed through
    /// `rewrite` first (for a new model: the same rows with new vectors of `dimensions`).
    /// A batch at a time: memory holds a scan batch, not the index. Nothing is committed
    /// unless every batch was rewritten.
    pub async fn overwrite_rewritten<F, Fut>(
        &self,
        ds: &Dataset,
        dimensions: usize,
        properties: HashMap<String, String>,
        rewrite: F,
    ) -> Result<u64, StoreError>
    where
        F: Fn(Vec<ChunkRow>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Vec<ChunkRow>, StoreError>> + Send + 'static,
    {
        use lance::deps::datafusion::error::DataFusionError;
        use lance::deps::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
        let schema = chunk_schema(dimensions);
        let rewrite = Arc::new(rewrite);
        let failed = |e: StoreError| DataFusionError::External(Box::new(e));
        let batches = self
            .stream(ds, &row_columns(false), None)
            .await?
            .map_err(move |e| failed(e.into()))
            .and_then(move |batch| {
                let rewrite = rewrite.clone();
                async move {
                    let rows = batch_to_rows(&batch).map_err(|e| failed(StoreError::Corrupt(e)))?;
                    let rows = rewrite(rows).await.map_err(failed)?;
                    rows_to_batch(&rows, dimensions).map_err(|e| failed(StoreError::Corrupt(e)))
                }
            });
        let source: lance::deps::datafusion::execution::SendableRecordBatchStream =
            Box::pin(RecordBatchStreamAdapter::new(schema, batches));
        let params = WriteParams {
            mode: WriteMode::Overwrite,
            store_params: self.location.store_params(),
            ..Default::default()
        }
        .with_transaction_properties(properties);
        let written = InsertBuilder::new(self.location.uri.as_str())
            .with_params(&params)
            .execute_stream(source)
            .await?;
        let version = written.version_id();
        self.set_dimensions(dimensions);
        *self.latest.lock().expect("lance latest lock") = written;
        Ok(version)
    }

    /// Properties recorded with the commit of `version`.
    pub async fn commit_properties(
        &self,
        version: u64,
    ) -> Result<HashMap<String, String>, StoreError> {
        let tx = self.latest().read_transaction_by_version(version).await?;
        Ok(tx
            .and_then(|t| t.transaction_properties)
            .map(|p| (*p).clone())
            .unwrap_or_default())
    }

    /// Names `version` `tag` (a Lance tag); retention never prunes a tagged version.
    pub async fn tag(&self, tag: &str, version: u64) -> Result<(), StoreError> {
        let ds = self.latest();
        match ds.tags().get_version(tag).await {
            Ok(_) => Ok(ds.tags().update(tag, version).await?),
            Err(_) => Ok(ds.tags().create(tag, version).await?),
        }
    }

    pub async fn untag(&self, tag: &str) -> Result<(), StoreError> {
        Ok(self.latest().tags().delete(tag).await?)
    }

    /// Tags and the versions they name.
    pub async fn tags(&self) -> Result<BTreeMap<String, u64>, StoreError> {
        Ok(self
            .latest()
            .tags()
            .list()
            .await?
            .into_iter()
            .map(|(name, contents)| (name, contents.version))
            .collect())
    }

    /// Deletes versions older than `oldest_kept` (the newest version always stays).
    pub async fn prune_before(&self, oldest_kept: u64) -> Result<(), StoreError> {
        let policy = CleanupPolicy {
            before_version: Some(oldest_kept),
            delete_unverified: false,
            // Tagged versions are kept, not an error.
            error_if_tagged_old_versions: false,
            ..Default::default()
        };
        self.latest().cleanup_with_policy(policy).await?;
        self.versions
            .lock()
            .expect("lance version cache lock")
            .retain(|(v, _)| *v >= oldest_kept);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resident_shortlist_shrinks_with_the_square_root_of_the_rows_below_a_million() {
        let search = ResidentSearch {
            shortlist: 2000,
            hamming_share: 0.005,
        };
        let at = |rows| {
            let s = search.stages(rows);
            (s.by_signs, s.by_hamming)
        };
        assert_eq!(at(1_041_732), (2000, 8000));
        assert_eq!(at(4_000_000), (2000, 20_000));
        assert_eq!(at(104_189), (646, 2584));
        assert_eq!(at(10_000), (500, 2000));
        // A configured shortlist below the floor is kept as it is.
        let small = ResidentSearch {
            shortlist: 300,
            hamming_share: 0.005,
        };
        assert_eq!(small.stages(100_000).by_signs, 300);
    }
}
