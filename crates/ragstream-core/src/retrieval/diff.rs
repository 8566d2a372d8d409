//! One query at two versions: which chunks entered the results, which left, which moved,
//! and for each, whether its document was written in between (upserted, deleted) or was
//! moved by writes to other documents.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::filters::sql_string;
use super::rerank::Reranker;
use super::search::search;
use super::{RetrievalError, SearchRequest};
use crate::embedding::Embedder;
use crate::index::Index;

/// What the writes in between did to a result's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Cause {
    /// Not in the older version, in the newer.
    Added,
    /// Its text or metadata changed.
    Upserted,
    /// Deleted (soft) or purged in between.
    Deleted,
    /// Unchanged: writes to other documents moved it.
    Unchanged,
}

/// One result that entered, left or moved.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "DiffChange")]
pub struct Change {
    /// The chunk.
    pub chunk_id: String,
    /// Its document.
    pub document_id: String,
    /// Its rank at from_version.
    pub from_rank: Option<usize>,
    /// Its rank at to_version.
    pub to_rank: Option<usize>,
    /// Its score at from_version.
    pub from_score: Option<f64>,
    /// Its score at to_version.
    pub to_score: Option<f64>,
    pub cause: Cause,
}

/// One query's answers at two versions, compared.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Diff {
    /// The older version.
    #[schemars(range(min = 1))]
    pub from_version: u64,
    /// The newer version.
    #[schemars(range(min = 1))]
    pub to_version: u64,
    /// The query as searched.
    pub query: String,
    /// In the results at to_version only.
    pub entered: Vec<Change>,
    /// In the results at from_version only.
    pub left: Vec<Change>,
    /// In both, at another rank.
    pub moved: Vec<Change>,
    /// Results at the same rank in both versions.
    pub unchanged: usize,
    /// The documents of these results that were written in between, by what happened.
    pub writes: Writes,
}

/// The results' documents written in between.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Writes {
    pub added: Vec<String>,
    pub upserted: Vec<String>,
    pub deleted: Vec<String>,
}

/// Runs `request` at `from` and at `to` on `index` and compares the answers.
pub async fn diff(
    index: &Index,
    embedder: &Arc<dyn Embedder>,
    reranker: Option<&Arc<dyn Reranker>>,
    request: &SearchRequest,
    from: u64,
    to: u64,
) -> Result<Diff, RetrievalError> {
    let request = super::search::with_query_vector(embedder, request).await?;
    let at = |version: u64| {
        let mut r = request.clone();
        r.index_version = Some(version);
        r
    };
    let before = search(index, embedder, reranker, &at(from)).await?;
    let after = search(index, embedder, reranker, &at(to)).await?;
    let ranked = |hits: &[super::SearchHit]| -> HashMap<String, (usize, f64, String)> {
        hits.iter()
            .enumerate()
            .map(|(i, h)| {
                (
                    h.row.chunk_id.clone(),
                    (i + 1, h.score, h.row.document_id.clone()),
                )
            })
            .collect()
    };
    let (was, is) = (ranked(&before.hits), ranked(&after.hits));
    let documents: BTreeSet<String> = was
        .values()
        .chain(is.values())
        .map(|v| v.2.clone())
        .collect();
    let causes = causes(index, from, to, &documents).await?;
    let change = |id: &str| {
        let (old, new) = (was.get(id), is.get(id));
        let document_id = old.or(new).map(|v| v.2.clone()).unwrap_or_default();
        Change {
            chunk_id: id.to_string(),
            cause: causes
                .get(&document_id)
                .copied()
                .unwrap_or(Cause::Unchanged),
            document_id,
            from_rank: old.map(|v| v.0),
            to_rank: new.map(|v| v.0),
            from_score: old.map(|v| v.1),
            to_score: new.map(|v| v.1),
        }
    };
    let mut entered = Vec::new();
    let mut moved = Vec::new();
    let mut unchanged = 0;
    for hit in &after.hits {
        let id = &hit.row.chunk_id;
        match (was.get(id), is.get(id)) {
            (None, _) => entered.push(change(id)),
            (Some(old), Some(new)) if old.0 != new.0 => moved.push(change(id)),
            _ => unchanged += 1,
        }
    }
    let left: Vec<Change> = before
        .hits
        .iter()
        .filter(|h| !is.contains_key(&h.row.chunk_id))
        .map(|h| change(&h.row.chunk_id))
        .collect();
    let mut writes = Writes::default();
    let mut causes: Vec<(&String, &Cause)> = causes.iter().collect();
    causes.sort_by(|a, b| a.0.cmp(b.0));
    for (document, cause) in causes {
        match cause {
            Cause::Added => writes.added.push(document.clone()),
            Cause::Upserted => writes.upserted.push(document.clone()),
            Cause::Deleted => writes.deleted.push(document.clone()),
            Cause::Unchanged => {}
        }
    }
    Ok(Diff {
        from_version: before.index_version,
        to_version: after.index_version,
        query: after.query,
        entered,
        left,
        moved,
        unchanged,
        writes,
    })
}

/// What happened to each of `documents` between versions `from` and `to`: compared by the
/// content hash and deletion time their rows carry.
async fn causes(
    index: &Index,
    from: u64,
    to: u64,
    documents: &BTreeSet<String>,
) -> Result<HashMap<String, Cause>, RetrievalError> {
    if documents.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<String> = documents.iter().cloned().collect();
    let predicate = format!(
        "document_id IN ({})",
        ids.iter()
            .map(|d| sql_string(d))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Per document: its content hash, and whether it is deleted, at one version.
    let state = |version: u64| {
        let predicate = predicate.clone();
        async move {
            let snapshot = index.reader().snapshot(Some(version)).await?;
            let rows = index
                .lance()
                .rows_where(&snapshot.dataset, Some(predicate), false)
                .await?;
            Ok::<_, RetrievalError>(
                rows.into_iter()
                    .map(|r| (r.document_id, (r.doc_hash, r.deleted_at.is_some())))
                    .collect::<HashMap<String, (String, bool)>>(),
            )
        }
    };
    let (old, new) = (state(from).await?, state(to).await?);
    Ok(ids
        .into_iter()
        .map(|d| {
            let cause = match (old.get(&d), new.get(&d)) {
                (None, Some((_, false))) => Cause::Added,
                (Some((_, false)), None | Some((_, true))) => Cause::Deleted,
                (Some((a, _)), Some((b, _))) if a != b => Cause::Upserted,
                _ => Cause::Unchanged,
            };
            (d, cause)
        })
        .collect())
}
