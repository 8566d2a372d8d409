//! HTTP next to the bus (actix-web):
//!
//! - `POST /v1/retrieve`: contract 000 request → response;
//! - `POST /v1/indexes/{index}/documents`: `{"documents": [...], "deletes": [ids]}`, produced
//!   to the documents topic, so HTTP ingestion runs through the same exactly-once pipeline;
//!   answers 202 with the Kafka offsets;
//! - `DELETE /v1/indexes/{index}/documents/{id}`: a delete event, the same way (202);
//! - `POST /v1/indexes/{index}/rebuild`, `GET /v1/indexes/{index}/stats`,
//!   `GET /v1/indexes/{index}/status` (versions and indexing lag);
//! - the contract routes (001–004), `GET /openapi.json`, `GET /healthz`, `GET /readyz`;
//! - the inspector page, `GET /ui` (`ui`): static files that call the routes above;
//! - the API reference, `GET /docs` (`api_docs`): Swagger UI over `/openapi.json`.
//!
//! With `[[auth.tokens]]` configured every `/v1` route needs `Authorization: Bearer <token>`
//! (401 without a valid one) and a token allowed the index and scope (403 otherwise, whether
//! or not the index exists). Errors are `{"error": {"code", "message", "field"?}}`; bodies
//! are size-limited.

// Helpers return the error response to send; it ends the request at once, so boxing it would
// buy nothing.
#![allow(clippy::result_large_err)]

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use futures::StreamExt;
use rdkafka::message::OwnedHeaders;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::Value;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub mod api_docs;
pub mod json_schema;
pub mod openapi;
pub(crate) mod probes;
mod static_files;
pub mod ui;

use crate::auth::{AuthError, Caller, Scope};
use crate::config::KafkaConfig;
use crate::contracts::wire::error::ErrorBody;
use crate::contracts::wire::index_admin::{
    EventOffset, IndexDeleted, IndexStatus, IndexingLag, IngestAccepted, RebuildResponse,
};
use crate::contracts::{self, Contract, Reply, Target};
use crate::engine::{Engine, EngineError};
use crate::index::DocumentOp;
use crate::model::IndexName;
use crate::pipeline::events::DocumentEvent;
use crate::pipeline::supervisor::RestartReport;
use crate::telemetry::propagation;

pub struct HttpState {
    pub engine: Arc<Engine>,
    pub producer: FutureProducer,
    pub documents_topic: String,
    pub ready: Arc<AtomicBool>,
    pub pipeline: Arc<RestartReport>,
    pub max_body_bytes: usize,
    /// For `status`: where to ask Kafka about the documents topic and the pipeline's group.
    pub kafka: KafkaConfig,
    pub bootstrap: String,
    /// The problems the daemon's parts report (see `health`).
    pub health: Arc<crate::health::Health>,
}

fn error(status: StatusCode, code: &str, message: &str, field: Option<&str>) -> HttpResponse {
    HttpResponse::build(status).json(ErrorBody::new(code, message).maybe_field(field))
}

/// A request field that breaks a rule: 400 `invalid_request` naming the field.
fn invalid(e: &crate::model::ValidationError) -> HttpResponse {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        &e.rule,
        Some(&e.field),
    )
}

/// An engine error in the structured shape every contract shares (one renderer, one
/// code → status table: `contracts::error_reply`).
fn engine_error(e: &EngineError) -> HttpResponse {
    respond(contracts::error_reply(e))
}

/// A refusal (`contracts::auth_reply`).
fn auth_error(e: &AuthError) -> HttpResponse {
    respond(contracts::auth_reply(e))
}

/// The caller a request's `Authorization` header stands for.
fn authenticate(state: &HttpState, req: &HttpRequest) -> Result<Caller, AuthError> {
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    state.engine.auth().authenticate(header)
}

/// The caller, or the 401 to send.
fn caller(state: &HttpState, req: &HttpRequest) -> Result<Caller, HttpResponse> {
    authenticate(state, req).map_err(|e| auth_error(&e))
}

