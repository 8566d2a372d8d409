//! QueryHandler: answers contract 000 requests from the queries topic. Headers `reply-to`
//! (topic) and `correlation-id` are required; the reply (the response or a structured error)
//! goes to the reply topic with the same `correlation-id`. Handlers of all daemons form one
//! consumer group, so they share the load; queries run concurrently and never wait for
//! ingestion, which runs on its own thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::StreamConsumer;
use rdkafka::message::{Header, Headers, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::Message;
use serde_json::Value;
use tokio::sync::{watch, Semaphore};

use crate::contracts::c000_retrieval_calls::{
    parse_request, render_error, render_response, RequestLimits,
};
use crate::engine::{Engine, EngineError};
use crate::model::ValidationError;
use crate::transport::dead_letters::{DeadLetters, Origin};

/// Queries answered at the same time.
const CONCURRENCY: usize = 8;

/// Answers one request body: the contract 000 response, or the structured error.
pub async fn answer(engine: &Engine, body: &[u8]) -> Value {
    let limits = RequestLimits {
        max_top_k: engine.config().limits.max_top_k,
        max_query_bytes: engine.config().limits.max_query_bytes,
    };
    let started = Instant::now();
    let parsed = serde_json::from_slice::<Value>(body)
        .map_err(|e| ValidationError::new("body", format!("is not JSON: {e}")))
        .and_then(|v| parse_request(&v, limits))
        .map_err(EngineError::from);
    let outcome = match parsed {
        Ok((name, request)) => engine
            .search(&name, &request)
            .await
            .map(|result| (name, request, result)),
        Err(e) => Err(e),
    };
    match outcome {
        Ok((name, request, result)) => render_response(
            &name,
            &request,
            &result,
            &uuid::Uuid::new_v4().to_string(),
            started.elapsed().as_secs_f64() * 1000.0,
        ),
        Err(e) => render_error(&e),
    }
}

fn header(msg: &impl Message, name: &str) -> Option<String> {
    let headers = msg.headers()?;
    headers
        .iter()
        .find(|h| h.key == name)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
        .map(str::to_string)
}

pub async fn run(
    engine: Arc<Engine>,
    consumer: Arc<StreamConsumer>,
    producer: FutureProducer,
    dead_letters: DeadLetters,
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
        let origin = Origin {
            topic: msg.topic().to_string(),
            partition: msg.partition(),
            offset: msg.offset(),
        };
        let (Some(reply_to), Some(correlation_id)) =
            (header(&msg, "reply-to"), header(&msg, "correlation-id"))
        else {
            dead_letters
                .send(
                    &origin,
                    msg.key(),
                    msg.payload(),
                    "missing_reply_headers",
                    "query requests need the headers reply-to and correlation-id",
                )
                .await;
            continue;
        };
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore open");
        let (engine, producer) = (engine.clone(), producer.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let reply = answer(&engine, msg.payload().unwrap_or_default()).await;
            let body = serde_json::to_vec(&reply).expect("json");
            let headers = OwnedHeaders::new()
                .insert(Header {
                    key: "correlation-id",
                    value: Some(correlation_id.as_str()),
                })
                .insert(Header {
                    key: "content-type",
                    value: Some("application/json"),
                });
            let record = FutureRecord::<str, [u8]>::to(&reply_to)
                .key(correlation_id.as_str())
                .payload(&body)
                .headers(headers);
            if let Err((e, _)) = producer.send(record, Duration::from_secs(10)).await {
                tracing::error!(error = %e, %reply_to, "sending a query reply failed");
            }
        });
    }
}
