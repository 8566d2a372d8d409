//! The OpenAPI 3.1 description of ragstream's HTTP API, served at `GET /openapi.json`.
//!
//! It is generated from the code, not kept as a separate file that drifts: [`ROUTES`] lists
//! every route the server registers (a server test checks the two agree), and the schemas take
//! their bounds, enums and key sets from the adapters' own constants and types (`top_k`
//! limits, hydrate limits, contract 003's hybrid keys, the filterable columns, the built-in
//! metadata fields, the auto-profile signals, the serde names of the enums). What an adapter
//! expresses only as parsing code (a default, a clamp) is restated next to it here, and the
//! tests run the adapters to check that the stated defaults and the closed/open objects match.
//!
//! Two rules keep the document honest rather than exhaustive:
//!
//! - bounds that come from the configuration (`limits.max_top_k`, `limits.max_query_bytes`,
//!   `http.max_body_bytes`, …) are named in descriptions, not given as `maximum`, because the
//!   document does not depend on one deployment's configuration;
//! - contract 003 clamps numbers instead of refusing them, so its bounds are stated in
//!   descriptions, never as `minimum`/`maximum`, which would make a validating client refuse
//!   requests the server accepts.

use serde_json::{json, Map, Value};

use crate::contracts::c001_rag_searcher as c001;
use crate::contracts::c002_retrieval_api as c002;
use crate::model::metadata::BUILT_IN_FIELDS;
use crate::retrieval::profiles::{Profile, LEXICAL_SIGNALS};
use crate::retrieval::search::MAX_POOL;
use crate::retrieval::{QueryPreprocessing, RelevanceKind, SearchMethod};
use crate::store::filters::{ColumnKind, Visibility, FILTER_COLUMNS};

/// One HTTP route: what the server registers, and what the document says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The path template as actix registers it (`{index}` is a path parameter).
    pub path: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    /// The component schema of the JSON request body, for routes that take one.
    pub request: Option<&'static str>,
    /// The component schema of the success body.
    pub response: &'static str,
    /// The error statuses the route answers with, each with an `Error` body.
    pub errors: &'static [u16],
}

const TAG_000: &str = "000 retrieval calls";
const TAG_001: &str = "001 RagSearcher";
const TAG_002: &str = "002 retrieval API";
const TAG_003: &str = "003 AI Core";
const TAG_004: &str = "004 retrievers";
const TAG_OPS: &str = "operations";

// Error statuses by what a route does. Every /v1 route may answer 401 and 403 (when
// `[[auth.tokens]]` is configured) and 500; 413 wherever a body is read; 409 and 503 wherever
// a query is embedded (embedder mismatch, embedder down); 410 wherever `index_version` pins.
const SEARCH_ERRORS: &[u16] = &[400, 401, 403, 404, 409, 410, 413, 500, 503];
/// Contract 001 answers an index nobody has written to with an empty result, never 404.
const RAG_ERRORS: &[u16] = &[400, 401, 403, 409, 413, 500, 503];
/// Contract 003 (404 is `NotFoundError`) and 004 (404 is an unknown retriever).
const NAMED_SEARCH_ERRORS: &[u16] = &[400, 401, 403, 404, 409, 413, 500, 503];
const HYDRATE_ERRORS: &[u16] = &[400, 401, 403, 404, 410, 413, 500];
const SETTINGS_ERRORS: &[u16] = &[400, 401, 403, 404, 413, 500];
/// Ingestion creates the index on first write, so no 404; 503 is the bus refusing events.
const INGEST_ERRORS: &[u16] = &[400, 401, 403, 413, 500, 503];
const DELETE_ERRORS: &[u16] = &[400, 401, 403, 500, 503];
/// Stats, status and rebuild: an existing index, no body, no embedding.
const INDEX_ERRORS: &[u16] = &[400, 401, 403, 404, 500];

/// Every route the HTTP server registers.
pub const ROUTES: &[Route] = &[
    Route {
        method: "POST",
        path: "/v1/retrieve",
        operation_id: "retrieve",
        summary: "Contract 000: one retrieval call",
        tag: TAG_000,
        request: Some("RetrievalRequest"),
        response: "RetrievalCallsResponse",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/rag/query",
        operation_id: "ragQuery",
        summary: "Contract 001 search on the default index (contracts.default_index)",
        tag: TAG_001,
        request: Some("RagQueryRequest"),
        response: "RagQueryResponse",
        errors: RAG_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/rag/query",
        operation_id: "indexRagQuery",
        summary: "Contract 001 search on the named index",
        tag: TAG_001,
        request: Some("RagQueryRequest"),
        response: "RagQueryResponse",
        errors: RAG_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/query",
        operation_id: "indexQuery",
        summary: "Contract 002 query: profile-weighted hybrid search",
        tag: TAG_002,
        request: Some("QueryRequest"),
        response: "QueryResponse",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/explain",
        operation_id: "explainQuery",
        summary: "Why targets were or were not retrieved by a query",
        tag: TAG_002,
        request: Some("ExplainRequest"),
        response: "Explanation",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/diff",
        operation_id: "diffQuery",
        summary: "One query at two versions: what entered, left and moved, and why",
        tag: TAG_002,
        request: Some("DiffRequest"),
        response: "Diff",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/hydrate",
        operation_id: "hydrate",
        summary: "Contract 002 hydration: full chunks, neighbours and stitched text",
        tag: TAG_002,
        request: Some("HydrateRequest"),
        response: "HydrateResponse",
        errors: HYDRATE_ERRORS,
    },
    Route {
        method: "PUT",
        path: "/v1/indexes/{index}/settings",
        operation_id: "putIndexSettings",
        summary: "Contract 002 index-level query defaults",
        tag: TAG_002,
        request: Some("IndexSettings"),
        response: "IndexSettingsResponse",
        errors: SETTINGS_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/documents",
        operation_id: "ingestDocuments",
        summary: "Ingest and delete documents through the pipeline",
        tag: TAG_002,
        request: Some("IngestRequest"),
        response: "IngestAccepted",
        errors: INGEST_ERRORS,
    },
    Route {
        method: "DELETE",
        path: "/v1/indexes/{index}/documents/{id}",
        operation_id: "deleteDocument",
        summary: "Delete one document through the pipeline",
        tag: TAG_002,
        request: None,
        response: "IngestAccepted",
        errors: DELETE_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/rebuild",
        operation_id: "rebuildIndex",
        summary: "Rebuild the keyword index from the Lance rows of the newest version",
        tag: TAG_002,
        request: None,
        response: "RebuildResponse",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes",
        operation_id: "listIndexes",
        summary: "The indexes the caller may read, each with its figures",
        tag: TAG_002,
        request: None,
        response: "IndexList",
        errors: &[401, 500],
    },
    Route {
        method: "DELETE",
        path: "/v1/indexes/{index}",
        operation_id: "deleteIndex",
        summary: "Delete an index: it stops answering at once; maintenance removes its files",
        tag: TAG_002,
        request: None,
        response: "IndexDeleted",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes/{index}/stats",
        operation_id: "indexStats",
        summary: "Index figures: versions, documents, chunks",
        tag: TAG_002,
        request: None,
        response: "IndexStats",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes/{index}/status",
        operation_id: "indexStatus",
        summary: "Newest version, last commit and indexing lag",
        tag: TAG_002,
        request: None,
        response: "IndexStatus",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/ai/rag/query/",
        operation_id: "aiRagQuery",
        summary: "Contract 003 on the default index (the contract's path)",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/ai/rag/query",
        operation_id: "aiRagQueryNoSlash",
        summary: "Contract 003 on the default index (without the trailing slash)",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/ai/rag/query",
        operation_id: "indexAiRagQuery",
        summary: "Contract 003 on the named index",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/retrievers/{name}/retrieve",
        operation_id: "retrieverRetrieve",
        summary: "Contract 004: run a named retriever",
        tag: TAG_004,
        request: Some("RetrieverRequest"),
        response: "RetrieverResponse",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "GET",
        path: "/openapi.json",
        operation_id: "openapi",
        summary: "This OpenAPI document",
        tag: TAG_OPS,
        request: None,
        response: "OpenApiDocument",
        errors: &[],
    },
    Route {
        method: "GET",
        path: "/healthz",
        operation_id: "healthz",
        summary: "Liveness: 503 with the reasons when a part needs a restart or an operator",
        tag: TAG_OPS,
        request: None,
        response: "Health",
        errors: &[503],
    },
    Route {
        method: "GET",
        path: "/readyz",
        operation_id: "readyz",
        summary: "Readiness: 503 while starting or draining, or when the data directory cannot be written",
        tag: TAG_OPS,
        request: None,
        response: "Ready",
        errors: &[503],
    },
    Route {
        method: "GET",
        path: "/metrics",
        operation_id: "metrics",
        summary: "Prometheus metrics (with tokens configured: a token with the metrics scope)",
        tag: TAG_OPS,
        request: None,
        response: "MetricsText",
        errors: &[401, 403],
    },
];

