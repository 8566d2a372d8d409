//! Component schemas of contract 004 (retrievers).

use super::*;

// ----- contract 004 --------------------------------------------------------------------------

pub(super) fn contract_004_schemas() -> Vec<(&'static str, Value)> {
    let request = closed(object(
        &["query"],
        vec![
            (
                "query",
                string("The question. Empty or only whitespace answers `[]`."),
            ),
            (
                "messages",
                nullable(
                    "array",
                    "The surrounding conversation: accepted and ignored (R2).",
                ),
            ),
        ],
    ));
    let document = object(
        &["id", "content", "score", "metadata"],
        vec![
            (
                "id",
                string("The content-derived chunk id, stable across calls (R5)."),
            ),
            ("content", string("The chunk's text.")),
            (
                "source",
                string("The citation: the uri, else the source_path; absent when unknown (R8)."),
            ),
            (
                "score",
                number("Descending through the list, one scale per retriever (R6, R7)."),
            ),
            (
                "metadata",
                ref_described("ChunkMetadata", "Opaque to the contract (R9)."),
            ),
        ],
    );
    vec![
        (
            "RetrieverRequest",
            described(
                request,
                "No per-call options (R10): any other key is refused with 400. Index, \
                       method, weight, filters and top_k are fixed in `[retrievers.<name>]`.",
            ),
        ),
        (
            "RetrieverResponse",
            json!({
                "type": "array",
                "items": schema_ref("RetrievedDocument"),
                "description": "Best first, ties by id; `[]` is success (R3).",
            }),
        ),
        ("RetrievedDocument", document),
    ]
}
