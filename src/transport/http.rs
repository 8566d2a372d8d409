//! HTTP next to the bus (actix-web):
//!
//! - `POST /v1/retrieve`: contract 000 request → response;
//! - `POST /v1/indexes/{index}/documents`: `{"documents": [...], "deletes": [ids]}`, produced
//!   to the documents topic, so HTTP ingestion runs through the same exactly-once pipeline;
//!   answers 202 with the Kafka offsets;
//! - `GET /v1/indexes/{index}/stats`, `GET /healthz`, `GET /readyz`.
//!
//! Errors are `{"error": {"code", "message", "field"?}}`; bodies are size-limited.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpResponse, HttpServer};
use futures::StreamExt;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::{json, Value};

use crate::contracts::c000_retrieval_calls::error_code;
use crate::contracts::{self, Contract, Reply};
use crate::engine::{Engine, EngineError};
use crate::index::DocumentOp;
use crate::model::{Document, IndexName};
use crate::pipeline::events::DocumentEvent;
use crate::pipeline::supervisor::RestartReport;

pub struct HttpState {
    pub engine: Arc<Engine>,
    pub producer: FutureProducer,
    pub documents_topic: String,
    pub ready: Arc<AtomicBool>,
    pub pipeline: Arc<RestartReport>,
    pub max_body_bytes: usize,
}

fn error(status: StatusCode, code: &str, message: &str, field: Option<&str>) -> HttpResponse {
    let mut body = json!({"error": {"code": code, "message": message}});
    if let Some(f) = field {
        body["error"]["field"] = json!(f);
    }
    HttpResponse::build(status).json(body)
}

fn status_of(code: &str) -> StatusCode {
    match code {
        "invalid_request" => StatusCode::BAD_REQUEST,
        "index_not_found" => StatusCode::NOT_FOUND,
        "version_unavailable" => StatusCode::GONE,
        "embedder_mismatch" => StatusCode::CONFLICT,
        "embedder_unavailable" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn engine_error(e: &EngineError) -> HttpResponse {
    let (code, field) = error_code(e);
    error(status_of(code), code, &e.to_string(), field.as_deref())
}

fn parse_index(name: &str) -> Result<IndexName, Box<HttpResponse>> {
    IndexName::parse(name).map_err(|e| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &e.to_string(),
            Some("index"),
        ))
    })
}

/// Reads a request body up to the configured limit; over it, a JSON 413 naming the limit.
async fn read_body(mut payload: web::Payload, limit: usize) -> Result<web::BytesMut, HttpResponse> {
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| {
            error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("cannot read the body: {e}"),
                Some("body"),
            )
        })?;
        if body.len() + chunk.len() > limit {
            return Err(error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                &format!("the body is over the limit of {limit} bytes (http.max_body_bytes)"),
                Some("body"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn retrieve(state: web::Data<HttpState>, payload: web::Payload) -> HttpResponse {
    let body = match read_body(payload, state.max_body_bytes).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    respond(contracts::answer(&state.engine, Contract::C000, None, &body).await)
}

/// A contract's reply as HTTP: its status, its body, and the version it was answered from in
/// `x-ragstream-index-version` (contracts whose body has no place for it need the header).
fn respond(reply: Reply) -> HttpResponse {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    if let Some(v) = reply.index_version {
        response.insert_header(("x-ragstream-index-version", v.to_string()));
    }
    response.json(reply.body)
}

/// The index a route names and its JSON body, or the error response to send.
async fn index_and_json(
    state: &HttpState,
    path: &str,
    payload: web::Payload,
) -> Result<(IndexName, Value), HttpResponse> {
    let index = parse_index(path).map_err(|r| *r)?;
    let body = read_body(payload, state.max_body_bytes).await?;
    let value = serde_json::from_slice(&body).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("body is not JSON: {e}"),
            Some("body"),
        )
    })?;
    Ok((index, value))
}

/// Contract 001 on the configured default index, or on the index of the path.
async fn rag_query(
    state: web::Data<HttpState>,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    contract_route(state, Contract::C001, path, payload).await
}

/// Contract 002 query.
async fn index_query(
    state: web::Data<HttpState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    contract_route(state, Contract::C002, Some(path), payload).await
}

/// Contract 002 hydration.
async fn index_hydrate(
    state: web::Data<HttpState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    match index_and_json(&state, &path, payload).await {
        Ok((index, v)) => {
            respond(contracts::c002_retrieval_api::hydrate(&state.engine, &index, &v).await)
        }
        Err(response) => response,
    }
}

/// Contract 002 index settings (query defaults).
async fn index_settings(
    state: web::Data<HttpState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    match index_and_json(&state, &path, payload).await {
        Ok((index, v)) => {
            respond(contracts::c002_retrieval_api::settings(&state.engine, &index, &v).await)
        }
        Err(response) => response,
    }
}

/// Contract 004: a named retriever.
async fn retriever(
    state: web::Data<HttpState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let body = match read_body(payload, state.max_body_bytes).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    respond(contracts::c004_retriever::answer(&state.engine, &path, &body).await)
}

/// Contract 003 (`RetrieveInput` → `RetrieveOutput`).
async fn ai_rag_query(
    state: web::Data<HttpState>,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    contract_route(state, Contract::C003, path, payload).await
}

