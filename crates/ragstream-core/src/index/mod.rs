//! One named index: a Lance dataset (the source of truth) and a tantivy keyword index kept in
//! step with it, sharing one version number.

mod commit_log;
pub mod deleted;
mod info;
mod keyword_max_score;
mod keyword_mirror;
mod keyword_store;
mod known_documents;
mod lance_store;
pub mod maintenance;
mod object_storage;
pub mod ownership;
mod reader;
mod resident_vectors;
pub use crate::store::rows;
pub mod vector_index;
mod versioned_directory;
mod writer;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing::Instrument;

use serde::Serialize;

pub use crate::store::index_storage::IndexStorage;
pub use crate::store::StoreError;
pub use keyword_store::{DisjunctionSearch, KeywordSettings, KeywordStore};
pub use lance_store::{Census, LanceStore, ResidentSearch};
pub use maintenance::Maintenance;
pub use reader::Reader;
pub use rows::ChunkRow;
pub use writer::{
    DocumentOp, StoredCheckpoint, WriteOutcome, WritePlan, Writer, KAFKA_CHECKPOINT, KAFKA_LOG,
};

use crate::graph::store::{GraphStore, GraphVersion, GRAPH_PROPERTY};
use crate::graph::view::GraphView;
use crate::model::IndexName;
use info::{info_bytes, parse_embedder_property, read_info, switch_embedder};
pub use info::{
    AutoCalibration, CalibrationSource, EmbedderEra, IndexDefaults, IndexInfo, EMBEDDER_PROPERTY,
};

/// A consistent view of both stores at one version. While it lives, its version is pinned:
/// retention and maintenance do not prune it from under a running query.
pub struct Snapshot {
    pub version: u64,
    pub dataset: lance::Dataset,
    pub searcher: tantivy::Searcher,
    _pin: VersionPin,
}

/// Versions in use by snapshots, with how many hold each.
#[derive(Default)]
struct VersionPins(std::sync::Mutex<std::collections::BTreeMap<u64, usize>>);

impl VersionPins {
    fn pin(self: &Arc<Self>, version: u64) -> VersionPin {
        *self
            .0
            .lock()
            .expect("version pins lock")
            .entry(version)
            .or_default() += 1;
        VersionPin {
            pins: self.clone(),
            version,
        }
    }

    /// Every version a snapshot holds now.
    fn all(&self) -> BTreeSet<u64> {
        self.0
            .lock()
            .expect("version pins lock")
            .keys()
            .copied()
            .collect()
    }

    fn oldest(&self) -> Option<u64> {
        self.0
            .lock()
            .expect("version pins lock")
            .keys()
            .next()
            .copied()
    }
}

/// Releases its version when dropped.
struct VersionPin {
    pins: Arc<VersionPins>,
    version: u64,
}

impl Drop for VersionPin {
    fn drop(&mut self) {
        let mut pins = self.pins.0.lock().expect("version pins lock");
        if let Some(n) = pins.get_mut(&self.version) {
            *n -= 1;
            if *n == 0 {
                pins.remove(&self.version);
            }
        }
    }
}

/// Figures for `ragstream index stats` and the stats route.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct IndexStats {
    /// The index.
    pub index: String,
    /// The embedder of the newest version's vectors.
    pub embedder: String,
    /// Their dimensions.
    #[schemars(range(min = 1))]
    pub dimensions: usize,
    /// The newest version.
    #[schemars(range(min = 1))]
    pub index_version: u64,
    /// The oldest retained version.
    #[schemars(range(min = 1))]
    pub oldest_version: u64,
    /// Versions still queryable.
    #[schemars(range(min = 1))]
    pub retained_versions: usize,
    /// Live documents (what an active search sees).
    pub documents: usize,
    /// Live chunks.
    pub chunks: usize,
    /// Soft-deleted documents still stored (`deleted` visibility, pinned versions).
    pub deleted_documents: usize,
    /// Soft-deleted chunks still stored.
    pub deleted_chunks: usize,
    /// Rows in the keyword index, live and deleted: chunks + deleted_chunks.
    pub keyword_chunks: u64,
    /// Tagged versions (`ragstream index tag`), each kept from pruning.
    pub tags: std::collections::BTreeMap<String, u64>,
    /// When the index was created (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
}

