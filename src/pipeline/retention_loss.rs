//! Messages the broker deleted before the pipeline read them.
//!
//! A broker deletes a partition's oldest messages past its retention (`retention.bytes`,
//! `retention.ms`; the embedded broker's `kafka.embedded_retention_bytes`) whether or not
//! anyone read them. A consumer whose next offset was deleted would be moved on silently by
//! `auto.offset.reset`; the ingest source sets it to `error` instead, and on that error finds
//! each such partition, reports what was lost (an error log and
//! `ragstream_kafka_messages_lost_total`), and goes on from the oldest message still kept.
//! The lost documents cannot be indexed: their producers must send them again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{Consumer, ConsumerContext, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};

/// How long one watermark query or seek may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// One partition whose next message was deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    pub topic: String,
    pub partition: i32,
    /// The offset the pipeline was to read next.
    pub expected: i64,
    /// The oldest offset the broker still keeps, where reading goes on.
    pub resumed_at: i64,
}

impl Lost {
    /// Messages deleted unread.
    pub fn messages(&self) -> i64 {
        self.resumed_at - self.expected
    }
}

/// The lost range, if `expected` lies before the partition's oldest kept offset `low`.
pub fn lost_range(topic: &str, partition: i32, expected: i64, low: i64) -> Option<Lost> {
    (expected < low).then(|| Lost {
        topic: topic.to_string(),
        partition,
        expected,
        resumed_at: low,
    })
}

/// For every assigned partition whose next offset (`next`, by `"topic:partition"`) the broker
/// no longer keeps: reports the loss and goes on from the oldest kept offset. A partition
/// whose next offset lies past the end (a log replaced under the same name) goes on from
/// the start. Blocking: call it off the async workers.
///
/// librdkafka stops fetching a partition on this error and refuses to seek it, so the whole
/// assignment is given again, every other partition at its exact next offset (nothing read
/// twice, nothing skipped).
pub fn skip_deleted<C: ConsumerContext + 'static>(
    consumer: &Arc<StreamConsumer<C>>,
    next: &HashMap<String, i64>,
) -> Vec<Lost> {
    let Ok(assigned) = consumer.assignment() else {
        return Vec::new();
    };
    let mut lost = Vec::new();
    let mut moved = false;
    let mut again = TopicPartitionList::new();
    for e in assigned.elements() {
        let (topic, partition) = (e.topic(), e.partition());
        let Some(&expected) = next.get(&super::partition_key(topic, partition)) else {
            let _ = again.add_partition_offset(topic, partition, Offset::Beginning);
            continue;
        };
        let mut resume = Offset::Offset(expected);
        match consumer.fetch_watermarks(topic, partition, TIMEOUT) {
            Ok((low, high)) => {
                if let Some(l) = lost_range(topic, partition, expected, low) {
                    tracing::error!(
                        topic,
                        partition,
                        from = l.expected,
                        to = l.resumed_at,
                        messages = l.messages(),
                        "the broker deleted messages before they were read (retention); their \
                         documents are not indexed and must be sent again"
                    );
                    if let Some(m) = crate::telemetry::metrics() {
                        m.kafka_messages_lost_total
                            .with_label_values(&[topic])
                            .inc_by(l.messages() as u64);
                    }
                    resume = Offset::Offset(l.resumed_at);
                    lost.push(l);
                    moved = true;
                } else if expected > high {
                    tracing::warn!(
                        topic,
                        partition,
                        expected,
                        high,
                        "the partition ends before the stored position (a replaced log?); \
                         reading from its start"
                    );
                    resume = Offset::Offset(low);
                    moved = true;
                }
            }
            Err(error) => {
                tracing::warn!(topic, partition, %error, "reading a partition's watermarks failed")
            }
        }
        let _ = again.add_partition_offset(topic, partition, resume);
    }
    if moved {
        if let Err(error) = consumer.assign(&again) {
            tracing::error!(%error, "assigning partitions past deleted messages failed");
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_before_the_oldest_kept_offset_is_a_loss_of_the_difference() {
        let l = lost_range("docs", 2, 5, 120).unwrap();
        assert_eq!((l.partition, l.resumed_at, l.messages()), (2, 120, 115));
        assert_eq!(
            lost_range("docs", 2, 120, 120),
            None,
            "exactly the oldest: nothing lost"
        );
        assert_eq!(lost_range("docs", 2, 300, 120), None);
    }
}
