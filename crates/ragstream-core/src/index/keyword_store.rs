//! The keyword store: a tantivy BM25 index over title + chunk text, with every filterable
//! metadata field indexed as an exact term. It is a projection of the Lance table: each
//! commit carries the Lance version as its payload, and it can be rebuilt from Lance.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tantivy::collector::TopDocs;
use tantivy::indexer::{
    IndexWriterOptions, LogMergePolicy, MergeCandidate, MergePolicy, NoMergePolicy,
};
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::Value as _;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term};

use super::rows::ChunkRow;
use super::versioned_directory::VersionedDirectory;
use super::StoreError;
use crate::store::filters::{
    Filters, Visibility, FILTER_COLUMNS, METADATA_TERMS_FIELD, VISIBILITY_FIELD,
};

const ANALYZER: &str = "ragstream_en";
/// A distinct query term and how often the query repeats it.
type RepeatedTerm = (Term, u32);
/// Pinned searchers kept open.
const SEARCHER_CACHE: usize = 8;

/// How the keyword store writes and searches: the configuration's `[index.keyword]`
/// (measured in docs/benchmark-history.md, "The keyword store under streaming commits").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KeywordSettings {
    /// tantivy's indexing budget (`writer_memory_mb`, at least 15): a segment is flushed when
    /// it fills (and at every commit, so streaming batches never reach it; it bounds bulk
    /// loads and rebuilds).
    #[serde(rename = "writer_memory_mb", with = "crate::units::mib")]
    pub writer_memory_bytes: usize,
    /// Merge once this many segments of about the same size exist (tantivy's log merge
    /// policy); 0: never merge.
    pub merge_min_segments: usize,
    /// A segment holding more live chunks than this takes part in no more merges, so that a
    /// large index stays in several segments, which a query searches on all cores at once
    /// (one segment is searched by one thread); 0: no limit. Segments still grow past it by
    /// merging smaller ones (up to `merge_min_segments` times it), and one that deletes bring
    /// back under it merges again.
    pub merge_max_docs: usize,
    /// A query with more distinct terms than this searches only this many, the rarest in the
    /// snapshot (the highest IDF, which carry most of BM25's weight): a long query's cost
    /// grows with its terms, the common ones most; 0 (the default): every term. An
    /// approximation, opt-in: the terms it left out are in the answer's debug output.
    pub max_query_terms: usize,
    /// How the top chunks of a bare disjunction of terms (a query without filters) are
    /// found; both give the same ranking.
    pub disjunction_search: DisjunctionSearch,
}

/// How the top-k of a bare disjunction is found (`index.keyword.disjunction_search`).
/// Measured at a million chunks (docs/benchmark-history.md, "MaxScore or block-max WAND, as what
/// runs"): the hybrid p99 did not move between the two, and MaxScore's keyword step was
/// the faster when each went first in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DisjunctionSearch {
    /// tantivy's block-max WAND (`TopDocs`).
    BlockMaxWand,
    /// ragstream's MaxScore (`keyword_max_score.rs`).
    #[default]
    MaxScore,
}

impl Default for KeywordSettings {
    fn default() -> Self {
        KeywordSettings {
            writer_memory_bytes: 64 << 20,
            merge_min_segments: 8,
            // Segments of about 100,000 live chunks keep a large index searchable on every
            // core (docs/benchmark-history.md, "The keyword tail at a million chunks").
            merge_max_docs: 100_000,
            // Every term: dropping common terms changes answers, and on long queries by far
            // more than on short ones (BENCHMARKS.md, "Exact by default").
            max_query_terms: 0,
            disjunction_search: DisjunctionSearch::default(),
        }
    }
}

impl KeywordSettings {
    /// Settings from configuration units: the budget in MiB.
    pub fn from_mib(
        writer_memory_mib: usize,
        merge_min_segments: usize,
        merge_max_docs: usize,
    ) -> Self {
        KeywordSettings {
            writer_memory_bytes: writer_memory_mib.saturating_mul(1 << 20),
            merge_min_segments,
            merge_max_docs,
            ..KeywordSettings::default()
        }
    }

    /// What is wrong with the settings, as (configuration key, reason); `None` when usable.
    pub fn problem(&self) -> Option<(&'static str, &'static str)> {
        if self.writer_memory_bytes < MIN_WRITER_MEMORY_BYTES {
            return Some((
                "keyword.writer_memory_mb",
                "must be at least 15 (tantivy's smallest budget)",
            ));
        }
        if self.merge_min_segments == 1 {
            return Some((
                "keyword.merge_min_segments",
                "must be 0 (never merge) or at least 2",
            ));
        }
        None
    }
}

