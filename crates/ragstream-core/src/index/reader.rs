//! Reading an index: pinned snapshots of both stores, the graph at a version, figures and
//! checkpoints. Any number of readers run at once ([`Index::reader`]).

use std::collections::HashMap;
use std::sync::Arc;

use tracing::Instrument;

use super::writer::{KAFKA_CHECKPOINT, KAFKA_LOG};
use super::{Index, IndexStats, Snapshot, StoreError, StoredCheckpoint};
use crate::graph::view::GraphView;

/// The reading side of an index, borrowed from it.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub(super) index: &'a Index,
}

impl Reader<'_> {
    /// Both stores at `version` (latest if `None`).
    pub async fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, StoreError> {
        let version = match version {
            Some(v) => v,
            None => self.index.visible_version()?,
        };
        // Pinned before the stores are opened, so that retention cannot prune it between.
        let pin = self.index.pins.pin(version);
        let dataset = self.index.lance.at(version).await?;
        if let Some(replica) = &self.index.replica {
            // A version evicted from the cache (or never fetched) is fetched again.
            replica
                .cache
                .ensure(version, || self.index.in_use())
                .await?;
        }
        let searcher = self.index.keyword.searcher(version)?;
        Ok(Snapshot {
            version,
            dataset,
            searcher,
            _pin: pin,
        })
    }

    /// The knowledge graph as of index version `version`. A graph version is loaded once
    /// and shared by every index version that names it (most commits change no triples).
    pub async fn graph_at(&self, version: u64) -> Result<Option<Arc<GraphView>>, StoreError> {
        const CACHED: usize = 4;
        let known = self
            .index
            .graph_versions
            .lock()
            .expect("graph cache lock")
            .get(&version)
            .copied();
        let graph = match known {
            Some(g) => g,
            None => {
                let g = self.index.graph_version_at(version).await?;
                let mut map = self.index.graph_versions.lock().expect("graph cache lock");
                if map.len() >= 256 {
                    map.clear();
                }
                map.insert(version, g);
                g
            }
        };
        let Some(graph) = graph else {
            return Ok(None);
        };
        if let Some((_, view)) = self
            .index
            .graph_views
            .lock()
            .expect("graph cache lock")
            .iter()
            .find(|(g, _)| *g == graph)
        {
            return Ok(Some(view.clone()));
        }
        let (triples, entities) = self
            .index
            .graph
            .load(graph)
            .instrument(tracing::info_span!("graph.load"))
            .await?;
        let view = Arc::new(GraphView::new(triples, entities));
        let mut cache = self.index.graph_views.lock().expect("graph cache lock");
        if cache.len() >= CACHED {
            cache.remove(0);
        }
        cache.push((graph, view.clone()));
        Ok(Some(view))
    }

    pub async fn stats(&self) -> Result<IndexStats, StoreError> {
        let snapshot = self.snapshot(None).await?;
        let versions = self.index.lance.versions().await?;
        let census = self.index.lance.census(&snapshot.dataset).await?;
        let info = self.index.info();
        Ok(IndexStats {
            index: self.index.name.to_string(),
            embedder: info.embedder.clone(),
            dimensions: info.dimensions,
            index_version: snapshot.version,
            oldest_version: versions.first().copied().unwrap_or(snapshot.version),
            retained_versions: versions.len(),
            documents: census.documents,
            chunks: census.chunks,
            deleted_documents: census.deleted_documents,
            deleted_chunks: census.deleted_chunks,
            keyword_chunks: snapshot.searcher.num_docs(),
            tags: self.index.lance.tags().await?,
            created_at: info.created_at.clone(),
        })
    }

    /// When the newest version was committed (RFC 3339).
    pub fn last_commit_at(&self) -> String {
        self.index.lance.latest().version().timestamp.to_rfc3339()
    }

    /// The Kafka checkpoint of the newest version queries see: `"topic:partition" → next
    /// offset to read`. Status reports this one, so that an event it counts as indexed is
    /// searchable: a commit is in Lance a moment before its keyword half makes it visible.
    pub async fn kafka_checkpoint(&self) -> Result<HashMap<String, i64>, StoreError> {
        let visible = self.index.visible_version()?;
        Ok(self.index.checkpoint_up_to(Some(visible)).await?.offsets)
    }

    /// The newest recorded checkpoint with the identity of the Kafka log it was read from
    /// (none for commits made before logs were named).
    pub async fn stored_checkpoint(&self) -> Result<StoredCheckpoint, StoreError> {
        self.index.checkpoint_up_to(None).await
    }
}

impl Index {
    /// The checkpoint of the newest version at or below `upto` (any, without it) that has one.
    async fn checkpoint_up_to(&self, upto: Option<u64>) -> Result<StoredCheckpoint, StoreError> {
        let mut versions = self.lance.versions().await?;
        versions.retain(|v| upto.is_none_or(|u| *v <= u));
        versions.reverse();
        for v in versions {
            let props = self.lance.commit_properties(v).await?;
            if let Some(json) = props.get(KAFKA_CHECKPOINT) {
                let offsets = serde_json::from_str(json)
                    .map_err(|e| StoreError::Corrupt(format!("checkpoint of version {v}: {e}")))?;
                return Ok(StoredCheckpoint {
                    offsets,
                    log: props.get(KAFKA_LOG).cloned(),
                });
            }
        }
        Ok(StoredCheckpoint::default())
    }
}
