//! The knowledge graph (issue 7): facts (`subject —relation→ object`) stored next to an
//! index's chunks and versioned with them, and graph retrieval — the query's words linked to
//! entities (exactly, normalised, by alias or within one typo), the relations within a
//! number of hops of them scored against the query, and the linked entities returned as
//! rewrite terms that also widen the keyword branch.
//!
//! ```text
//! document.triples ─► rows (linked to chunks) ─► triples.lance, entities.lance
//!                                                   ▲ version named by each chunk commit
//! query ─► link (view) ─► expand (hops) ─► score ─► relation hits, rewrite terms
//! ```

pub mod extractor;
pub mod normalize;
pub mod rows;
pub mod store;
pub mod view;

use serde::{Deserialize, Serialize};

pub use view::{GraphView, LinkKind, LinkedEntity, RelationHit};

/// `[graph]`: whether contract 001 answers in graph mode, and how far it looks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphConfig {
    /// Graph mode for contract 001 ("Qdrant + Neo4j" in the contract: `smart_lookup` on,
    /// relation hits, `kg`, `rewrite_terms`). Off: chunk-only results, structural depth 0.
    pub enabled: bool,
    /// Structural depth (hops) when a request sets none.
    pub default_depth: usize,
    /// The deepest a request may ask for.
    pub max_depth: usize,
    /// Relations reached per query before scoring, at most (a hub entity cannot make a
    /// query slow).
    pub max_candidates: usize,
    /// Relation hits a query returns at most.
    pub max_relations: usize,
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            enabled: false,
            default_depth: 1,
            max_depth: 3,
            max_candidates: 2000,
            max_relations: 10,
        }
    }
}

impl GraphConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.default_depth > self.max_depth {
            return Err((
                "graph.default_depth".into(),
                "must not exceed graph.max_depth".into(),
            ));
        }
        if self.max_candidates == 0 || self.max_relations == 0 {
            return Err((
                "graph.max_candidates".into(),
                "graph.max_candidates and graph.max_relations must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// What a graph lookup found for one query.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphLookup {
    /// The index version whose graph was read.
    pub index_version: u64,
    pub entities: Vec<LinkedEntity>,
    /// The linked entities' normalised names, in query order (contract 001's
    /// `rewrite_terms`).
    pub rewrite_terms: Vec<String>,
    /// Names and aliases of the linked entities the query's own words do not hold: added to
    /// the keyword branch.
    pub keyword_expansion: Vec<String>,
    /// Relations within the depth, best first.
    pub relations: Vec<RelationHit>,
}

/// Expands from the entities `query` linked to (see [`GraphView::link`]) and scores on
/// `view`: rewrite terms, keyword expansion, relation hits.
pub fn lookup(
    view: &GraphView,
    entities: &[LinkedEntity],
    query: &str,
    query_vector: Option<&[f32]>,
    depth: usize,
    config: &GraphConfig,
) -> (Vec<String>, Vec<String>, Vec<RelationHit>) {
    let rewrite_terms: Vec<String> = entities.iter().map(|e| e.key.clone()).collect();
    let query_words: std::collections::BTreeSet<String> =
        normalize::tokens(query).into_iter().collect();
    let mut expansion: Vec<String> = Vec::new();
    for e in entities {
        for name in std::iter::once(&e.name).chain(&e.aliases) {
            for word in normalize::tokens(name) {
                if !query_words.contains(&word) && !expansion.contains(&word) {
                    expansion.push(word);
                }
            }
        }
    }
    let keys: Vec<String> = entities.iter().map(|e| e.key.clone()).collect();
    let reached = view.expand(&keys, depth, config.max_candidates);
    let relations = view.score(&reached, query, query_vector, config.max_relations);
    (rewrite_terms, expansion, relations)
}
