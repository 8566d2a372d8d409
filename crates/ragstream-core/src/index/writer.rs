//! Writing a batch of document operations: plan (drop no-ops, chunk what changed), embed,
//! then commit to Lance (one version) and to the keyword store under the same version.
//!
//! The three steps are separate so that the pipeline can run them in different actors, and
//! a writer can plan and embed one batch while the one before commits
//! (`Engine::prepare_write`, `Engine::commit_prepared`).

use std::collections::{HashMap, HashSet};

use super::commit_log::Change;
use super::rows::ChunkRow;
use super::{Index, IndexDefaults, IndexInfo, StoreError};
use crate::chunking::Chunker;
use crate::embedding::{EmbedError, Embedder};
use crate::graph::rows::{EntityRow, TripleRow};
use crate::graph::store::{GraphChange, GRAPH_PROPERTY};
use crate::model::Document;
use rayon::prelude::*;
use tracing::Instrument;

/// One operation on a document. Within a batch the last operation on a document wins.
// Ops live briefly in batch-sized vectors; boxing every document would add an allocation
// per document for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum DocumentOp {
    Upsert(Document),
    Delete { document_id: String },
}

impl DocumentOp {
    pub fn document_id(&self) -> &str {
        match self {
            DocumentOp::Upsert(d) => &d.id,
            DocumentOp::Delete { document_id } => document_id,
        }
    }
}

/// What a batch will change. `rows` carry vectors once embedded.
#[derive(Debug, Clone, Default)]
pub struct WritePlan {
    /// Documents whose stored chunks are replaced (upserts that changed, and deletes).
    pub documents: Vec<String>,
    /// Chunk ids those documents have now (removed from the keyword store).
    pub removed_chunk_ids: Vec<String>,
    /// New chunk rows of the upserted documents.
    pub rows: Vec<ChunkRow>,
    pub upserted: usize,
    pub deleted: usize,
    /// Upserts identical to what is stored, and deletes of absent documents.
    pub unchanged: usize,
    /// The knowledge-graph rows of the same documents (triples carry vectors once embedded).
    pub graph: GraphChange,
    /// The version this plan was made against (0: unknown). When no document had rows then
    /// and no commit since gave them rows (see `commit_log.rs`), the commit is a plain append.
    pub planned_at: u64,
}

impl WritePlan {
    pub fn is_noop(&self) -> bool {
        self.documents.is_empty()
    }

    /// Embeds the search text (title and chunk text) of the rows, and the text of the
    /// triples, that have no vector yet: one embedding call.
    pub fn embed(&mut self, embedder: &dyn Embedder) -> Result<(), EmbedError> {
        let rows: Vec<usize> = (0..self.rows.len())
            .filter(|i| self.rows[*i].vector.is_none())
            .collect();
        let triples: Vec<usize> = (0..self.graph.triples.len())
            .filter(|i| self.graph.triples[*i].vector.is_none())
            .collect();
        if rows.is_empty() && triples.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = rows
            .iter()
            .map(|i| self.rows[*i].search_text())
            .chain(triples.iter().map(|i| self.graph.triples[*i].text()))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut vectors = embedder.embed(&refs)?.into_iter();
        for (i, v) in rows.into_iter().zip(&mut vectors) {
            self.rows[i].vector = Some(v);
        }
        for (i, v) in triples.into_iter().zip(vectors) {
            self.graph.triples[i].vector = Some(v);
        }
        Ok(())
    }

    /// Whether anything still lacks a vector.
    pub fn needs_embedding(&self) -> bool {
        self.rows.iter().any(|r| r.vector.is_none())
            || self.graph.triples.iter().any(|t| t.vector.is_none())
    }

    /// Takes triple vectors embedded earlier (same triple id and text).
    pub fn reuse_triple_vectors(&mut self, embedded: Vec<TripleRow>) {
        let mut by_key: HashMap<(String, String), Vec<f32>> = embedded
            .into_iter()
            .filter_map(|t| {
                let key = (t.triple_id.clone(), t.text());
                t.vector.map(|v| (key, v))
            })
            .collect();
        for t in &mut self.graph.triples {
            if t.vector.is_none() {
                t.vector = by_key.remove(&(t.triple_id.clone(), t.text()));
            }
        }
    }