const TAGS: &[(&str, &str)] = &[
    (
        TAG_000,
        "Contract 000, \"Retrieval Contract (Backend <-> Agent Engine)\": one canonical retrieval \
         call, semantic, keyword or hybrid.",
    ),
    (
        TAG_001,
        "Contract 001, \"RagSearcher Triplets Update\": `{query, top_k}` → `{results, kg, \
         rewrite_terms}`, served in the contract's fast mode (chunk hits only).",
    ),
    (
        TAG_002,
        "Contract 002, \"Retrieval API Design for LLM-Agnostic RAG Systems\": profile-weighted \
         hybrid query, hydration, ingestion and index management.",
    ),
    (
        TAG_003,
        "Contract 003, \"Retrieval Contracts\" (AI Core): `RetrieveInput` → `RetrieveOutput`. \
         Validation errors are `InputError` (400), an empty result is `NotFoundError` (404).",
    ),
    (
        TAG_004,
        "Contract 004, \"ADR 0004 — Retriever contract (v1)\": one narrow call on retrievers \
         configured by name under `[retrievers.<name>]`.",
    ),
    (
        TAG_OPS,
        "Probes, metrics and this document. Outside /v1: never asks for a token.",
    ),
];

const INFO_DESCRIPTION: &str = "ragstream serves five retrieval contracts from one engine over \
versioned indexes. Answers read from an index version name it in the \
`x-ragstream-index-version` header (and in the body where the contract has room). Errors are \
`{\"error\": {\"code\", \"message\", \"field\"?}}`. With `[[auth.tokens]]` configured every /v1 \
route needs `Authorization: Bearer <token>`; without, none does. Bounds that come from the \
configuration (`limits.max_top_k`, `limits.max_query_bytes`, `limits.max_document_bytes`, \
`limits.max_document_id_bytes`, `http.max_body_bytes`) are named in descriptions with their \
defaults.";

/// The pattern of [`crate::model::IndexName`] (checked against the parser in the tests).
const INDEX_NAME_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,63}$";

/// The semantic signals of `profiles::analyze` (the lexical ones are a constant there).
const SEMANTIC_SIGNALS: &[&str] = &[
    "question_form",
    "long_query",
    "conversational",
    "no_rare_tokens",
];

/// The header carrying the version an answer was read from (see `respond` in `http.rs`).
const INDEX_VERSION_HEADER: &str = "x-ragstream-index-version";

/// Prometheus' text exposition format.
const METRICS_MEDIA_TYPE: &str = crate::telemetry::metrics::CONTENT_TYPE;

/// The OpenAPI document, `version` being the daemon's.
pub fn document(version: &str) -> Value {
    json!({
        "openapi": "3.1.0",
        "info": info(version),
        "tags": tags(),
        // Authentication is optional per deployment: a bearer token, or nothing.
        "security": [{"bearer": []}, {}],
        "paths": Value::Object(paths()),
        "components": {
            "schemas": Value::Object(schemas()),
            "securitySchemes": {"bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "A token from `[[auth.tokens]]`. Needed on /v1 routes only when \
                    tokens are configured; a token outside its indexes or scopes gets 403.",
            }},
        },
    })
}

fn info(version: &str) -> Value {
    json!({
        "title": "ragstream",
        "version": version,
        "summary": "Retrieval as infrastructure: a streaming RAG indexing and retrieval daemon.",
        "description": INFO_DESCRIPTION,
        "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
    })
}

fn tags() -> Value {
    Value::Array(
        TAGS.iter()
            .map(|(name, description)| json!({"name": name, "description": description}))
            .collect(),
    )
}

// ----- paths -----------------------------------------------------------------------------

fn paths() -> Map<String, Value> {
    let mut paths = Map::new();
    for route in ROUTES {
        let item = paths.entry(route.path).or_insert_with(|| json!({}));
        item[route.method.to_ascii_lowercase()] = operation(route);
    }
    paths
}

fn operation(route: &Route) -> Value {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(route.operation_id));
    op.insert("summary".into(), json!(route.summary));
    op.insert("tags".into(), json!([route.tag]));
    let parameters = path_parameters(route.path);
    if !parameters.is_empty() {
        op.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(schema) = route.request {
        op.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": {"application/json": {"schema": schema_ref(schema)}},
            }),
        );
    }
    op.insert("responses".into(), Value::Object(responses(route)));
    if route.path == "/metrics" {
        // Its figures name every tenant's index: a token when tokens are configured.
        op.insert("security".into(), json!([{"bearer": []}, {}]));
    } else if !route.path.starts_with("/v1/") {
        // Only /v1 routes authenticate; probes and this document never ask for a token.
        op.insert("security".into(), json!([]));
    }
    Value::Object(op)
}

/// The `{name}` segments of a path template, as path parameters.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(path_parameter)
        .collect()
}

fn path_parameter(name: &str) -> Value {
    let (schema, description) = match name {
        "index" => (
            schema_ref("IndexName"),
            "The index. An invalid name is refused with 400 (`invalid_request`, field `index`).",
        ),
        "name" => (
            json!({"type": "string", "minLength": 1}),
            "A retriever configured under `[retrievers.<name>]`.",
        ),
        "id" => (
            json!({"type": "string", "minLength": 1, "pattern": "\\S"}),
            "A document id, percent-encoded as one path segment.",
        ),
        _ => (json!({"type": "string"}), "A path parameter."),
    };
    json!({
        "name": name,
        "in": "path",
        "required": true,
        "description": description,
        "schema": schema,
    })
}

fn responses(route: &Route) -> Map<String, Value> {
    let mut content = Map::new();
    content.insert(
        media_type(route.response).into(),
        json!({"schema": schema_ref(route.response)}),
    );
    let mut ok = json!({
        "description": success_description(route),
        "content": Value::Object(content),
    });
    if carries_index_version(route) {
        let mut headers = Map::new();
        headers.insert(INDEX_VERSION_HEADER.into(), index_version_header());
        ok["headers"] = Value::Object(headers);
    }
    let mut out = Map::new();
    out.insert(success_status(route).to_string(), ok);
    for &status in route.errors {
        out.insert(status.to_string(), error_response(route, status));
    }
    // Every JSON body is refused with a 415 when it says it is something else.
    if route.request.is_some() {
        out.insert("415".into(), error_response(route, 415));
    }
    out
}

/// Ingestion only puts events on the bus (the pipeline indexes them later): 202.
fn success_status(route: &Route) -> u16 {
    match route.response {
        "IngestAccepted" => 202,
        _ => 200,
    }
}

fn success_description(route: &Route) -> &'static str {
    match success_status(route) {
        202 => {
            "Accepted: the events are on the documents topic; the pipeline indexes them, \
             exactly once, into a new index version."
        }
        _ => "OK.",
    }
}

fn media_type(schema: &str) -> &'static str {
    match schema {
        "MetricsText" => METRICS_MEDIA_TYPE,
        _ => "application/json",
    }
}

/// The routes whose answer is read from one index version, which `respond` puts in the
/// header. Contract 004 reads through retrievers that may span indexes: no header.
fn carries_index_version(route: &Route) -> bool {
    matches!(
        route.response,
        "RetrievalCallsResponse"
            | "RagQueryResponse"
            | "QueryResponse"
            | "HydrateResponse"
            | "RetrieveOutput"
    )
}