/// tantivy's smallest indexing budget (a writer refuses less).
const MIN_WRITER_MEMORY_BYTES: usize = 15_000_000;

struct Fields {
    chunk_id: Field,
    content: Field,
    filters: HashMap<&'static str, Field>,
}

pub struct KeywordStore {
    dir: VersionedDirectory,
    index: Index,
    fields: Fields,
    /// Created on the first write, so that readers never take tantivy's writer lock.
    writer: Mutex<Option<IndexWriter>>,
    /// Which segments to merge after a commit or a maintenance pass (`None`: never).
    merge_policy: Option<LogMergePolicy>,
    /// The merges started after a commit or by a maintenance pass, running on tantivy's
    /// merge threads while the next batches are indexed and committed
    /// ([`KeywordStore::start_due_merges`]).
    merges: Mutex<Option<MergesInFlight>>,
    /// Whether the writer's merge threads were moved to the background priority (they live
    /// as long as the writer, so once per writer; `/proc` is not read at every round).
    merge_threads_moved: std::sync::atomic::AtomicBool,
    writer_memory_bytes: usize,
    max_query_terms: usize,
    disjunction_search: DisjunctionSearch,
    searchers: Mutex<Vec<(u64, Searcher)>>,
}

/// A keyword query bound to the snapshot it searches.
pub struct KeywordQuery {
    searcher: Searcher,
    query: Box<dyn Query>,
    /// The terms and boosts of `query` when it is a bare disjunction of them (no filter),
    /// which `MaxScore` can answer (`keyword_max_score`).
    disjunction: Option<Vec<(Term, f32)>>,
    disjunction_search: DisjunctionSearch,
    chunk_id: Field,
    dropped_terms: Vec<String>,
}

impl KeywordQuery {
    /// The analysed query terms left out as too common (`max_query_terms`), in query order.
    pub fn dropped_terms(&self) -> &[String] {
        &self.dropped_terms
    }

    /// BM25 top `limit` chunk ids with their scores.
    pub fn top(&self, limit: usize) -> Result<Vec<(String, f32)>, StoreError> {
        self.top_by(limit, self.disjunction_search)
    }

    /// [`KeywordQuery::top`] with a bare disjunction searched by `search` whatever the
    /// settings say: what `ragstream bench scale` times the two with.
    pub fn top_by(
        &self,
        limit: usize,
        search: DisjunctionSearch,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let top = match (&self.disjunction, search) {
            (Some(terms), DisjunctionSearch::MaxScore) => {
                super::keyword_max_score::top_k(&self.searcher, terms, limit)?
            }
            _ => {
                let collector = TopDocs::with_limit(limit).order_by_score();
                self.searcher.search(&self.query, &collector)?
            }
        };
        self.chunk_ids(top)
    }

    fn chunk_ids(
        &self,
        top: Vec<(f32, tantivy::DocAddress)>,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        let searcher = &self.searcher;
        top.into_iter()
            .map(|(score, addr)| {
                let doc: TantivyDocument = searcher.doc(addr)?;
                let id = match doc.get_first(self.chunk_id).and_then(|v| v.as_str()) {
                    Some(s) => s.to_string(),
                    None => return Err(StoreError::Corrupt("keyword hit without chunk_id".into())),
                };
                Ok((id, score))
            })
            .collect()
    }
}

/// What tantivy names its merge threads (`merge_thread_{i}`, tantivy 0.27's
/// `SegmentUpdater`).
const TANTIVY_MERGE_THREADS: &str = "merge_thread_";

/// A round of merges running on tantivy's merge threads, watched by a thread of its own (a
/// failed merge is not fatal: its segments stay as they were and merge in a later round).
struct MergesInFlight(std::thread::JoinHandle<()>);

type MergeResult = tantivy::FutureResult<Option<tantivy::SegmentMeta>>;

fn log_failed(merge: MergeResult) {
    if let Err(e) = merge.wait() {
        tracing::warn!(error = %e, "keyword merge failed; its segments stay unmerged");
    }
}

