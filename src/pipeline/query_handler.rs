//! QueryHandler: answers retrieval requests from the queries topic. Headers `reply-to`
//! (topic) and `correlation-id` are required; `contract` picks the contract the body speaks
//! (`000` when absent, `001` to `004`), `index` the index for contracts whose body names none
//! (required for 002), `retriever` the named retriever of 004, and `authorization`
//! (`Bearer <token>`) the caller when authentication is on.
//! A `reply-to` must be a legal topic name allowed by `kafka.reply_topics`; a missing one is
//! created only for a caller who authenticates, within `kafka.reply_topics_create_max`
//! (`kafka::reply_topics`); otherwise the request is dead-lettered `reply_topic_not_allowed`.
//! The reply (the response or a structured error) goes to the reply topic with the same
//! `correlation-id`, and `status` (the HTTP status the answer maps to) and
//! `index-version` headers. Handlers of all daemons form one
//! consumer group, so they share the load; queries run concurrently and never wait for
//! ingestion, which runs on its own thread. A group's first start skips the topic's history
//! (see [`super::query_start`]).

use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::StreamConsumer;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::Message;
use tokio::sync::{watch, Semaphore};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::contracts::wire::error::ErrorBody;
use crate::contracts::{self, Contract, Reply};
use crate::engine::Engine;
use crate::kafka::dead_letters::{DeadLetters, Origin};
use crate::kafka::header;
use crate::kafka::reply_topics::ReplyTopics;
use crate::model::IndexName;
use crate::telemetry::propagation;

/// Queries answered at the same time.
const CONCURRENCY: usize = 8;

pub async fn run(
    engine: Arc<Engine>,
    consumer: Arc<StreamConsumer>,
    producer: FutureProducer,
    dead_letters: DeadLetters,
    reply_topics: Arc<ReplyTopics>,
    mut shutdown: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    loop {
        let msg = tokio::select! {
            _ = shutdown.changed() => break,
            m = consumer.recv() => match m {
                Ok(m) => m.detach(),
                Err(e) => {
                    tracing::warn!(error = %e, "query receive error");
                    continue;
                }
            },
        };
        let origin = Origin::of(&msg);
        let (Some(reply_to), Some(correlation_id)) =
            (header(&msg, "reply-to"), header(&msg, "correlation-id"))
        else {
            refuse(
                &dead_letters,
                &origin,
                &msg,
                super::events::later_codes::MISSING_REPLY_HEADERS,
                "query requests need the headers reply-to and correlation-id",
            )
            .await;
            continue;
        };
        if !crate::kafka::reply_topic_allowed(&engine.config().kafka, &reply_to) {
            let message = format!(
                "reply-to {reply_to:?} does not match kafka.reply_topics ({})",
                engine.config().kafka.reply_topics
            );
            refuse(
                &dead_letters,
                &origin,
                &msg,
                super::events::later_codes::REPLY_TOPIC_NOT_ALLOWED,
                &message,
            )
            .await;
            continue;
        }
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore open");
        let (engine, producer) = (engine.clone(), producer.clone());
        let (dead_letters, reply_topics) = (dead_letters.clone(), reply_topics.clone());
        let headers = RequestHeaders {
            contract: header(&msg, "contract"),
            index: header(&msg, "index"),
            retriever: header(&msg, "retriever"),
            authorization: header(&msg, "authorization"),
            deadline: header(&msg, "deadline"),
        };
        // The request's trace continues here and into the reply.
        let span = tracing::info_span!(
            "query",
            otel.kind = "consumer",
            transport = "bus",
            contract = headers.contract.as_deref().unwrap_or("000"),
            messaging.system = "kafka",
            messaging.destination.name = %origin.topic,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        );
        propagation::follow(&span, &propagation::from_kafka(msg.headers()));
        let task = async move {
            let _permit = permit;
            // A missing reply topic is made only for a caller who authenticates, and only so
            // many: checked before any work is done for the request.
            let known_caller = engine
                .auth()
                .authenticate(headers.authorization.as_deref())
                .is_ok();
            if let Err(refused) = reply_topics.ready(&reply_to, known_caller).await {
                refuse(
                    &dead_letters,
                    &origin,
                    &msg,
                    super::events::later_codes::REPLY_TOPIC_NOT_ALLOWED,
                    &refused.to_string(),
                )
                .await;
                return;
            }
            let reply = answer(&engine, &headers, msg.payload()).await;
            let body = serde_json::to_vec(&reply.body).expect("json");
            let status = reply.status.to_string();
            let version = reply.index_version.map(|v| v.to_string());
            let mut headers = OwnedHeaders::new()
                .insert(Header {
                    key: "correlation-id",
                    value: Some(correlation_id.as_str()),
                })
                .insert(Header {
                    key: "content-type",
                    value: Some("application/json"),
                })
                .insert(Header {
                    key: "status",
                    value: Some(status.as_str()),
                });
            if let Some(v) = &version {
                headers = headers.insert(Header {
                    key: "index-version",
                    value: Some(v.as_str()),
                });
            }
            let send = tracing::info_span!("reply", otel.kind = "producer", %reply_to);
            let headers = propagation::into_kafka(&send.context(), headers);
            let record = FutureRecord::<str, [u8]>::to(&reply_to)
                .key(correlation_id.as_str())
                .payload(&body)
                .headers(headers);
            let sent = producer
                .send(record, Duration::from_secs(10))
                .instrument(send)
                .await;
            if let Err((e, _)) = sent {
                tracing::error!(error = %e, %reply_to, "sending a query reply failed");
            }
        };
        tokio::spawn(task.instrument(span));
    }
}