/// The index a route names, once the caller is known to be allowed `scope` on it.
fn authorized_index(
    state: &HttpState,
    req: &HttpRequest,
    name: &str,
    scope: Scope,
) -> Result<IndexName, HttpResponse> {
    let caller = caller(state, req)?;
    let index = parse_index(name).map_err(|r| *r)?;
    caller
        .authorize(&index, scope)
        .map_err(|e| auth_error(&e))?;
    Ok(index)
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

/// Bodies are JSON: a request that says its body is something else (`text/plain`, a form)
/// gets a 415 instead of having it read as JSON. No `Content-Type` at all is taken as JSON.
fn json_body(req: &HttpRequest) -> Result<(), HttpResponse> {
    let Some(value) = req.headers().get(actix_web::http::header::CONTENT_TYPE) else {
        return Ok(());
    };
    let mime = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json")) {
        return Ok(());
    }
    Err(error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        &format!(
            "the body must be JSON (Content-Type: application/json), not {mime:?}; with curl, add -H 'content-type: application/json'"
        ),
        Some("content-type"),
    ))
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

async fn retrieve(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    contract_route(state, req, Contract::C000, Target::default(), payload).await
}

/// A contract's reply as HTTP: its status, its body, and the version it was answered from in
/// `x-ragstream-index-version` (contracts whose body has no place for it need the header).
fn respond(reply: Reply) -> HttpResponse {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    if let Some(v) = reply.index_version {
        response.insert_header(("x-ragstream-index-version", v.to_string()));
    }
    if status == StatusCode::UNAUTHORIZED {
        // RFC 6750: a 401 names the scheme to use.
        response.insert_header((actix_web::http::header::WWW_AUTHENTICATE, "Bearer"));
    }
    response.json(reply.body)
}

/// The index a route names (the caller allowed `scope` on it) and its JSON body, or the
/// error response to send.
async fn index_and_json(
    state: &HttpState,
    req: &HttpRequest,
    path: &str,
    scope: Scope,
    payload: web::Payload,
) -> Result<(IndexName, Value), HttpResponse> {
    let index = authorized_index(state, req, path, scope)?;
    json_body(req)?;
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
    req: HttpRequest,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    indexed_contract_route(state, req, Contract::C001, path, payload).await
}

/// Contract 002 query.
async fn index_query(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    indexed_contract_route(state, req, Contract::C002, Some(path), payload).await
}

/// Explain: why targets were or were not retrieved (`contracts::explain`).
async fn index_explain(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    indexed_contract_route(state, req, Contract::Explain, Some(path), payload).await
}

/// Diff: one query at two versions (`contracts::diff`).
async fn index_diff(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    indexed_contract_route(state, req, Contract::Diff, Some(path), payload).await
}

/// Contract 002 hydration.
async fn index_hydrate(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    match index_and_json(&state, &req, &path, Scope::Read, payload).await {
        Ok((index, v)) => respond(contracts::hydrate::hydrate(&state.engine, &index, &v).await),
        Err(response) => response,
    }
}

/// Contract 002 index settings (query defaults).
async fn index_settings(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    match index_and_json(&state, &req, &path, Scope::Admin, payload).await {
        Ok((index, v)) => {
            respond(contracts::c002_retrieval_api::settings(&state.engine, &index, &v).await)
        }
        Err(response) => response,
    }
}

/// Contract 004: a named retriever.
async fn retriever(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let target = Target {
        index: None,
        retriever: Some(path.into_inner()),
    };
    contract_route(state, req, Contract::C004, target, payload).await
}

/// Contract 003 (`RetrieveInput` → `RetrieveOutput`).
async fn ai_rag_query(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    indexed_contract_route(state, req, Contract::C003, path, payload).await
}

/// A contract route whose path may name the index.
async fn indexed_contract_route(
    state: web::Data<HttpState>,
    req: HttpRequest,
    contract: Contract,
    path: Option<web::Path<String>>,
    payload: web::Payload,
) -> HttpResponse {
    // Who asks comes first: without a valid token even a malformed index name is a 401.
    if let Err(response) = caller(&state, &req) {
        return response;
    }
    let index = match path.map(|p| parse_index(&p)).transpose() {
        Ok(i) => i,
        Err(response) => return *response,
    };
    contract_route(state, req, contract, Target::index(index), payload).await
}

/// Authenticates, reads the body and lets the contract layer (which checks the caller
/// against every index the request reads) answer.
async fn contract_route(
    state: web::Data<HttpState>,
    req: HttpRequest,
    contract: Contract,
    target: Target,
    payload: web::Payload,
) -> HttpResponse {
    let started = std::time::Instant::now();
    let span = request_span(&req, "query");
    span.record("contract", contract.label());
    let reply = async {
        match authenticate(&state, &req) {
            Err(e) => Ok(contracts::auth_reply(&e)),
            Ok(caller) => match json_body(&req) {
                Err(response) => Err(response),
                Ok(()) => match read_body(payload, state.max_body_bytes).await {
                    Ok(body) => {
                        Ok(
                            contracts::answer(&state.engine, &caller, contract, target, &body)
                                .await,
                        )
                    }
                    Err(response) => Err(response),
                },
            },
        }
    }
    .instrument(span)
    .await;
    let reply = match reply {
        Ok(reply) => reply,
        Err(response) => return response,
    };
    contracts::observe(contract, "http", started, &reply);
    respond(reply)
}