    /// Takes vectors from rows embedded earlier (same chunk id and search text), so that a
    /// plan re-made against a newer version embeds nothing twice. Returns the rows still
    /// without a vector.
    pub fn reuse_vectors(&mut self, embedded: Vec<ChunkRow>) -> usize {
        let mut by_key: HashMap<(String, String), Vec<f32>> = embedded
            .into_iter()
            .filter_map(|r| {
                let key = (r.chunk_id.clone(), r.search_text());
                r.vector.map(|v| (key, v))
            })
            .collect();
        let mut missing = 0;
        for row in &mut self.rows {
            if row.vector.is_none() {
                row.vector = by_key.remove(&(row.chunk_id.clone(), row.search_text()));
                missing += usize::from(row.vector.is_none());
            }
        }
        missing
    }
}

/// The result of a write.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WriteOutcome {
    /// The new version, or `None` if the batch changed nothing.
    pub index_version: Option<u64>,
    pub upserted: usize,
    pub deleted: usize,
    pub unchanged: usize,
    pub chunks_written: usize,
}

impl Index {
    /// Loads the set of document ids the index holds, once: under the write lock, so that
    /// no commit is between adding its documents to the set and writing them.
    async fn load_known_documents(&self) -> Result<(), StoreError> {
        if self.known.is_loaded() {
            return Ok(());
        }
        let _guard = self.lock_for_write().await?;
        if !self.known.is_loaded() {
            let mut hashes = std::collections::HashSet::new();
            self.lance
                .each_document_id(&self.lance.latest(), |id| {
                    hashes.insert(self.known.hash(id));
                })
                .await?;
            self.known.load(hashes);
        }
        Ok(())
    }

    /// The chunk rows and graph rows of each `(document, content hash)`, in order. Chunking
    /// is CPU work per document (word segmentation, entity keys): it runs on the compute
    /// pool's threads, one document per task, rather than on the caller's one thread.
    fn chunk_all(
        &self,
        documents: &[(Document, String)],
        chunker: &Chunker,
    ) -> Vec<(Vec<ChunkRow>, Vec<TripleRow>, Vec<EntityRow>)> {
        let name = self.name.as_str();
        crate::runtime::compute_pool::run(|| {
            documents
                .par_iter()
                .map(|(doc, hash)| {
                    let rows: Vec<ChunkRow> = chunker
                        .chunk(doc)
                        .into_iter()
                        .map(|c| ChunkRow::new(name, doc, hash, c))
                        .collect();
                    let (triples, entities) = crate::graph::rows::document_rows(doc, &rows);
                    (rows, triples, entities)
                })
                .collect()
        })
    }
}

/// A Kafka checkpoint as an index stores it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StoredCheckpoint {
    /// `"topic:partition"` → the next offset to read.
    pub offsets: HashMap<String, i64>,
    /// The identity of the log those offsets belong to.
    pub log: Option<String>,
}

/// Commit property holding the Kafka offsets a commit covers (JSON object).
pub const KAFKA_CHECKPOINT: &str = "ragstream.kafka.checkpoint";

/// Commit property naming the Kafka log the checkpoint's offsets belong to: offsets mean
/// nothing in another log (a broker that lost its messages, another cluster).
pub const KAFKA_LOG: &str = "ragstream.kafka.log";

/// Where a commit's time went, logged when it was slow: a late document is explained by
/// the step that held it (waiting for the write lock means maintenance or another writer).
#[derive(Debug, Default)]
struct CommitTiming {
    lock_wait: std::time::Duration,
    graph: std::time::Duration,
    lance: std::time::Duration,
    keyword: std::time::Duration,
    resident: std::time::Duration,
    retention: std::time::Duration,
}

impl CommitTiming {
    const SLOW: std::time::Duration = std::time::Duration::from_secs(1);

    fn report(&self, index: &str, version: u64, total: std::time::Duration) {
        if total < Self::SLOW {
            return;
        }
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        tracing::warn!(
            index,
            version,
            total_ms = ms(total),
            lock_wait_ms = ms(self.lock_wait),
            graph_ms = ms(self.graph),
            lance_ms = ms(self.lance),
            keyword_ms = ms(self.keyword),
            resident_ms = ms(self.resident),
            retention_ms = ms(self.retention),
            "slow commit"
        );
    }
}