impl MergesInFlight {
    /// Starts merging each of `candidates`. Without a thread to watch them, they run to the
    /// end here, as a round that is never in flight.
    fn start(writer: &mut IndexWriter, candidates: Vec<MergeCandidate>) -> Option<Self> {
        if candidates.is_empty() {
            return None;
        }
        let (tx, rx) = std::sync::mpsc::channel::<MergeResult>();
        let watcher = std::thread::Builder::new()
            .name("keyword-merges".into())
            .spawn(move || rx.into_iter().for_each(log_failed));
        let watcher = match watcher {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::warn!(error = %e, "no thread to watch keyword merges; merging in the commit");
                None
            }
        };
        for candidate in candidates {
            let merge = writer.merge(&candidate.0);
            match &watcher {
                Some(_) => {
                    if let Err(unwatched) = tx.send(merge) {
                        log_failed(unwatched.0);
                    }
                }
                None => log_failed(merge),
            }
        }
        watcher.map(MergesInFlight)
    }

    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    fn wait(self) {
        if self.0.join().is_err() {
            tracing::warn!("keyword merge watcher panicked");
        }
    }
}

fn schema() -> Schema {
    let mut b = Schema::builder();
    b.add_text_field("chunk_id", STRING | STORED);
    let content = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    b.add_text_field("content", content);
    for (name, _) in FILTER_COLUMNS {
        b.add_text_field(name, STRING);
    }
    b.add_text_field("tags", STRING);
    b.add_text_field(METADATA_TERMS_FIELD, STRING);
    b.add_text_field(VISIBILITY_FIELD, STRING);
    b.build()
}

/// English analysis close to Lucene's EnglishAnalyzer: split on non-alphanumerics, drop
/// over-long tokens, lower-case, drop stop words, Porter-style stemming.
fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words are built in"))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// The threads every snapshot's searches run their segments on, shared by all indexes: a
/// query over several segments uses the cores the vector search is not using.
fn search_executor() -> tantivy::Executor {
    static EXECUTOR: std::sync::OnceLock<tantivy::Executor> = std::sync::OnceLock::new();
    EXECUTOR
        .get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            tantivy::Executor::multi_thread(threads, "keyword-search-").unwrap_or_else(|e| {
                tracing::warn!(error = %e, "no keyword search threads; searching on the caller's");
                tantivy::Executor::SingleThread
            })
        })
        .clone()
}

/// The files of every segment `index`'s commit (live or pinned) references.
fn segment_files(index: &Index) -> Result<BTreeSet<PathBuf>, StoreError> {
    Ok(index
        .load_metas()?
        .list_segment_files()
        .into_iter()
        .collect())
}

/// The file names a keyword snapshot (the bytes of a `meta.v<N>.json`) may need: tantivy
/// lists candidates, some of which need not exist.
pub fn snapshot_files(meta: &[u8]) -> Result<BTreeSet<String>, StoreError> {
    let dir = tantivy::directory::RamDirectory::create();
    tantivy::Directory::atomic_write(&dir, Path::new("meta.json"), meta)?;
    let metas = Index::open(dir)?.load_metas()?;
    Ok(metas
        .list_segment_files()
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

fn open_index(dir: VersionedDirectory) -> tantivy::Result<Index> {
    let index = if Index::exists(&dir)? {
        Index::open(dir)?
    } else {
        Index::create(dir, schema(), tantivy::IndexSettings::default())?
    };
    index.tokenizers().register(ANALYZER, analyzer());
    Ok(index)
}

/// Keyword changes staged and not yet committed ([`KeywordStore::stage`]). Dropped without
/// a successful [`Staged::commit`] — the Lance commit failed, panicked or was cancelled —
/// they are discarded, so that they can never be committed under a later version.
#[must_use = "staged keyword changes are discarded unless committed"]
pub struct Staged<'a> {
    store: &'a KeywordStore,
    committed: bool,
}

impl Staged<'_> {
    /// Commits the staged changes as `version`, then runs the merges that are due.
    pub fn commit(mut self, version: u64) -> Result<(), StoreError> {
        self.store.commit_staged(version)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if !self.committed {
            self.store.discard_staged();
        }
    }
}

impl Drop for KeywordStore {
    /// A store closing lets its merges finish rather than leave half-written segments.
    fn drop(&mut self) {
        self.finish_merges();
    }
}