/// The span of one HTTP request, continuing the caller's trace (W3C `traceparent`).
fn request_span(req: &HttpRequest, name: &'static str) -> tracing::Span {
    let span = tracing::info_span!(
        "http",
        otel.name = name,
        otel.kind = "server",
        http.request.method = %req.method(),
        url.path = req.path(),
        transport = "http",
        contract = tracing::field::Empty,
        trace_id = tracing::field::Empty,
        span_id = tracing::field::Empty,
    );
    let parent = propagation::extract(|name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    });
    propagation::follow(&span, &parent);
    span
}

async fn ingest(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (index, value) = match index_and_json(&state, &req, &path, Scope::Write, payload).await {
        Ok(ok) => ok,
        Err(response) => return response,
    };
    let limits = state.engine.config().limits.document();
    let events: Vec<DocumentEvent> = match contracts::ingest_request::parse_request(&value, &limits)
    {
        Ok(ops) => ops
            .into_iter()
            .map(|op| DocumentEvent {
                index: index.clone(),
                op,
            })
            .collect(),
        Err(e) => return invalid(&e),
    };
    produce(&state, &req, &events).await
}

/// Contract 002's `DELETE /v1/indexes/{index}/documents/{id}`: a delete event through the
/// pipeline, like the `deletes` of the ingest route.
async fn delete_document(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let (index, id) = path.into_inner();
    let index = match authorized_index(&state, &req, &index, Scope::Write) {
        Ok(i) => i,
        Err(response) => return response,
    };
    if let Err(e) =
        crate::model::validate_document_id(&id, &state.engine.config().limits.document())
    {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &e.rule,
            Some("id"),
        );
    }
    let event = DocumentEvent {
        index,
        op: DocumentOp::Delete { document_id: id },
    };
    produce(&state, &req, std::slice::from_ref(&event)).await
}

/// Produces document events to the documents topic in order; 202 with their offsets once
/// the broker has acknowledged every one (503 `bus_unavailable` if any was refused). The
/// request's trace goes with each event (`traceparent` header) into the pipeline.
/// The caller's `Authorization` header goes with each event: the pipeline checks every
/// event's token, whichever way it arrived (HTTP or straight onto the topic).
async fn produce(state: &HttpState, req: &HttpRequest, events: &[DocumentEvent]) -> HttpResponse {
    let span = request_span(req, "ingest");
    let authorization = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .filter(|_| state.engine.auth().enabled());
    produce_events(state, events, authorization)
        .instrument(span)
        .await
}

async fn produce_events(
    state: &HttpState,
    events: &[DocumentEvent],
    authorization: Option<&str>,
) -> HttpResponse {
    let records: Vec<(String, String, tracing::Span)> = events
        .iter()
        .map(|event| {
            let span = tracing::info_span!(
                "produce",
                otel.kind = "producer",
                messaging.system = "kafka",
                messaging.destination.name = %state.documents_topic,
                document_id = event.op.document_id(),
            );
            (event.key(), event.to_json().to_string(), span)
        })
        .collect();
    // Every event is handed to the producer before any acknowledgement is awaited: one
    // round of the broker's acknowledgements for the request, not one per event. Each send
    // is queued when first polled, in the request's order, and the idempotent producer
    // keeps that order through retries.
    let sends = records.iter().map(|(key, payload, span)| {
        let mut headers = propagation::into_kafka(&span.context(), OwnedHeaders::new());
        if let Some(value) = authorization {
            headers = headers.insert(rdkafka::message::Header {
                key: "authorization",
                value: Some(value),
            });
        }
        let record = FutureRecord::to(&state.documents_topic)
            .key(key.as_str())
            .payload(payload)
            .headers(headers);
        state
            .producer
            .send(record, Duration::from_secs(10))
            .instrument(span.clone())
    });
    let sent = futures::future::join_all(sends).await;
    let mut offsets = Vec::with_capacity(sent.len());
    let mut failure = None;
    for result in sent {
        match result {
            Ok(d) => offsets.push(EventOffset {
                partition: d.partition,
                offset: d.offset,
            }),
            Err((e, _)) => failure = failure.or(Some(e)),
        }
    }
    if let Some(e) = failure {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "bus_unavailable",
            &format!(
                "{e}; {} of {} events were accepted",
                offsets.len(),
                events.len()
            ),
            None,
        );
    }
    HttpResponse::Accepted().json(IngestAccepted {
        accepted: events.len(),
        topic: state.documents_topic.clone(),
        offsets,
    })
}