/// Keyword-store changes that turn the rows `before` into `after`: chunk ids to remove and
/// rows to add. A chunk whose row changed (same id, new document content, or deleted) is
/// both.
pub fn diff(before: &[ChunkRow], after: Vec<ChunkRow>) -> (Vec<String>, Vec<ChunkRow>) {
    let old: HashMap<&str, (&str, bool)> = before
        .iter()
        .map(|r| (r.chunk_id.as_str(), (r.doc_hash.as_str(), r.is_deleted())))
        .collect();
    let new_ids: HashSet<&str> = after.iter().map(|r| r.chunk_id.as_str()).collect();
    let mut removed: Vec<String> = before
        .iter()
        .filter(|r| !new_ids.contains(r.chunk_id.as_str()))
        .map(|r| r.chunk_id.clone())
        .collect();
    let mut added = Vec::new();
    for row in after {
        match old.get(row.chunk_id.as_str()) {
            Some(&(hash, deleted)) if hash == row.doc_hash && deleted == row.is_deleted() => {}
            Some(_) => {
                removed.push(row.chunk_id.clone());
                added.push(row);
            }
            None => added.push(row),
        }
    }
    (removed, added)
}

/// The writing side of an index, borrowed from it: plans and commits batches of document
/// operations, and changes the index's settings. Commits take the index's write lock, so
/// one commit runs at a time ([`Index::writer`]).
#[derive(Clone, Copy)]
pub struct Writer<'a> {
    pub(super) index: &'a Index,
}

