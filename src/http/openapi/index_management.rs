//! Component schemas of contract 002's ingestion and index management routes (ingest, delete, stats, status).

use super::*;

// ----- contract 002: ingestion and index management --------------------------------------------

pub(super) fn index_management_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("IngestRequest", ingest_request_schema()),
        ("Document", document_schema()),
        (
            "Page",
            closed(object(
                &["page_number", "text"],
                vec![
                    (
                        "page_number",
                        json!({
                            "type": "integer",
                            "minimum": 1,
                            "maximum": u32::MAX,
                            "description": "1-based, as printed; unique within the document.",
                        }),
                    ),
                    ("text", string("The page's text.")),
                ],
            )),
        ),
        ("IngestAccepted", ingest_accepted_schema()),
        (
            "IndexDeleted",
            object(
                &["index", "index_version", "deleted"],
                vec![
                    ("index", schema_ref("IndexName")),
                    (
                        "index_version",
                        ref_described("IndexVersion", "The newest version the index had."),
                    ),
                    ("deleted", json!({"type": "boolean", "const": true})),
                ],
            ),
        ),
        (
            "RebuildResponse",
            with(
                object(
                    &["index", "index_version", "rebuilt_chunks"],
                    vec![
                        ("index", schema_ref("IndexName")),
                        (
                            "index_version",
                            ref_described("IndexVersion", "The version rebuilt (no new one)."),
                        ),
                        (
                            "rebuilt_chunks",
                            integer(0, "The chunks re-indexed, live and deleted."),
                        ),
                    ],
                ),
                "description",
                json!(
                    "The keyword index re-derived from the Lance rows of the newest version, \
                       the source of truth."
                ),
            ),
        ),
        ("IndexStats", index_stats_schema()),
        (
            "IndexList",
            object(
                &["indexes"],
                vec![(
                    "indexes",
                    array(
                        schema_ref("IndexStats"),
                        "Every index under the data directory the caller may read, by name. \
                         An index that cannot be opened is listed with its name and an `error` \
                         instead of its figures.",
                    ),
                )],
            ),
        ),
        ("IndexStatus", index_status_schema()),
    ]
}

fn ingest_request_schema() -> Value {
    let schema = closed(object(
        &[],
        vec![
            (
                "documents",
                array(
                    schema_ref("Document"),
                    "Documents to index; an id already indexed is replaced.",
                ),
            ),
            (
                "deletes",
                array(
                    json!({"type": "string", "minLength": 1, "pattern": "\\S"}),
                    "Ids of documents to delete (soft: hidden from active searches).",
                ),
            ),
        ],
    ));
    let schema = with(
        schema,
        "anyOf",
        json!([
            {"required": ["documents"], "properties": {"documents": {"minItems": 1}}},
            {"required": ["deletes"], "properties": {"deletes": {"minItems": 1}}},
        ]),
    );
    described(
        schema,
        "At least one document or delete. Every document is validated before any event \
               is produced; the first invalid one is refused with `error.field` \
               `documents[i].<field>`.",
    )
}

fn document_schema() -> Value {
    let as_given = "Stored on every chunk and returned in its metadata.";
    let schema = closed(object(
        &["id"],
        vec![
            (
                "id",
                text(
                    "At most `limits.max_document_id_bytes` bytes (default 512), no control \
                     characters.",
                ),
            ),
            ("title", string(as_given)),
            (
                "text",
                text(
                    "The content (exactly one of text and pages); at most \
                     `limits.max_document_bytes` bytes (default 1 MiB).",
                ),
            ),
            (
                "pages",
                json!({
                    "type": "array",
                    "minItems": 1,
                    "items": schema_ref("Page"),
                    "description": "Paged content (exactly one of text and pages); at least one \
                        page with text; at most `limits.max_document_bytes` bytes in all.",
                }),
            ),
            ("uri", string(as_given)),
            ("source_type", string(as_given)),
            ("source_name", string(as_given)),
            ("source_id", string(as_given)),
            ("source_path", string(as_given)),
            ("managed_by_source", boolean(as_given)),
            ("project_id", string(as_given)),
            (
                "tags",
                json!({
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "default": [],
                    "description": as_given,
                }),
            ),
            ("updated_at", timestamp("RFC 3339.")),
            (
                "metadata",
                json!({
                    "type": "object",
                    "default": {},
                    "propertyNames": {"pattern": "^[^=]+$", "not": {"enum": BUILT_IN_FIELDS}},
                    "description": "Custom metadata; keys may not be a built-in metadata field \
                        or contain `=`. Scalars (and lists of scalars) are filterable.",
                }),
            ),
            (
                "triples",
                json!({
                    "type": "array",
                    "default": [],
                    "items": closed(object(
                        &["subject", "relation", "object"],
                        vec![
                            ("subject", text("An entity; at most 512 bytes.")),
                            ("relation", text("A short verb phrase; at most 512 bytes.")),
                            ("object", text("An entity; at most 512 bytes.")),
                            ("chunk", json!({"type": "integer", "minimum": 0,
                                "description": "The chunk (0-based) the fact was read from; \
                                    without it the fact is linked to the chunk that names its \
                                    subject or object."})),
                        ],
                    )),
                    "description": "Knowledge-graph facts this document states: stored with \
                        the index version, searched by contract 001 in graph mode, removed \
                        (soft) with the document.",
                }),
            ),
            (
                "entities",
                json!({
                    "type": "array",
                    "default": [],
                    "items": closed(object(
                        &["name"],
                        vec![
                            ("name", text("An entity the triples name.")),
                            ("aliases", json!({"type": "array", "items": {"type": "string",
                                "minLength": 1}, "default": [],
                                "description": "Other names a query may use for it."})),
                        ],
                    )),
                    "description": "Aliases of the triples' entities.",
                }),
            ),
        ],
    ));
    let schema = with(
        schema,
        "oneOf",
        json!([{"required": ["text"]}, {"required": ["pages"]}]),
    );
    described(
        schema,
        "A document as submitted. Re-sending unchanged content creates no version.",
    )
}

