//! The engine: the one entry point every edge (CLI, contracts, actors) calls. It owns the
//! configuration, the embedder, the chunker and the open indexes.

use std::collections::HashMap;
use std::sync::Arc;

use crate::chunking::Chunker;
use crate::config::Config;
use crate::embedding::{CachedEmbedder, EmbedError, Embedder, EmbeddingCache};
use crate::index::{DocumentOp, Index, IndexStats, IndexStorage, StoreError, WriteOutcome};
use crate::model::{IndexName, ValidationError};
use crate::retrieval::{RetrievalError, SearchRequest, SearchResult};
use futures::FutureExt;
use tracing::Instrument;

/// Everything that can go wrong in the engine; each edge maps it to its wire form once.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("invalid request: {0}")]
    Invalid(#[from] ValidationError),
    #[error("index {0} does not exist")]
    IndexNotFound(String),
    #[error("index_version {requested} is not available: the oldest retained version is {oldest} and the latest is {latest}")]
    VersionUnavailable {
        requested: u64,
        oldest: u64,
        latest: u64,
    },
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(StoreError),
    #[error("internal error: {0}")]
    Internal(String),
    /// The query was not answered within `limits.query_timeout_ms`; its work was abandoned.
    #[error("the query was not answered within {after_ms} ms (limits.query_timeout_ms)")]
    Timeout { after_ms: u64 },
}

impl From<RetrievalError> for EngineError {
    fn from(e: RetrievalError) -> Self {
        match e {
            RetrievalError::Invalid(v) => EngineError::Invalid(v),
            RetrievalError::Embed(e) => EngineError::Embed(e),
            RetrievalError::Store(e) => EngineError::from(e),
            RetrievalError::Internal(m) => EngineError::Internal(m),
        }
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::UnknownIndex(name) => EngineError::IndexNotFound(name),
            StoreError::VersionUnavailable {
                requested,
                oldest,
                latest,
            } => EngineError::VersionUnavailable {
                requested,
                oldest,
                latest,
            },
            // A version Lance still has but the keyword store lost (rebuilt after data loss)
            // cannot be answered faithfully either.
            StoreError::KeywordSnapshotMissing(v) => EngineError::VersionUnavailable {
                requested: v,
                oldest: v,
                latest: v,
            },
            StoreError::Embed(e) => EngineError::Embed(e),
            other => EngineError::Store(other),
        }
    }
}

fn cached(embedder: Arc<dyn Embedder>, cache: &Option<Arc<EmbeddingCache>>) -> Arc<dyn Embedder> {
    match cache {
        Some(c) => Arc::new(CachedEmbedder::new(embedder, c.clone())),
        None => embedder,
    }
}

/// A batch planned and embedded by [`Engine::prepare_write`], waiting for
/// [`Engine::commit_prepared`].
pub struct PreparedWrite {
    index: Arc<Index>,
    plan: crate::index::WritePlan,
}

pub struct Engine {
    config: Config,
    /// The index's model: decides the embedder id and dimensions of new indexes.
    embedder: Arc<dyn Embedder>,
    /// Embeds queries: the same model, with a query's patience (an HTTP provider gets one
    /// retry and a short timeout, and the provider's query prefix; see
    /// `HttpEmbedder::for_queries`).
    query_embedder: Arc<dyn Embedder>,
    /// Embeds chunks: the same model behind the persistent cache (`model.cache`). Queries
    /// bypass the cache so that it holds corpus text only and does not grow with traffic.
    ingest_embedder: Arc<dyn Embedder>,
    cache: Option<Arc<EmbeddingCache>>,
    chunker: Chunker,
    indexes: tokio::sync::Mutex<HashMap<IndexName, Arc<Index>>>,
    /// How indexes open their stores; its Lance session (caches) is shared by all of them.
    store_options: crate::index::StoreOptions,
    auth: crate::auth::Authenticator,
    /// Reorders contract 002's fused candidates when `[reranker]` is enabled.
    reranker: Option<Arc<dyn crate::retrieval::rerank::Reranker>>,
    /// Load each index's search indexes into Lance's cache when it is opened and after each
    /// vector index build (a serving process; a one-shot command would only pay for it).
    keep_warm: bool,
    /// Where indexes live, opened (and checked) on first use.
    storage: tokio::sync::OnceCell<IndexStorage>,
    /// A query replica (`serve.role = query`): indexes open read-only.
    replica: bool,
}

