//! Where bus replies may go: a reply topic that does not exist is created only for a caller
//! who authenticates, and at most `kafka.reply_topics_create_max` of them per daemon run. A
//! stranger's queries make no topics; a flood of names makes a bounded number.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};

use super::client_config;
use crate::config::KafkaConfig;

/// Why a reply cannot be sent to its topic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyTopicRefused {
    #[error("reply-to {0:?} does not exist, and a caller who does not authenticate may not have it created")]
    NotCreatedForStranger(String),
    #[error("reply-to {topic:?} does not exist, and this daemon already created kafka.reply_topics_create_max ({max}) reply topics; create it beforehand")]
    CreationLimit { topic: String, max: usize },
    #[error("reply-to {topic:?} could not be looked up or created: {reason}")]
    Unavailable { topic: String, reason: String },
}

/// The reply topics known to exist, and how many this daemon created.
pub struct ReplyTopics {
    kafka: KafkaConfig,
    bootstrap: String,
    /// One client for every lookup: a flood of unknown names costs round trips, not clients.
    lookups: Arc<BaseConsumer>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    known: HashSet<String>,
    created: usize,
}

impl ReplyTopics {
    pub fn new(kafka: &KafkaConfig, bootstrap: &str) -> Result<Self, rdkafka::error::KafkaError> {
        Ok(ReplyTopics {
            kafka: kafka.clone(),
            bootstrap: bootstrap.to_string(),
            lookups: Arc::new(
                client_config(kafka, bootstrap)
                    .set("allow.auto.create.topics", "false")
                    .create()?,
            ),
            state: Mutex::default(),
        })
    }

    /// Makes sure `topic` exists, creating it if `may_create` and the limit allows.
    pub async fn ready(&self, topic: &str, may_create: bool) -> Result<(), ReplyTopicRefused> {
        if self
            .state
            .lock()
            .expect("reply topics")
            .known
            .contains(topic)
        {
            return Ok(());
        }
        let unavailable = |reason: String| ReplyTopicRefused::Unavailable {
            topic: topic.to_string(),
            reason,
        };
        let exists = {
            let (lookups, name) = (self.lookups.clone(), topic.to_string());
            tokio::task::spawn_blocking(move || exists(&lookups, &name))
                .await
                .map_err(|e| unavailable(e.to_string()))?
                .map_err(|e| unavailable(e.to_string()))?
        };
        if !exists {
            if !may_create {
                return Err(ReplyTopicRefused::NotCreatedForStranger(topic.to_string()));
            }
            let max = self.kafka.reply_topics_create_max;
            {
                // Counted before the creation: concurrent requests cannot overshoot.
                let mut state = self.state.lock().expect("reply topics");
                if state.created >= max {
                    return Err(ReplyTopicRefused::CreationLimit {
                        topic: topic.to_string(),
                        max,
                    });
                }
                state.created += 1;
            }
            super::topics::ensure(&self.kafka, &self.bootstrap, &[(topic.to_string(), 1)], &[])
                .await
                .map_err(|e| unavailable(e.to_string()))?;
        }
        self.state
            .lock()
            .expect("reply topics")
            .known
            .insert(topic.to_string());
        Ok(())
    }
}

/// Whether the cluster has `topic`, asked without creating it. Blocking.
fn exists(lookups: &BaseConsumer, topic: &str) -> Result<bool, rdkafka::error::KafkaError> {
    let metadata = lookups.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    Ok(metadata
        .topics()
        .iter()
        .any(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty()))
}
