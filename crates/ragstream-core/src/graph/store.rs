//! The graph's two Lance datasets next to an index's chunks: `triples.lance` and
//! `entities.lance`. They are versioned on their own; each chunk commit records the graph
//! versions it goes with (commit property [`GRAPH_PROPERTY`]), so one `index_version` pins
//! chunks, keyword index and graph together. An index that was never given a triple has no
//! graph datasets at all.

use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchIterator};
use futures::TryStreamExt;
use lance::dataset::cleanup::CleanupPolicy;
use lance::dataset::{CommitBuilder, WriteMode, WriteParams};
use lance::Dataset;

use super::rows::{
    batch_to_entities, batch_to_triples, entities_to_batch, entity_schema, triple_schema,
    triples_to_batch, EntityRow, TripleRow,
};
use crate::store::filters::LIVE_ROWS;
use crate::store::index_storage::DatasetLocation;
use crate::store::{in_list, replace_documents, StoreError};

/// Chunk-commit property: `"<triples version>/<entities version>"`.
pub const GRAPH_PROPERTY: &str = "ragstream.graph";

/// The graph datasets' versions one index version goes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphVersion {
    pub triples: u64,
    pub entities: u64,
}

impl GraphVersion {
    pub fn to_property(self) -> String {
        format!("{}/{}", self.triples, self.entities)
    }

    pub fn parse(value: &str) -> Result<GraphVersion, StoreError> {
        value
            .split_once('/')
            .and_then(|(t, e)| {
                Some(GraphVersion {
                    triples: t.parse().ok()?,
                    entities: e.parse().ok()?,
                })
            })
            .ok_or_else(|| StoreError::Corrupt(format!("{GRAPH_PROPERTY} is {value:?}")))
    }
}

/// What one batch changes in the graph: every row of `documents` is replaced by `triples`
/// and `entities` (which hold the tombstones of deleted documents' rows, marked).
#[derive(Debug, Clone, Default)]
pub struct GraphChange {
    pub documents: Vec<String>,
    pub triples: Vec<TripleRow>,
    pub entities: Vec<EntityRow>,
}

pub struct GraphStore {
    triples_at: DatasetLocation,
    entities_at: DatasetLocation,
    triples: Mutex<Option<Dataset>>,
    entities: Mutex<Option<Dataset>>,
}