/// A named index. One process writes to an index at a time (tantivy's writer lock enforces
/// it); any number of queries read pinned snapshots concurrently.
///
/// Its work is split by role, as tantivy splits `IndexReader` and `IndexWriter`: borrow
/// [`Index::reader`] to read, [`Index::writer`] to write documents and settings, and
/// [`Index::maintenance`] to compact, prune, build indexes and rebuild. The index itself
/// keeps what every role shares: its name and info, the stores, the version pins and the
/// write lock.
pub struct Index {
    name: IndexName,
    info: std::sync::RwLock<IndexInfo>,
    lance: LanceStore,
    keyword: KeywordStore,
    graph: GraphStore,
    /// Loaded graph versions, newest last, and which graph version each index version names.
    graph_views: std::sync::Mutex<Vec<(GraphVersion, Arc<GraphView>)>>,
    graph_versions: std::sync::Mutex<std::collections::HashMap<u64, Option<GraphVersion>>>,
    /// A vector-index build or a compaction is running (one at a time).
    vector_build: std::sync::atomic::AtomicBool,
    /// Checks for a due build (one per commit) that have not finished yet: see
    /// [`Maintenance::build_pending`].
    build_checks: std::sync::atomic::AtomicUsize,
    /// Segments of the search indexes already loaded into Lance's cache (see
    /// [`Reader::prewarm_search_indexes`]); held while loading, so that callers wait for one load.
    warmed: tokio::sync::Mutex<Vec<String>>,
    /// Versions that running queries read.
    pins: Arc<VersionPins>,
    retain_versions: u64,
    write_lock: tokio::sync::Mutex<()>,
    /// The index was deleted (see [`Index::lock_for_write`]): no write may commit to it.
    deleted: std::sync::atomic::AtomicBool,
    /// A keyword commit failed after its Lance commit (a full disk): the keyword store is
    /// behind Lance until [`Index::repair`] brings it up, which the next commit or
    /// maintenance pass does first.
    keyword_behind: std::sync::atomic::AtomicBool,
    /// The newest version when the last maintenance pass ended (0: none yet): a pass takes
    /// keyword merges only while no write came since ([`maintenance`]).
    maintained_version: std::sync::atomic::AtomicU64,
    /// Which documents recent commits gave rows to (see [`commit_log`]).
    commits: commit_log::CommitLog,
    /// The document ids the index may hold rows of (see [`known_documents`]).
    known: known_documents::KnownDocuments,
    /// Where the index lives.
    storage: IndexStorage,
    /// Set on a query replica: it reads, never writes.
    replica: Option<object_storage::Replica>,
    /// The newest keyword version published to the object store (a writer on one).
    published: tokio::sync::Mutex<Option<u64>>,
    /// Serialises changes of `index.json`.
    info_writes: tokio::sync::Mutex<()>,
    /// Notified after each commit of documents ([`StoreOptions::committed`]).
    committed: Arc<tokio::sync::Notify>,
    /// Which daemon writes the index (a writer on an object store; see [`ownership`]).
    ownership: Option<ownership::Ownership>,
    /// Closed by the engine because another process changed the index: this handle takes
    /// no more writes (queries holding it finish); a fresh handle does.
    closed: std::sync::atomic::AtomicBool,
    /// The index's per-process files (on local storage, all of them).
    dir: PathBuf,
}

