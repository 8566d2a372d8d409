//! Late hydration: a query ranks candidates on ids, vectors and scores, and reads the text
//! and metadata of only the rows it can still return (a hybrid query considers up to 60
//! candidates and returns 10). Lance's reads cost mostly by the row, so the saving is the
//! rows not read, not the columns (docs/benchmark-history.md, "Late hydration, measured").

use std::collections::HashMap;

use tracing::Instrument;

use super::search::{rank_order, FoundBy, RelevanceKind, SearchHit};
use super::RetrievalError;
use crate::index::rows::CandidateRow;
use crate::index::{ChunkRow, Index, Snapshot};

/// A candidate with its score, before its row is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub candidate: CandidateRow,
    pub score: f64,
    pub kind: RelevanceKind,
    pub semantic_score: Option<f64>,
    pub keyword_score: Option<f64>,
    pub found_by: FoundBy,
}

/// Orders candidates as [`super::search::sort_hits`] orders hits.
pub fn sort_ranked(ranked: &mut [Ranked]) {
    ranked.sort_by(|a, b| {
        rank_order(
            (
                a.score,
                &a.candidate.document_id,
                a.candidate.chunk_index,
                &a.candidate.chunk_id,
            ),
            (
                b.score,
                &b.candidate.document_id,
                b.candidate.chunk_index,
                &b.candidate.chunk_id,
            ),
        )
    });
}

/// Reads the rows (without vectors) of `ranked` from the snapshot they were found in, by
/// address; the hits keep the candidates' order.
pub async fn hydrate(
    index: &Index,
    snapshot: &Snapshot,
    ranked: Vec<Ranked>,
) -> Result<Vec<SearchHit>, RetrievalError> {
    let addresses: Vec<u64> = ranked.iter().map(|r| r.candidate.address).collect();
    let read = index
        .lance()
        .rows_at(&snapshot.dataset, &addresses, false)
        .instrument(tracing::info_span!("hydration", rows = addresses.len()))
        .await?;
    let mut rows: HashMap<String, ChunkRow> =
        read.into_iter().map(|r| (r.chunk_id.clone(), r)).collect();
    ranked
        .into_iter()
        .map(|r| {
            // An address from a search of this very version always has its row; a missing
            // one is a broken store, not a hit to leave out quietly.
            let row = rows.remove(&r.candidate.chunk_id).ok_or_else(|| {
                RetrievalError::Internal(format!(
                    "chunk {} found at row address {} of version {} could not be read there",
                    r.candidate.chunk_id, r.candidate.address, snapshot.version
                ))
            })?;
            Ok(SearchHit {
                row,
                score: r.score,
                kind: r.kind,
                semantic_score: r.semantic_score,
                keyword_score: r.keyword_score,
                rerank_score: None,
                found_by: r.found_by,
            })
        })
        .collect()
}
