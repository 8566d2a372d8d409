//! Kafka client settings shared by every consumer and producer.

use rdkafka::ClientConfig;

use crate::config::KafkaConfig;

/// Base client settings: bootstrap servers plus the pass-through `[kafka.client]` table
/// (security.protocol, sasl.*, ssl.* …), which librdkafka validates at client creation.
pub fn client_config(kafka: &KafkaConfig, bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    for (k, v) in &kafka.client {
        c.set(k, v);
    }
    c
}

/// The message key of a document event: `INDEX/DOCUMENT_ID`.
pub fn document_key(index: &str, document_id: &str) -> String {
    format!("{index}/{document_id}")
}