impl KeywordStore {
    pub fn open(path: &Path, settings: &KeywordSettings) -> Result<Self, StoreError> {
        let mut dir = VersionedDirectory::open(path)?;
        let mut index = open_index(dir.clone())?;
        if index.schema().get_field(VISIBILITY_FIELD).is_err() {
            // Written before soft deletes: the store is a projection of Lance, so it is
            // dropped and rebuilt from Lance (Index::repair) rather than migrated.
            tracing::warn!(path = %path.display(), "keyword index predates soft deletes; rebuilding it from Lance");
            drop(index);
            std::fs::remove_dir_all(path)?;
            dir = VersionedDirectory::open(path)?;
            index = open_index(dir.clone())?;
        }
        let s = index.schema();
        let field = |name: &str| s.get_field(name);
        let fields = Fields {
            chunk_id: field("chunk_id")?,
            content: field("content")?,
            filters: FILTER_COLUMNS
                .iter()
                .map(|(n, _)| *n)
                .chain(["tags", METADATA_TERMS_FIELD, VISIBILITY_FIELD])
                .map(|n| Ok((n, field(n)?)))
                .collect::<tantivy::Result<_>>()?,
        };
        Ok(KeywordStore {
            dir,
            index,
            fields,
            writer: Mutex::new(None),
            merge_policy: (settings.merge_min_segments > 0).then(|| {
                let mut policy = LogMergePolicy::default();
                policy.set_min_num_segments(settings.merge_min_segments);
                if settings.merge_max_docs > 0 {
                    policy.set_max_docs_before_merge(settings.merge_max_docs);
                }
                policy
            }),
            writer_memory_bytes: settings.writer_memory_bytes.max(MIN_WRITER_MEMORY_BYTES),
            max_query_terms: settings.max_query_terms,
            disjunction_search: settings.disjunction_search,
            searchers: Mutex::new(Vec::new()),
            merges: Mutex::new(None),
            merge_threads_moved: Default::default(),
        })
    }

    /// How a query without filters finds its top chunks.
    pub fn disjunction_search(&self) -> DisjunctionSearch {
        self.disjunction_search
    }

    /// The Lance version of the newest commit, or `None` for a never-committed index.
    pub fn latest_version(&self) -> Result<Option<u64>, StoreError> {
        let metas = self.index.load_metas()?;
        Ok(metas.payload.and_then(|p| p.parse().ok()))
    }

    /// Versions with a readable snapshot, ascending.
    pub fn versions(&self) -> Result<Vec<u64>, StoreError> {
        Ok(self.dir.versions()?)
    }

    /// Removes the chunks `removed`, adds `added`, and commits as `version`.
    pub fn apply(
        &self,
        version: u64,
        removed: &[String],
        added: &[ChunkRow],
    ) -> Result<(), StoreError> {
        self.stage(removed, added)?.commit(version)
    }

