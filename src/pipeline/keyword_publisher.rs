//! A writer whose indexes live on an object store publishes the new keyword versions of
//! each index it owns there (`Index::publish_keyword`), so that query replicas can serve
//! them, and announces each on `kafka.versions_topic` (a [`VersionNotice`]) so that replicas
//! refresh at once. Handles of indexes another daemon writes are closed once they are
//! stale, so that queries here open them afresh. It wakes after every commit of the write path, and at least every
//! `storage.poll_interval_ms` for the commits made elsewhere (maintenance, vector index
//! builds).

use std::sync::Arc;
use std::time::Duration;

use rdkafka::producer::{FutureProducer, FutureRecord};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::engine::Engine;
use crate::index::StoreError;

/// What the versions topic carries: version `index_version` of `index` can be served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionNotice {
    pub index: String,
    pub index_version: u64,
    pub committed_at: String,
}

pub async fn run(
    engine: Arc<Engine>,
    producer: FutureProducer,
    mut stopped: watch::Receiver<bool>,
) {
    let commits = engine.commits();
    let every = Duration::from_millis(engine.config().storage.poll_interval_ms);
    let topic = engine.config().kafka.versions_topic.clone();
    loop {
        for index in engine.open_indexes().await {
            if !index.is_owned_here() {
                // Another daemon writes it, and this handle goes stale as it commits: closed,
                // so that the next query here opens what the store has.
                if let Err(StoreError::ChangedElsewhere { .. } | StoreError::NotOwner { .. }) =
                    index.check_current().await
                {
                    engine.close(index.name()).await;
                }
                continue;
            }
            let Some(version) = index.publish_keyword().await else {
                continue;
            };
            let notice = VersionNotice {
                index: index.name().to_string(),
                index_version: version,
                committed_at: crate::model::now_timestamp(),
            };
            let payload = serde_json::to_string(&notice).expect("a notice serialises");
            let record = FutureRecord::to(&topic)
                .key(notice.index.as_str())
                .payload(&payload);
            // Replicas poll besides: a notice lost costs one poll interval, no answer.
            if let Err((e, _)) = producer.send(record, Duration::from_secs(5)).await {
                tracing::warn!(index = %notice.index, version, error = %e,
                    "announcing a published version failed; replicas find it by polling");
            }
        }
        tokio::select! {
            _ = commits.notified() => {}
            _ = tokio::time::sleep(every) => {}
            _ = stopped.changed() => return,
        }
    }
}