impl Engine {
    pub fn new(config: Config, embedder: Arc<dyn Embedder>) -> Self {
        let store_options = crate::index::StoreOptions {
            keyword: config.index.keyword,
            ..crate::index::StoreOptions::new(
                config.index.retain_versions,
                config.index.lance_index_cache_mb.saturating_mul(1 << 20),
                config.index.lance_metadata_cache_mb.saturating_mul(1 << 20),
            )
        };
        let cache = if config.model.cache {
            let path = config.storage.data_dir.join("embedding-cache.redb");
            match EmbeddingCache::open(&path, config.model.cache_max_mb) {
                Ok(cache) => Some(Arc::new(cache)),
                // Another process (a running daemon) holds the cache: embed without it.
                Err(e) => {
                    tracing::warn!(error = %e, "embedding cache unavailable; embedding without it");
                    None
                }
            }
        } else {
            None
        };
        // Measured below the cache: the metrics count model and provider calls only.
        let measured = crate::embedding::Measured::wrap(embedder.clone());
        let ingest_embedder = cached(measured, &cache);
        let query_embedder =
            crate::embedding::Measured::wrap(crate::embedders::for_queries(&config, &embedder));
        let reranker = if config.reranker.enabled {
            match crate::retrieval::rerank::HttpReranker::new(&config.reranker) {
                Ok(r) => Some(Arc::new(r) as Arc<dyn crate::retrieval::rerank::Reranker>),
                Err(e) => {
                    tracing::error!(error = %e, "reranker disabled");
                    None
                }
            }
        } else {
            None
        };
        Engine {
            reranker,
            auth: crate::auth::Authenticator::new(&config.auth),
            query_embedder,
            chunker: Chunker::new(config.chunking.chunker()),
            config,
            embedder,
            ingest_embedder,
            cache,
            indexes: tokio::sync::Mutex::new(HashMap::new()),
            store_options,
            keep_warm: false,
            storage: tokio::sync::OnceCell::new(),
            replica: false,
        }
    }

    /// An engine for index administration (stats, listing, maintenance, tags, deletes): it
    /// opens indexes without loading a model, and anything that would embed through it
    /// fails ([`crate::embedding::NoModel`]). It keeps no embedding cache either.
    pub fn for_administration(config: Config) -> Self {
        let mut config = config;
        config.model.cache = false;
        Engine::new(config, Arc::new(crate::embedding::NoModel))
    }

    /// This engine serves queries only: indexes open as replicas of what their writer
    /// publishes on the object store, and every write is refused.
    pub fn as_replica(mut self) -> Self {
        self.replica = true;
        self
    }

    /// Embeds one short text as a query would, so that a daemon learns at start-up whether
    /// its embedder answers. An HTTP provider's client checks the count and dimensions of
    /// every answer; the local models make theirs by construction.
    pub async fn probe_embedder(&self) -> Result<(), EngineError> {
        crate::retrieval::search::embed_query(&self.query_embedder, "ragstream start-up probe")
            .await?;
        Ok(())
    }

    /// Where indexes live. Opened on first use; on an object store that checks the bucket
    /// can be written and read, so a daemon calls it at start-up to fail early.
    pub async fn storage(&self) -> Result<&IndexStorage, EngineError> {
        let storage = &self.config.storage;
        Ok(self
            .storage
            .get_or_try_init(|| {
                IndexStorage::open(
                    &storage.data_dir,
                    storage.uri.as_deref(),
                    &storage.options,
                    self.store_options.lance_session.store_registry(),
                )
            })
            .await?)
    }

    /// The indexes that exist, sorted.
    pub async fn list_indexes(&self) -> Result<Vec<IndexName>, EngineError> {
        Ok(self.storage().await?.list_indexes().await?)
    }

    /// Counts revocations of this process's Kafka partitions (the ingest pipeline's
    /// consumer adds one at each): index ownership claims made before the latest are void.
    pub fn revocations(&self) -> Arc<std::sync::atomic::AtomicU64> {
        self.store_options.revocations.clone()
    }

    /// The indexes this process maintains: every index on local storage; on an object
    /// store, the open ones it writes now (maintenance runs on the owner only).
    pub async fn maintained_indexes(&self) -> Result<Vec<IndexName>, EngineError> {
        if self.storage().await?.object().is_none() {
            return self.list_indexes().await;
        }
        let mut owned: Vec<IndexName> = self
            .open_indexes()
            .await
            .iter()
            .filter(|i| i.is_owned_here())
            .map(|i| i.name().clone())
            .collect();
        owned.sort();
        Ok(owned)
    }