/// Opens the keyword store and reads its newest snapshot. A store tantivy cannot read (a
/// truncated or damaged segment) is set aside as `keyword.damaged-<unix seconds>` and an
/// empty one takes its place: the keyword store is a projection of Lance, so
/// [`Index::repair`] rebuilds its newest version from Lance when the index opens. Older
/// versions then have no keyword snapshot (they answer `version_unavailable`).
fn open_keyword_store(
    name: &IndexName,
    dir: &Path,
    settings: &KeywordSettings,
) -> Result<KeywordStore, StoreError> {
    let path = dir.join("keyword");
    let damage = match KeywordStore::open(&path, settings) {
        Ok(store) => match store.latest_version()?.map(|v| store.searcher(v)) {
            Some(Err(e @ StoreError::Tantivy(_))) => e,
            Some(Err(e)) => return Err(e),
            Some(Ok(_)) | None => return Ok(store),
        },
        Err(e @ StoreError::Tantivy(_)) => e,
        Err(e) => return Err(e),
    };
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let aside = dir.join(format!("keyword.damaged-{seconds}"));
    tracing::error!(index = %name, error = %damage, moved_to = %aside.display(),
        "the keyword store cannot be read; it is set aside and rebuilt from Lance");
    std::fs::rename(&path, &aside)?;
    KeywordStore::open(&path, settings)
}

/// How an index opens its stores.
#[derive(Clone)]
pub struct StoreOptions {
    /// How many of the newest versions stay queryable.
    pub retain_versions: u64,
    /// Lance's caches (opened index partitions, manifests and file metadata). One session
    /// shared by every index bounds the process's total; without one, Lance gives each
    /// dataset it opens a budget of 6 GiB for indexes and 1 GiB for metadata.
    pub lance_session: Arc<lance::session::Session>,
    /// The keyword store's writer budget and merge policy.
    pub keyword: KeywordSettings,
    /// Notified after every commit of a batch of documents, by every index (the keyword
    /// publisher of a writer on an object store waits on it).
    pub committed: Arc<tokio::sync::Notify>,
    /// How many times this process's Kafka partitions were revoked: an index's ownership
    /// claim made before the latest revocation is void ([`ownership`]).
    pub revocations: Arc<std::sync::atomic::AtomicU64>,
}

impl StoreOptions {
    pub fn new(
        retain_versions: u64,
        index_cache_bytes: usize,
        metadata_cache_bytes: usize,
    ) -> Self {
        StoreOptions {
            retain_versions,
            keyword: KeywordSettings::default(),
            committed: Arc::default(),
            revocations: Arc::default(),
            lance_session: Arc::new(lance::session::Session::new(
                index_cache_bytes,
                metadata_cache_bytes,
                Default::default(),
            )),
        }
    }
}

/// Rows the resident vectors' centre is the mean of.
const RESIDENT_CENTER_ROWS: usize = 20_000;