/// The headers that address a bus request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestHeaders {
    pub contract: Option<String>,
    pub index: Option<String>,
    pub retriever: Option<String>,
    pub authorization: Option<String>,
    /// When the caller stops waiting: Unix time in milliseconds, or an RFC 3339 timestamp.
    /// A request read after it is answered `deadline_exceeded` (504) without being searched.
    pub deadline: Option<String>,
}

/// Dead-letters a request the handler will not answer, with the code and reason the caller
/// finds on the dead-letter topic.
async fn refuse(
    dead_letters: &DeadLetters,
    origin: &Origin,
    msg: &rdkafka::message::OwnedMessage,
    code: &str,
    reason: &str,
) {
    dead_letters
        .send(origin, msg.key(), msg.payload(), code, reason)
        .await;
}

/// Milliseconds since the Unix epoch of a `deadline` header; `None` if it is neither an
/// integer nor an RFC 3339 timestamp.
fn deadline_ms(raw: &str) -> Option<i128> {
    let raw = raw.trim();
    if let Ok(ms) = raw.parse::<i64>() {
        return Some(ms.into());
    }
    let t =
        time::OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339).ok()?;
    Some(t.unix_timestamp_nanos() / 1_000_000)
}

/// Answers one bus request: the contract the `contract` header names, on the index the
/// `index` header names (if any), for the caller its `authorization` header stands for. A
/// bad header is a structured error reply, like a bad body.
pub async fn answer(engine: &Engine, headers: &RequestHeaders, body: Option<&[u8]>) -> Reply {
    let started = std::time::Instant::now();
    let reply = reply_to(engine, headers, body).await;
    // A request naming no known contract is counted nowhere: there is no contract to count.
    if let Some(contract) = Contract::from_header(headers.contract.as_deref()) {
        contracts::observe(contract, "bus", started, &reply);
    }
    reply
}

async fn reply_to(engine: &Engine, headers: &RequestHeaders, body: Option<&[u8]>) -> Reply {
    if let Some(raw) = headers.deadline.as_deref() {
        let now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
        match deadline_ms(raw) {
            None => {
                return Reply {
                    status: 400,
                    body: ErrorBody::new(
                        "invalid_request",
                        "deadline must be Unix time in milliseconds or an RFC 3339 timestamp",
                    )
                    .field("headers.deadline")
                    .to_value(),
                    index_version: None,
                }
            }
            Some(deadline) if deadline <= now => {
                return Reply {
                    status: 504,
                    body: ErrorBody::new(
                        "deadline_exceeded",
                        format!("the request's deadline passed {} ms before it was read; it was not searched", now - deadline),
                    )
                    .field("headers.deadline")
                    .to_value(),
                    index_version: None,
                }
            }
            Some(_) => {}
        }
    }
    let caller = match engine.auth().authenticate(headers.authorization.as_deref()) {
        Ok(c) => c,
        Err(e) => return contracts::auth_reply(&e),
    };
    let contract = headers.contract.as_deref();
    let bad = |code: &str, message: String, field: &str| Reply {
        status: 400,
        body: ErrorBody::new(code, message).field(field).to_value(),
        index_version: None,
    };
    let Some(contract) = Contract::from_header(contract) else {
        return bad(
            "unknown_contract",
            format!(
                "contract {:?} is not one of {}",
                contract.unwrap_or_default(),
                Contract::ALL.map(Contract::label).join(", ")
            ),
            "headers.contract",
        );
    };
    let index = match headers.index.as_deref().map(IndexName::parse).transpose() {
        Ok(i) => i,
        Err(e) => return bad("invalid_request", e.to_string(), "headers.index"),
    };
    let target = contracts::Target {
        index,
        retriever: headers.retriever.clone(),
    };
    contracts::answer(engine, &caller, contract, target, body.unwrap_or_default()).await
}