impl Writer<'_> {
    /// Plans a batch against the latest version. Documents must be validated already.
    pub async fn plan(
        &self,
        ops: Vec<DocumentOp>,
        chunker: &Chunker,
    ) -> Result<WritePlan, StoreError> {
        // Last operation per document wins; keep first-seen order for determinism.
        let mut order: Vec<String> = Vec::new();
        let mut last: HashMap<String, DocumentOp> = HashMap::new();
        for op in ops {
            let id = op.document_id().to_string();
            if last.insert(id.clone(), op).is_none() {
                order.push(id);
            }
        }
        // Only documents the index may hold are looked up: none, for a batch of new ones.
        self.index.load_known_documents().await?;
        let latest = self.index.lance.latest();
        let mut stored = self
            .index
            .lance
            .stored_documents(&latest, &self.index.known.maybe_stored(&order))
            .await?;
        let mut plan = WritePlan {
            planned_at: latest.version_id(),
            ..WritePlan::default()
        };
        let mut deleted = Vec::new();
        let mut changed = Vec::new();
        for id in order {
            match last.remove(&id).expect("every id has an op") {
                DocumentOp::Upsert(doc) => {
                    let hash = doc.content_hash();
                    if stored.hashes.get(&id) == Some(&hash) {
                        plan.unchanged += 1;
                        continue;
                    }
                    plan.upserted += 1;
                    plan.documents.push(id);
                    changed.push((doc, hash));
                }
                DocumentOp::Delete { .. } => {
                    if stored.hashes.contains_key(&id) {
                        plan.deleted += 1;
                        plan.documents.push(id.clone());
                        deleted.push(id);
                    } else {
                        plan.unchanged += 1;
                    }
                }
            }
        }
        for (rows, triples, entities) in self.index.chunk_all(&changed, chunker) {
            plan.graph.triples.extend(triples);
            plan.graph.entities.extend(entities);
            plan.rows.extend(rows);
        }
        // Deletes are soft: the live rows come back marked, vectors and all, so that
        // `deleted` visibility and pinned versions still find them.
        if !deleted.is_empty() {
            let at = crate::model::now_timestamp();
            let mut tombstones = self
                .index
                .lance
                .live_rows_of(&latest, &deleted, true)
                .await?;
            for row in &mut tombstones {
                row.deleted_at = Some(at.clone());
            }
            plan.rows.extend(tombstones);
            let (triples, entities) = self.index.graph.tombstones(&deleted, &at).await?;
            plan.graph.triples.extend(triples);
            plan.graph.entities.extend(entities);
        }
        plan.graph.documents = plan.documents.clone();
        plan.removed_chunk_ids = plan
            .documents
            .iter()
            .filter_map(|id| stored.chunk_ids.remove(id))
            .flatten()
            .collect();
        Ok(plan)
    }

    /// Commits an embedded plan: one Lance commit (carrying `properties`), then the keyword
    /// commit tagged with the same version (tantivy indexes during the Lance commit), then
    /// retention. A no-op plan commits nothing.
    pub async fn commit(
        &self,
        plan: WritePlan,
        properties: HashMap<String, String>,
    ) -> Result<WriteOutcome, StoreError> {
        let started = std::time::Instant::now();
        let _guard = self.index.lock_for_write().await?;
        let mut timing = CommitTiming {
            lock_wait: started.elapsed(),
            ..Default::default()
        };
        // A keyword commit failed after its Lance commit: the rows Lance has and the keyword
        // store lacks are replayed first. Without this, the retried batch plans as unchanged
        // (Lance has it) and its chunks stay out of keyword search until the next open.
        self.index.repair_if_behind().await?;
        let mut outcome = WriteOutcome {
            index_version: None,
            upserted: plan.upserted,
            deleted: plan.deleted,
            unchanged: plan.unchanged,
            chunks_written: plan.rows.iter().filter(|r| !r.is_deleted()).count(),
        };
        if plan.is_noop() {
            return Ok(outcome);
        }
        // The graph first: the chunk commit records the graph version it goes with, so a
        // crash in between leaves a graph version no index version names (rewritten when the
        // batch is re-read), never an index version with a graph it does not have.
        let mut properties = properties;
        let owner = self.index.check_ownership().await?;
        if let Some(owner) = &owner {
            properties.extend(owner.properties());
        }
        let dimensions = self.index.info().dimensions;
        // Tantivy indexes the batch on its own thread while the graph and Lance commit; the
        // keyword commit then names Lance's version. If either commit fails (or this future
        // is dropped) first, the staged changes are discarded.
        let step = std::time::Instant::now();
        let staged = tracing::info_span!("keyword.stage").in_scope(|| {
            self.index
                .keyword
                .stage(&plan.removed_chunk_ids, &plan.rows)
        })?;
        timing.keyword = step.elapsed();
        let step = std::time::Instant::now();
        if let Some(graph) = self
            .index
            .graph
            .commit(&plan.graph, dimensions)
            .instrument(tracing::info_span!("graph.commit"))
            .await?
        {
            properties.insert(GRAPH_PROPERTY.to_string(), graph.to_property());
        }
        timing.graph = step.elapsed();
        let step = std::time::Instant::now();
        // New documents only (none had rows when planned), and no commit since gave them
        // rows: nothing to replace, so an append (no merge against the existing rows, whose
        // cost grows with the index).
        let append = plan.removed_chunk_ids.is_empty()
            && plan.planned_at > 0
            && plan.rows.iter().all(|r| !r.is_deleted())
            && self.index.commits.no_rows_added(
                plan.planned_at,
                self.index.lance.latest_version(),
                &plan.documents,
            );
        self.index.known.add(&plan.documents);
        let version = self
            .index
            .lance
            .commit(&plan.documents, &plan.rows, properties, append)
            .instrument(tracing::info_span!("lance.commit"))
            .await?;
        self.index.commits.record(
            version,
            Change::Documents(plan.documents.iter().cloned().collect()),
        );
        if let (Some(ownership), Some(owner)) = (&self.index.ownership, owner) {
            ownership.committed(owner);
        }
        timing.lance = step.elapsed();
        crate::failpoint::abort_at("after-lance-commit");
        let step = std::time::Instant::now();
        self.index.prepare_resident().await;
        timing.resident = step.elapsed();
        let step = std::time::Instant::now();
        tracing::info_span!("keyword.commit", version)
            .in_scope(|| staged.commit(version))
            .inspect_err(|_| self.index.mark_keyword_behind())?;
        timing.keyword += step.elapsed();
        self.index.committed.notify_one();
        let step = std::time::Instant::now();
        self.index
            .apply_retention(self.index.commit_retention_slack())
            .await?;
        timing.retention = step.elapsed();
        outcome.index_version = Some(version);
        timing.report(self.index.name.as_str(), version, started.elapsed());
        let (lance_seconds, keyword_seconds) =
            (timing.lance.as_secs_f64(), timing.keyword.as_secs_f64());
        let Some(m) = crate::telemetry::metrics() else {
            return Ok(outcome);
        };
        let name = self.index.name.as_str();
        m.commit_duration_seconds
            .with_label_values(&[name, "lance"])
            .observe(lance_seconds);
        m.commit_duration_seconds
            .with_label_values(&[name, "keyword"])
            .observe(keyword_seconds);
        m.documents_indexed_total
            .with_label_values(&[name, "upsert"])
            .inc_by(outcome.upserted as u64);
        m.documents_indexed_total
            .with_label_values(&[name, "delete"])
            .inc_by(outcome.deleted as u64);
        m.chunks_indexed_total
            .with_label_values(&[name])
            .inc_by(outcome.chunks_written as u64);
        m.index_version
            .with_label_values(&[name])
            .set(i64::try_from(version).unwrap_or(i64::MAX));
        self.index.record_shape().await?;
        Ok(outcome)
    }

    /// Marks the index deleted once its last write has finished; returns the Kafka checkpoint
    /// of its newest version, which outlives it (see `Engine::delete_index`). Later writes
    /// through this handle fail as writes to an unknown index.
    pub async fn retire(&self) -> Result<StoredCheckpoint, StoreError> {
        // Not `lock_for_write`: retiring twice (a delete whose move failed, tried again) is
        // allowed.
        self.index.check_writable()?;
        let _guard = self.index.write_lock.lock().await;
        let checkpoint = self.index.reader().stored_checkpoint().await?;
        self.index
            .deleted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(checkpoint)
    }

    /// Takes back [`Writer::retire`]: the delete that retired it did not move it.
    pub fn unretire(&self) {
        self.index
            .deleted
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Records new query defaults in `index.json`.
    pub async fn set_defaults(&self, defaults: IndexDefaults) -> Result<IndexInfo, StoreError> {
        self.update_defaults(|d| *d = defaults).await
    }

    /// Changes the query defaults in `index.json` from what they are when the change is
    /// written: a change computed from an earlier read (a calibration that ran for minutes)
    /// would overwrite whatever was set meanwhile.
    pub async fn update_defaults(
        &self,
        change: impl FnOnce(&mut IndexDefaults),
    ) -> Result<IndexInfo, StoreError> {
        self.index
            .update_info(|info| change(&mut info.defaults))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedding::HashingEmbedder;
    use crate::index::rows::test_row;

    #[test]
    fn a_replanned_batch_reuses_vectors_by_chunk_id_and_text_and_embeds_only_the_rest() {
        let mut earlier = vec![test_row("a", "T", "alpha"), test_row("b", "T", "beta")];
        for (r, v) in earlier.iter_mut().zip([vec![1.0, 0.0], vec![0.0, 1.0]]) {
            r.vector = Some(v);
        }
        let mut plan = WritePlan {
            // "b" now has another title: its search text changed, its old vector is stale.
            rows: vec![
                test_row("a", "T", "alpha"),
                test_row("b", "U", "beta"),
                test_row("c", "T", "gamma"),
            ],
            ..Default::default()
        };
        assert_eq!(plan.reuse_vectors(earlier), 2);
        assert_eq!(plan.rows[0].vector, Some(vec![1.0, 0.0]));
        assert_eq!(plan.rows[1].vector, None);
        let embedder = HashingEmbedder::new(8);
        plan.embed(&embedder).unwrap();
        assert_eq!(
            plan.rows[0].vector,
            Some(vec![1.0, 0.0]),
            "kept, not re-embedded"
        );
        let fresh = embedder.embed(&["U\nbeta", "T\ngamma"]).unwrap();
        assert_eq!(plan.rows[1].vector.as_ref(), Some(&fresh[0]));
        assert_eq!(plan.rows[2].vector.as_ref(), Some(&fresh[1]));
    }
}