impl Index {
    /// The reading side: snapshots, the graph at a version, stats, checkpoints.
    pub fn reader(&self) -> Reader<'_> {
        Reader { index: self }
    }

    /// The writing side: plan and commit document operations, change settings.
    pub fn writer(&self) -> Writer<'_> {
        Writer { index: self }
    }

    /// Maintenance: compaction, purges, pruning, index builds, tags, rebuilds.
    pub fn maintenance(&self) -> Maintenance<'_> {
        Maintenance { index: self }
    }

    /// Opens an existing index to write it; repairs the keyword store if it is behind
    /// Lance.
    pub async fn open(
        storage: &IndexStorage,
        name: &IndexName,
        options: &StoreOptions,
    ) -> Result<Self, StoreError> {
        let info = read_info(storage, name).await?;
        Self::open_stores(storage, name.clone(), info, options, None).await
    }

    /// Creates the index for `embedder` (or opens it if it exists with the same embedder).
    pub async fn create(
        storage: &IndexStorage,
        name: &IndexName,
        embedder: &str,
        dimensions: usize,
        options: &StoreOptions,
    ) -> Result<Self, StoreError> {
        match Self::open(storage, name, options).await {
            Ok(index) => {
                index.check_embedder(embedder, dimensions)?;
                return Ok(index);
            }
            Err(StoreError::UnknownIndex(_)) => {}
            Err(e) => return Err(e),
        }
        let info = IndexInfo {
            name: name.to_string(),
            embedder: embedder.to_string(),
            dimensions,
            created_at: time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            previous_embedders: Vec::new(),
            defaults: IndexDefaults::default(),
            vector_index_trained_rows: None,
            resident_center: None,
        };
        if let Some(root) = storage.object() {
            // Whatever a delete cut short left under the prefix is not this index's.
            root.remove_index(name).await?;
        }
        // Written before the stores, atomically: an index whose stores a crash left half
        // made is opened (and its stores made) again, never half-read.
        storage.write_info(name, &info_bytes(&info)).await?;
        Self::open_stores(storage, name.clone(), info, options, None).await
    }

    async fn open_stores(
        storage: &IndexStorage,
        name: IndexName,
        info: IndexInfo,
        options: &StoreOptions,
        replica: Option<keyword_mirror::KeywordCache>,
    ) -> Result<Self, StoreError> {
        let retain_versions = options.retain_versions;
        let dir = storage.local_dir(&name);
        let location = |dataset: &str| storage.dataset(&name, dataset);
        let mut info = info;
        let lance = LanceStore::open(
            &location("chunks.lance"),
            info.dimensions,
            options.lance_session.clone(),
            dir.join("resident"),
            replica.is_none(),
        )
        .await
        .map_err(|e| match e {
            StoreError::UnknownIndex(_) => StoreError::UnknownIndex(name.to_string()),
            e => e,
        })?;
        // A reembed that crashed after its Lance commit: finish recording the switch.
        let latest = lance.latest_version();
        if let (None, Some(recorded)) = (
            &replica,
            lance
                .commit_properties(latest)
                .await?
                .get(EMBEDDER_PROPERTY),
        ) {
            let (embedder, dimensions) = parse_embedder_property(recorded)?;
            if (embedder.as_str(), dimensions) != (info.embedder.as_str(), info.dimensions) {
                tracing::warn!(index = %name, %embedder, "finishing an interrupted reembed");
                switch_embedder(&mut info, embedder, dimensions, latest);
                storage.write_info(&name, &info_bytes(&info)).await?;
                lance.set_dimensions(dimensions);
            }
        }
        let keyword = match (&replica, storage.object()) {
            (Some(cache), _) => KeywordStore::open(cache.dir(), &options.keyword)?,
            (None, Some(root)) => {
                keyword_mirror::restore(root, &name, &dir.join("keyword")).await?;
                open_keyword_store(&name, &dir, &options.keyword)?
            }
            (None, None) => open_keyword_store(&name, &dir, &options.keyword)?,
        };
        let graph = GraphStore::open(location("triples.lance"), location("entities.lance")).await?;
        let mut index = Index {
            name,
            info: std::sync::RwLock::new(info),
            info_writes: tokio::sync::Mutex::new(()),
            lance,
            keyword,
            graph,
            graph_views: std::sync::Mutex::new(Vec::new()),
            graph_versions: std::sync::Mutex::new(std::collections::HashMap::new()),
            vector_build: std::sync::atomic::AtomicBool::new(false),
            build_checks: std::sync::atomic::AtomicUsize::new(0),
            warmed: tokio::sync::Mutex::new(Vec::new()),
            pins: Arc::default(),
            retain_versions,
            write_lock: tokio::sync::Mutex::new(()),
            deleted: std::sync::atomic::AtomicBool::new(false),
            keyword_behind: std::sync::atomic::AtomicBool::new(false),
            maintained_version: std::sync::atomic::AtomicU64::new(0),
            commits: commit_log::CommitLog::default(),
            known: known_documents::KnownDocuments::default(),
            storage: storage.clone(),
            replica: replica.map(|cache| object_storage::Replica {
                cache,
                visible: std::sync::atomic::AtomicU64::new(0),
            }),
            published: tokio::sync::Mutex::new(None),
            committed: options.committed.clone(),
            ownership: None,
            closed: std::sync::atomic::AtomicBool::new(false),
            dir,
        };
        if index.replica.is_none() && storage.object().is_some() {
            let seen = index.recorded_owner().await?;
            index.ownership = Some(ownership::Ownership::new(seen, options.revocations.clone()));
        }
        if index.replica.is_none() {
            index.repair().await?;
            index.ensure_resident_center().await?;
        }
        Ok(index)
    }

    /// A query replica refuses every write: the index has one writer.
    fn check_writable(&self) -> Result<(), StoreError> {
        if self.replica.is_some() {
            return Err(StoreError::ReadOnly(self.name.to_string()));
        }
        Ok(())
    }

    /// Writing with another embedder than the one recorded is an error.
    pub fn check_embedder(&self, embedder: &str, dimensions: usize) -> Result<(), StoreError> {
        self.check_embedder_at(self.latest_version(), embedder, dimensions)
    }

    /// Querying `version` with another embedder than the one its vectors came from is an
    /// error (after a reembed, pinned older versions need the older model).
    pub fn check_embedder_at(
        &self,
        version: u64,
        embedder: &str,
        dimensions: usize,
    ) -> Result<(), StoreError> {
        let info = self.info();
        let (recorded, recorded_dimensions) = info.embedder_at(version);
        if recorded != embedder || recorded_dimensions != dimensions {
            return Err(StoreError::EmbedderMismatch {
                index: self.name.to_string(),
                recorded: recorded.to_string(),
                recorded_dimensions,
                given: embedder.to_string(),
                given_dimensions: dimensions,
            });
        }
        Ok(())
    }

    /// The write lock every commit takes, so that commits to one index never interleave. A
    /// deleted index refuses it: a handle still held (a batch planned before the delete, a
    /// maintenance pass) cannot commit into the directory that was moved away.
    pub(crate) async fn lock_for_write(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, ()>, StoreError> {
        self.check_writable()?;
        let guard = self.write_lock.lock().await;
        if self.deleted.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::UnknownIndex(self.name.to_string()));
        }
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::ChangedElsewhere {
                dataset: self.name.to_string(),
                read_version: self.latest_version(),
            });
        }
        Ok(guard)
    }

    pub fn name(&self) -> &IndexName {
        &self.name
    }

    pub fn info(&self) -> IndexInfo {
        self.info.read().expect("index info lock").clone()
    }

    /// The defaults queries run with ([`IndexInfo::query_defaults`]), without copying the
    /// rest of the info: every contract 002 query reads them.
    pub fn query_defaults(&self) -> IndexDefaults {
        self.info.read().expect("index info lock").query_defaults()
    }

    /// Changes `index.json` (written whole) and the copy in memory.
    async fn update_info(
        &self,
        change: impl FnOnce(&mut IndexInfo),
    ) -> Result<IndexInfo, StoreError> {
        self.check_writable()?;
        let _serial = self.info_writes.lock().await;
        let mut next = self.info();
        change(&mut next);
        self.storage
            .write_info(&self.name, &info_bytes(&next))
            .await?;
        *self.info.write().expect("index info lock") = next.clone();
        Ok(next)
    }

    pub fn lance(&self) -> &LanceStore {
        &self.lance
    }

    pub fn keyword(&self) -> &KeywordStore {
        &self.keyword
    }

    pub fn latest_version(&self) -> u64 {
        self.lance.latest_version()
    }

    /// What a commit that changes no chunk (an index build, compaction, a purge) carries over
    /// from the newest version, so that every version still names its graph and its Kafka
    /// checkpoint; on an object store also its owner's claim (refused to any other process).
    pub(crate) async fn carried_properties(
        &self,
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        // On an object store the owner alone changes the index, on its newest version.
        let owner = self.check_maintenance_ownership().await?;
        let props = self
            .lance
            .commit_properties(self.lance.latest_version())
            .await?;
        Ok([GRAPH_PROPERTY, KAFKA_CHECKPOINT, KAFKA_LOG]
            .into_iter()
            .filter_map(|k| props.get(k).map(|v| (k.to_string(), v.clone())))
            .chain(owner.into_iter().flat_map(|o| o.properties()))
            .collect())
    }

    /// Builds the resident vectors' view of the newest Lance version, called before the
    /// keyword store makes that version visible, so that no query waits for its new
    /// fragments to be read. A failure only costs the first query on it that read (it then
    /// reads them itself), so it is logged.
    pub(crate) async fn prepare_resident(&self) {
        if let Err(e) = self
            .read_resident()
            .instrument(tracing::info_span!("resident.prepare"))
            .await
        {
            tracing::warn!(index = %self.name, version = self.lance.latest_version(), error = %e,
                "reading new rows into the resident vectors failed; the first query reads them");
        }
    }

    /// Reads the newest version's rows into the resident vectors (recording the centre
    /// first if due) and reports the codes' size.
    pub(crate) async fn read_resident(&self) -> Result<(), StoreError> {
        self.ensure_resident_center().await?;
        let ds = self.lance.latest();
        let resident = self.lance.prewarm_resident(&ds).await?;
        // An index without resident vectors holds none: 0, not a missing series, so that a
        // dashboard's sum over indexes stays whole.
        let bytes = resident.map_or(0, |(_, bytes)| bytes);
        if let Some(m) = crate::telemetry::metrics() {
            m.index_resident_vector_bytes
                .with_label_values(&[self.name.as_str()])
                .set(i64::try_from(bytes).unwrap_or(i64::MAX));
        }
        Ok(())
    }

    /// Gives the Lance store the centre the index recorded, recording one first if the
    /// index has a vector index and no centre yet (the first build, an index built before
    /// centres were recorded, or a reembed).
    async fn ensure_resident_center(&self) -> Result<(), StoreError> {
        if let Some(center) = self.info().resident_center {
            self.lance.set_resident_center(Some(center));
            return Ok(());
        }
        if self.replica.is_some() {
            // Its writer records the centre before it commits a vector index.
            return Ok(());
        }
        let ds = self.lance.latest();
        if !vector_index::has_index(&ds).await? {
            self.lance.set_resident_center(None);
            return Ok(());
        }
        self.record_resident_center(&ds).await
    }

    /// Records the centre of `ds`'s first rows (once: an index keeps the centre it has).
    /// A vector-index build calls it before it commits, so that the first version with a
    /// vector index already has its centre and a query pinned to it takes the resident
    /// path every time, not only once a later step has recorded the centre.
    pub(crate) async fn record_resident_center(
        &self,
        ds: &lance::Dataset,
    ) -> Result<(), StoreError> {
        if let Some(center) = self.info().resident_center {
            self.lance.set_resident_center(Some(center));
            return Ok(());
        }
        let center = self.lance.center_of(ds, RESIDENT_CENTER_ROWS).await?;
        let info = self
            .update_info(|info| info.resident_center = Some(center))
            .await?;
        self.lance.set_resident_center(info.resident_center);
        Ok(())
    }

    /// The newest version both stores have. Lance commits first and the keyword store under
    /// the same version right after, so between the two the newest answerable version is the
    /// one before (still retained: pruning follows the keyword commit).
    fn visible_version(&self) -> Result<u64, StoreError> {
        if let Some(replica) = &self.replica {
            return Ok(replica.visible.load(std::sync::atomic::Ordering::SeqCst));
        }
        let latest = self.lance.latest_version();
        if self.keyword.searcher(latest).is_ok() {
            return Ok(latest);
        }
        Ok(self
            .keyword
            .latest_version()?
            .filter(|v| *v < latest)
            .unwrap_or(latest))
    }

    /// Commits `transaction`, a maintenance change read at `read` that adds no rows (a purge,
    /// an index build, taking keyword merges), under the newest version's properties, then
    /// brings the other stores to it: the resident vectors, and the keyword store without
    /// `removed`. `crash_point` names the fault tests' point between the two commits. Called
    /// with the write lock held; returns the version.
    pub(crate) async fn commit_without_new_rows(
        &self,
        read: Arc<lance::Dataset>,
        mut transaction: lance::dataset::transaction::Transaction,
        removed: &[String],
        crash_point: Option<&str>,
    ) -> Result<u64, StoreError> {
        transaction.transaction_properties = Some(Arc::new(self.carried_properties().await?));
        let version = self.lance.commit_transaction(read, transaction).await?;
        if let Some(point) = crash_point {
            crate::failpoint::abort_at(point);
        }
        self.commits
            .record(version, commit_log::Change::NoRowsAdded);
        self.prepare_resident().await;
        self.commit_keyword(version, removed, &[])?;
        Ok(version)
    }

    /// Commits `removed` and `added` to the keyword store as `version`, whose Lance commit
    /// has landed. A failure (a full disk) marks the keyword store behind, so that the next
    /// write or maintenance pass repairs it first ([`Index::repair_if_behind`]).
    pub(crate) fn commit_keyword(
        &self,
        version: u64,
        removed: &[String],
        added: &[ChunkRow],
    ) -> Result<(), StoreError> {
        self.keyword
            .apply(version, removed, added)
            .inspect_err(|_| self.mark_keyword_behind())
    }

    /// Records that a keyword commit failed after its Lance commit.
    pub(crate) fn mark_keyword_behind(&self) {
        self.keyword_behind
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Replays what the keyword store lacks after a failed commit ([`Index::repair`]).
    /// Called with the write lock held, before a write or a maintenance pass commits.
    pub(crate) async fn repair_if_behind(&self) -> Result<(), StoreError> {
        if self
            .keyword_behind
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            self.repair().await?;
            self.keyword_behind
                .store(false, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    }

    /// Brings the keyword store up to Lance after a crash between the two commits: replays
    /// each missing Lance version as a diff of chunk rows, committing it under the same
    /// version. Lance is the source of truth.
    pub async fn repair(&self) -> Result<Vec<u64>, StoreError> {
        let latest = self.lance.latest_version();
        let done = self.keyword.latest_version()?;
        if done == Some(latest) {
            return Ok(Vec::new());
        }
        let available = self.lance.versions().await?;
        let mut previous = done.filter(|d| available.contains(d));
        let missing: Vec<u64> = match previous {
            Some(p) => available.iter().copied().filter(|v| *v > p).collect(),
            // Nothing to diff against: rebuild the newest version only.
            None => vec![latest],
        };
        for &version in &missing {
            let current = self
                .lance
                .rows_where(&self.lance.at(version).await?, None, false)
                .await?;
            match previous {
                Some(p) => {
                    let before = self
                        .lance
                        .rows_where(&self.lance.at(p).await?, None, false)
                        .await?;
                    let (removed, added) = writer::diff(&before, current);
                    self.keyword.apply(version, &removed, &added)?;
                }
                None => self.keyword.replace_all(version, &current)?,
            }
            if done.is_some() {
                tracing::warn!(index = %self.name, version, "repaired keyword index from Lance");
            } else {
                tracing::info!(index = %self.name, version, "built keyword index from Lance");
            }
            previous = Some(version);
        }
        Ok(missing)
    }

    /// Prunes versions beyond the retention policy from both stores, except versions a
    /// running query reads and versions a Lance tag names (Lance's cleanup keeps those; the
    /// keyword store keeps whatever Lance kept). `slack`: prune only once more than
    /// `slack` versions are past the policy (see [`Index::commit_retention_slack`]).
    async fn apply_retention(&self, slack: u64) -> Result<(), StoreError> {
        let latest = self.lance.latest_version();
        let mut oldest_kept = latest.saturating_sub(self.retain_versions - 1).max(1);
        if let Some(pinned) = self.pins.oldest() {
            oldest_kept = oldest_kept.min(pinned);
        }
        let mut versions = self.lance.versions().await?;
        let past = versions.partition_point(|v| *v < oldest_kept) as u64;
        // Tagged versions stay whatever their age: they do not count towards the slack
        // (the tags are read only when the versions past the policy are enough without).
        let due = past > slack && {
            // One version can carry several tags.
            let tagged: BTreeSet<u64> = self.lance.tags().await?.into_values().collect();
            past.saturating_sub(tagged.range(..oldest_kept).count() as u64) > slack
        };
        if due {
            self.lance.prune_before(oldest_kept).await?;
            versions = self.lance.versions().await?;
            // Graph versions older than the one the oldest kept index version names go too.
            let oldest = *versions.first().unwrap_or(&latest);
            if let Some(graph) = self.graph_version_at(oldest).await? {
                self.graph.prune_before(graph).await?;
            }
        }
        // A keyword snapshot goes only once it is older than the policy keeps and Lance has
        // pruned its version: a Lance listing that misses a version for a moment (seen under
        // load, while a build commits) must not cost the keyword store a version it needs.
        let keyword_versions = self.keyword.versions()?;
        let keep: BTreeSet<u64> = versions
            .into_iter()
            .chain(
                keyword_versions
                    .iter()
                    .copied()
                    .filter(|v| *v >= oldest_kept),
            )
            .collect();
        if keyword_versions.iter().any(|v| !keep.contains(v)) {
            self.keyword.retain(&keep)?;
        }
        Ok(())
    }

    /// The newest Lance version, pinned while the pin lives: work that reads it outside the
    /// write lock and commits much later keeps it from retention until then. (A compaction's
    /// commit reads the manifest of the version it rewrote from; under a high commit rate a
    /// long rewrite outlasted the versions retention keeps, and the pass failed.)
    fn latest_pinned(&self) -> (lance::Dataset, VersionPin) {
        let dataset = self.lance.latest();
        let pin = self.pins.pin(dataset.version().version);
        (dataset, pin)
    }

    /// Versions a commit lets pile up past the retention policy before it prunes: a tenth
    /// of the policy. Lance's cleanup reads the manifest of every version on disk and lists
    /// every file, so pruning one version per commit, once the policy's versions are there,
    /// cost each commit more as the index grew. Maintenance passes prune with no slack.
    fn commit_retention_slack(&self) -> u64 {
        self.retain_versions / 10
    }

    /// The graph versions index version `version` goes with (`None`: it has no graph).
    pub async fn graph_version_at(&self, version: u64) -> Result<Option<GraphVersion>, StoreError> {
        self.lance
            .commit_properties(version)
            .await?
            .get(GRAPH_PROPERTY)
            .map(|p| GraphVersion::parse(p))
            .transpose()
    }

    /// Sets the gauges that describe the newest version: fragments, rows, versions on disk,
    /// keyword segments.
    async fn record_shape(&self) -> Result<(), StoreError> {
        let Some(m) = crate::telemetry::metrics() else {
            return Ok(());
        };
        let name = self.name.as_str();
        let (fragments, rows) = self.lance.shape().await?;
        let versions = self.lance.versions().await?.len();
        // The keyword snapshot of the newest version lands after its Lance commit: a pass
        // that reads between the two keeps the gauge's last value.
        let segments = self.keyword.segments(self.lance.latest_version()).ok();
        for (gauge, value) in [
            (&m.index_fragments, Some(fragments)),
            (&m.index_rows, Some(rows)),
            (&m.index_versions, Some(versions)),
            (&m.index_keyword_segments, segments),
        ] {
            if let Some(value) = value {
                gauge
                    .with_label_values(&[name])
                    .set(i64::try_from(value).unwrap_or(i64::MAX));
            }
        }
        Ok(())
    }
}