    /// The indexes opened so far.
    pub async fn open_indexes(&self) -> Vec<Arc<Index>> {
        self.indexes.lock().await.values().cloned().collect()
    }

    /// Closes the open indexes not in `listed` (deleted by their writer): a replica stops
    /// answering for them.
    pub async fn close_unlisted(&self, listed: &[IndexName]) {
        let open: Vec<IndexName> = self.indexes.lock().await.keys().cloned().collect();
        for name in open.iter().filter(|n| !listed.contains(n)) {
            self.close(name).await;
        }
    }

    /// Forgets the open handle of `name` (a replica whose writer deleted or remade it; a
    /// writer's handle another process's commits made stale); a replica's cache of it goes
    /// too, a writer's handle takes no more writes. The next use opens it again.
    pub async fn close(&self, name: &IndexName) {
        let closed = self.indexes.lock().await.remove(name);
        if let Some(index) = closed.filter(|_| !self.replica) {
            index.mark_closed();
        }
        if let (true, Some(storage)) = (self.replica, self.storage.get()) {
            let dir = storage.local_dir(name);
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(index = %name, error = %e, "removing a closed index's cache failed");
                }
            }
        }
    }

    /// Notified after each commit of documents to any index.
    pub fn commits(&self) -> Arc<tokio::sync::Notify> {
        self.store_options.committed.clone()
    }

    /// This engine serves: it loads each index's search indexes into Lance's cache in the
    /// background when the index is opened and after each vector index build, so that the
    /// first queries do not read them partition by partition.
    pub fn keeping_indexes_warm(mut self) -> Self {
        self.keep_warm = true;
        self
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Resolves the bearer tokens of HTTP and bus requests.
    pub fn auth(&self) -> &crate::auth::Authenticator {
        &self.auth
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    /// The embedder for chunks (behind the embedding cache when it is enabled).
    pub fn ingest_embedder(&self) -> &Arc<dyn Embedder> {
        &self.ingest_embedder
    }

    /// `{"embedder": <provider counters or null>, "cache": <hits, misses, hit_ratio> or null}`
    /// for health endpoints and command output.
    pub fn embedding_report(&self) -> serde_json::Value {
        match self.cache {
            Some(_) => self.ingest_embedder.report(),
            None => serde_json::json!({"embedder": self.embedder.report(), "cache": null}),
        }
    }

    pub fn chunker(&self) -> &Chunker {
        &self.chunker
    }

    /// An existing index (opened once, then shared).
    pub async fn index(&self, name: &IndexName) -> Result<Arc<Index>, EngineError> {
        let storage = self.storage().await?;
        let mut open = self.indexes.lock().await;
        if let Some(index) = open.get(name) {
            return Ok(index.clone());
        }
        // Lance panics on some damaged manifests; that is an index that cannot be opened,
        // not a reason to take the caller's thread down.
        let opening = async {
            if self.replica {
                let cache_bytes = self.config.storage.cache_max_mb.saturating_mul(1 << 20);
                Index::open_replica(storage, name, &self.store_options, cache_bytes).await
            } else {
                Index::open(storage, name, &self.store_options).await
            }
        };
        let opened = std::panic::AssertUnwindSafe(opening)
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| Err(StoreError::Corrupt(crate::panic_message(&panic))));
        let on_object_store = storage.object().is_some();
        let index = opened.map_err(|e| match e {
            // An object store that did not answer is not a damaged index.
            StoreError::Lance(e @ lance::Error::IO { .. }) if on_object_store => {
                StoreError::ObjectStore(e.to_string())
            }
            StoreError::Lance(e) => damaged(name, &e),
            StoreError::Corrupt(e) => damaged(name, &e),
            other => other,
        })?;
        let index = Arc::new(index);
        let v = self.config.index.vector;
        index
            .lance()
            .set_vector_search(v.nprobes, v.refine_factor, v.ef);
        index.lance().set_resident_search(v.resident_search());
        open.insert(name.clone(), index.clone());
        if self.keep_warm {
            prewarm_in_background(&index);
        }
        Ok(index)
    }

    /// The index, created for this engine's embedder if it does not exist yet.
    pub async fn create_index(&self, name: &IndexName) -> Result<Arc<Index>, EngineError> {
        if self.replica {
            return self.index(name).await;
        }
        let storage = self.storage().await?;
        let mut open = self.indexes.lock().await;
        if let Some(index) = open.get(name) {
            return Ok(index.clone());
        }
        let index = Arc::new(
            Index::create(
                storage,
                name,
                self.embedder.id(),
                self.embedder.dimensions(),
                &self.store_options,
            )
            .await?,
        );
        let v = self.config.index.vector;
        index
            .lance()
            .set_vector_search(v.nprobes, v.refine_factor, v.ef);
        index.lance().set_resident_search(v.resident_search());
        open.insert(name.clone(), index.clone());
        Ok(index)
    }

    /// The index as the store has it now (created first when `create`). On an object store
    /// another daemon may have committed to it since this one opened it (its partition
    /// moved here): the stale handle is closed and the index opened again, so that nothing
    /// is planned on an old view (a delete planned as a no-op there would be lost). A
    /// handle whose claim another daemon overtook is closed too, and the error returned.
    pub async fn current_index(
        &self,
        name: &IndexName,
        create: bool,
    ) -> Result<Arc<Index>, EngineError> {
        let open = || async {
            if create {
                self.create_index(name).await
            } else {
                self.index(name).await
            }
        };
        let index = open().await?;
        match index.check_current().await {
            Ok(()) => Ok(index),
            Err(e @ (StoreError::ChangedElsewhere { .. } | StoreError::NotOwner { .. })) => {
                tracing::info!(index = %name, reason = %e, "the index changed in the store; opening it again");
                self.close(name).await;
                match e {
                    StoreError::NotOwner { .. } => Err(e.into()),
                    _ => open().await,
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Validates every upserted document, then writes the batch as one version.
    pub async fn write(
        &self,
        name: &IndexName,
        ops: Vec<DocumentOp>,
    ) -> Result<WriteOutcome, EngineError> {
        self.write_with_properties(name, ops, HashMap::new()).await
    }

    /// As [`Engine::write`], recording `properties` (such as a Kafka checkpoint) in the
    /// same Lance commit.
    pub async fn write_with_properties(
        &self,
        name: &IndexName,
        ops: Vec<DocumentOp>,
        properties: HashMap<String, String>,
    ) -> Result<WriteOutcome, EngineError> {
        let prepared = self.prepare_write(name, ops).await?;
        self.commit_prepared(prepared, properties).await
    }

    /// The first half of a write: validates every upserted document, plans the batch
    /// against the newest version and embeds it, without committing. A writer can prepare
    /// the next batch while this one commits ([`Engine::commit_prepared`]); a batch of new
    /// documents is still appended when the commits made meanwhile gave its documents no
    /// rows (index/commit_log.rs), and merged against the stored rows otherwise.
    pub async fn prepare_write(
        &self,
        name: &IndexName,
        ops: Vec<DocumentOp>,
    ) -> Result<PreparedWrite, EngineError> {
        let limits = self.config.limits.document();
        for op in &ops {
            if let DocumentOp::Upsert(doc) = op {
                doc.validate(&limits)?;
            }
        }
        let index = self.current_index(name, true).await?;
        let embedder = self.ingest_embedder.clone();
        index.check_embedder(embedder.id(), embedder.dimensions())?;
        let mut plan = index.writer().plan(ops, &self.chunker).await?;
        // Embedding is CPU work of tens of milliseconds per batch: off the runtime's
        // threads, so that a commit running beside it goes on.
        let plan =
            tokio::task::spawn_blocking(move || plan.embed(embedder.as_ref()).map(|()| plan))
                .await
                .map_err(|e| EngineError::Internal(format!("embedding task: {e}")))??;
        Ok(PreparedWrite { index, plan })
    }

    /// The second half of a write: commits a prepared batch as one version.
    pub async fn commit_prepared(
        &self,
        prepared: PreparedWrite,
        properties: HashMap<String, String>,
    ) -> Result<WriteOutcome, EngineError> {
        let PreparedWrite { index, plan } = prepared;
        let outcome = index.writer().commit(plan, properties).await?;
        self.maintain_vector_index(&index);
        Ok(outcome)
    }

    /// Builds the id indexes and the vector index of `index` in the background when they are
    /// due (see [`crate::index::vector_index`]); at most one build per index runs at a time,
    /// and neither ingestion nor queries wait for it.
    pub fn maintain_vector_index(&self, index: &Arc<Index>) {
        // On an object store only the index's owner builds (see index/ownership.rs).
        if tokio::runtime::Handle::try_current().is_err()
            || index.maintenance().vector_build_running()
            || !index.is_owned_here()
        {
            return;
        }
        let settings = self.config.index.vector;
        let keep_warm = self.keep_warm;
        // Ended when dropped: when the task ends, panics, or is dropped before it runs.
        struct CheckDone(Arc<Index>);
        impl Drop for CheckDone {
            fn drop(&mut self) {
                self.0.maintenance().end_build_check();
            }
        }
        // Released even if the build panics, so that a later commit can try again.
        struct Release(Arc<Index>);
        impl Drop for Release {
            fn drop(&mut self) {
                self.0.maintenance().end_vector_build();
            }
        }
        // Counted before the task starts, so that `Maintenance::build_pending` holds from here.
        index.maintenance().begin_build_check();
        let check = CheckDone(index.clone());
        // At the background priority (`index.maintenance.background_priority`): see runtime/background.rs.
        crate::runtime::background::spawn(async move {
            // The slot is claimed only once a build is due: claiming it for the check made a
            // maintenance pass at that moment defer its work, and the next pass do twice as much.
            match check.0.maintenance().index_build_due(&settings).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    tracing::warn!(index = %check.0.name(), error = %e,
                        "checking whether an index build is due failed; will retry after the next commit");
                    return;
                }
            }
            if !check.0.maintenance().begin_vector_build() {
                return;
            }
            let release = Release(check.0.clone());
            if let Err(e) = release.0.maintenance().build_id_indices(&settings).await {
                tracing::warn!(index = %release.0.name(), error = %e,
                    "building the id indexes failed; will retry after the next commit");
            }
            match release.0.maintenance().build_vector_index(&settings).await {
                Ok(Some(_)) if keep_warm => prewarm_in_background(&release.0),
                Ok(_) => {}
                Err(e) => tracing::warn!(index = %release.0.name(), error = %e,
                    "building the vector index failed; will retry after the next commit"),
            }
        });
    }

    /// Every request's `top_k` is within `limits.max_top_k`.
    fn check_top_k(&self, request: &SearchRequest) -> Result<(), EngineError> {
        let max = self.config.limits.max_top_k;
        if request.top_k == 0 || request.top_k > max {
            return Err(
                ValidationError::new("top_k", format!("must be between 1 and {max}")).into(),
            );
        }
        Ok(())
    }

    /// Why each of `targets` was or was not retrieved by `request` on `name`
    /// (`retrieval::explain`).
    pub async fn explain(
        &self,
        name: &IndexName,
        request: &SearchRequest,
        targets: &[crate::retrieval::explain::Target],
        reveal_deleted: bool,
    ) -> Result<crate::retrieval::explain::Explanation, EngineError> {
        self.check_top_k(request)?;
        let index = self.index(name).await?;
        crate::retrieval::explain::explain(
            &index,
            &self.query_embedder,
            self.reranker.as_ref(),
            request,
            targets,
            reveal_deleted,
        )
        .instrument(tracing::info_span!("explain", index = %name))
        .await
        .map_err(EngineError::from)
    }

    /// `request` answered at versions `from` and `to` of `name`, compared
    /// (`retrieval::diff`).
    pub async fn diff(
        &self,
        name: &IndexName,
        request: &SearchRequest,
        from: u64,
        to: u64,
    ) -> Result<crate::retrieval::diff::Diff, EngineError> {
        self.check_top_k(request)?;
        let index = self.index(name).await?;
        crate::retrieval::diff::diff(
            &index,
            &self.query_embedder,
            self.reranker.as_ref(),
            request,
            from,
            to,
        )
        .instrument(tracing::info_span!("diff", index = %name))
        .await
        .map_err(EngineError::from)
    }

    pub async fn search(
        &self,
        name: &IndexName,
        request: &SearchRequest,
    ) -> Result<SearchResult, EngineError> {
        self.check_top_k(request)?;
        let index = self.index(name).await?;
        let started = std::time::Instant::now();
        let span = tracing::info_span!(
            "search",
            index = %name,
            method = request.method.name(),
            index_version = tracing::field::Empty,
        );
        let result = crate::retrieval::search(
            &index,
            &self.query_embedder,
            self.reranker.as_ref(),
            request,
        )
        .instrument(span.clone())
        .await;
        if let Ok(r) = &result {
            span.record("index_version", r.index_version);
        }
        let result = result.map_err(|e| match EngineError::from(e) {
            EngineError::Store(StoreError::Lance(
                e @ (lance::Error::IO { .. }
                | lance::Error::NotFound { .. }
                | lance::Error::CorruptFile { .. }),
            )) => damaged(name, &e).into(),
            other => other,
        });
        if let Some(m) = crate::telemetry::metrics() {
            m.search_duration_seconds
                .with_label_values(&[request.method.name()])
                .observe(started.elapsed().as_secs_f64());
        }
        result
    }

    /// How hybrid queries on `name` that name no fusion scale their branches: the index's
    /// `fusion` setting (set by hand or calibrated), else contract 000's way, which is also
    /// the answer for an index that cannot be opened (its search reports why). Contract 000
    /// never asks: its fusion is part of the contract.
    pub async fn index_fusion(&self, name: &IndexName) -> crate::model::BranchFusion {
        match self.index(name).await {
            Ok(index) => index.query_defaults().fusion_for(None),
            Err(_) => Default::default(),
        }
    }

    /// `request` with its query vector set, embedded here unless the request has one or its
    /// method needs none: a caller that runs one query many times (calibration) embeds it
    /// once.
    pub async fn with_query_vector(
        &self,
        request: &SearchRequest,
    ) -> Result<SearchRequest, EngineError> {
        Ok(crate::retrieval::search::with_query_vector(&self.query_embedder, request).await?)
    }

    /// Graph retrieval on `name` at `version` (latest when `None`): the entities `query`
    /// names, their rewrite terms and keyword expansion, and the relations within `depth`
    /// hops, scored. An index without a graph answers with nothing found. When entities were
    /// linked, the query's vector comes back too, so the chunk search need not embed again.
    pub async fn graph_lookup(
        &self,
        name: &IndexName,
        query: &str,
        version: Option<u64>,
        depth: usize,
    ) -> Result<(crate::graph::GraphLookup, Option<Arc<Vec<f32>>>), EngineError> {
        let span = tracing::info_span!("graph", index = %name, depth);
        async {
            let index = self.index(name).await?;
            let version = index.reader().snapshot(version).await?.version;
            let mut found = crate::graph::GraphLookup {
                index_version: version,
                ..Default::default()
            };
            let Some(view) = index.reader().graph_at(version).await? else {
                return Ok((found, None));
            };
            let linked = view.link(query);
            if linked.is_empty() {
                return Ok((found, None));
            }
            let vector = if depth > 0 {
                index.check_embedder_at(
                    version,
                    self.query_embedder.id(),
                    self.query_embedder.dimensions(),
                )?;
                Some(Arc::new(
                    crate::retrieval::search::embed_query(&self.query_embedder, query).await?,
                ))
            } else {
                None
            };
            let (rewrite_terms, expansion, relations) = crate::graph::lookup(
                &view,
                &linked,
                query,
                vector.as_deref().map(Vec::as_slice),
                depth,
                &self.config.graph,
            );
            found.entities = linked;
            found.rewrite_terms = rewrite_terms;
            found.keyword_expansion = expansion;
            found.relations = relations;
            Ok((found, vector))
        }
        .instrument(span)
        .await
    }

    /// Whether version `version` of `name` may hold soft-deleted chunks (a cheap upper bound).
    pub async fn may_hold_deleted(
        &self,
        name: &IndexName,
        version: u64,
    ) -> Result<bool, EngineError> {
        let index = self.index(name).await?;
        let snapshot = index.reader().snapshot(Some(version)).await?;
        Ok(index.keyword().may_hold_deleted(&snapshot.searcher)?)
    }

    /// Rebuilds every vector of index `name` with this engine's embedder into a new version;
    /// the index then belongs to that embedder. Chunks go through the embedding cache.
    pub async fn reembed(&self, name: &IndexName) -> Result<u64, EngineError> {
        let index = self.index(name).await?;
        index
            .maintenance()
            .reembed(self.ingest_embedder.clone())
            .await
            .map_err(EngineError::from)
    }

    /// Deletes index `name`. It stops answering at once: its directory leaves `indexes/`
    /// (`index::deleted`), writes still holding a handle fail, and the next query or write
    /// finds no such index (a write makes a new, empty one). Its files are removed by
    /// [`Engine::purge_deleted_indexes`]. Returns the version it had reached.
    pub async fn delete_index(&self, name: &IndexName) -> Result<u64, EngineError> {
        let index = self.index(name).await?;
        // Waits for a running commit or maintenance pass; queries go on meanwhile.
        let checkpoint = index.writer().retire().await?;
        let version = index.latest_version();
        // Held while the directory moves: nobody opens the index again halfway.
        let mut open = self.indexes.lock().await;
        // Another delete finished first (and a write may have made a new index since): this
        // handle is no longer the index of that name.
        if !open.get(name).is_some_and(|i| Arc::ptr_eq(i, &index)) {
            return Err(EngineError::IndexNotFound(name.to_string()));
        }
        let storage = self.storage().await?;
        if let Err(e) = crate::index::deleted::retire(storage, name, checkpoint) {
            // Not moved: the index stays, and takes writes again.
            index.writer().unretire();
            return Err(e.into());
        }
        open.remove(name);
        if let Some(root) = storage.object() {
            // Unlisted first, then its objects, before a write can make a new index of
            // the same name under the same prefix (this holds the lock that creates). A
            // publication in flight finishes first; later ones see the index retired.
            let _publishing = index.hold_publication().await;
            storage.forget(name).await?;
            root.remove_index(name).await?;
        }
        tracing::info!(index = %name, index_version = version, "index deleted");
        Ok(version)
    }

    /// Removes the files of deleted indexes; returns how many were removed.
    pub fn purge_deleted_indexes(&self) -> Result<usize, EngineError> {
        Ok(crate::index::deleted::purge(&self.config.storage.data_dir)?)
    }

    /// Rebuilds the derived keyword index of `name` from its Lance rows.
    pub async fn rebuild(&self, name: &IndexName) -> Result<(u64, usize), EngineError> {
        Ok(self
            .index(name)
            .await?
            .maintenance()
            .rebuild_keyword()
            .await?)
    }

    /// Builds the vector index of `name` anew with the configured settings, due or not;
    /// returns the version that carries it and the rows it covers.
    pub async fn rebuild_vector_index(
        &self,
        name: &IndexName,
    ) -> Result<(u64, usize), EngineError> {
        let settings = self.config.index.vector;
        let index = self.index(name).await?;
        settings
            .check(Some(index.info().dimensions))
            .map_err(|(key, reason)| ValidationError::new(key, reason))?;
        Ok(index.maintenance().rebuild_vector_index(&settings).await?)
    }

    /// One maintenance pass over `name` (compaction, purge, version pruning).
    pub async fn maintain(
        &self,
        name: &IndexName,
    ) -> Result<crate::index::maintenance::MaintenanceReport, EngineError> {
        let index = self.index(name).await?;
        let report = index
            .maintenance()
            .maintain(&self.config.index.maintenance)
            .instrument(tracing::info_span!("maintenance", index = %name))
            .await?;
        // Compaction may leave rows the vector index does not cover past the rebuild share.
        self.maintain_vector_index(&index);
        Ok(report)
    }

    pub async fn stats(&self, name: &IndexName) -> Result<IndexStats, EngineError> {
        Ok(self.index(name).await?.reader().stats().await?)
    }
}

/// Lance is the source of truth: when its files cannot be read there is nothing to rebuild
/// from, so the error names the index and what to do.
fn damaged(name: &IndexName, e: &dyn std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!(
        "index {name}: its Lance dataset cannot be read ({e}); the data directory is damaged: \
         restore the index's directory from a backup, or delete it and ingest its documents again"
    ))
}

/// Loads the search indexes of `index` into Lance's cache without holding anyone up; a
/// failure only costs the first queries their speed, so it is logged.
fn prewarm_in_background(index: &Arc<Index>) {
    let index = index.clone();
    tokio::spawn(async move {
        let started = std::time::Instant::now();
        match index.reader().prewarm_search_indexes().await {
            Ok(true) => tracing::info!(index = %index.name(),
                seconds = started.elapsed().as_secs_f64(), "search indexes loaded into the cache"),
            Ok(false) => {}
            Err(e) => tracing::warn!(index = %index.name(), error = %e,
                "loading the search indexes into the cache failed; first queries read them"),
        }
    });
}
