//! The embedded Kafka-protocol broker: librdkafka's mock cluster, listening on 127.0.0.1, so
//! any Kafka client (kcat included) can produce and consume while the process runs.

use std::sync::mpsc;
use std::thread::JoinHandle;

use rdkafka::mocking::MockCluster;

use crate::config::KafkaConfig;

#[derive(Debug, thiserror::Error)]
#[error("embedded broker: {0}")]
pub struct BrokerError(String);

// The vendored librdkafka's one addition (vendor/README.md): upstream's mock partitions keep
// 5 MiB and silently delete older messages, read or not.
extern "C" {
    fn rd_kafka_mock_set_partition_log_limits(max_bytes: usize, max_msgsets: usize);
}

/// Sets how many bytes each partition created from now on keeps (message sets are not
/// limited). The setting is process-wide: it applies to every mock cluster started after.
fn set_retention(bytes: usize) {
    // SAFETY: the function only stores two integers that partition creation reads.
    unsafe { rd_kafka_mock_set_partition_log_limits(bytes, usize::MAX) }
}

/// A running embedded broker; dropping it (or `stop`) shuts it down and loses its messages.
pub struct EmbeddedBroker {
    bootstrap: String,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddedBroker {
    /// Starts one mock broker and creates the configured topics.
    pub fn start(kafka: &KafkaConfig) -> Result<Self, BrokerError> {
        let topics = [
            (kafka.documents_topic.clone(), kafka.partitions),
            (kafka.queries_topic.clone(), kafka.partitions),
            (kafka.dlq_topic.clone(), 1),
            (kafka.replies_topic.clone(), 1),
            (kafka.versions_topic.clone(), 1),
        ];
        let retention = usize::try_from(kafka.embedded_retention_bytes).unwrap_or(usize::MAX);
        let (ready_tx, ready_rx) = mpsc::channel::<Result<String, String>>();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        // The mock cluster is not Send: it lives and dies on its own thread.
        let thread = std::thread::Builder::new()
            .name("embedded-broker".into())
            .spawn(move || {
                set_retention(retention);
                let cluster = match MockCluster::new(1) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                for (topic, partitions) in &topics {
                    if let Err(e) = cluster.create_topic(topic, *partitions, 1) {
                        let _ = ready_tx.send(Err(format!("creating topic {topic}: {e}")));
                        return;
                    }
                }
                let _ = ready_tx.send(Ok(cluster.bootstrap_servers()));
                let _ = stop_rx.recv();
                drop(cluster);
            })
            .map_err(|e| BrokerError(e.to_string()))?;
        let bootstrap = ready_rx
            .recv()
            .map_err(|_| BrokerError("broker thread died during start".into()))?
            .map_err(BrokerError)?;
        Ok(EmbeddedBroker {
            bootstrap,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    pub fn stop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for EmbeddedBroker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What `serve` and `broker` print so that a user can start producing at once.
pub fn announce(bootstrap: &str, kafka: &KafkaConfig) -> String {
    let first = bootstrap.split(',').next().unwrap_or(bootstrap);
    format!(
        "kafka bootstrap: {first}\n\
         example: echo '{{\"schema_version\":1,\"op\":\"upsert\",\"index\":\"kb\",\"document\":{{\"id\":\"doc-1\",\"text\":\"hello\"}}}}' \
         | kcat -P -b {first} -t {} -k kb/doc-1",
        kafka.documents_topic
    )
}