async fn stats(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let index = match authorized_index(&state, &req, &path, Scope::Read) {
        Ok(i) => i,
        Err(response) => return response,
    };
    match state.engine.stats(&index).await {
        Ok(s) => HttpResponse::Ok().json(s),
        Err(e) => engine_error(&e),
    }
}

/// The indexes the caller may read, each with its stats ([`crate::contracts::index_list`]).
async fn list_indexes(state: web::Data<HttpState>, req: HttpRequest) -> HttpResponse {
    match caller(&state, &req) {
        Ok(caller) => {
            HttpResponse::Ok().json(crate::contracts::index_list(&state.engine, &caller).await)
        }
        Err(response) => response,
    }
}

/// Contract 002's rebuild: the keyword index re-derived from the Lance rows.
async fn rebuild(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let index = match authorized_index(&state, &req, &path, Scope::Admin) {
        Ok(i) => i,
        Err(response) => return response,
    };
    match state.engine.rebuild(&index).await {
        Ok((version, rows)) => HttpResponse::Ok().json(RebuildResponse {
            index,
            index_version: version,
            rebuilt_chunks: rows,
        }),
        Err(e) => engine_error(&e),
    }
}

/// Deletes an index (admin scope). Another tenant's index answers as an unknown one would.
async fn delete_index(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let index = match authorized_index(&state, &req, &path, Scope::Admin) {
        Ok(i) => i,
        Err(response) => return response,
    };
    match state.engine.delete_index(&index).await {
        Ok(version) => HttpResponse::Ok().json(IndexDeleted {
            index,
            index_version: version,
            deleted: true,
        }),
        Err(e) => engine_error(&e),
    }
}

/// Contract 002's indexing status: the newest version, when it was committed, and how far
/// the index trails the documents topic (per partition: the topic's end, the pipeline
/// group's committed offset, this index's own checkpoint, and the messages still to index).
async fn status(
    state: web::Data<HttpState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let index = match authorized_index(&state, &req, &path, Scope::Read) {
        Ok(i) => i,
        Err(response) => return response,
    };
    let handle = match state.engine.index(&index).await {
        Ok(h) => h,
        Err(e) => return engine_error(&e),
    };
    let checkpoint = match handle.reader().kafka_checkpoint().await {
        Ok(c) => c,
        Err(e) => return engine_error(&e.into()),
    };
    let lag = match documents_positions(&state, Duration::from_secs(5)).await {
        Ok(positions) => {
            let partitions =
                crate::kafka::indexing_lag(&state.documents_topic, &positions, &checkpoint);
            IndexingLag::Known {
                messages: partitions.iter().map(|p| p.lag).sum(),
                partitions,
            }
        }
        Err(error) => IndexingLag::Unknown { error },
    };
    HttpResponse::Ok().json(IndexStatus {
        index_version: handle.latest_version(),
        last_commit_at: handle.reader().last_commit_at(),
        index,
        indexing_lag: lag,
    })
}

/// Where the pipeline group stands on each partition of the documents topic (read from
/// Kafka on the blocking pool), or why it could not be read.
async fn documents_positions(
    state: &HttpState,
    timeout: Duration,
) -> Result<Vec<crate::kafka::PartitionPosition>, String> {
    let (kafka, bootstrap) = (state.kafka.clone(), state.bootstrap.clone());
    tokio::task::spawn_blocking(move || {
        crate::kafka::positions(
            &kafka,
            &bootstrap,
            &kafka.documents_topic,
            &kafka.group_id,
            timeout,
        )
    })
    .await
    .map_err(|e| format!("lag lookup failed: {e}"))?
    .map_err(|e| format!("Kafka did not answer: {e}"))
}

