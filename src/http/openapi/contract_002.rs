//! Component schemas of contract 002 (retrieval API) still written by hand: the answers of
//! explain and diff. The requests of all, and the query's, settings' and hydration's answers,
//! are generated from their wire types (`generated.rs`).

use super::*;

// ----- contract 002: explain, diff ---------------------------------------------------------

pub(super) fn contract_002_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("Explanation", explanation_schema()),
        ("Diff", diff_schema()),
    ]
}

fn diff_schema() -> Value {
    let change = object(
        &["chunk_id", "document_id", "cause"],
        vec![
            ("chunk_id", string("The chunk.")),
            ("document_id", string("Its document.")),
            ("from_rank", nullable("integer", "Its rank at from_version.")),
            ("to_rank", nullable("integer", "Its rank at to_version.")),
            ("from_score", nullable("number", "Its score at from_version.")),
            ("to_score", nullable("number", "Its score at to_version.")),
            (
                "cause",
                enumeration(
                    vec![json!("added"), json!("upserted"), json!("deleted"), json!("unchanged")],
                    "What the writes in between did to its document (unchanged: writes to other documents moved it).",
                ),
            ),
        ],
    );
    object(
        &[
            "index",
            "from_version",
            "to_version",
            "entered",
            "left",
            "moved",
        ],
        vec![
            ("index", schema_ref("IndexName")),
            ("contract", string("The shape the query was given in.")),
            (
                "from_version",
                ref_described("IndexVersion", "The older version."),
            ),
            (
                "to_version",
                ref_described("IndexVersion", "The newer version."),
            ),
            ("query", string("The query as searched.")),
            (
                "entered",
                array(change.clone(), "In the results at to_version only."),
            ),
            (
                "left",
                array(change.clone(), "In the results at from_version only."),
            ),
            ("moved", array(change, "In both, at another rank.")),
            ("unchanged", integer(0, "Results at the same rank in both.")),
            (
                "writes",
                json!({"type": "object", "description": "The results' documents written in between.",
                    "properties": {"added": {"type": "array", "items": {"type": "string"}},
                        "upserted": {"type": "array", "items": {"type": "string"}},
                        "deleted": {"type": "array", "items": {"type": "string"}}}}),
            ),
        ],
    )
}

fn explanation_schema() -> Value {
    let branch = json!({
        "type": ["object", "null"],
        "properties": {
            "rank": {"type": ["integer", "null"], "description": "Rank among the branch's best depth; null beyond."},
            "depth": {"type": "integer", "description": "How deep the branch was searched to rank the chunk: 200, or the pool when larger."},
            "score": {"type": ["number", "null"], "description": "Similarity in [0, 1] (semantic) or BM25 (keyword; null when it holds no searched term)."},
            "normalized": {"type": ["number", "null"], "description": "The keyword score as fusion scaled it (min-max over the pool)."},
            "in_pool": {"type": "boolean"},
            "pool": {"type": "integer"},
            "matched_terms": {"type": "array", "items": {"type": "string"}},
            "term_scores": {"type": "array", "description": "Keyword: what each searched query term the chunk holds adds to its BM25 score; the parts sum to score.",
                "items": {"type": "object", "required": ["term", "score"],
                    "properties": {"term": {"type": "string"}, "score": {"type": "number"}}}},
        },
    });
    let chunk = object(
        &["chunk_id", "document_id", "chunk_index", "verdict"],
        vec![
            ("chunk_id", string("The chunk.")),
            ("document_id", string("Its document.")),
            ("chunk_index", integer(0, "Its place in the document.")),
            (
                "rank",
                nullable("integer", "Its rank in the results, when returned."),
            ),
            (
                "deleted_at",
                nullable("string", "When its document was deleted."),
            ),
            (
                "excluded_by_filter",
                json!({"type": ["object", "null"], "description": "The first filter it fails: the field and the value it holds.",
                    "properties": {"field": {"type": "string"}, "value": {}}}),
            ),
            ("semantic", branch.clone()),
            ("keyword", branch),
            (
                "fused_score",
                nullable("number", "Its fused score, when a candidate (hybrid)."),
            ),
            (
                "fused_rank",
                nullable(
                    "integer",
                    "Its place in the fused order: 1 + the candidates with a higher fused score.",
                ),
            ),
            (
                "rerank",
                json!({"type": "object", "description": "When the reranker ran and scored it: its place among the reranker's candidates.",
                    "required": ["rank", "candidates", "score", "fused_rank"],
                    "properties": {"rank": {"type": "integer"}, "candidates": {"type": "integer"},
                        "score": {"type": "number", "description": "The reranker's score."},
                        "fused_rank": {"type": "integer", "description": "Its place in the fused order the reranker was given."}}}),
            ),
            ("verdict", string("What decided, in one line.")),
        ],
    );
    object(
        &["index", "index_version", "query", "results", "targets"],
        vec![
            ("index", schema_ref("IndexName")),
            ("contract", string("The shape the query was given in.")),
            (
                "index_version",
                ref_described("IndexVersion", "The version explained."),
            ),
            ("query", string("The query as searched.")),
            ("search_method", string("semantic, keyword or hybrid.")),
            (
                "hybrid_alpha",
                nullable("number", "The semantic weight (hybrid)."),
            ),
            ("top_k", integer(1, "Results asked for.")),
            (
                "pools",
                json!({"type": "object", "properties": {
                    "semantic": {"type": ["integer", "null"]}, "keyword": {"type": ["integer", "null"]}}}),
            ),
            (
                "results",
                array(
                    json!({"type": "object", "properties": {"rank": {"type": "integer"},
                        "chunk_id": {"type": "string"}, "document_id": {"type": "string"},
                        "score": {"type": "number"}}}),
                    "What the query returned, best first.",
                ),
            ),
            (
                "last_returned_score",
                nullable("number", "The score of the last result."),
            ),
            (
                "keyword_terms_dropped",
                strings("Query terms the keyword branch left out."),
            ),
            (
                "keyword_expansion",
                strings(
                    "Terms the knowledge graph added to the keyword branch (graph_depth): \
                    names and aliases of the entities the query named.",
                ),
            ),
            (
                "targets",
                array(
                    object(
                        &["target", "presence", "verdict", "chunks"],
                        vec![
                            ("target", json!({"type": "object"})),
                            (
                                "presence",
                                enumeration(
                                    vec![
                                        json!("in_version"),
                                        json!("deleted"),
                                        json!("ingested_later"),
                                        json!("not_found"),
                                    ],
                                    "Where the target stands in the version explained.",
                                ),
                            ),
                            ("verdict", string("What decided, for its best chunk.")),
                            ("chunks", array(chunk, "Its chunks in that version.")),
                        ],
                    ),
                    "One explanation per target, in request order.",
                ),
            ),
        ],
    )
}
