//! Kafka plumbing below the pipeline: client settings shared by every consumer and producer,
//! message keys and headers, the embedded broker, and the dead-letter topic.

pub mod dead_letter_replay;
pub mod dead_letters;
pub mod embedded_broker;
pub mod reply_topics;
pub mod topics;

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

/// The largest message the daemon's topics and producer take: the largest document event
/// the pipeline accepts (`kafka.max_message_bytes`) with room for a dead letter's headers,
/// and never below Kafka's default of about a megabyte.
pub fn largest_message_bytes(kafka: &KafkaConfig) -> usize {
    (kafka.max_message_bytes + (64 << 10)).clamp(1_048_588, 1_000_000_000)
}

/// A message header's value as text (`None` when absent or not UTF-8).
pub fn header(msg: &impl rdkafka::Message, name: &str) -> Option<String> {
    use rdkafka::message::Headers;
    let headers = msg.headers()?;
    headers
        .iter()
        .find(|h| h.key == name)
        .and_then(|h| h.value)
        .and_then(|v| std::str::from_utf8(v).ok())
        .map(str::to_string)
}

/// Whether a bus query may have its reply written to `topic`: it is a legal topic name, it
/// is `kafka.replies_topic` or matches one of the comma-separated glob patterns of
/// `kafka.reply_topics` (`*` matches any run of characters), and it is none of the daemon's
/// own input topics (documents, queries, dead letters, versions), whatever the patterns say.
pub fn reply_topic_allowed(kafka: &KafkaConfig, topic: &str) -> bool {
    let own = [
        &kafka.documents_topic,
        &kafka.queries_topic,
        &kafka.dlq_topic,
        &kafka.versions_topic,
    ];
    topics::is_legal_name(topic)
        && !own.iter().any(|t| t.as_str() == topic)
        && (topic == kafka.replies_topic
            || kafka
                .reply_topics
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .any(|p| glob_matches(p, topic)))
}

/// `*` in `pattern` matches any run of characters (none included); everything else is literal.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The message key earlier versions gave a document event: `INDEX/DOCUMENT_ID` (still
/// taken; the key now is the index's name).
pub fn document_key(index: &str, document_id: &str) -> String {
    format!("{index}/{document_id}")
}

/// The cluster's id as the brokers report it (KIP-78), or `None` when they do not answer
/// in time. Blocking: call it off the async workers.
pub fn cluster_id(
    kafka: &KafkaConfig,
    bootstrap: &str,
    timeout: std::time::Duration,
) -> Result<Option<String>, rdkafka::error::KafkaError> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = client_config(kafka, bootstrap).create()?;
    Ok(consumer.client().fetch_cluster_id(timeout))
}

/// Where one partition of a topic stands for a consumer group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PartitionPosition {
    pub partition: i32,
    /// The high watermark: the offset the next produced message gets.
    pub end_offset: i64,
    pub low_offset: i64,
    /// The group's committed offset (next to read), if it committed one.
    pub committed_offset: Option<i64>,
}

/// Watermarks and the group's committed offsets of every partition of `topic`. Blocking
/// (librdkafka round trips): call it off the async workers.
pub fn positions(
    kafka: &KafkaConfig,
    bootstrap: &str,
    topic: &str,
    group: &str,
    timeout: std::time::Duration,
) -> Result<Vec<PartitionPosition>, rdkafka::error::KafkaError> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::{Offset, TopicPartitionList};
    // A consumer that never subscribes: it only asks the group coordinator, so it does not
    // join the group or disturb the pipeline's assignment.
    let consumer: BaseConsumer = client_config(kafka, bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()?;
    let metadata = consumer.fetch_metadata(Some(topic), timeout)?;
    let partitions: Vec<i32> = metadata
        .topics()
        .iter()
        .filter(|t| t.name() == topic)
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .collect();
    let mut list = TopicPartitionList::new();
    for p in &partitions {
        list.add_partition(topic, *p);
    }
    let committed = consumer.committed_offsets(list, timeout)?;
    let mut out = Vec::with_capacity(partitions.len());
    for p in partitions {
        let (low, high) = consumer.fetch_watermarks(topic, p, timeout)?;
        let committed_offset = committed
            .find_partition(topic, p)
            .and_then(|e| match e.offset() {
                Offset::Offset(o) => Some(o),
                _ => None,
            });
        out.push(PartitionPosition {
            partition: p,
            end_offset: high,
            low_offset: low,
            committed_offset,
        });
    }
    out.sort_by_key(|p| p.partition);
    Ok(out)
}

/// How far one index trails one partition of the documents topic.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct PartitionLag {
    /// The documents topic.
    pub topic: String,
    /// The partition.
    #[schemars(range(min = 0))]
    pub partition: i32,
    /// The high watermark: the offset the next message gets.
    #[schemars(range(min = 0))]
    pub end_offset: i64,
    /// The pipeline group's committed offset; null if none.
    pub committed_offset: Option<i64>,
    /// The offset this index's checkpoint records (the next one its last commit covers);
    /// null if none.
    pub index_checkpoint: Option<i64>,
    /// Messages still to index: end_offset minus the furthest of committed_offset and
    /// index_checkpoint (the low watermark when neither). The group commits once every index
    /// has a batch, so either may be ahead.
    #[schemars(range(min = 0))]
    pub lag: i64,
}

