//! Component schemas of contract 000 (retrieval calls).

use super::*;

// ----- contract 000 --------------------------------------------------------------------------

pub(super) fn contract_000_schemas() -> Vec<(&'static str, Value)> {
    let methods = [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ];
    let preprocessing = [QueryPreprocessing::None, QueryPreprocessing::Normalize];
    let kinds = [
        RelevanceKind::Similarity,
        RelevanceKind::KeywordScore,
        RelevanceKind::HybridScore,
    ];
    vec![
        ("RetrievalRequest", retrieval_request_schema()),
        ("RetrievalSpec", retrieval_spec_schema()),
        (
            "RetrievalCallsResponse",
            object(
                &["retrieval_calls"],
                vec![(
                    "retrieval_calls",
                    json!({
                        "type": "array",
                        "items": schema_ref("RetrievalCall"),
                        "minItems": 1,
                        "maxItems": 1,
                        "description": "One call: the request's.",
                    }),
                )],
            ),
        ),
        ("RetrievalCall", retrieval_call_schema()),
        ("RetrievalResult", retrieval_result_schema()),
        (
            "SearchMethod",
            enumeration(
                methods.iter().map(wire_name).collect(),
                "semantic: vector similarity; keyword: BM25; hybrid: both, fused.",
            ),
        ),
        (
            "QueryPreprocessing",
            enumeration(
                preprocessing.iter().map(wire_name).collect(),
                "none: the query as given; normalize: NFKC, lower-cased, punctuation dropped \
                 (except inside words and numbers), whitespace collapsed.",
            ),
        ),
        (
            "RelevanceKind",
            enumeration(
                kinds.iter().map(wire_name).collect(),
                "similarity: cosine similarity clamped to [0, 1]; keyword_score: the BM25 score \
                 ranked by; hybrid_score: alpha·semantic + (1 − alpha)·min-max keyword.",
            ),
        ),
    ]
}

fn retrieval_request_schema() -> Value {
    let schema = object(
        &["retrieval"],
        vec![("retrieval", schema_ref("RetrievalSpec"))],
    );
    described(
        schema,
        "Contract 000's canonical request. Keys beside `retrieval` are ignored; unknown \
               keys inside it are refused.",
    )
}

fn retrieval_spec_schema() -> Value {
    let schema = object(
        &["index", "query"],
        vec![
            ("index", schema_ref("IndexName")),
            (
                "query",
                text("The query: at most `limits.max_query_bytes` bytes (default 8192)."),
            ),
            (
                "top_k",
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "default": 5,
                    "description": "Results wanted: at most `limits.max_top_k` (default 100).",
                }),
            ),
            (
                "filters",
                ref_described(
                    "FilterBag",
                    "Exact-match filters; absent or `{}` filters nothing.",
                ),
            ),
            (
                "search_method",
                with(
                    ref_described("SearchMethod", "How to rank."),
                    "default",
                    wire_name(&SearchMethod::default()),
                ),
            ),
            (
                "query_preprocessing",
                with(
                    ref_described("QueryPreprocessing", "Applied once, before every branch."),
                    "default",
                    wire_name(&QueryPreprocessing::default()),
                ),
            ),
            (
                "hybrid_alpha",
                json!({
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "default": 0.5,
                    "description": "The semantic weight of hybrid fusion; accepted and ignored \
                        (not echoed) for the other methods. Each hybrid branch over-fetches \
                        min(max(top_k·3, 10), 50).",
                }),
            ),
            (
                "index_version",
                ref_described(
                    "IndexVersion",
                    "Answer from this retained version instead of the newest.",
                ),
            ),
        ],
    );
    with(
        closed(schema),
        "description",
        json!("One retrieval call. `null` is the same as an absent field."),
    )
}

fn retrieval_call_schema() -> Value {
    object(
        &[
            "index",
            "query",
            "top_k",
            "search_method",
            "query_preprocessing",
            "result_count",
            "results",
            "index_version",
            "query_id",
            "latency_ms",
        ],
        vec![
            ("index", schema_ref("IndexName")),
            (
                "query",
                string("The query as searched, after preprocessing."),
            ),
            ("top_k", integer(1, "The top_k applied.")),
            ("search_method", schema_ref("SearchMethod")),
            ("query_preprocessing", schema_ref("QueryPreprocessing")),
            (
                "hybrid_alpha",
                unit_number("The alpha applied; present for hybrid only."),
            ),
            ("result_count", integer(0, "The number of results.")),
            (
                "results",
                array(schema_ref("RetrievalResult"), "Best first."),
            ),
            (
                "index_version",
                ref_described(
                    "IndexVersion",
                    "The version answered from; send it back to answer again from it.",
                ),
            ),
            (
                "query_id",
                json!({"type": "string", "format": "uuid", "description": "Names this answer."}),
            ),
            (
                "latency_ms",
                json!({"type": "number", "minimum": 0, "description": "Server-side time."}),
            ),
        ],
    )
}

fn retrieval_result_schema() -> Value {
    let components = object(
        &[],
        vec![
            (
                "semantic_score",
                unit_number("The normalised semantic score used in fusion."),
            ),
            (
                "keyword_score",
                unit_number("The min-max normalised keyword score used in fusion."),
            ),
        ],
    );
    object(
        &[
            "id",
            "text",
            "metadata",
            "score",
            "score_kind",
            "relevance_score",
            "relevance_kind",
        ],
        vec![
            (
                "id",
                string("The chunk id: content-derived, stable across re-indexing."),
            ),
            ("text", string("The chunk's text.")),
            ("metadata", schema_ref("ChunkMetadata")),
            ("score", number("Equal to relevance_score.")),
            ("score_kind", schema_ref("RelevanceKind")),
            (
                "relevance_score",
                number("The score ranked by; see relevance_kind."),
            ),
            ("relevance_kind", schema_ref("RelevanceKind")),
            (
                "relevance_components",
                described(
                    components,
                    "The branch scores behind a hybrid score; present when there are any.",
                ),
            ),
        ],
    )
}