fn ingest_accepted_schema() -> Value {
    let offset = object(
        &["partition", "offset"],
        vec![
            ("partition", integer(0, "The documents topic's partition.")),
            ("offset", integer(0, "The event's offset in it.")),
        ],
    );
    object(
        &["accepted", "topic", "offsets"],
        vec![
            ("accepted", integer(1, "The events produced.")),
            ("topic", string("The documents topic.")),
            (
                "offsets",
                array(offset, "Where each event landed, in order."),
            ),
        ],
    )
}

fn index_stats_schema() -> Value {
    object(
        &[
            "index",
            "embedder",
            "dimensions",
            "index_version",
            "oldest_version",
            "retained_versions",
            "documents",
            "chunks",
            "deleted_documents",
            "deleted_chunks",
            "keyword_chunks",
            "created_at",
        ],
        vec![
            ("index", string("The index.")),
            (
                "embedder",
                string("The embedder of the newest version's vectors."),
            ),
            ("dimensions", integer(1, "Their dimensions.")),
            (
                "index_version",
                ref_described("IndexVersion", "The newest version."),
            ),
            (
                "oldest_version",
                ref_described("IndexVersion", "The oldest retained version."),
            ),
            ("retained_versions", integer(1, "Versions still queryable.")),
            (
                "documents",
                integer(0, "Live documents (what an active search sees)."),
            ),
            ("chunks", integer(0, "Live chunks.")),
            (
                "deleted_documents",
                integer(0, "Soft-deleted documents still stored."),
            ),
            (
                "deleted_chunks",
                integer(0, "Soft-deleted chunks still stored."),
            ),
            (
                "keyword_chunks",
                integer(0, "Rows in the keyword index: chunks + deleted_chunks."),
            ),
            ("created_at", timestamp("When the index was created.")),
        ],
    )
}

fn index_status_schema() -> Value {
    let partition = object(
        &[
            "topic",
            "partition",
            "end_offset",
            "committed_offset",
            "index_checkpoint",
            "lag",
        ],
        vec![
            ("topic", string("The documents topic.")),
            ("partition", integer(0, "The partition.")),
            (
                "end_offset",
                integer(0, "The high watermark: the offset the next message gets."),
            ),
            (
                "committed_offset",
                nullable(
                    "integer",
                    "The pipeline group's committed offset; null if none.",
                ),
            ),
            (
                "index_checkpoint",
                nullable(
                    "integer",
                    "The offset this index's checkpoint records; null if none.",
                ),
            ),
            (
                "lag",
                integer(
                    0,
                    "Messages still to index: end_offset minus the furthest of \
                     committed_offset and index_checkpoint (the low watermark when neither).",
                ),
            ),
        ],
    );
    let known = object(
        &["messages", "partitions"],
        vec![
            ("messages", integer(0, "The lag summed over partitions.")),
            (
                "partitions",
                array(partition, "One per partition of the topic."),
            ),
        ],
    );
    let unknown = object(
        &["error"],
        vec![(
            "error",
            string("Why the lag is unknown (Kafka did not answer in time)."),
        )],
    );
    object(
        &["index", "index_version", "last_commit_at", "indexing_lag"],
        vec![
            ("index", schema_ref("IndexName")),
            (
                "index_version",
                ref_described("IndexVersion", "The newest version."),
            ),
            (
                "last_commit_at",
                timestamp("When the newest version was committed."),
            ),
            (
                "indexing_lag",
                json!({
                    "oneOf": [known, unknown],
                    "description": "How far the index trails the documents topic; the status \
                        still answers 200 when Kafka cannot be asked.",
                }),
            ),
        ],
    )
}
