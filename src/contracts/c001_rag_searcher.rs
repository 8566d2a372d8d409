//! Contract 001, "RagSearcher Triplets Update": `{query, top_k}` → `{results, kg,
//! rewrite_terms}`, all three keys always present.
//!
//! Two modes, as the contract's delta table has them:
//!
//! - **fast mode** (`graph.enabled = false`, the default, or a request's `fast_mode: true`):
//!   chunk hits only, structural depth forced to 0, `kg` and `rewrite_terms` empty;
//! - **graph mode** (`graph.enabled = true`; `smart_lookup`): the query's words are linked to
//!   the index's entities (`rewrite_terms`, which also widen the keyword branch), relations
//!   within the structural depth (`structural_depth`, default `graph.default_depth`) are
//!   scored against the query and merged with the chunk hits by reciprocal rank, as
//!   `component_type: "relation"` hits with `subject`, `relation`, `object`; `kg` lists the
//!   triples of the relation hits returned.
//!
//! Chunk hits carry the contract's metadata (`language`, `title`, `url`, `timestamp`, `tags`
//! as one comma-joined string, `collection`) and `content`; fields without a value are left
//! out, as the contract's example does. Ranking is hybrid (α 0.5) and the order of `results`
//! is the rank (the contract has no score field). The answer's `index_version` travels in the
//! `x-ragstream-index-version` header.

use serde_json::Value;

use super::wire;
use super::wire::c001::{
    ChunkHit, ComponentType, KgTriple, RagMetadata, RagQueryRequestBody, RagQueryResponse,
    RagResult, RelationHit,
};
pub use super::wire::c001::{TOP_K_DEFAULT, TOP_K_MAX};
use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::graph::RelationHit as GraphRelation;
use crate::index::ChunkRow;
use crate::model::{IndexName, ValidationError};
use crate::retrieval::{SearchMethod, SearchRequest};

/// A validated request: the chunk search, and the structural depth (`None`: fast mode).
#[derive(Debug, Clone, PartialEq)]
pub struct RagQuery {
    pub search: SearchRequest,
    pub depth: Option<usize>,
}

/// The rule a field breaks when its value is refused.
fn rule(field: &str) -> String {
    match field {
        "query" => "must be a string".into(),
        "top_k" => format!("must be an integer between 1 and {TOP_K_MAX}"),
        "fast_mode" => "must be a boolean".into(),
        // Its bound is the configuration's: `parse_graph_request` states it.
        "structural_depth" => "must be a non-negative integer".into(),
        _ => "must be an object".into(),
    }
}

fn read(body: &Value) -> Result<RagQueryRequestBody, ValidationError> {
    wire::read(body, "", &|_| String::new(), &rule)
}

/// Validates the MCP tool input, and the graph options: `fast_mode` (bool) and
/// `structural_depth` (integer, at most `graph.max_depth`), which only graph mode honours.
/// Other fields are ignored (MCP clients send extras).
pub fn parse_graph_request(
    body: &Value,
    max_query_bytes: usize,
    graph: &crate::graph::GraphConfig,
) -> Result<RagQuery, ValidationError> {
    let depth_rule = || {
        ValidationError::new(
            "structural_depth",
            format!("must be an integer between 0 and {}", graph.max_depth),
        )
    };
    let given = read(body).map_err(|e| match e.field.as_str() {
        "structural_depth" => depth_rule(),
        _ => e,
    })?;
    let search = search_of(&given, max_query_bytes)?;
    let fast_mode = given.fast_mode.unwrap_or(false) || !graph.enabled;
    let depth = match given.structural_depth {
        None => graph.default_depth,
        Some(n) if n as usize <= graph.max_depth => n as usize,
        Some(_) => return Err(depth_rule()),
    };
    // Fast mode: structural depth forced to 0, no graph at all.
    Ok(RagQuery {
        search,
        depth: (!fast_mode).then_some(depth),
    })
}

/// Validates the MCP tool input (and the types of the graph options, which only
/// [`parse_graph_request`] bounds). Other fields are ignored (MCP clients send extras).
pub fn parse_request(
    body: &Value,
    max_query_bytes: usize,
) -> Result<SearchRequest, ValidationError> {
    search_of(&read(body)?, max_query_bytes)
}