async fn open(location: &DatasetLocation) -> Result<Option<Dataset>, StoreError> {
    match location.builder().load().await {
        Ok(ds) => Ok(Some(ds)),
        Err(lance::Error::DatasetNotFound { .. }) | Err(lance::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn create(
    location: &DatasetLocation,
    schema: arrow_schema::SchemaRef,
) -> Result<Dataset, StoreError> {
    let empty = RecordBatchIterator::new(Vec::<Result<RecordBatch, _>>::new(), schema);
    let params = WriteParams {
        mode: WriteMode::Create,
        store_params: location.store_params(),
        ..Default::default()
    };
    Ok(Dataset::write(empty, location.uri.as_str(), Some(params)).await?)
}

/// One commit replacing the rows of `documents` in `ds` with `batch` (merge on `key`).
/// On an object store the commit is strict (`store::strict_commit`): another daemon's
/// commit since `ds` makes it fail rather than be merged.
async fn replace(
    location: &DatasetLocation,
    ds: Dataset,
    key: &str,
    documents: &[String],
    batch: Option<RecordBatch>,
) -> Result<Dataset, StoreError> {
    let ds = Arc::new(ds);
    let transaction = replace_documents(&ds, key, documents, batch).await?;
    if location.is_shared() {
        return crate::store::strict_commit::commit_next(location, ds, transaction).await;
    }
    Ok(CommitBuilder::new(ds).execute(transaction).await?)
}

async fn scan(ds: &Dataset, filter: Option<String>) -> Result<Vec<RecordBatch>, StoreError> {
    let mut scanner = ds.scan();
    if let Some(f) = filter {
        scanner.filter(&f)?;
    }
    Ok(scanner.try_into_stream().await?.try_collect().await?)
}

impl GraphStore {
    /// Opens the graph's two datasets where they are; an index without a graph has neither
    /// until its first triples.
    pub async fn open(
        triples_at: DatasetLocation,
        entities_at: DatasetLocation,
    ) -> Result<GraphStore, StoreError> {
        Ok(GraphStore {
            triples: Mutex::new(open(&triples_at).await?),
            entities: Mutex::new(open(&entities_at).await?),
            triples_at,
            entities_at,
        })
    }

    /// Reads the newest versions another process committed (a query replica).
    pub async fn refresh(&self) -> Result<(), StoreError> {
        for (slot, location) in [
            (&self.triples, &self.triples_at),
            (&self.entities, &self.entities_at),
        ] {
            let current = slot.lock().expect("graph lock").clone();
            let newest = match current {
                Some(mut ds) => {
                    ds.checkout_latest().await?;
                    Some(ds)
                }
                None => open(location).await?,
            };
            *slot.lock().expect("graph lock") = newest;
        }
        Ok(())
    }

    fn triples(&self) -> Option<Dataset> {
        self.triples.lock().expect("graph lock").clone()
    }

    fn entities(&self) -> Option<Dataset> {
        self.entities.lock().expect("graph lock").clone()
    }

    /// The newest versions, if the index has a graph.
    pub fn latest(&self) -> Option<GraphVersion> {
        Some(GraphVersion {
            triples: self.triples()?.version_id(),
            entities: self.entities()?.version_id(),
        })
    }

    /// Live rows of `documents` at the newest version, marked deleted at `at` (soft deletes
    /// keep them for pinned versions, as chunks are kept).
    pub async fn tombstones(
        &self,
        documents: &[String],
        at: &str,
    ) -> Result<(Vec<TripleRow>, Vec<EntityRow>), StoreError> {
        let (Some(t), Some(e)) = (self.triples(), self.entities()) else {
            return Ok((Vec::new(), Vec::new()));
        };
        if documents.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let filter = format!("{} AND {LIVE_ROWS}", in_list("document_id", documents));
        let mut triples = Vec::new();
        for b in scan(&t, Some(filter.clone())).await? {
            triples.extend(batch_to_triples(&b).map_err(StoreError::Corrupt)?);
        }
        let mut entities = Vec::new();
        for b in scan(&e, Some(filter)).await? {
            entities.extend(batch_to_entities(&b).map_err(StoreError::Corrupt)?);
        }
        for t in &mut triples {
            t.deleted_at = Some(at.to_string());
        }
        for e in &mut entities {
            e.deleted_at = Some(at.to_string());
        }
        Ok((triples, entities))
    }

    /// Applies `change`; returns the graph's versions after it (`None`: the index has no graph
    /// and the change adds none).
    pub async fn commit(
        &self,
        change: &GraphChange,
        dimensions: usize,
    ) -> Result<Option<GraphVersion>, StoreError> {
        let has_rows = !change.triples.is_empty() || !change.entities.is_empty();
        if self.latest().is_none() && !has_rows {
            return Ok(None);
        }
        if change.documents.is_empty() {
            return Ok(self.latest());
        }
        // Documents that never had graph rows, and bring none: nothing to commit (most
        // batches of an index where only some documents state triples).
        if !has_rows {
            if let Some(t) = self.triples() {
                let filter = in_list("document_id", &change.documents);
                let stored = t.count_rows(Some(filter.clone())).await?;
                let named = match self.entities() {
                    Some(e) => e.count_rows(Some(filter)).await?,
                    None => 0,
                };
                if stored == 0 && named == 0 {
                    return Ok(self.latest());
                }
            }
        }
        let triples = match self.triples() {
            Some(ds) => ds,
            None => create(&self.triples_at, triple_schema(dimensions)).await?,
        };
        let entities = match self.entities() {
            Some(ds) => ds,
            None => create(&self.entities_at, entity_schema()).await?,
        };
        let triple_batch = (!change.triples.is_empty())
            .then(|| triples_to_batch(&change.triples, dimensions))
            .transpose()
            .map_err(StoreError::Corrupt)?;
        let entity_batch = (!change.entities.is_empty())
            .then(|| entities_to_batch(&change.entities))
            .transpose()
            .map_err(StoreError::Corrupt)?;
        let triples = replace(
            &self.triples_at,
            triples,
            "triple_id",
            &change.documents,
            triple_batch,
        )
        .await?;
        let entities = replace(
            &self.entities_at,
            entities,
            "row_id",
            &change.documents,
            entity_batch,
        )
        .await;
        let entities = match entities {
            Ok(ds) => ds,
            Err(e) => {
                *self.triples.lock().expect("graph lock") = Some(triples);
                return Err(e);
            }
        };
        let version = GraphVersion {
            triples: triples.version_id(),
            entities: entities.version_id(),
        };
        *self.triples.lock().expect("graph lock") = Some(triples);
        *self.entities.lock().expect("graph lock") = Some(entities);
        Ok(Some(version))
    }

    /// Every row (live and deleted) at `version`.
    pub async fn load(
        &self,
        version: GraphVersion,
    ) -> Result<(Vec<TripleRow>, Vec<EntityRow>), StoreError> {
        let (Some(t), Some(e)) = (self.triples(), self.entities()) else {
            return Err(StoreError::Corrupt(
                "a version names a graph, but the index has no graph datasets".into(),
            ));
        };
        let t = t.checkout_version(version.triples).await?;
        let e = e.checkout_version(version.entities).await?;
        let mut triples = Vec::new();
        for b in scan(&t, Some(LIVE_ROWS.to_string())).await? {
            triples.extend(batch_to_triples(&b).map_err(StoreError::Corrupt)?);
        }
        let mut entities = Vec::new();
        for b in scan(&e, Some(LIVE_ROWS.to_string())).await? {
            entities.extend(batch_to_entities(&b).map_err(StoreError::Corrupt)?);
        }
        Ok((triples, entities))
    }

    /// Drops graph versions older than `oldest_kept` (the one the oldest retained index
    /// version names).
    pub async fn prune_before(&self, oldest_kept: GraphVersion) -> Result<(), StoreError> {
        for (ds, before) in [
            (self.triples(), oldest_kept.triples),
            (self.entities(), oldest_kept.entities),
        ] {
            if let Some(ds) = ds {
                let policy = CleanupPolicy {
                    before_version: Some(before),
                    delete_unverified: false,
                    ..Default::default()
                };
                ds.cleanup_with_policy(policy).await?;
            }
        }
        Ok(())
    }
}