fn index_version_header() -> Value {
    json!({
        "description": "The index version the answer was read from. Absent when no version was \
            read: an index nobody has written to yet (contracts 001 and 003) or an empty \
            contract 003 query.",
        "required": false,
        "schema": schema_ref("IndexVersion"),
    })
}

fn error_response(route: &Route, status: u16) -> Value {
    let mut response = json!({
        "description": error_description(route, status),
        "content": {"application/json": {"schema": schema_ref("Error")}},
    });
    if status == 401 {
        response["headers"] = json!({"WWW-Authenticate": {
            "description": "`Bearer`: the scheme to authenticate with.",
            "schema": {"type": "string"},
        }});
    }
    response
}

/// What an error status means on this route: its `error.code` and when it happens.
fn error_description(route: &Route, status: u16) -> &'static str {
    let ai_core = route.tag == TAG_003;
    match status {
        400 if ai_core => {
            "InputError: the RetrieveInput broke a rule (the message is the contract's wording). \
             An invalid index name in the path is `invalid_request`."
        }
        400 => {
            "invalid_request: a field or path parameter broke a rule; `error.field` names it \
             as a dotted path (`retrieval.top_k`, `documents[2].id`, `filters.tags`)."
        }
        401 if route.path == "/metrics" => {
            "unauthenticated: tokens are configured and the scrape has no valid \
             `Authorization: Bearer` token."
        }
        403 if route.path == "/metrics" => "forbidden: the token lacks the `metrics` scope.",
        401 => {
            "unauthenticated: tokens are configured and the request has no valid \
             `Authorization: Bearer` token."
        }
        403 => {
            "forbidden: the token may not do this to this index (the same answer whether or \
             not the index exists)."
        }
        404 if ai_core => {
            "NotFoundError: no matching documents. A tenant-scoped router \
             (`contracts.tenant_scoped`) answers 200 with empty `matches` instead."
        }
        404 if route.tag == TAG_004 => "retriever_not_found: no retriever of that name.",
        404 => "index_not_found: the index does not exist.",
        409 => {
            "embedder_mismatch: the index (or the pinned version) was embedded with another \
             model than the one this daemon queries with."
        }
        410 => {
            "version_unavailable: the requested index_version is not retained; \
             `error.oldest_available_version` and `error.latest_version` say which are."
        }
        413 => "body_too_large: the body is over `http.max_body_bytes` (default 4 MiB).",
        415 => {
            "unsupported_media_type: the `Content-Type` is not JSON (`application/json` or \
             `application/*+json`; no `Content-Type` is read as JSON)."
        }
        500 => {
            "internal: an unexpected failure; index_damaged: a file of the index cannot be \
             read (the message says what to do)."
        }
        503 if route.response == "IngestAccepted" => {
            "bus_unavailable: Kafka did not take every event; the message says how many were \
             accepted."
        }
        503 if route.response == "Ready" => {
            "not_ready: the daemon is starting or draining, or a part reports that requests \
             cannot be served (`problems` says which and why)."
        }
        503 if route.response == "Health" => {
            "unhealthy: a stage is stalled, a supervised part is in a restart loop, or dead \
             letters cannot be delivered; the body (a `Health`) lists the problems."
        }
        503 => "embedder_unavailable: the query embedder did not answer.",
        _ => "Error.",
    }
}

// ----- schema helpers ----------------------------------------------------------------------

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A `$ref` with what the field means here (OpenAPI 3.1 allows siblings of `$ref`).
fn ref_described(name: &str, description: &str) -> Value {
    described(schema_ref(name), description)
}

fn with(mut schema: Value, key: &str, value: Value) -> Value {
    schema[key] = value;
    schema
}

/// Unknown keys are refused (the adapter checks every key).
fn described(schema: Value, description: &str) -> Value {
    with(schema, "description", json!(description))
}

fn closed(schema: Value) -> Value {
    with(schema, "additionalProperties", json!(false))
}

/// An object schema from `(name, schema)` pairs; `required` names the keys always present.
fn object(required: &[&str], properties: Vec<(&str, Value)>) -> Value {
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect();
    let mut schema = json!({"type": "object", "properties": Value::Object(properties)});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A string that must hold something besides whitespace.
fn text(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "pattern": "\\S", "description": description})
}

fn nullable(kind: &str, description: &str) -> Value {
    json!({"type": [kind, "null"], "description": description})
}

fn integer(minimum: i64, description: &str) -> Value {
    json!({"type": "integer", "minimum": minimum, "description": description})
}

fn number(description: &str) -> Value {
    json!({"type": "number", "description": description})
}