fn search_of(
    given: &RagQueryRequestBody,
    max_query_bytes: usize,
) -> Result<SearchRequest, ValidationError> {
    let query = match &given.query {
        None => return Err(ValidationError::new("query", "is required")),
        Some(s) if s.trim().is_empty() => {
            return Err(ValidationError::new("query", "must not be empty"))
        }
        Some(s) if s.len() > max_query_bytes => {
            return Err(ValidationError::new(
                "query",
                format!("must be at most {max_query_bytes} bytes"),
            ))
        }
        Some(s) => s.clone(),
    };
    let top_k = given.top_k.unwrap_or(TOP_K_DEFAULT as u64);
    if !(1..=TOP_K_MAX).contains(&top_k) {
        return Err(ValidationError::new("top_k", rule("top_k")));
    }
    Ok(SearchRequest::new(
        query,
        SearchMethod::Hybrid,
        top_k as usize,
    ))
}

/// One chunk hit: `metadata` (non-empty fields only) and `content`.
pub fn render_chunk(row: &ChunkRow) -> RagResult {
    let given = |value: Option<String>| value.filter(|v| !v.is_empty());
    let language = ["language", "lang"]
        .iter()
        .find_map(|k| row.metadata.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    RagResult::Chunk(ChunkHit {
        metadata: RagMetadata {
            language: given(language),
            title: given(row.title.clone()),
            url: given(row.uri.clone()),
            timestamp: given(row.updated_at.clone()),
            tags: given(Some(row.tags.join(","))),
            collection: given(Some(row.knowledge_base_id.clone())),
        },
        content: row.text.clone(),
    })
}

/// One relation hit (graph mode only).
pub fn render_relation(index: &IndexName, hit: &GraphRelation) -> RagResult {
    RagResult::Relation(RelationHit {
        metadata: RagMetadata {
            collection: Some(index.as_str().to_string()),
            ..RagMetadata::default()
        },
        component_type: ComponentType::Relation,
        subject: hit.subject.clone(),
        relation: hit.relation.clone(),
        object: hit.object.clone(),
    })
}

/// Chunk hits and relation hits in one ranking: reciprocal rank fusion (k = 60) of the two
/// lists, a chunk first on a tie; the best `top_k`.
fn merge<T>(chunks: Vec<T>, relations: Vec<T>, top_k: usize) -> Vec<T> {
    let rrf = |rank: usize| 1.0 / (60.0 + rank as f64 + 1.0);
    let mut all: Vec<(f64, usize, T)> = chunks
        .into_iter()
        .enumerate()
        .map(|(r, v)| (rrf(r), 0, v))
        .chain(
            relations
                .into_iter()
                .enumerate()
                .map(|(r, v)| (rrf(r), 1, v)),
        )
        .collect();
    // Stable: equal scores keep chunks (0) before relations (1), each in its own order.
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    all.into_iter().take(top_k).map(|(_, _, v)| v).collect()
}

pub async fn answer(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let config = engine.config();
    let query = match parse_graph_request(body, config.limits.max_query_bytes, &config.graph) {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e.into()),
    };
    let mut request = query.search;
    // Contract 001 states no fusion of its own: the index's applies.
    request.fusion = engine.index_fusion(index).await;
    let mut lookup = None;
    if let Some(depth) = query.depth {
        match engine
            .graph_lookup(index, &request.query, None, depth)
            .await
        {
            Ok((found, vector)) => {
                request.index_version = Some(found.index_version);
                request.keyword_expansion = found.keyword_expansion.clone();
                request.query_vector = vector;
                lookup = Some(found);
            }
            Err(EngineError::IndexNotFound(_)) => {}
            Err(e) => return super::error_reply(&e),
        }
    }
    match engine.search(index, &request).await {
        Ok(result) => {
            let chunks: Vec<RagResult> = result.hits.iter().map(|h| render_chunk(&h.row)).collect();
            let Some(lookup) = lookup else {
                let answer = RagQueryResponse {
                    results: chunks,
                    ..RagQueryResponse::default()
                };
                return Reply::typed(&answer, Some(result.index_version));
            };
            let relations: Vec<RagResult> = lookup
                .relations
                .iter()
                .map(|r| render_relation(index, r))
                .collect();
            let results = merge(chunks, relations, request.top_k);
            let kg: Vec<KgTriple> = results
                .iter()
                .filter_map(|r| match r {
                    RagResult::Relation(r) => Some(KgTriple {
                        subject: r.subject.clone(),
                        relation: r.relation.clone(),
                        object: r.object.clone(),
                    }),
                    RagResult::Chunk(_) => None,
                })
                .collect();
            let answer = RagQueryResponse {
                results,
                kg,
                rewrite_terms: lookup.rewrite_terms,
            };
            Reply::typed(&answer, Some(result.index_version))
        }
        // An index nobody has written to yet holds nothing: the contract's empty state.
        Err(EngineError::IndexNotFound(_)) => Reply::typed(&RagQueryResponse::default(), None),
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each refusal's field and wording, as the hand-written parser gave them before the wire
    /// types: clients match on them.
    #[test]
    fn every_refusal_keeps_its_wording() {
        let on = crate::graph::GraphConfig {
            enabled: true,
            ..Default::default()
        };
        let top_k = "must be an integer between 1 and 50";
        let depth = format!("must be an integer between 0 and {}", on.max_depth);
        for (body, field, rule) in [
            (json!([]), "body", "must be an object"),
            (json!({}), "query", "is required"),
            (json!({"query": null}), "query", "is required"),
            (json!({"query": 3}), "query", "must be a string"),
            (json!({"query": " "}), "query", "must not be empty"),
            (
                json!({"query": "x".repeat(101)}),
                "query",
                "must be at most 100 bytes",
            ),
            (json!({"query": "q", "top_k": 0}), "top_k", top_k),
            (json!({"query": "q", "top_k": "5"}), "top_k", top_k),
            (
                json!({"query": "q", "fast_mode": "yes"}),
                "fast_mode",
                "must be a boolean",
            ),
            (
                json!({"query": "q", "structural_depth": -1}),
                "structural_depth",
                &depth,
            ),
            (
                json!({"query": "q", "structural_depth": "1"}),
                "structural_depth",
                &depth,
            ),
            (
                json!({"query": "q", "structural_depth": 99}),
                "structural_depth",
                &depth,
            ),
        ] {
            let e = parse_graph_request(&body, 100, &on).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        // Extras are ignored; null is the same as absent for the options.
        let body = json!({"query": "q", "top_k": null, "fast_mode": null,
            "structural_depth": null, "mcp_extra": {"x": 1}});
        assert_eq!(parse_graph_request(&body, 100, &on).unwrap().depth, Some(1));
    }

    #[test]
    fn top_k_defaults_to_5_and_is_bounded_to_1_50() {
        assert_eq!(parse_request(&json!({"query": "q"}), 100).unwrap().top_k, 5);
        assert_eq!(
            parse_request(&json!({"query": "q", "top_k": 50}), 100)
                .unwrap()
                .top_k,
            50
        );
        for bad in [json!(0), json!(51), json!(2.5), json!("5"), json!(-1)] {
            let e = parse_request(&json!({"query": "q", "top_k": bad}), 100).unwrap_err();
            assert_eq!(e.field, "top_k", "{bad}");
        }
    }

    #[test]
    fn query_is_a_required_non_empty_string_and_extras_are_ignored() {
        for (body, rule) in [
            (json!({}), "is required"),
            (json!({"query": 3}), "must be a string"),
            (json!({"query": "  "}), "must not be empty"),
        ] {
            let e = parse_request(&body, 100).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), ("query", rule));
        }
        assert!(parse_request(&json!({"query": "q", "fast_mode": true}), 100).is_ok());
    }

    #[test]
    fn graph_mode_follows_the_contracts_delta_table() {
        let off = crate::graph::GraphConfig::default();
        let on = crate::graph::GraphConfig {
            enabled: true,
            ..Default::default()
        };
        let depth = |body: Value, g: &crate::graph::GraphConfig| {
            parse_graph_request(&body, 100, g).map(|q| q.depth)
        };
        // Only Qdrant: structural depth forced to 0, whatever the client says.
        assert_eq!(
            depth(json!({"query": "q", "structural_depth": 2}), &off),
            Ok(None)
        );
        assert_eq!(
            depth(json!({"query": "q", "fast_mode": false}), &off),
            Ok(None)
        );
        // Qdrant + Neo4j: the default depth unless explicitly set; fast_mode opts out.
        assert_eq!(depth(json!({"query": "q"}), &on), Ok(Some(1)));
        assert_eq!(
            depth(json!({"query": "q", "structural_depth": 2}), &on),
            Ok(Some(2))
        );
        assert_eq!(
            depth(json!({"query": "q", "fast_mode": true}), &on),
            Ok(None)
        );
        let e = depth(json!({"query": "q", "structural_depth": 9}), &on).unwrap_err();
        assert_eq!(e.field, "structural_depth");
        let e = depth(json!({"query": "q", "fast_mode": "yes"}), &on).unwrap_err();
        assert_eq!(e.field, "fast_mode");
    }

    #[test]
    fn merged_results_interleave_by_rank_with_chunks_first_on_ties() {
        let c = |i: u64| json!({"content": i});
        let r = |i: u64| json!({"component_type": "relation", "subject": i});
        let merged = merge(vec![c(0), c(1)], vec![r(0), r(1), r(2)], 4);
        assert_eq!(merged, vec![c(0), r(0), c(1), r(1)]);
    }
}