    /// Hands the removal of `removed` and the addition of `added` to tantivy's indexing
    /// thread and returns at once, so that the caller can commit Lance while tantivy indexes;
    /// [`Staged::commit`] then commits them under Lance's version. The caller holds the
    /// index's write lock until then: whatever another caller staged or committed in between
    /// would be mixed into the same commit.
    pub fn stage(&self, removed: &[String], added: &[ChunkRow]) -> Result<Staged<'_>, StoreError> {
        // Made before the writer's lock is taken, so that on an error it is dropped (and
        // discards what was already handed over) after the lock is released.
        let staged = Staged {
            store: self,
            committed: false,
        };
        let mut guard = self.writer.lock().expect("keyword writer lock");
        let writer = self.writer_in(&mut guard)?;
        for id in removed {
            writer.delete_term(Term::from_field_text(self.fields.chunk_id, id));
        }
        for row in added {
            writer.add_document(self.document(row))?;
        }
        Ok(staged)
    }

    /// Commits what was staged as `version`, then starts the merges that are due.
    fn commit_staged(&self, version: u64) -> Result<(), StoreError> {
        let mut guard = self.writer.lock().expect("keyword writer lock");
        let writer = self.writer_in(&mut guard)?;
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&version.to_string());
        commit.commit()?;
        self.start_due_merges_with(writer)
    }

    /// Starts the merges due on the live commit, unless a round is still running.
    ///
    /// Tantivy's log merge policy picks segments of similar size (a commit's small segment
    /// joins other small ones; big segments merge only with big ones), so the work per
    /// commit stays proportional to what it added rather than to the index. The merges run
    /// in the background, while the next batches are embedded, indexed and committed (a
    /// merge of big segments takes seconds); each one rewrites the live commit only, while
    /// the snapshot of the commit's version stays as committed and pinned answers keep their
    /// exact BM25 statistics. One round at a time: a round still running when the next commit
    /// lands holds its segments, and the next commit (or maintenance pass,
    /// [`KeywordStore::start_due_merges`]) plans the next round.
    fn start_due_merges_with(&self, writer: &mut IndexWriter) -> Result<(), StoreError> {
        let Some(policy) = &self.merge_policy else {
            return Ok(());
        };
        let mut merges = self.merges.lock().expect("keyword merges lock");
        if merges.as_ref().is_some_and(|m| !m.is_finished()) {
            return Ok(());
        }
        if let Some(finished) = merges.take() {
            finished.wait();
        }
        let candidates = self.due_merges(policy)?;
        // Merges are background work: the commit is done and searches see its segments
        // either way, so they run at `index.maintenance.background_priority` like maintenance
        // passes (at normal priority, one merge thread still took a core from the queries for
        // seconds at a time). Tantivy starts its merge threads without a hook for that, so
        // they are moved by name, before the writer's first round (they have long set their
        // names by then).
        if !candidates.is_empty()
            && !self
                .merge_threads_moved
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            let moved = crate::runtime::background::demote_threads_named(TANTIVY_MERGE_THREADS);
            self.merge_threads_moved
                .store(moved > 0, std::sync::atomic::Ordering::Relaxed);
        }
        *merges = MergesInFlight::start(writer, candidates);
        Ok(())
    }

    /// Starts the merges due on the live commit, unless a round is running: for a round
    /// that failed or was skipped (a commit that lands while a round runs plans none), and
    /// for a process that opened an index without writing to it. Opens the writer only when
    /// a merge is due.
    pub fn start_due_merges(&self) -> Result<(), StoreError> {
        let Some(policy) = &self.merge_policy else {
            return Ok(());
        };
        if self.merging() || self.due_merges(policy)?.is_empty() {
            return Ok(());
        }
        let mut guard = self.writer.lock().expect("keyword writer lock");
        let writer = self.writer_in(&mut guard)?;
        self.start_due_merges_with(writer)
    }

    /// The merges `policy` picks among the live commit's segments.
    fn due_merges(&self, policy: &LogMergePolicy) -> Result<Vec<MergeCandidate>, StoreError> {
        Ok(policy.compute_merge_candidates(&self.index.searchable_segment_metas()?))
    }

    /// The segments of `version`'s snapshot, read from its commit point (no segment opened).
    fn committed_segments(&self, version: u64) -> Result<Vec<tantivy::SegmentMeta>, StoreError> {
        Ok(Index::open(self.dir.pinned(version))?.searchable_segment_metas()?)
    }

    /// Segments of `version`'s snapshot (a query searches each).
    pub fn segments(&self, version: u64) -> Result<usize, StoreError> {
        Ok(self.committed_segments(version)?.len())
    }

    /// Whether merges that ended since the commit of `version` (the newest) left the live
    /// commit with other segments than that version's snapshot: the same chunks, in fewer,
    /// larger segments, which queries search from the next commit on. `false` while a round
    /// runs (it is taken whole once it ends), and when `version` is not the store's newest
    /// commit.
    pub fn merged_since(&self, version: u64) -> Result<bool, StoreError> {
        if self.merging() || self.latest_version()? != Some(version) {
            return Ok(false);
        }
        let ids = |metas: Vec<tantivy::SegmentMeta>| -> BTreeSet<_> {
            metas.iter().map(tantivy::SegmentMeta::id).collect()
        };
        Ok(ids(self.index.searchable_segment_metas()?) != ids(self.committed_segments(version)?))
    }

    /// Waits for the merges in flight. Called with the writer's lock held (so that none
    /// starts until the caller is done) before the writer is dropped or cleared.
    fn finish_merges(&self) {
        let merges = self.merges.lock().expect("keyword merges lock").take();
        if let Some(merges) = merges {
            merges.wait();
        }
    }

    /// Whether a round of merges is running.
    fn merging(&self) -> bool {
        let merges = self.merges.lock().expect("keyword merges lock");
        merges.as_ref().is_some_and(|m| !m.is_finished())
    }

    /// Drops the writer with whatever it holds uncommitted (tantivy's own `rollback` would
    /// bring back its default merge policy); the next write opens a new one. Files it had
    /// flushed are referenced by no snapshot, and retention deletes them.
    fn discard_staged(&self) {
        let mut guard = self.writer.lock().expect("keyword writer lock");
        self.finish_merges();
        drop(guard.take());
    }

    /// Replaces the whole index with `rows` and commits as `version` (rebuild from Lance).
    pub fn replace_all(&self, version: u64, rows: &[ChunkRow]) -> Result<(), StoreError> {
        {
            let mut guard = self.writer.lock().expect("keyword writer lock");
            self.finish_merges();
            self.writer_in(&mut guard)?.delete_all_documents()?;
        }
        self.apply(version, &[], rows)
    }

    /// The index writer, taking tantivy's writer lock on first use (another process writing
    /// the same index is a `LockBusy` error).
    fn writer_in<'a>(
        &self,
        slot: &'a mut Option<IndexWriter>,
    ) -> Result<&'a mut IndexWriter, StoreError> {
        if slot.is_none() {
            // One indexing thread, and one merge thread: a round's merges run one after
            // another, as they did inside the commit, rather than taking every core at once
            // from the queries and the next batches: with four merge threads, tantivy's
            // default, the hybrid p99 under streaming ingestion rose far more over a run
            // than with one (docs/benchmark-history.md, "Keyword merges in the background").
            let options = IndexWriterOptions::builder()
                .num_worker_threads(1)
                .num_merge_threads(1)
                .memory_budget_per_thread(self.writer_memory_bytes)
                .build();
            let writer: IndexWriter = self.index.writer_with_options(options)?;
            writer.set_merge_policy(Box::new(NoMergePolicy));
            *slot = Some(writer);
            // A new writer has new merge threads.
            self.merge_threads_moved
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(slot.as_mut().expect("just created"))
    }

    fn document(&self, row: &ChunkRow) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.fields.chunk_id, &row.chunk_id);
        doc.add_text(self.fields.content, row.search_text());
        for (name, _) in FILTER_COLUMNS {
            if let Some(term) = row.column_term(name) {
                doc.add_text(self.fields.filters[name], term);
            }
        }
        for tag in &row.tags {
            doc.add_text(self.fields.filters["tags"], tag);
        }
        for term in row.metadata_terms() {
            doc.add_text(self.fields.filters[METADATA_TERMS_FIELD], term);
        }
        let visibility = if row.is_deleted() {
            Visibility::Deleted
        } else {
            Visibility::Active
        };
        if let Some(term) = visibility.term() {
            doc.add_text(self.fields.filters[VISIBILITY_FIELD], term);
        }
        doc
    }

    /// A searcher over the index exactly as committed for `version`.
    pub fn searcher(&self, version: u64) -> Result<Searcher, StoreError> {
        let mut cache = self.searchers.lock().expect("searcher cache lock");
        if let Some((_, s)) = cache.iter().find(|(v, _)| *v == version) {
            return Ok(s.clone());
        }
        if !self.dir.versions()?.contains(&version) {
            return Err(StoreError::KeywordSnapshotMissing(version));
        }
        let reader = self.pinned_reader(version)?;
        let searcher = reader.searcher();
        if cache.len() >= SEARCHER_CACHE {
            cache.remove(0);
        }
        cache.push((version, searcher.clone()));
        Ok(searcher)
    }

    fn pinned_reader(&self, version: u64) -> Result<IndexReader, StoreError> {
        let mut index = open_index(self.dir.pinned(version))?;
        index.set_executor(search_executor());
        Ok(index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?)
    }

    /// BM25 top `limit` chunk ids for `query`, restricted by `filters`. Ties keep tantivy's
    /// document order, which is fixed for a given snapshot.
    pub fn search(
        &self,
        searcher: &Searcher,
        query: &str,
        filters: &Filters,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        match self.prepare(searcher, query, filters)? {
            Some(q) => q.top(limit),
            None => Ok(Vec::new()),
        }
    }

    /// The query for `query` restricted by `filters` on `searcher`, ready to run on any
    /// thread (the hybrid search runs it on the blocking pool next to the vector search).
    /// `None` when the query has no searchable term.
    /// The terms the content analyser makes of `text`, in order (repeats kept): what a query
    /// or a chunk is searched and indexed as.
    pub fn analyze(&self, text: &str) -> Result<Vec<String>, StoreError> {
        let mut analyzer = self.index.tokenizer_for_field(self.fields.content)?;
        let mut stream = analyzer.token_stream(text);
        let mut terms = Vec::new();
        while let Some(token) = stream.next() {
            terms.push(token.text.clone());
        }
        Ok(terms)
    }

    pub fn prepare(
        &self,
        searcher: &Searcher,
        query: &str,
        filters: &Filters,
    ) -> Result<Option<KeywordQuery>, StoreError> {
        let (terms, dropped_terms) = self.searched_terms(searcher, query)?;
        if terms.is_empty() {
            return Ok(None);
        }
        let weighted: Vec<(Term, f32)> = terms
            .iter()
            .map(|(term, n)| (term.clone(), *n as f32))
            .collect();
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .map(|(term, n)| {
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                // A repeated term scores as that many clauses of it did, in one posting
                // walk (MaxScore boosts the term the same way).
                let q: Box<dyn Query> = if n > 1 {
                    Box::new(BoostQuery::new(q, n as f32))
                } else {
                    q
                };
                (Occur::Should, q)
            })
            .collect();
        let text_query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let mut all: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, text_query)];
        for clause in &filters.clauses {
            let field = self.fields.filters[clause.field_name()];
            let alternatives: Vec<(Occur, Box<dyn Query>)> = clause
                .terms()
                .iter()
                .map(|t| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(field, t),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect();
            // Filters select; they must not change the BM25 score.
            let filter = ConstScoreQuery::new(Box::new(BooleanQuery::new(alternatives)), 0.0);
            all.push((Occur::Must, Box::new(filter)));
        }
        if let Some(prefix) = &filters.path_prefix {
            // Either citation field may hold the path; the pattern is the escaped prefix.
            let pattern = format!("{}.*", regex::escape(prefix));
            let mut either: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for name in ["source_path", "uri"] {
                let q =
                    tantivy::query::RegexQuery::from_pattern(&pattern, self.fields.filters[name])?;
                either.push((Occur::Should, Box::new(q)));
            }
            let filter = ConstScoreQuery::new(Box::new(BooleanQuery::new(either)), 0.0);
            all.push((Occur::Must, Box::new(filter)));
        }
        if let Some(term) = filters.visibility.term() {
            let q = TermQuery::new(
                Term::from_field_text(self.fields.filters[VISIBILITY_FIELD], term),
                IndexRecordOption::Basic,
            );
            all.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(q), 0.0)),
            ));
        }
        if let Some(after) = &filters.updated_after {
            let field = self.fields.filters["updated_at"];
            let range = tantivy::query::RangeQuery::new(
                std::ops::Bound::Excluded(Term::from_field_text(field, after)),
                std::ops::Bound::Unbounded,
            );
            all.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(range), 0.0)),
            ));
        }
        // A bare disjunction of term queries may be ranked by MaxScore (`top_by`); a
        // conjunction with a filter always goes to tantivy.
        let (query, disjunction): (Box<dyn Query>, _) = if all.len() == 1 {
            (all.pop().expect("one clause").1, Some(weighted))
        } else {
            (Box::new(BooleanQuery::new(all)), None)
        };
        Ok(Some(KeywordQuery {
            searcher: searcher.clone(),
            query,
            disjunction,
            disjunction_search: self.disjunction_search,
            chunk_id: self.fields.chunk_id,
            dropped_terms,
        }))
    }

    /// The distinct terms `query` is searched with on `searcher`, in query order, each with
    /// how often the query repeats it; and the texts of the terms left out by
    /// `max_query_terms`.
    fn searched_terms(
        &self,
        searcher: &Searcher,
        query: &str,
    ) -> Result<(Vec<RepeatedTerm>, Vec<String>), StoreError> {
        let mut analyzer = self.index.tokenizer_for_field(self.fields.content)?;
        let mut terms: Vec<RepeatedTerm> = Vec::new();
        let mut stream = analyzer.token_stream(query);
        while let Some(token) = stream.next() {
            let term = Term::from_field_text(self.fields.content, &token.text);
            match terms.iter_mut().find(|(t, _)| *t == term) {
                Some((_, n)) => *n += 1,
                None => terms.push((term, 1)),
            }
        }
        let dropped = self.drop_common_terms(searcher, &mut terms)?;
        Ok((terms, dropped))
    }

    /// What each term `query` is searched with adds to the BM25 score of the chunk
    /// `chunk_id` on `searcher`, in query order: tantivy's own explanation of the score, so
    /// the parts sum to the score the keyword branch gives the chunk. Terms the chunk does
    /// not hold are left out; an empty list when the snapshot has no such chunk.
    pub fn term_scores(
        &self,
        searcher: &Searcher,
        query: &str,
        chunk_id: &str,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        let id = TermQuery::new(
            Term::from_field_text(self.fields.chunk_id, chunk_id),
            IndexRecordOption::Basic,
        );
        let Some((_, address)) = searcher
            .search(&id, &TopDocs::with_limit(1).order_by_score())?
            .pop()
        else {
            return Ok(Vec::new());
        };
        let (terms, _) = self.searched_terms(searcher, query)?;
        let mut scores = Vec::new();
        for (term, repeats) in terms {
            let text = term.value().as_str().unwrap_or_default().to_string();
            let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
            match q.explain(searcher, address) {
                Ok(explanation) => scores.push((text, explanation.value() * repeats as f32)),
                // tantivy's answer for a document the term query does not match.
                Err(tantivy::TantivyError::InvalidArgument(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(scores)
    }

    /// Keeps the `max_query_terms` rarest of `terms` on `searcher` (fewest documents; ties
    /// in query order) and returns the texts of the others, in query order. Terms no document
    /// holds cost nothing and take no place among those kept (a misspelt word must not push
    /// out a real one).
    fn drop_common_terms(
        &self,
        searcher: &Searcher,
        terms: &mut Vec<(Term, u32)>,
    ) -> Result<Vec<String>, StoreError> {
        let max = self.max_query_terms;
        if max == 0 || terms.len() <= max {
            return Ok(Vec::new());
        }
        let mut by_rarity: Vec<(u64, usize)> = Vec::with_capacity(terms.len());
        for (position, (term, _)) in terms.iter().enumerate() {
            by_rarity.push((searcher.doc_freq(term)?, position));
        }
        by_rarity.sort_unstable();
        let mut keep = vec![false; terms.len()];
        let absent = by_rarity.iter().take_while(|(df, _)| *df == 0).count();
        for (_, position) in by_rarity.into_iter().take(absent + max) {
            keep[position] = true;
        }
        let mut dropped = Vec::new();
        let mut position = 0;
        terms.retain(|(term, _)| {
            let kept = keep[position];
            position += 1;
            if !kept {
                dropped.push(term.value().as_str().unwrap_or_default().to_string());
            }
            kept
        });
        Ok(dropped)
    }

    /// Whether the snapshot may hold soft-deleted chunks (an upper bound: replaced rows are
    /// counted until their segment merges). A cheap gate before counting what visibility
    /// withheld.
    pub fn may_hold_deleted(&self, searcher: &Searcher) -> Result<bool, StoreError> {
        let term = Term::from_field_text(
            self.fields.filters[VISIBILITY_FIELD],
            Visibility::Deleted.term().expect("deleted has a term"),
        );
        Ok(searcher.doc_freq(&term)? > 0)
    }

    /// Keeps the snapshots of `keep` (and the live commit), deleting everything else.
    pub fn retain(&self, keep: &BTreeSet<u64>) -> Result<(), StoreError> {
        // Held throughout: no batch is indexed and no round of merges starts meanwhile.
        let _writer = self.writer.lock().expect("keyword writer lock");
        // A round of merges in flight writes files that nothing references yet, so while one
        // runs only the files of the dropped snapshots may go. With none running, whatever
        // nothing references goes too: a discarded batch's segments, a failed merge's.
        let merging = self.merging();
        let files = |v: u64| segment_files(&open_index(self.dir.pinned(v))?);
        let mut referenced = segment_files(&self.index)?;
        let mut dropped: BTreeSet<PathBuf> = BTreeSet::new();
        for v in self.dir.versions()? {
            if keep.contains(&v) {
                referenced.extend(files(v)?);
            } else if merging {
                // Unreadable, its files wait for the next sweep with no merge running.
                match files(v) {
                    Ok(f) => dropped.extend(f),
                    Err(e) => {
                        tracing::warn!(version = v, error = %e, "dropped keyword snapshot unreadable; its files stay until the next sweep");
                    }
                }
            }
        }
        self.dir
            .retain(keep, &referenced, merging.then_some(&dropped))?;
        self.searchers
            .lock()
            .expect("searcher cache lock")
            .retain(|(v, _)| keep.contains(v));
        Ok(())
    }

    /// Every chunk id in the snapshot of `version` (for consistency checks).
    pub fn chunk_ids(&self, version: u64) -> Result<Vec<String>, StoreError> {
        let searcher = self.searcher(version)?;
        let mut ids = Vec::new();
        for reader in searcher.segment_readers() {
            let store = reader.get_store_reader(1)?;
            for doc_id in 0..reader.max_doc() {
                if reader.is_deleted(doc_id) {
                    continue;
                }
                let doc: TantivyDocument = store.get(doc_id)?;
                if let Some(s) = doc.get_first(self.fields.chunk_id).and_then(|v| v.as_str()) {
                    ids.push(s.to_string());
                }
            }
        }
        ids.sort();
        Ok(ids)
    }
}

#[cfg(test)]
mod tests;