fn unit_number(description: &str) -> Value {
    json!({"type": "number", "minimum": 0, "maximum": 1, "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

fn array(items: Value, description: &str) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

fn strings(description: &str) -> Value {
    array(json!({"type": "string"}), description)
}

/// A field with a default the adapter applies when it is absent.
fn defaulted(kind: &str, default: Value, description: &str) -> Value {
    json!({"type": kind, "default": default, "description": description})
}

fn timestamp(description: &str) -> Value {
    json!({"type": "string", "format": "date-time", "description": description})
}

/// A string matching `pattern` (an ECMA-262 regular expression, as JSON Schema has it).
fn matching(pattern: &str, description: &str) -> Value {
    json!({"type": "string", "pattern": pattern, "description": description})
}

fn enumeration(values: Vec<Value>, description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

/// A value, or a non-empty list of such values (a filter matching any of them).
fn one_or_many(item: Value) -> Value {
    json!({"oneOf": [item.clone(), {"type": "array", "minItems": 1, "items": item}]})
}

/// The wire name of a unit enum variant: its serde name, which is what the adapters parse.
fn wire_name<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("unit enum variants serialise as strings")
}

// ----- schemas -----------------------------------------------------------------------------

/// Every component schema by name.
fn schemas() -> Map<String, Value> {
    schema_list()
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect()
}

/// The component schemas as a list, so the tests can see a name defined twice.
fn schema_list() -> Vec<(&'static str, Value)> {
    [
        common_schemas(),
        contract_000_schemas(),
        contract_001_schemas(),
        contract_002_schemas(),
        index_management_schemas(),
        contract_003_schemas(),
        contract_004_schemas(),
        operations_schemas(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn common_schemas() -> Vec<(&'static str, Value)> {
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
        (
            "IndexVersion",
            json!({
                "type": "integer",
                "minimum": 1,
                "description": "An index version. Every write creates one; the newest \
                    `index.retain_versions` stay queryable, so sending one back answers again \
                    from exactly the same data.",
            }),
        ),
        ("Offsets", offsets_schema()),
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
                     not_ready, not_found, index_damaged, internal; contract 003 answers InputError and NotFoundError.",
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

fn explain_request_schema() -> Value {
    let target = json!({
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": false,
        "properties": {
            "document_id": {"type": "string", "minLength": 1},
            "chunk_id": {"type": "string", "minLength": 1},
            "text": {"type": "string", "minLength": 1,
                "description": "A snippet, located in the index (case and spacing ignored)."},
        },
    });
    closed(object(
        &["request", "targets"],
        vec![
            (
                "contract",
                enumeration(
                    vec![json!("002"), json!("000")],
                    "The shape of `request` (default 002).",
                ),
            ),
            (
                "request",
                json!({"type": "object", "description":
                    "The query as its contract takes it: a QueryRequest (002), or {\"retrieval\": {...}} naming this index (000). graph_depth is not explained."}),
            ),
            (
                "targets",
                with(
                    with(
                        array(target, "What to explain: 1 to 20 targets."),
                        "minItems",
                        json!(1),
                    ),
                    "maxItems",
                    json!(crate::retrieval::explain::MAX_TARGETS),
                ),
            ),
        ],
    ))
}

fn diff_request_schema() -> Value {
    closed(object(
        &["request", "from_version", "to_version"],
        vec![
            (
                "contract",
                enumeration(
                    vec![json!("002"), json!("000")],
                    "The shape of `request` (default 002).",
                ),
            ),
            (
                "request",
                json!({"type": "object", "description":
                    "The query as its contract takes it, without index_version."}),
            ),
            (
                "from_version",
                ref_described("IndexVersion", "The older version."),
            ),
            (
                "to_version",
                ref_described("IndexVersion", "The newer version."),
            ),
        ],
    ))
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
            "rank": {"type": ["integer", "null"], "description": "Rank among the branch's best 1,000; null beyond."},
            "score": {"type": ["number", "null"], "description": "Similarity in [0, 1] (semantic) or BM25 (keyword)."},
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

fn offsets_schema() -> Value {
    let schema = object(
        &["start", "end"],
        vec![
            (
                "start",
                integer(0, "The first character, counted in Unicode scalar values."),
            ),
            ("end", integer(0, "One past the last character.")),
        ],
    );
    with(
        schema,
        "description",
        json!(
            "Character offsets `[start, end)` into the document's `text`, or into its page's \
               text for paged documents."
        ),
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

// ----- contract 000 --------------------------------------------------------------------------

fn contract_000_schemas() -> Vec<(&'static str, Value)> {
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

// ----- contract 001 --------------------------------------------------------------------------

fn contract_001_schemas() -> Vec<(&'static str, Value)> {
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

// ----- contract 002: query, hydrate, settings ------------------------------------------------

fn contract_002_schemas() -> Vec<(&'static str, Value)> {
    let profiles = [
        Profile::Auto,
        Profile::Exact,
        Profile::Balanced,
        Profile::Semantic,
    ];
    vec![
        (
            "RetrievalProfile",
            enumeration(
                profiles.iter().map(|p| json!(p.name())).collect(),
                "auto: chosen by query analysis; exact: semantic weight 0.2; balanced: 0.5; \
                 semantic: 0.8.",
            ),
        ),
        ("QueryRequest", query_request_schema()),
        ("ExplainRequest", explain_request_schema()),
        ("Explanation", explanation_schema()),
        ("DiffRequest", diff_request_schema()),
        ("Diff", diff_schema()),
        ("QueryFilters", query_filters_schema()),
        ("QueryResponse", query_response_schema()),
        ("Passage", passage_schema()),
        ("DocumentGroup", document_group_schema()),
        ("HydrateRequest", hydrate_request_schema()),
        ("HydrateResponse", hydrate_response_schema()),
        ("HydratedChunk", hydrated_chunk_schema()),
        (
            "ChunkBrief",
            object(
                &["chunk_id", "chunk_index", "text"],
                vec![
                    ("chunk_id", string("The neighbour's id.")),
                    ("chunk_index", integer(0, "Its position in the document.")),
                    ("text", string("Its text.")),
                ],
            ),
        ),
        ("HydratedSection", hydrated_section_schema()),
        ("IndexSettings", index_settings_schema()),
        (
            "IndexSettingsResponse",
            object(
                &["index", "settings"],
                vec![
                    ("index", schema_ref("IndexName")),
                    (
                        "settings",
                        ref_described(
                            "IndexSettings",
                            "The settings now in force: both keys, null when unset.",
                        ),
                    ),
                ],
            ),
        ),
    ]
}

fn query_request_schema() -> Value {
    let schema = object(
        &["query"],
        vec![
            (
                "query",
                text("The query: at most `limits.max_query_bytes` bytes (default 8192)."),
            ),
            (
                "retrieval_profile",
                ref_described(
                    "RetrievalProfile",
                    "Absent: the index's default_retrieval_profile, else auto.",
                ),
            ),
            (
                "semantic_weight",
                unit_number("Overrides the profile's weight."),
            ),
            ("filters", schema_ref("QueryFilters")),
            (
                "top_k",
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "default": 5,
                    "description": "Passages wanted: at most `limits.max_top_k` (default 100).",
                }),
            ),
            (
                "debug",
                json!({
                    "type": "boolean",
                    "default": false,
                    "description": "Adds the retrieval explanation to the answer.",
                }),
            ),
            (
                "rerank",
                json!({
                    "type": "boolean",
                    "default": true,
                    "description": "Rerank with the configured `[reranker]`; without one, nothing happens.",
                }),
            ),
            (
                "index_version",
                ref_described(
                    "IndexVersion",
                    "Answer from this retained version instead of the newest.",
                ),
            ),
            (
                "graph_depth",
                json!({"type": "integer", "minimum": 0, "maximum": 5, "description":
                    "ragstream extension (opt-in): knowledge-graph relations within this many \
                     hops of the query's entities are returned as `relations`, with \
                     `rewrite_terms`; the entities' names also widen the lexical branch. At \
                     most graph.max_depth."}),
            ),
        ],
    );
    with(
        closed(schema),
        "description",
        json!(
            "Every query is hybrid; the weight comes from, first to last: the request's \
               semantic_weight, its retrieval_profile, the index's default_semantic_weight, its \
               default_retrieval_profile, auto. `null` is the same as an absent field."
        ),
    )
}

fn query_filters_schema() -> Value {
    let schema = object(
        &[],
        vec![
            (
                "project_id",
                string("The document's project_id equals this."),
            ),
            (
                "path_prefix",
                json!({
                    "type": "string",
                    "minLength": 1,
                    "description": "The document's source_path or uri starts with this; at \
                        most 512 bytes.",
                }),
            ),
            (
                "tags",
                json!({
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string"},
                    "description": "The document carries any of these tags.",
                }),
            ),
            (
                "updated_after",
                json!({
                    "type": "string",
                    "description": "The document's updated_at is strictly later. ISO 8601: a \
                        date-time with an offset, a date-time without one (UTC), or a date \
                        alone (its midnight, UTC). Documents without one do not match.",
                }),
            ),
        ],
    );
    closed(schema)
}

fn query_response_schema() -> Value {
    let effective = [Profile::Exact, Profile::Balanced, Profile::Semantic];
    let signals: Vec<Value> = LEXICAL_SIGNALS
        .iter()
        .chain(SEMANTIC_SIGNALS)
        .map(|s| json!(s))
        .collect();
    let schema =
        object(
            &[
                "query_id",
                "index_version",
                "latency_ms",
                "results",
                "documents",
            ],
            vec![
            (
                "query_id",
                json!({"type": "string", "format": "uuid", "description": "Names this answer."}),
            ),
            (
                "index_version",
                ref_described("IndexVersion", "The version answered from."),
            ),
            (
                "latency_ms",
                json!({"type": "number", "minimum": 0, "description": "Server-side time."}),
            ),
            ("results", array(schema_ref("Passage"), "Passages, best first.")),
            (
                "documents",
                array(
                    schema_ref("DocumentGroup"),
                    "The passages grouped by document, in order of each document's best passage.",
                ),
            ),
            (
                "relations",
                json!({"type": "array", "description": "Only with graph_depth: relations \
                    reached from the query's entities, best first (score = 0.7 semantic + 0.3 \
                    lexical, times 0.8 per hop beyond the first).", "items": {"type": "object",
                    "properties": {"subject": {"type": "string"}, "relation": {"type": "string"},
                    "object": {"type": "string"}, "document_id": {"type": "string"},
                    "chunk_id": {"type": ["string", "null"]}, "depth": {"type": "integer"},
                    "score": {"type": "number"}, "score_detail": {"type": "object"}}}}),
            ),
            (
                "rewrite_terms",
                strings("Only with graph_depth: normalised names of the entities the query named."),
            ),
            (
                "retrieval_profile_effective",
                enumeration(
                    effective.iter().map(|p| json!(p.name())).collect(),
                    "debug only: the profile the query ran with (auto resolves to one of these).",
                ),
            ),
            (
                "semantic_weight_effective",
                unit_number("debug only: the semantic weight of fusion."),
            ),
            (
                "auto_signals_detected",
                array(
                    enumeration(signals, "A query-analysis signal."),
                    "debug only: what auto found; empty unless auto ran.",
                ),
            ),
            (
                "lexical_candidates",
                integer(0, "debug only: keyword candidates before fusion."),
            ),
            (
                "semantic_candidates",
                integer(0, "debug only: vector candidates before fusion."),
            ),
            (
                "reranker_applied",
                boolean("debug only: whether a reranker reordered the passages."),
            ),
            (
                "keyword_terms_dropped",
                array(
                    string("A query term."),
                    "debug only: query terms the keyword branch left out as too common \
                     (only with `index.keyword_max_query_terms` set; empty by default).",
                ),
            ),
            (
                "filters_applied",
                json!({"type": "object", "description": "debug only: the filters as given."}),
            ),
        ],
        );
    described(
        schema,
        "The debug fields are present only when the request set `debug: true`.",
    )
}

fn passage_schema() -> Value {
    let detail = object(
        &["semantic", "lexical", "final"],
        vec![
            (
                "semantic",
                nullable(
                    "number",
                    "The normalised semantic score; null when there is none.",
                ),
            ),
            (
                "lexical",
                nullable(
                    "number",
                    "The normalised lexical score; null when there is none.",
                ),
            ),
            (
                "rerank",
                nullable(
                    "number",
                    "The reranker's score, which ordered the passage; null when no reranker ran.",
                ),
            ),
            ("final", number("Equal to score.")),
        ],
    );
    object(
        &[
            "chunk_id",
            "document_id",
            "source_uri",
            "title",
            "section_path",
            "text",
            "score",
            "score_detail",
            "offsets",
        ],
        vec![
            (
                "chunk_id",
                string("Content-derived, stable across re-indexing."),
            ),
            ("document_id", string("The source document.")),
            (
                "source_uri",
                nullable("string", "The document's uri, else its source_path."),
            ),
            ("title", nullable("string", "The document's title.")),
            (
                "section_path",
                strings("The headings enclosing the passage, outermost first."),
            ),
            ("text", string("The passage.")),
            (
                "score",
                number("semantic_weight·semantic + (1 − semantic_weight)·lexical."),
            ),
            ("score_detail", detail),
            ("offsets", schema_ref("Offsets")),
        ],
    )
}

fn document_group_schema() -> Value {
    object(
        &["document_id", "title", "source_uri", "score", "passages"],
        vec![
            ("document_id", string("The document.")),
            ("title", nullable("string", "The document's title.")),
            (
                "source_uri",
                nullable("string", "The document's uri, else its source_path."),
            ),
            ("score", number("The score of the document's best passage.")),
            (
                "passages",
                strings("The chunk ids of its passages among the results, best first."),
            ),
        ],
    )
}

fn hydrate_request_schema() -> Value {
    let schema = object(
        &["chunk_ids"],
        vec![
            (
                "chunk_ids",
                json!({
                    "type": "array",
                    "minItems": 1,
                    "maxItems": c002::MAX_HYDRATE_IDS,
                    "items": {"type": "string"},
                    "description": "The chunks to fetch; an id asked twice is answered once.",
                }),
            ),
            (
                "window",
                json!({
                    "type": "integer",
                    "minimum": 0,
                    "maximum": c002::MAX_WINDOW,
                    "default": 1,
                    "description": "Neighbours to include on each side, within the document.",
                }),
            ),
            (
                "sections",
                json!({
                    "type": "boolean",
                    "default": false,
                    "description": "Also group the chunks by the section they belong to.",
                }),
            ),
            (
                "index_version",
                ref_described(
                    "IndexVersion",
                    "Read this retained version instead of the newest.",
                ),
            ),
        ],
    );
    closed(schema)
}

fn hydrate_response_schema() -> Value {
    object(
        &["index_version", "chunks", "not_found"],
        vec![
            (
                "index_version",
                ref_described("IndexVersion", "The version read."),
            ),
            (
                "chunks",
                array(
                    schema_ref("HydratedChunk"),
                    "The chunks found, in request order.",
                ),
            ),
            (
                "not_found",
                strings("Requested ids that are not (or no longer) in the index: not an error."),
            ),
            (
                "sections",
                array(
                    schema_ref("HydratedSection"),
                    "Present when the request set `sections: true`: each section once.",
                ),
            ),
        ],
    )
}

fn hydrated_chunk_schema() -> Value {
    let context = object(
        &["before", "after", "stitched_text"],
        vec![
            (
                "before",
                array(
                    schema_ref("ChunkBrief"),
                    "Up to `window` preceding chunks, in order.",
                ),
            ),
            (
                "after",
                array(
                    schema_ref("ChunkBrief"),
                    "Up to `window` following chunks, in order.",
                ),
            ),
            (
                "stitched_text",
                string("The run of chunks joined with their overlap removed."),
            ),
        ],
    );
    object(
        &[
            "chunk_id",
            "document_id",
            "chunk_index",
            "title",
            "section_path",
            "breadcrumb",
            "source_uri",
            "text",
            "offsets",
            "metadata",
            "context",
        ],
        vec![
            ("chunk_id", string("The chunk.")),
            ("document_id", string("Its document.")),
            ("chunk_index", integer(0, "Its position in the document.")),
            ("title", nullable("string", "The document's title.")),
            (
                "section_path",
                strings("The enclosing headings, outermost first."),
            ),
            (
                "breadcrumb",
                string("`Title › Section › Subsection`, for citing."),
            ),
            (
                "source_uri",
                nullable("string", "The document's uri, else its source_path."),
            ),
            ("text", string("The chunk's full text.")),
            ("offsets", schema_ref("Offsets")),
            ("metadata", schema_ref("ChunkMetadata")),
            ("context", context),
        ],
    )
}

fn hydrated_section_schema() -> Value {
    object(
        &[
            "document_id",
            "section_path",
            "breadcrumb",
            "chunk_ids",
            "section_chunk_ids",
            "stitched_text",
        ],
        vec![
            ("document_id", string("The document.")),
            (
                "section_path",
                strings("The section's headings, outermost first."),
            ),
            ("breadcrumb", string("`Title › Section › Subsection`.")),
            (
                "chunk_ids",
                strings("The requested chunks that fall in this section."),
            ),
            (
                "section_chunk_ids",
                strings("Every chunk of the section, in order."),
            ),
            (
                "stitched_text",
                string("The whole section's text, overlap removed."),
            ),
        ],
    )
}

fn index_settings_schema() -> Value {
    let schema = object(
        &[],
        vec![
            (
                "default_retrieval_profile",
                json!({
                    "anyOf": [schema_ref("RetrievalProfile"), {"type": "null"}],
                    "description": "The profile of queries that give neither a profile nor a \
                        weight.",
                }),
            ),
            (
                "default_semantic_weight",
                json!({
                    "type": ["number", "null"],
                    "minimum": 0,
                    "maximum": 1,
                    "description": "The weight of queries that give neither a profile nor a \
                        weight (it beats default_retrieval_profile).",
                }),
            ),
            (
                "auto_semantic_center",
                json!({
                    "type": ["number", "null"],
                    "minimum": 0.2,
                    "maximum": 0.8,
                    "description": "Where auto starts on this index (null: 0.5, balanced); \
                        `ragstream index calibrate` measures it.",
                }),
            ),
            (
                "auto_calibration",
                json!({
                    "type": "object",
                    "readOnly": true,
                    "required": ["source", "rows"],
                    "additionalProperties": false,
                    "properties": {
                        "source": {"type": "string", "enum": ["judged", "synthetic"]},
                        "rows": {"type": "integer", "minimum": 0},
                    },
                    "description": "Read-only: how auto_semantic_center was measured (judged \
                        queries, or queries the index cut from its own chunks) and the chunks \
                        the index had then; absent when the centre was set by hand. A PUT \
                        ignores it.",
                }),
            ),
        ],
    );
    described(
        closed(schema),
        "Contract 002's index-level defaults. A PUT replaces all three: an absent or null key \
           clears that setting. A query's own values beat them.",
    )
}

// ----- contract 002: ingestion and index management --------------------------------------------

fn index_management_schemas() -> Vec<(&'static str, Value)> {
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

// ----- contract 003 --------------------------------------------------------------------------

fn contract_003_schemas() -> Vec<(&'static str, Value)> {
    let visibilities = [Visibility::Active, Visibility::All, Visibility::Deleted];
    vec![
        ("RetrieveInput", retrieve_input_schema()),
        ("HybridParameters", hybrid_parameters_schema()),
        (
            "RetrieveOutput",
            object(
                &["matches", "meta"],
                vec![
                    (
                        "matches",
                        array(
                            schema_ref("RetrieveMatch"),
                            "Best first; empty only when the router is tenant-scoped.",
                        ),
                    ),
                    ("meta", schema_ref("RetrieveMeta")),
                ],
            ),
        ),
        ("RetrieveMatch", retrieve_match_schema()),
        ("MatchMeta", match_meta_schema()),
        ("RetrieveMeta", retrieve_meta_schema()),
        ("RetrieveRouting", retrieve_routing_schema()),
        (
            "Visibility",
            enumeration(
                visibilities.iter().map(|v| json!(v.name())).collect(),
                "active: live documents; deleted: soft-deleted ones; all: both.",
            ),
        ),
    ]
}

fn retrieve_input_schema() -> Value {
    let selector = "Trimmed and lower-cased; empty is unset. Reported in `meta.routing`.";
    let flag_words = ["true", "1", "yes", "on", "false", "0", "no", "off", ""];
    let schema = object(
        &["hybrid"],
        vec![
            (
                "query",
                json!({
                    "type": "string",
                    "default": "",
                    "description": "Not trimmed. An empty query still runs and matches nothing \
                        (NotFoundError unless the router is tenant-scoped).",
                }),
            ),
            (
                "filters",
                ref_described(
                    "FilterBag",
                    "Must be a mapping (`filters must be a mapping when provided`); null values \
                     are dropped.",
                ),
            ),
            ("process", nullable("string", selector)),
            ("doc_class", nullable("string", selector)),
            (
                "collection_id",
                nullable(
                    "string",
                    "Trimmed (case kept); empty is unset. Reported in `meta.routing` and applied \
                     as the exact-match filter `collection_id`.",
                ),
            ),
            ("workflow_id", nullable("string", selector)),
            (
                "visibility",
                json!({
                    "type": ["string", "null"],
                    "enum": ["active", "all", "deleted", "", null],
                    "default": "active",
                    "description": "Case-insensitive and trimmed; absent, null or empty is \
                        active. all and deleted need the visibility override, else active is \
                        enforced and `rag.visibility.override_denied` is logged.",
                }),
            ),
            (
                "visibility_override_allowed",
                json!({
                    "anyOf": [
                        {"type": "boolean"},
                        {"type": "null"},
                        {"type": "integer", "enum": [0, 1]},
                        {"type": "string", "enum": flag_words},
                    ],
                    "description": "coerce_bool_flag: booleans, 0/1 and their usual spellings \
                        (case-insensitive). Absent or null inherits the caller's context (the \
                        token's visibility_override scope, or \
                        `contracts.visibility_override_allowed` without authentication); it can \
                        decline the override, never grant more than the context allows.",
                }),
            ),
            ("hybrid", schema_ref("HybridParameters")),
            (
                "top_k",
                nullable(
                    "integer",
                    "Overrides hybrid.top_k; clamped to 1..10, never refused.",
                ),
            ),
        ],
    );
    described(
        schema,
        "AI Core's RetrieveInput. Other keys are ignored. Search is hybrid.",
    )
}

fn hybrid_parameters_schema() -> Value {
    let pool = format!("raised to at least 1 (the engine fetches at most {MAX_POOL} a stage).");
    let schema = closed(object(
        &[],
        vec![
            (
                "alpha",
                defaulted(
                    "number",
                    json!(0.7),
                    "The semantic weight of fusion; clamped to 0..1.",
                ),
            ),
            (
                "min_sim",
                defaulted(
                    "number",
                    json!(0.15),
                    "Matches scoring below it are dropped; clamped to 0..1.",
                ),
            ),
            (
                "top_k",
                defaulted("integer", json!(5), "Matches wanted; clamped to 1..10."),
            ),
            (
                "vec_limit",
                defaulted(
                    "integer",
                    json!(50),
                    &format!("The vector candidate pool; {pool}"),
                ),
            ),
            (
                "lex_limit",
                defaulted(
                    "integer",
                    json!(50),
                    &format!("The lexical candidate pool; {pool}"),
                ),
            ),
            (
                "trgm_limit",
                number(
                    "A trigram threshold, clamped to 0..1. Accepted for compatibility: \
                     ragstream has no trigram stage.",
                ),
            ),
            (
                "max_candidates",
                json!({
                    "type": "integer",
                    "description": "Fused candidates kept before min_sim and \
                        diversification. Default max(vec_limit, lex_limit); raised to at least \
                        top_k, vec_limit and lex_limit.",
                }),
            ),
            (
                "diversify_strength",
                defaulted(
                    "number",
                    json!(0.3),
                    "MMR strength, clamped to 0..1 (lambda = 1 − strength; 0 keeps the plain \
                     ranking).",
                ),
            ),
        ],
    ));
    described(
        schema,
        "Required. Only these keys: any other is refused (InputError `Unknown hybrid \
               parameter(s): a, b`). Numbers are clamped, never refused; `meta` reports the \
               values used.",
    )
}

fn retrieve_match_schema() -> Value {
    let sources = vec![json!("vector"), json!("lexical"), json!("hybrid")];
    object(
        &["id", "text", "score", "source", "hash", "citation", "meta"],
        vec![
            (
                "id",
                string(
                    "The id of the document the chunk belongs to (`meta.chunk_id` is the \
                     chunk's own).",
                ),
            ),
            ("text", string("The chunk's text.")),
            (
                "score",
                number("alpha·semantic + (1 − alpha)·lexical, each normalised."),
            ),
            (
                "source",
                enumeration(
                    sources,
                    "Which candidate list held the chunk: the vector one, the lexical one or \
                     both.",
                ),
            ),
            ("hash", matching("^[0-9a-f]{64}$", "SHA-256 of text, hex.")),
            (
                "citation",
                string(
                    "`<source> · S.<page> · Abschnitt <innermost section>`; the source is the \
                     title, else source_name, uri or document id.",
                ),
            ),
            ("meta", schema_ref("MatchMeta")),
        ],
    )
}

fn match_meta_schema() -> Value {
    let parent = object(
        &["id", "heading", "content"],
        vec![
            (
                "id",
                matching(
                    "^section-[0-9a-f]{16}$",
                    "Stable: derived from the document and the section path.",
                ),
            ),
            ("heading", string("The section's heading.")),
            (
                "content",
                string("The section's text (its chunks stitched, overlap removed), cut at 4000 characters."),
            ),
        ],
    );
    let own = object(
        &["chunk_id", "parent_ids", "parents"],
        vec![
            ("chunk_id", string("The chunk's id.")),
            ("parent_ids", strings("The ids of `parents`, in order.")),
            (
                "parents",
                array(parent, "One per enclosing section, outermost first."),
            ),
        ],
    );
    json!({
        "allOf": [schema_ref("ChunkMetadata"), own],
        "description": "The chunk's metadata (as contract 000's) plus its id and its enclosing \
            sections.",
    })
}

fn retrieve_meta_schema() -> Value {
    object(
        &[
            "routing",
            "took_ms",
            "alpha",
            "min_sim",
            "top_k_effective",
            "matches_returned",
            "max_candidates_effective",
            "vector_candidates",
            "lexical_candidates",
            "deleted_matches_blocked",
            "visibility_effective",
            "diversify_strength",
        ],
        vec![
            ("routing", schema_ref("RetrieveRouting")),
            ("took_ms", integer(0, "Milliseconds.")),
            ("alpha", unit_number("The alpha applied, after clamping.")),
            (
                "min_sim",
                unit_number("The cutoff applied, after clamping."),
            ),
            (
                "top_k_effective",
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "description": "The top_k applied, after clamping.",
                }),
            ),
            (
                "matches_returned",
                integer(0, "Matches returned, after diversification."),
            ),
            (
                "max_candidates_effective",
                integer(1, "The fused candidate pool (at least top_k)."),
            ),
            (
                "vector_candidates",
                integer(0, "Vector candidates before fusion."),
            ),
            (
                "lexical_candidates",
                integer(0, "Lexical candidates before fusion."),
            ),
            (
                "deleted_matches_blocked",
                integer(
                    0,
                    "Deleted chunks that would have been among the matches had active not been \
                     enforced (0 for all and deleted).",
                ),
            ),
            ("visibility_effective", schema_ref("Visibility")),
            (
                "diversify_strength",
                unit_number("The strength applied, after clamping."),
            ),
        ],
    )
}

fn retrieve_routing_schema() -> Value {
    object(
        &[
            "profile",
            "vector_space_id",
            "process",
            "doc_class",
            "collection_id",
            "workflow_id",
        ],
        vec![
            ("profile", string("The embedding profile: `standard`.")),
            ("vector_space_id", string("`rag/<index>`.")),
            (
                "process",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "doc_class",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "collection_id",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "workflow_id",
                nullable("string", "As normalised; null when unset."),
            ),
        ],
    )
}

// ----- contract 004 --------------------------------------------------------------------------

fn contract_004_schemas() -> Vec<(&'static str, Value)> {
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

// ----- operations ----------------------------------------------------------------------------

fn operations_schemas() -> Vec<(&'static str, Value)> {
    let pipeline = object(
        &["restarts", "last_failure"],
        vec![
            (
                "restarts",
                integer(0, "Supervised restarts of the ingest pipeline."),
            ),
            (
                "last_failure",
                nullable("string", "Why it last restarted; null if never."),
            ),
        ],
    );
    let problems = json!({
        "type": "array",
        "description": "Every problem a part of the daemon reports now.",
        "items": object(
            &["part", "impact", "reason", "since"],
            vec![
                ("part", string("Which part: `storage`, `pipeline.stalled`, `pipeline.commits.<index>`, `pipeline.restarts`, `queries.restarts`, `maintenance.restarts`, `dead_letters`.")),
                ("impact", json!({"type": "string", "enum": ["unhealthy", "unready"],
                    "description": "`unhealthy` fails /healthz, `unready` fails /readyz."})),
                ("reason", string("What is wrong, in words.")),
                ("since", string("When the part first reported it (RFC 3339, UTC).")),
            ],
        ),
    });
    vec![
        (
            "Health",
            object(
                &["status", "problems", "pipeline", "embedding"],
                vec![
                    (
                        "status",
                        json!({"type": "string", "enum": ["ok", "unhealthy"]}),
                    ),
                    ("problems", problems.clone()),
                    ("pipeline", pipeline),
                    (
                        "embedding",
                        json!({"description": "The embedder's report; its shape depends on the \
                            embedder (with the cache: `{embedder, cache: {hits, misses, \
                            hit_ratio, entries}}`)."}),
                    ),
                ],
            ),
        ),
        (
            "Ready",
            object(
                &["status", "problems"],
                vec![
                    ("status", json!({"type": "string", "const": "ready"})),
                    ("problems", problems),
                ],
            ),
        ),
        (
            "MetricsText",
            json!({"type": "string", "description": "Prometheus text exposition format 0.0.4."}),
        ),
        (
            "OpenApiDocument",
            json!({"type": "object", "description": "This OpenAPI 3.1 document."}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::*;
    use crate::contracts::c000_retrieval_calls::{self as c000, RequestLimits};
    use crate::contracts::c003_ai_core as c003;
    use crate::contracts::c004_retriever as c004;

    const VERSION: &str = "1.2.3-test";
    const LIMITS: RequestLimits = RequestLimits {
        max_top_k: 100,
        max_query_bytes: 8192,
    };

    /// Every `$ref` value under `v`.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("$ref", Value::String(r)) => out.push(r.clone()),
                        _ => refs(x, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    /// Every object under `v`, `v` included.
    fn objects<'a>(v: &'a Value, out: &mut Vec<&'a Map<String, Value>>) {
        match v {
            Value::Object(m) => {
                out.push(m);
                m.values().for_each(|x| objects(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| objects(x, out)),
            _ => {}
        }
    }

    fn operation_of<'a>(doc: &'a Value, route: &Route) -> &'a Value {
        &doc["paths"][route.path][route.method.to_ascii_lowercase().as_str()]
    }

    #[test]
    fn declares_openapi_3_1_and_the_given_version() {
        let d = document(VERSION);
        assert_eq!(d["openapi"], "3.1.0");
        assert_eq!(d["info"]["version"], VERSION);
        assert_eq!(document("0.0.1")["info"]["version"], "0.0.1");
    }

    #[test]
    fn every_ref_resolves_to_a_component_schema() {
        let d = document(VERSION);
        let schemas = d["components"]["schemas"].as_object().expect("schemas");
        let mut found = Vec::new();
        refs(&d, &mut found);
        assert!(found.len() > 50, "only {} references found", found.len());
        for r in &found {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{r} does not point at a component schema"));
            assert!(schemas.contains_key(name), "{r} does not resolve");
        }
    }

    #[test]
    fn every_component_schema_is_referenced() {
        let d = document(VERSION);
        let mut found = Vec::new();
        refs(&d, &mut found);
        let used: HashSet<&str> = found
            .iter()
            .filter_map(|r| r.strip_prefix("#/components/schemas/"))
            .collect();
        for name in d["components"]["schemas"].as_object().unwrap().keys() {
            assert!(used.contains(name.as_str()), "{name} is never referenced");
        }
    }

    #[test]
    fn schema_names_are_unique() {
        let mut seen = HashSet::new();
        for (name, _) in schema_list() {
            assert!(seen.insert(name), "{name} is defined twice");
        }
    }

    #[test]
    fn every_route_is_a_path_operation_and_nothing_else_is() {
        let d = document(VERSION);
        for route in ROUTES {
            assert_eq!(
                operation_of(&d, route)["operationId"],
                route.operation_id,
                "{} {}",
                route.method,
                route.path
            );
        }
        let operations: usize = d["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|item| item.as_object().unwrap().len())
            .sum();
        assert_eq!(operations, ROUTES.len());
    }

    #[test]
    fn operation_ids_and_routes_are_unique() {
        let mut ids = HashSet::new();
        let mut routes = HashSet::new();
        for r in ROUTES {
            assert!(
                ids.insert(r.operation_id),
                "operation id {} twice",
                r.operation_id
            );
            assert!(
                routes.insert((r.method, r.path)),
                "{} {} twice",
                r.method,
                r.path
            );
        }
    }

    #[test]
    fn routes_name_defined_schemas_and_known_methods() {
        let names: HashSet<&str> = schema_list().iter().map(|(n, _)| *n).collect();
        for r in ROUTES {
            assert!(
                ["GET", "POST", "PUT", "DELETE"].contains(&r.method),
                "{}",
                r.method
            );
            assert!(names.contains(r.response), "{}", r.response);
            if let Some(request) = r.request {
                assert!(names.contains(request), "{request}");
            }
        }
    }

    #[test]
    fn required_keys_are_declared_properties() {
        let d = document(VERSION);
        let mut all = Vec::new();
        objects(&d["components"]["schemas"], &mut all);
        let mut checked = 0;
        for o in all {
            let required = o.get("required").and_then(Value::as_array);
            let properties = o.get("properties").and_then(Value::as_object);
            let (Some(required), Some(properties)) = (required, properties) else {
                continue;
            };
            for key in required {
                let key = key.as_str().expect("required names are strings");
                assert!(
                    properties.contains_key(key),
                    "required {key} is not a property"
                );
            }
            checked += 1;
        }
        assert!(checked > 20, "only {checked} objects checked");
    }

    #[test]
    fn v1_routes_document_authentication_and_the_rest_need_no_token() {
        let d = document(VERSION);
        assert_eq!(d["security"], json!([{"bearer": []}, {}]));
        assert_eq!(d["components"]["securitySchemes"]["bearer"]["type"], "http");
        assert_eq!(
            d["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        for r in ROUTES {
            let op = operation_of(&d, r);
            if r.path.starts_with("/v1/") {
                assert!(
                    op.get("security").is_none(),
                    "{} follows the global rule",
                    r.path
                );
                // The index list leaves out what the caller may not read: never a 403.
                let refuses: &[u16] = if r.operation_id == "listIndexes" {
                    &[401, 500]
                } else {
                    &[401, 403, 500]
                };
                for &status in refuses {
                    assert!(r.errors.contains(&status), "{} lacks {status}", r.path);
                    let body = &op["responses"][status.to_string().as_str()]["content"];
                    assert_eq!(
                        body["application/json"]["schema"]["$ref"],
                        "#/components/schemas/Error"
                    );
                }
            } else if r.path == "/metrics" {
                assert_eq!(op["security"], json!([{"bearer": []}, {}]));
                assert!(r.errors.contains(&401) && r.errors.contains(&403));
            } else {
                assert_eq!(op["security"], json!([]), "{} needs no token", r.path);
            }
        }
    }

    #[test]
    fn every_error_status_has_its_own_description() {
        for r in ROUTES {
            for &status in r.errors {
                assert_ne!(
                    error_description(r, status),
                    "Error.",
                    "{} {status}",
                    r.path
                );
            }
            if r.tag == TAG_003 {
                assert!(error_description(r, 400).starts_with("InputError"));
                assert!(error_description(r, 404).starts_with("NotFoundError"));
            }
        }
    }

    #[test]
    fn query_routes_declare_the_index_version_header() {
        let d = document(VERSION);
        let with_header = [
            "retrieve",
            "ragQuery",
            "indexRagQuery",
            "indexQuery",
            "hydrate",
            "aiRagQuery",
            "aiRagQueryNoSlash",
            "indexAiRagQuery",
        ];
        for r in ROUTES {
            let responses = &operation_of(&d, r)["responses"];
            let header = &responses["200"]["headers"][INDEX_VERSION_HEADER];
            assert_eq!(
                header.is_object(),
                with_header.contains(&r.operation_id),
                "{}",
                r.operation_id
            );
        }
    }

    #[test]
    fn ingestion_and_deletes_answer_202() {
        let d = document(VERSION);
        let ingest = &d["paths"]["/v1/indexes/{index}/documents"]["post"]["responses"];
        assert!(ingest["202"].is_object());
        assert!(ingest["200"].is_null());
        let delete = &d["paths"]["/v1/indexes/{index}/documents/{id}"]["delete"]["responses"];
        assert!(delete["202"].is_object());
        let metrics = &d["paths"]["/metrics"]["get"]["responses"]["200"]["content"];
        assert!(metrics[METRICS_MEDIA_TYPE].is_object());
        assert!(metrics["application/json"].is_null());
    }

    #[test]
    fn path_parameters_match_the_templates() {
        let d = document(VERSION);
        for r in ROUTES {
            let declared: Vec<&str> = operation_of(&d, r)["parameters"]
                .as_array()
                .map(|ps| ps.iter().map(|p| p["name"].as_str().unwrap()).collect())
                .unwrap_or_default();
            let templated: Vec<&str> = r
                .path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .collect();
            assert_eq!(declared, templated, "{}", r.path);
        }
        let index = &d["paths"]["/v1/indexes/{index}/query"]["post"]["parameters"][0];
        assert_eq!(index["schema"]["$ref"], "#/components/schemas/IndexName");
        assert_eq!(index["in"], "path");
        assert_eq!(index["required"], true);
    }

    #[test]
    fn index_name_pattern_agrees_with_the_parser() {
        let pattern = regex::Regex::new(INDEX_NAME_PATTERN).unwrap();
        let longest = "a".repeat(64);
        let too_long = "a".repeat(65);
        for name in [
            "a",
            "0",
            "kb_product-docs",
            longest.as_str(),
            "",
            "_a",
            "-a",
            "A",
            "a b",
            "a/b",
            "ä",
            too_long.as_str(),
            "../x",
            "kb\n",
        ] {
            assert_eq!(
                pattern.is_match(name),
                crate::model::IndexName::parse(name).is_ok(),
                "{name:?}"
            );
        }
    }

    #[test]
    fn hybrid_parameters_are_exactly_the_adapters_keys() {
        let d = document(VERSION);
        let h = &d["components"]["schemas"]["HybridParameters"];
        let declared: BTreeSet<&str> = h["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let accepted: BTreeSet<&str> = c003::HYBRID_KEYS.iter().copied().collect();
        assert_eq!(declared, accepted);
    }

    #[test]
    fn chunk_metadata_declares_every_built_in_and_document_field() {
        let d = document(VERSION);
        let properties = &d["components"]["schemas"]["ChunkMetadata"]["properties"];
        for field in BUILT_IN_FIELDS
            .iter()
            .chain(crate::model::metadata::DOCUMENT_FILTER_FIELDS)
        {
            assert!(properties[*field].is_object(), "{field}");
        }
    }

    #[test]
    fn stated_defaults_are_the_adapters_defaults() {
        let d = document(VERSION);
        let s = &d["components"]["schemas"];

        let (_, r) =
            c000::parse_request(&json!({"retrieval": {"index": "kb", "query": "q"}}), LIMITS)
                .unwrap();
        let spec = &s["RetrievalSpec"]["properties"];
        assert_eq!(spec["top_k"]["default"], r.top_k);
        assert_eq!(spec["hybrid_alpha"]["default"], r.hybrid_alpha);
        assert_eq!(spec["search_method"]["default"], wire_name(&r.method));
        assert_eq!(
            spec["query_preprocessing"]["default"],
            wire_name(&r.preprocessing)
        );

        let rag = c001::parse_request(&json!({"query": "q"}), 8192).unwrap();
        assert_eq!(
            s["RagQueryRequest"]["properties"]["top_k"]["default"],
            rag.top_k
        );

        let q = c002::parse_request(&json!({"query": "q"}), 100, 8192).unwrap();
        let query = &s["QueryRequest"]["properties"];
        assert_eq!(query["top_k"]["default"], q.top_k);
        assert_eq!(query["debug"]["default"], q.debug);

        let h = c003::parse_request(&json!({"hybrid": {}})).unwrap().hybrid;
        let hybrid = &s["HybridParameters"]["properties"];
        assert_eq!(hybrid["alpha"]["default"], h.alpha);
        assert_eq!(hybrid["min_sim"]["default"], h.min_sim);
        assert_eq!(hybrid["top_k"]["default"], h.top_k);
        assert_eq!(hybrid["vec_limit"]["default"], h.vec_limit);
        assert_eq!(hybrid["lex_limit"]["default"], h.lex_limit);
        assert_eq!(
            hybrid["diversify_strength"]["default"],
            h.diversify_strength
        );
    }

    #[test]
    fn closed_schemas_are_the_ones_whose_adapters_refuse_unknown_keys() {
        let d = document(VERSION);
        let s = &d["components"]["schemas"];
        let closed = |name: &str| s[name]["additionalProperties"] == false;
        let cases = [
            (
                "RetrievalSpec",
                c000::parse_request(
                    &json!({"retrieval": {"index": "kb", "query": "q", "bogus": 1}}),
                    LIMITS,
                )
                .is_err(),
            ),
            (
                "RagQueryRequest",
                c001::parse_request(&json!({"query": "q", "bogus": 1}), 8192).is_err(),
            ),
            (
                "QueryRequest",
                c002::parse_request(&json!({"query": "q", "bogus": 1}), 100, 8192).is_err(),
            ),
            (
                "RetrieveInput",
                c003::parse_request(&json!({"hybrid": {}, "bogus": 1})).is_err(),
            ),
            (
                "HybridParameters",
                c003::parse_request(&json!({"hybrid": {"bogus": 1}})).is_err(),
            ),
            (
                "RetrieverRequest",
                c004::parse_request(&json!({"query": "q", "top_k": 3})).is_err(),
            ),
        ];
        for (name, refused) in cases {
            assert_eq!(closed(name), refused, "{name}");
        }
    }
}
