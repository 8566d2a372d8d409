//! Component schemas shared across the contracts: the error body, index names and versions, offsets, chunk metadata, the filter bag.

use super::*;

pub(super) fn common_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("Error", error_schema()),
        (
            "IndexName",
            json!({
                "type": "string",
                "pattern": INDEX_NAME_PATTERN,
                "minLength": 1,
                "maxLength": 64,
                "description": "An index name: a lower-case ASCII letter or digit, then up to 63 \
                    lower-case letters, digits, `_` or `-`.",
                "examples": ["kb_product-docs"],
            }),
        ),
        ("ChunkMetadata", chunk_metadata_schema()),
        ("FilterBag", filter_bag_schema()),
    ]
}

fn error_schema() -> Value {
    let detail = object(
        &["code", "message"],
        vec![
            (
                "code",
                string(
                    "A stable code: invalid_request, unauthenticated, forbidden, index_not_found, \
                     retriever_not_found, version_unavailable, embedder_mismatch, \
                     embedder_unavailable, query_timeout, body_too_large, bus_unavailable, \
                     not_ready, not_found, index_damaged, read_only_replica, write_conflict, storage_unavailable, internal; contract 003 answers InputError and NotFoundError.",
                ),
            ),
            ("message", string("What went wrong, for people.")),
            (
                "field",
                string("The offending field as a dotted path, when one field is to blame."),
            ),
            (
                "oldest_available_version",
                integer(1, "version_unavailable only: the oldest retained version."),
            ),
            (
                "latest_version",
                integer(1, "version_unavailable only: the newest version."),
            ),
        ],
    );
    let schema = object(&["error"], vec![("error", detail)]);
    described(
        schema,
        "The error body of every route (contract 003 included, with its own codes).",
    )
}

fn chunk_metadata_schema() -> Value {
    let as_given = "As the document gave it.";
    let schema = object(
        &[
            "knowledge_base_id",
            "document_id",
            "chunk_index",
            "title",
            "source_type",
            "source_name",
            "uri",
            "source_id",
            "source_path",
            "managed_by_source",
            "section_path",
            "offsets",
            "project_id",
            "tags",
            "updated_at",
        ],
        vec![
            (
                "knowledge_base_id",
                string("The index the chunk is stored in."),
            ),
            (
                "document_id",
                string("The document the chunk was cut from."),
            ),
            (
                "chunk_index",
                integer(0, "The chunk's position in its document, from 0."),
            ),
            ("title", nullable("string", "The document's title.")),
            ("source_type", nullable("string", as_given)),
            ("source_name", nullable("string", as_given)),
            ("uri", nullable("string", as_given)),
            ("source_id", nullable("string", as_given)),
            ("source_path", nullable("string", as_given)),
            ("managed_by_source", nullable("boolean", as_given)),
            (
                "page_number",
                integer(
                    1,
                    "The page the chunk is on; present only when known (paged documents).",
                ),
            ),
            (
                "section_path",
                strings("The headings enclosing the chunk, outermost first."),
            ),
            ("offsets", schema_ref("Offsets")),
            ("project_id", nullable("string", as_given)),
            ("tags", strings("The document's tags.")),
            (
                "updated_at",
                nullable("string", "The document's `updated_at` (RFC 3339)."),
            ),
        ],
    );
    let schema = with(schema, "additionalProperties", json!(true));
    described(
        schema,
        "Contract 000's built-in chunk metadata (every field present, `page_number` only \
               when known), the chunk's citation fields and the document's fields, then the \
               document's custom `metadata` keys, which may not reuse a built-in name.",
    )
}

/// Contract 000's exact-match filter bag, typed per filterable column as `Filters::parse`
/// checks them.
fn filter_bag_schema() -> Value {
    let mut properties = Map::new();
    for (name, kind) in FILTER_COLUMNS {
        let item = match (*name, kind) {
            ("updated_at", _) => json!({"type": "string", "format": "date-time"}),
            (_, ColumnKind::Text) => json!({"type": "string"}),
            (_, ColumnKind::UInt) => json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
            (_, ColumnKind::Bool) => json!({"type": "boolean"}),
        };
        properties.insert(name.to_string(), one_or_many(item));
    }
    properties.insert("tags".into(), one_or_many(json!({"type": "string"})));
    let scalar = json!({"type": ["string", "number", "boolean"]});
    json!({
        "type": "object",
        "description": "Exact-match filters, ANDed across keys; a list matches any of its \
            elements (an empty list is refused). The built-in columns are typed as declared; \
            `tags` matches one of the document's tags; any other key matches a custom \
            `metadata` value (a string, number or boolean).",
        "properties": Value::Object(properties),
        "propertyNames": {"pattern": "^[^=]+$"},
        "additionalProperties": one_or_many(scalar),
    })
}
