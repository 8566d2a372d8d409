//! The dead-letter topic: poison messages with the error and their origin in headers.

use std::time::Duration;

use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};

/// Where a message came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

#[derive(Clone)]
pub struct DeadLetters {
    producer: FutureProducer,
    topic: String,
}

impl DeadLetters {
    pub fn new(producer: FutureProducer, topic: String) -> Self {
        DeadLetters { producer, topic }
    }

    /// Dead-letters a valid event a later stage cannot apply (embedder mismatch, embedding or
    /// extraction refused): its key and payload as the producer would have sent them.
    pub async fn send_event(&self, ev: &crate::pipeline::SourcedEvent, code: &str, message: &str) {
        let origin = Origin {
            topic: ev.topic.clone(),
            partition: ev.partition,
            offset: ev.offset,
        };
        let (key, payload) = (ev.event.key(), ev.event.to_json().to_string());
        self.send(
            &origin,
            Some(key.as_bytes()),
            Some(payload.as_bytes()),
            code,
            message,
        )
        .await;
    }

    /// Sends the original key and payload with headers `error.code`, `error.message`,
    /// `source.topic`, `source.partition`, `source.offset`. Retries until the broker takes it:
    /// a poison message is never dropped silently.
    pub async fn send(
        &self,
        origin: &Origin,
        key: Option<&[u8]>,
        payload: Option<&[u8]>,
        code: &str,
        message: &str,
    ) {
        if let Some(m) = crate::telemetry::metrics() {
            m.dead_letters_total.with_label_values(&[code]).inc();
        }
        let partition = origin.partition.to_string();
        let offset = origin.offset.to_string();
        loop {
            let headers = OwnedHeaders::new()
                .insert(Header {
                    key: "error.code",
                    value: Some(code),
                })
                .insert(Header {
                    key: "error.message",
                    value: Some(message),
                })
                .insert(Header {
                    key: "source.topic",
                    value: Some(origin.topic.as_str()),
                })
                .insert(Header {
                    key: "source.partition",
                    value: Some(partition.as_str()),
                })
                .insert(Header {
                    key: "source.offset",
                    value: Some(offset.as_str()),
                });
            let mut record = FutureRecord::<[u8], [u8]>::to(&self.topic).headers(headers);
            if let Some(k) = key {
                record = record.key(k);
            }
            if let Some(p) = payload {
                record = record.payload(p);
            }
            match self.producer.send(record, Duration::from_secs(5)).await {
                Ok(_) => {
                    tracing::warn!(code, %message, topic = %origin.topic, partition = origin.partition,
                        offset = origin.offset, "message sent to the dead-letter topic");
                    return;
                }
                Err((e, _)) => {
                    tracing::error!(error = %e, "dead-letter produce failed; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }
}
