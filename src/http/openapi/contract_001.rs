//! Component schemas of contract 001 (RagSearcher).

use super::*;

// ----- contract 001 --------------------------------------------------------------------------

pub(super) fn contract_001_schemas() -> Vec<(&'static str, Value)> {
    let request = object(
        &["query"],
        vec![
            (
                "query",
                text("The query: at most `limits.max_query_bytes` bytes (default 8192)."),
            ),
            (
                "top_k",
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": c001::TOP_K_MAX,
                    "default": c001::TOP_K_DEFAULT,
                    "description": "Results wanted; out of range is refused, not clamped.",
                }),
            ),
            (
                "fast_mode",
                json!({"type": "boolean", "description": "true: chunk hits only (structural \
                    depth 0). Defaults to the server's mode: graph.enabled = false is fast mode, \
                    and a request cannot turn graph mode on there."}),
            ),
            (
                "structural_depth",
                json!({"type": "integer", "minimum": 0, "description": "Graph mode: relations \
                    within this many hops of the query's entities (default graph.default_depth, \
                    at most graph.max_depth). Ignored (forced to 0) in fast mode."}),
            ),
        ],
    );
    let response = object(
        &["results", "kg", "rewrite_terms"],
        vec![
            (
                "results",
                array(
                    schema_ref("RagResult"),
                    "Chunk hits and (graph mode) relation hits in rank order (the contract \
                     has no score field); the two lists are merged by reciprocal rank.",
                ),
            ),
            (
                "kg",
                array(
                    schema_ref("KgTriple"),
                    "The triples of the relation hits in results; empty in fast mode.",
                ),
            ),
            (
                "rewrite_terms",
                strings(
                    "Normalised names of the entities the query named (they also widen the \
                     keyword branch); empty in fast mode.",
                ),
            ),
        ],
    );
    vec![
        (
            "RagQueryRequest",
            described(
                request,
                "The MCP tool input, plus the graph options fast_mode and \
                       structural_depth. Other keys (MCP extras) are ignored. Chunk ranking is \
                       hybrid with alpha 0.5.",
            ),
        ),
        (
            "RagQueryResponse",
            described(
                response,
                "All three keys always present. An index nobody has written to yet \
                       answers all three empty.",
            ),
        ),
        ("RagResult", rag_result_schema()),
        (
            "KgTriple",
            object(
                &["subject", "relation", "object"],
                vec![
                    ("subject", string("The subject entity.")),
                    ("relation", string("The relation.")),
                    ("object", string("The object entity.")),
                ],
            ),
        ),
    ]
}

fn rag_result_schema() -> Value {
    let metadata = object(
        &[],
        vec![
            (
                "language",
                string("The document's `language` (or `lang`) metadata."),
            ),
            ("title", string("The document's title.")),
            ("url", string("The document's uri.")),
            ("timestamp", string("The document's updated_at.")),
            ("tags", string("The document's tags, comma-joined.")),
            ("collection", string("The index.")),
        ],
    );
    let schema = object(
        &["metadata"],
        vec![
            (
                "metadata",
                described(metadata, "Fields without a value are left out."),
            ),
            ("content", string("The chunk's text (chunk hits).")),
            (
                "component_type",
                enumeration(vec![json!("relation")], "Relation hits only."),
            ),
            ("subject", string("Relation hits only.")),
            ("relation", string("Relation hits only.")),
            ("object", string("Relation hits only.")),
        ],
    );
    described(
        schema,
        "A chunk hit (`metadata`, `content`) or, in graph mode, a relation hit \
               (`component_type: relation` with `subject`, `relation`, `object` and \
               `metadata.collection`).",
    )
}
