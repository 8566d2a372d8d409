//! The daemon's topics, created through Kafka's admin API when they are missing, so that a
//! cluster with topic auto-creation off works, and so that no topic is made by accident with
//! a broker's default partitions.

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;

use super::client_config;
use crate::config::KafkaConfig;

const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum TopicsError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error("the topics {topics:?} are missing and could not be created ({reason}); create them, or let this client create topics")]
    NotCreated { topics: Vec<String>, reason: String },
}

/// What the daemon reads and writes: documents and queries with `kafka.partitions`
/// partitions, dead letters, replies and version notices with one.
pub fn daemon_topics(kafka: &KafkaConfig) -> Vec<(String, i32)> {
    vec![
        (kafka.documents_topic.clone(), kafka.partitions),
        (kafka.queries_topic.clone(), kafka.partitions),
        (kafka.dlq_topic.clone(), 1),
        (kafka.replies_topic.clone(), 1),
        (kafka.versions_topic.clone(), 1),
    ]
}

/// Creates the topics of `wanted` (name, partitions) that the cluster does not have, with
/// the topic settings `configs`; returns the ones created. A topic that exists is left as it
/// is, whatever its partitions. A topic created by someone else meanwhile counts as there.
/// The replication factor is the broker's default.
pub async fn ensure(
    kafka: &KafkaConfig,
    bootstrap: &str,
    wanted: &[(String, i32)],
    configs: &[(&str, &str)],
) -> Result<Vec<String>, TopicsError> {
    let existing = {
        let (kafka, bootstrap) = (kafka.clone(), bootstrap.to_string());
        tokio::task::spawn_blocking(move || existing_topics(&kafka, &bootstrap))
            .await
            .expect("the metadata lookup does not panic")?
    };
    let missing: Vec<&(String, i32)> = wanted
        .iter()
        .filter(|(name, _)| !existing.contains(name))
        .collect();
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let admin: AdminClient<DefaultClientContext> = client_config(kafka, bootstrap).create()?;
    let new: Vec<NewTopic<'_>> = missing
        .iter()
        .map(|(name, partitions)| {
            configs.iter().fold(
                NewTopic::new(name, *partitions, TopicReplication::Fixed(-1)),
                |topic, (key, value)| topic.set(key, value),
            )
        })
        .collect();
    let options = AdminOptions::new().operation_timeout(Some(TIMEOUT));
    let results =
        admin
            .create_topics(&new, &options)
            .await
            .map_err(|e| TopicsError::NotCreated {
                topics: missing.iter().map(|(n, _)| n.clone()).collect(),
                reason: e.to_string(),
            })?;
    let mut created = Vec::new();
    let mut refused = Vec::new();
    for result in results {
        match result {
            Ok(name) => created.push(name),
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => refused.push((name, code)),
        }
    }
    if !refused.is_empty() {
        return Err(TopicsError::NotCreated {
            reason: refused
                .iter()
                .map(|(n, c)| format!("{n}: {c}"))
                .collect::<Vec<_>>()
                .join("; "),
            topics: refused.into_iter().map(|(n, _)| n).collect(),
        });
    }
    if !created.is_empty() {
        tracing::info!(topics = ?created, "created the missing topics");
    }
    Ok(created)
}

/// The names of the cluster's topics. Blocking.
fn existing_topics(
    kafka: &KafkaConfig,
    bootstrap: &str,
) -> Result<std::collections::HashSet<String>, TopicsError> {
    let consumer: BaseConsumer = client_config(kafka, bootstrap)
        .set("allow.auto.create.topics", "false")
        .create()?;
    let metadata = consumer.fetch_metadata(None, TIMEOUT)?;
    Ok(metadata
        .topics()
        .iter()
        .filter(|t| t.error().is_none())
        .map(|t| t.name().to_string())
        .collect())
}

/// Whether `name` is a legal Kafka topic name: 1 to 249 characters of ASCII letters, digits,
/// `.`, `_` and `-`, and neither `.` nor `..`.
pub fn is_legal_name(name: &str) -> bool {
    (1..=249).contains(&name.len())
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_topic_names_follow_kafkas_rules() {
        assert!(is_legal_name("ragstream.replies.agent-7_x"));
        assert!(is_legal_name(&"a".repeat(249)));
        assert!(!is_legal_name(&"a".repeat(250)));
        assert!(!is_legal_name(""));
        assert!(!is_legal_name("."));
        assert!(!is_legal_name(".."));
        assert!(!is_legal_name("a/b"));
        assert!(!is_legal_name("a b"));
        assert!(!is_legal_name("réponses"));
    }
}
