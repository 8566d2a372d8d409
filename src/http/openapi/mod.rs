//! The OpenAPI 3.1 description of ragstream's HTTP API, served at `GET /openapi.json`.
//!
//! It is generated from the code, not kept as a separate file that drifts: [`ROUTES`] lists
//! every route the server registers (a server test checks the two agree), and every JSON
//! schema is generated from the wire type the server reads or writes (`contracts::wire`, the
//! probes' answers; `generated.rs`); only the two bodies that are not JSON objects of ours,
//! the metrics text and this document, are written here. What a type cannot say (a default, a clamp) is stated in its
//! schema attributes, and the tests run the adapters to check that the stated defaults and
//! the closed/open objects match.
//!
//! Two rules keep the document honest rather than exhaustive:
//!
//! - bounds that come from the configuration (`limits.max_top_k`, `limits.max_query_bytes`,
//!   `http.max_body_bytes`, …) are named in descriptions, not given as `maximum`, because the
//!   document does not depend on one deployment's configuration;
//! - contract 003 clamps numbers instead of refusing them, so its bounds are stated in
//!   descriptions, never as `minimum`/`maximum`, which would make a validating client refuse
//!   requests the server accepts.

mod generated;

use serde_json::{json, Map, Value};

use generated::generated_schemas;

/// One HTTP route: what the server registers, and what the document says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The path template as actix registers it (`{index}` is a path parameter).
    pub path: &'static str,
    /// What the route does: the server dispatches on it.
    pub operation: Operation,
    pub summary: &'static str,
    pub tag: &'static str,
    /// The component schema of the JSON request body, for routes that take one.
    pub request: Option<&'static str>,
    /// The component schema of the success body.
    pub response: &'static str,
    /// The error statuses the route answers with, each with an `Error` body.
    pub errors: &'static [u16],
}

impl Route {
    /// The route's `operationId` in the document.
    pub const fn operation_id(&self) -> &'static str {
        self.operation.id()
    }
}

/// Declares [`Operation`] and its `operationId`s in one list.
macro_rules! operations {
    ($($variant:ident => $id:literal,)*) => {
        /// What a route does. The server matches on it to pick the handler, so a route
        /// without one does not compile; the document names it by [`Operation::id`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($variant,)*
        }

        impl Operation {
            /// The `operationId` of the route that does this.
            pub const fn id(self) -> &'static str {
                match self {
                    $(Operation::$variant => $id,)*
                }
            }
        }
    };
}