/// Prometheus metrics. The figures name every tenant's indexes, so with authentication on
/// a scraper needs a token with the `metrics` scope (Prometheus: `authorization` in the
/// scrape config). Consumer lag is read from Kafka at scrape time, as lag exporters do; if
/// Kafka does not answer, the last values stay.
async fn metrics(state: web::Data<HttpState>, req: HttpRequest) -> HttpResponse {
    match caller(&state, &req) {
        Ok(c) if c.has_scope(Scope::Metrics) => {}
        Ok(_) => {
            return auth_error(&AuthError::Forbidden {
                verb: Scope::Metrics.verb(),
                index: "*".into(),
            })
        }
        Err(response) => return response,
    }
    let Some(m) = crate::telemetry::metrics() else {
        return error(
            StatusCode::NOT_FOUND,
            "metrics_disabled",
            "metrics are off (telemetry.metrics = false)",
            None,
        );
    };
    if let Ok(positions) = documents_positions(&state, Duration::from_secs(2)).await {
        let lag = &m.consumer_lag_messages;
        for p in positions {
            let consumed = p.committed_offset.unwrap_or(p.low_offset);
            lag.with_label_values(&[state.documents_topic.as_str(), &p.partition.to_string()])
                .set((p.end_offset - consumed).max(0));
        }
    }
    HttpResponse::Ok()
        .content_type(crate::telemetry::metrics::CONTENT_TYPE)
        .body(m.render())
}

/// The OpenAPI document of every route.
async fn openapi() -> HttpResponse {
    HttpResponse::Ok().json(crate::http::openapi::document(env!("CARGO_PKG_VERSION")))
}

async fn not_found() -> HttpResponse {
    error(StatusCode::NOT_FOUND, "not_found", "no such endpoint", None)
}

/// The handler of a documented route, by its [`Operation`](crate::http::openapi::Operation).
fn route(r: &crate::http::openapi::Route) -> actix_web::Route {
    let method = match r.method {
        "GET" => web::get(),
        "POST" => web::post(),
        "PUT" => web::put(),
        "DELETE" => web::delete(),
        other => {
            web::method(actix_web::http::Method::from_bytes(other.as_bytes()).unwrap_or_default())
        }
    };
    use crate::http::openapi::Operation as O;
    match r.operation {
        O::Retrieve => method.to(retrieve),
        O::RagQuery | O::IndexRagQuery => method.to(rag_query),
        O::IndexQuery => method.to(index_query),
        O::ExplainQuery => method.to(index_explain),
        O::DiffQuery => method.to(index_diff),
        O::Hydrate => method.to(index_hydrate),
        O::PutIndexSettings => method.to(index_settings),
        O::IngestDocuments => method.to(ingest),
        O::DeleteDocument => method.to(delete_document),
        O::RebuildIndex => method.to(rebuild),
        O::DeleteIndex => method.to(delete_index),
        O::IndexStats => method.to(stats),
        O::ListIndexes => method.to(list_indexes),
        O::IndexStatus => method.to(status),
        O::AiRagQuery | O::AiRagQueryNoSlash | O::IndexAiRagQuery => method.to(ai_rag_query),
        O::RetrieverRetrieve => method.to(retriever),
        O::OpenApi => method.to(openapi),
        O::Healthz => method.to(probes::healthz),
        O::Readyz => method.to(probes::readyz),
        O::Metrics => method.to(metrics),
    }
}

/// Binds and starts the server on the current tokio runtime; returns the bound address and
/// a handle for graceful shutdown.
pub fn start(state: HttpState, bind: &str) -> std::io::Result<(SocketAddr, ServerHandle)> {
    let state = web::Data::new(state);
    let server = HttpServer::new(move || {
        // The routes are the OpenAPI route table: what is served is what is documented.
        let app = App::new()
            .app_data(state.clone())
            .configure(crate::http::ui::routes)
            .configure(crate::http::api_docs::routes);
        crate::http::openapi::ROUTES
            .iter()
            .fold(app, |app, r| app.route(r.path, route(r)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn every_documented_route_is_served_at_its_path() {
        for r in crate::http::openapi::ROUTES {
            let app = actix_web::test::init_service(
                App::new()
                    .route(r.path, route(r))
                    .default_service(web::to(not_found)),
            )
            .await;
            let path = r
                .path
                .replace("{index}", "kb")
                .replace("{name}", "n")
                .replace("{id}", "d");
            let req = actix_web::test::TestRequest::default()
                .method(actix_web::http::Method::from_bytes(r.method.as_bytes()).unwrap())
                .uri(&path)
                .to_request();
            // Handlers need the state; without it actix answers 500, never 404.
            let res = actix_web::test::call_service(&app, req).await;
            assert_ne!(
                res.status(),
                StatusCode::NOT_FOUND,
                "{} {}",
                r.method,
                r.path
            );
        }
    }
}