/// The lag of an index with Kafka `checkpoint` (`"topic:partition"` → next offset) on every
/// partition of `topic`.
pub fn indexing_lag(
    topic: &str,
    positions: &[PartitionPosition],
    checkpoint: &std::collections::HashMap<String, i64>,
) -> Vec<PartitionLag> {
    positions
        .iter()
        .map(|p| {
            let indexed = checkpoint.get(&partition_key(topic, p.partition)).copied();
            let done = p
                .committed_offset
                .into_iter()
                .chain(indexed)
                .max()
                .unwrap_or(p.low_offset);
            PartitionLag {
                topic: topic.to_string(),
                partition: p.partition,
                end_offset: p.end_offset,
                committed_offset: p.committed_offset,
                index_checkpoint: indexed,
                lag: (p.end_offset - done).max(0),
            }
        })
        .collect()
}

/// `"topic:partition"`, the checkpoint key.
pub fn partition_key(topic: &str, partition: i32) -> String {
    format!("{topic}:{partition}")
}

/// A partition's low and high watermarks as `client` last saw them, without asking the
/// broker: librdkafka keeps the high one from each fetch response. `None` before the first.
/// (rdkafka's safe API only has `fetch_watermarks`, a request to the broker each time.)
pub fn cached_watermarks<C: rdkafka::ClientContext>(
    client: &rdkafka::client::Client<C>,
    topic: &str,
    partition: i32,
) -> Option<(i64, i64)> {
    let topic = std::ffi::CString::new(topic).ok()?;
    let (mut low, mut high) = (-1_i64, -1_i64);
    // SAFETY: the handle lives as long as `client`, `topic` outlives the call, and librdkafka
    // only writes the two integers it is given.
    let err = unsafe {
        rdkafka::bindings::rd_kafka_get_watermark_offsets(
            client.native_ptr(),
            topic.as_ptr(),
            partition,
            &mut low,
            &mut high,
        )
    };
    let known = err == rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR;
    (known && high >= 0).then_some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_counts_from_the_furthest_known_position() {
        let at = |partition, low, end, committed| PartitionPosition {
            partition,
            end_offset: end,
            low_offset: low,
            committed_offset: committed,
        };
        let positions = [
            at(0, 0, 10, Some(4)),
            at(1, 3, 9, None),
            at(2, 0, 5, Some(5)),
        ];
        let checkpoint = [("docs:0".to_string(), 7), ("docs:2".to_string(), 2)]
            .into_iter()
            .collect();
        let lag: Vec<i64> = indexing_lag("docs", &positions, &checkpoint)
            .iter()
            .map(|p| p.lag)
            .collect();
        // 0: the index is ahead of the group; 1: nothing known, from the low watermark;
        // 2: the group is ahead of this index (the rest belonged to other indexes).
        assert_eq!(lag, [3, 6, 0]);
    }

    #[test]
    fn reply_topics_follow_the_patterns_and_never_name_an_input_topic() {
        let mut kafka = KafkaConfig::default();
        assert!(reply_topic_allowed(&kafka, "ragstream.replies"));
        assert!(reply_topic_allowed(&kafka, "ragstream.replies.agent-7"));
        assert!(!reply_topic_allowed(&kafka, "ragstream.documents"));
        assert!(!reply_topic_allowed(&kafka, "ragstream.dlq"));
        assert!(!reply_topic_allowed(&kafka, "other"));
        assert!(!reply_topic_allowed(&kafka, ""));
        kafka.reply_topics = "*".into();
        assert!(reply_topic_allowed(&kafka, "anything"));
        // Matching names that no broker takes: refused, not answered into the void.
        assert!(!reply_topic_allowed(&kafka, "a/b"));
        assert!(!reply_topic_allowed(&kafka, &"r".repeat(250)));
        assert!(reply_topic_allowed(&kafka, &"r".repeat(249)));
        for own in ["ragstream.documents", "ragstream.queries", "ragstream.dlq"] {
            assert!(!reply_topic_allowed(&kafka, own), "{own}");
        }
        kafka.reply_topics = "a.*.replies, exact".into();
        assert!(
            reply_topic_allowed(&kafka, "ragstream.replies"),
            "the configured replies topic is always allowed"
        );
        assert!(reply_topic_allowed(&kafka, "a.x.replies"));
        assert!(reply_topic_allowed(&kafka, "a..replies"));
        assert!(!reply_topic_allowed(&kafka, "a.x.replies2"));
        assert!(reply_topic_allowed(&kafka, "exact"));
        assert!(!reply_topic_allowed(&kafka, "exactly"));
    }

    #[test]
    fn globs() {
        assert!(glob_matches("a*b*c", "abc"));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxbyy"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("ab*ab", "abab"));
        assert!(!glob_matches("ab*ab", "aba"));
    }
}