operations! {
    Retrieve => "retrieve",
    RagQuery => "ragQuery",
    IndexRagQuery => "indexRagQuery",
    IndexQuery => "indexQuery",
    ExplainQuery => "explainQuery",
    DiffQuery => "diffQuery",
    Hydrate => "hydrate",
    PutIndexSettings => "putIndexSettings",
    IngestDocuments => "ingestDocuments",
    DeleteDocument => "deleteDocument",
    RebuildIndex => "rebuildIndex",
    ListIndexes => "listIndexes",
    DeleteIndex => "deleteIndex",
    IndexStats => "indexStats",
    IndexStatus => "indexStatus",
    AiRagQuery => "aiRagQuery",
    AiRagQueryNoSlash => "aiRagQueryNoSlash",
    IndexAiRagQuery => "indexAiRagQuery",
    RetrieverRetrieve => "retrieverRetrieve",
    OpenApi => "openapi",
    Healthz => "healthz",
    Readyz => "readyz",
    Metrics => "metrics",
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
const SETTINGS_ERRORS: &[u16] = &[400, 401, 403, 404, 409, 413, 500, 503];
/// Ingestion creates the index on first write, so no 404; 503 is the bus refusing events.
const INGEST_ERRORS: &[u16] = &[400, 401, 403, 413, 500, 503];
const DELETE_ERRORS: &[u16] = &[400, 401, 403, 500, 503];
/// Stats, status and rebuild: an existing index, no body, no embedding.
const INDEX_ERRORS: &[u16] = &[400, 401, 403, 404, 409, 500, 503];

/// Every route the HTTP server registers.
pub const ROUTES: &[Route] = &[
    Route {
        method: "POST",
        path: "/v1/retrieve",
        operation: Operation::Retrieve,
        summary: "Contract 000: one retrieval call",
        tag: TAG_000,
        request: Some("RetrievalRequest"),
        response: "RetrievalCallsResponse",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/rag/query",
        operation: Operation::RagQuery,
        summary: "Contract 001 search on the default index (contracts.default_index)",
        tag: TAG_001,
        request: Some("RagQueryRequest"),
        response: "RagQueryResponse",
        errors: RAG_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/rag/query",
        operation: Operation::IndexRagQuery,
        summary: "Contract 001 search on the named index",
        tag: TAG_001,
        request: Some("RagQueryRequest"),
        response: "RagQueryResponse",
        errors: RAG_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/query",
        operation: Operation::IndexQuery,
        summary: "Contract 002 query: profile-weighted hybrid search",
        tag: TAG_002,
        request: Some("QueryRequest"),
        response: "QueryResponse",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/explain",
        operation: Operation::ExplainQuery,
        summary: "Why targets were or were not retrieved by a query",
        tag: TAG_002,
        request: Some("ExplainRequest"),
        response: "Explanation",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/diff",
        operation: Operation::DiffQuery,
        summary: "One query at two versions: what entered, left and moved, and why",
        tag: TAG_002,
        request: Some("DiffRequest"),
        response: "Diff",
        errors: SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/hydrate",
        operation: Operation::Hydrate,
        summary: "Contract 002 hydration: full chunks, neighbours and stitched text",
        tag: TAG_002,
        request: Some("HydrateRequest"),
        response: "HydrateResponse",
        errors: HYDRATE_ERRORS,
    },
    Route {
        method: "PUT",
        path: "/v1/indexes/{index}/settings",
        operation: Operation::PutIndexSettings,
        summary: "Contract 002 index-level query defaults",
        tag: TAG_002,
        request: Some("IndexSettings"),
        response: "IndexSettingsResponse",
        errors: SETTINGS_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/documents",
        operation: Operation::IngestDocuments,
        summary: "Ingest and delete documents through the pipeline",
        tag: TAG_002,
        request: Some("IngestRequest"),
        response: "IngestAccepted",
        errors: INGEST_ERRORS,
    },
    Route {
        method: "DELETE",
        path: "/v1/indexes/{index}/documents/{id}",
        operation: Operation::DeleteDocument,
        summary: "Delete one document through the pipeline",
        tag: TAG_002,
        request: None,
        response: "IngestAccepted",
        errors: DELETE_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/rebuild",
        operation: Operation::RebuildIndex,
        summary: "Rebuild the keyword index from the Lance rows of the newest version",
        tag: TAG_002,
        request: None,
        response: "RebuildResponse",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes",
        operation: Operation::ListIndexes,
        summary: "The indexes the caller may read, each with its figures",
        tag: TAG_002,
        request: None,
        response: "IndexList",
        errors: &[401, 500],
    },
    Route {
        method: "DELETE",
        path: "/v1/indexes/{index}",
        operation: Operation::DeleteIndex,
        summary: "Delete an index: it stops answering at once; maintenance removes its files",
        tag: TAG_002,
        request: None,
        response: "IndexDeleted",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes/{index}/stats",
        operation: Operation::IndexStats,
        summary: "Index figures: versions, documents, chunks",
        tag: TAG_002,
        request: None,
        response: "IndexStats",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "GET",
        path: "/v1/indexes/{index}/status",
        operation: Operation::IndexStatus,
        summary: "Newest version, last commit and indexing lag",
        tag: TAG_002,
        request: None,
        response: "IndexStatus",
        errors: INDEX_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/ai/rag/query/",
        operation: Operation::AiRagQuery,
        summary: "Contract 003 on the default index (the contract's path)",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/ai/rag/query",
        operation: Operation::AiRagQueryNoSlash,
        summary: "Contract 003 on the default index (without the trailing slash)",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/indexes/{index}/ai/rag/query",
        operation: Operation::IndexAiRagQuery,
        summary: "Contract 003 on the named index",
        tag: TAG_003,
        request: Some("RetrieveInput"),
        response: "RetrieveOutput",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "POST",
        path: "/v1/retrievers/{name}/retrieve",
        operation: Operation::RetrieverRetrieve,
        summary: "Contract 004: run a named retriever",
        tag: TAG_004,
        request: Some("RetrieverRequest"),
        response: "RetrieverResponse",
        errors: NAMED_SEARCH_ERRORS,
    },
    Route {
        method: "GET",
        path: "/openapi.json",
        operation: Operation::OpenApi,
        summary: "This OpenAPI document",
        tag: TAG_OPS,
        request: None,
        response: "OpenApiDocument",
        errors: &[],
    },
    Route {
        method: "GET",
        path: "/healthz",
        operation: Operation::Healthz,
        summary: "Liveness: 503 with the reasons when a part needs a restart or an operator",
        tag: TAG_OPS,
        request: None,
        response: "Health",
        errors: &[503],
    },
    Route {
        method: "GET",
        path: "/readyz",
        operation: Operation::Readyz,
        summary: "Readiness: 503 while starting or draining, or when the data directory cannot be written",
        tag: TAG_OPS,
        request: None,
        response: "Ready",
        errors: &[503],
    },
    Route {
        method: "GET",
        path: "/metrics",
        operation: Operation::Metrics,
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
    op.insert("operationId".into(), json!(route.operation_id()));
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
    // An unhealthy daemon answers /healthz with the same body as a healthy one.
    let body = if route.response == "Health" {
        "Health"
    } else {
        "Error"
    };
    let mut response = json!({
        "description": error_description(route, status),
        "content": {"application/json": {"schema": schema_ref(body)}},
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

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

// ----- schemas -----------------------------------------------------------------------------

/// Every component schema by name.
fn schemas() -> Map<String, Value> {
    schema_list().into_iter().collect()
}

/// The component schemas as a list, so the tests can see a name defined twice: every one
/// generated from a wire type, and the two bodies that are not JSON objects of ours.
fn schema_list() -> Vec<(String, Value)> {
    let mut schemas = generated_schemas();
    schemas.push((
        "MetricsText".into(),
        json!({"type": "string", "description": "Prometheus text exposition format 0.0.4."}),
    ));
    schemas.push((
        "OpenApiDocument".into(),
        json!({"type": "object", "description": "This OpenAPI 3.1 document."}),
    ));
    schemas
}

#[cfg(test)]
mod tests;