async fn contract_route(
    state: web::Data<HttpState>,
    contract: Contract,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    let index = match path.map(|p| parse_index(&p)).transpose() {
        Ok(i) => i,
        Err(response) => return *response,
    };
    let body = match read_body(payload, state.max_body_bytes).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    respond(contracts::answer(&state.engine, contract, index, &body).await)
}

async fn ingest(
    state: web::Data<HttpState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (index, value) = match index_and_json(&state, &path, payload).await {
        Ok(ok) => ok,
        Err(response) => return response,
    };
    let Some(obj) = value.as_object() else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "body must be an object",
            Some("body"),
        );
    };
    if let Some(k) = obj.keys().find(|k| *k != "documents" && *k != "deletes") {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "is not a field (expected documents, deletes)",
            Some(k),
        );
    }
    let limits = state.engine.config().limits.document();
    let mut events: Vec<DocumentEvent> = Vec::new();
    for (i, d) in obj
        .get("documents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let doc: Document = match serde_json::from_value(d.clone()) {
            Ok(doc) => doc,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    &e.to_string(),
                    Some(&format!("documents[{i}]")),
                )
            }
        };
        if let Err(e) = doc.validate(&limits) {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &e.rule,
                Some(&format!("documents[{i}].{}", e.field)),
            );
        }
        events.push(DocumentEvent {
            index: index.clone(),
            op: DocumentOp::Upsert(doc),
        });
    }
    for (i, id) in obj
        .get("deletes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(id) = id.as_str().filter(|s| !s.trim().is_empty()) else {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "must be a non-empty string",
                Some(&format!("deletes[{i}]")),
            );
        };
        events.push(DocumentEvent {
            index: index.clone(),
            op: DocumentOp::Delete {
                document_id: id.to_string(),
            },
        });
    }
    if events.is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "give at least one document or delete",
            Some("documents"),
        );
    }
    let mut offsets = Vec::new();
    for event in &events {
        let (key, payload) = (event.key(), event.to_json().to_string());
        let record = FutureRecord::to(&state.documents_topic)
            .key(key.as_str())
            .payload(&payload);
        match state.producer.send(record, Duration::from_secs(10)).await {
            Ok(d) => offsets.push(json!({"partition": d.partition, "offset": d.offset})),
            Err((e, _)) => {
                return error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "bus_unavailable",
                    &format!(
                        "{e}; {} of {} events were accepted",
                        offsets.len(),
                        events.len()
                    ),
                    None,
                )
            }
        }
    }
    HttpResponse::Accepted()
        .json(json!({"accepted": events.len(), "topic": state.documents_topic, "offsets": offsets}))
}

async fn stats(state: web::Data<HttpState>, path: web::Path<String>) -> HttpResponse {
    let index = match parse_index(&path) {
        Ok(i) => i,
        Err(response) => return *response,
    };
    match state.engine.stats(&index).await {
        Ok(s) => HttpResponse::Ok().json(s),
        Err(e) => engine_error(&e),
    }
}

/// Alive; reports the ingest pipeline's supervised restarts.
async fn healthz(state: web::Data<HttpState>) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "status": "ok",
        "pipeline": {
            "restarts": state.pipeline.restarts(),
            "last_failure": state.pipeline.last_failure(),
        },
        "embedding": state.engine.embedding_report(),
    }))
}

async fn readyz(state: web::Data<HttpState>) -> HttpResponse {
    if state.ready.load(Ordering::SeqCst) {
        HttpResponse::Ok().json(json!({"status": "ready"}))
    } else {
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "the pipeline is starting",
            None,
        )
    }
}

async fn not_found() -> HttpResponse {
    error(StatusCode::NOT_FOUND, "not_found", "no such endpoint", None)
}

/// Binds and starts the server on the current tokio runtime; returns the bound address and
/// a handle for graceful shutdown.
pub fn start(state: HttpState, bind: &str) -> std::io::Result<(SocketAddr, ServerHandle)> {
    let state = web::Data::new(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/v1/retrieve", web::post().to(retrieve))
            .route("/v1/rag/query", web::post().to(rag_query))
            .route("/v1/indexes/{index}/rag/query", web::post().to(rag_query))
            .route("/v1/indexes/{index}/query", web::post().to(index_query))
            .route(
                "/v1/indexes/{index}/settings",
                web::put().to(index_settings),
            )
            .route("/v1/indexes/{index}/hydrate", web::post().to(index_hydrate))
            .route("/v1/retrievers/{name}/retrieve", web::post().to(retriever))
            .route("/v1/ai/rag/query/", web::post().to(ai_rag_query))
            .route("/v1/ai/rag/query", web::post().to(ai_rag_query))
            .route(
                "/v1/indexes/{index}/ai/rag/query",
                web::post().to(ai_rag_query),
            )
            .route("/v1/indexes/{index}/documents", web::post().to(ingest))
            .route("/v1/indexes/{index}/stats", web::get().to(stats))
            .route("/healthz", web::get().to(healthz))
            .route("/readyz", web::get().to(readyz))
            .default_service(web::to(not_found))
    })
    .workers(2)
    .disable_signals()
    .bind(bind)?;
    let addr = server.addrs()[0];
    let running = server.run();
    let handle = running.handle();
    tokio::spawn(running);
    Ok((addr, handle))
}
