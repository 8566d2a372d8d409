//! Assembles the ingest actors — IngestSource → Chunker → EmbedderClient → IndexWriter — as
//! one supervised unit. Each incarnation starts from the checkpoints stored in the indexes
//! with a fresh consumer; if any actor fails or panics, the others are stopped and the
//! supervisor starts a new incarnation after a backoff.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::actor::{self, mailbox, Actor, ActorError};
use super::assignment::Assignment;
use super::checkpoints::{Checkpoints, KafkaLog};
use super::chunker::Chunker;
use super::embedder_client::EmbedderClient;
use super::index_writer::{commit_group_offsets, IndexWriter};
use super::ingest_source::{CheckpointContext, IngestSource, IngestSourceSettings};
use super::lanes::Lanes;
use super::supervisor::{supervise, Backoff, RestartReport};
use super::triple_extractor::TripleExtraction;
use crate::config::KafkaConfig;
use crate::engine::{Engine, EngineError};
use crate::graph::extractor::HttpExtractor;
use crate::kafka::client_config;
use crate::kafka::dead_letters::DeadLetters;

/// Batches waiting between two stages, in each lane. With one in each mailbox lane and one
/// in each stage, a bounded number of batches is in memory (about seven per lane), whatever
/// the backlog in Kafka.
const MAILBOX_CAPACITY: usize = 1;

pub struct IngestPipeline {
    pub engine: Arc<Engine>,
    pub dead_letters: DeadLetters,
    pub kafka: KafkaConfig,
    pub bootstrap: String,
    pub report: Arc<RestartReport>,
    /// Where failing commits are reported.
    pub health: Arc<crate::health::Health>,
}

/// Where each partition must resume so that no index misses an event: for every partition,
/// the smallest next offset over the indexes' checkpoints that apply to this log and the
/// consumer group's offset in it ([`KafkaLog::floors`]).
pub async fn resume_positions(
    engine: &Engine,
    checkpoints: &Checkpoints,
) -> Result<HashMap<String, i64>, EngineError> {
    let mut out: HashMap<String, i64> = checkpoints.log().map(KafkaLog::floors).unwrap_or_default();
    for name in engine.list_indexes().await? {
        let checkpoint = checkpoints.get(engine, &name).await?;
        for (partition, offset) in checkpoint {
            out.entry(partition)
                .and_modify(|o| *o = (*o).min(offset))
                .or_insert(offset);
        }
    }
    Ok(out)
}

impl IngestPipeline {
    /// Runs incarnations under supervision until `shutdown` turns true and the last one has
    /// drained.
    pub async fn run(self, shutdown: watch::Receiver<bool>) {
        let this = Arc::new(self);
        let report = this.report.clone();
        supervise(
            "ingest",
            || {
                let (this, shutdown) = (this.clone(), shutdown.clone());
                async move { this.incarnation(shutdown).await }
            },
            Backoff::default(),
            report,
            shutdown.clone(),
        )
        .await;
    }

    async fn incarnation(&self, shutdown: watch::Receiver<bool>) -> Result<(), ActorError> {
        const NAME: &str = "ingest-pipeline";
        let log = self
            .log()
            .await
            .map_err(|e| ActorError::failed(NAME, format!("identifying the Kafka log: {e}")))?;
        // A message the group had committed past is read again only for an index that lacks
        // it: its dead letter went out before.
        let dead_letters = self.dead_letters.sent_below(log.committed.clone());
        let checkpoints = Arc::new(Checkpoints::for_log(log, Some(self.ends_now())));
        let positions = resume_positions(&self.engine, &checkpoints)
            .await
            .map_err(|e| ActorError::failed(NAME, format!("reading checkpoints: {e}")))?;
        let assignment = Arc::new(Assignment::new(positions));
        let consumer = self
            .consumer(assignment.clone())
            .map_err(|e| ActorError::failed(NAME, format!("kafka consumer: {e}")))?;

        // Every stage has one mailbox with a queue per lane, and one actor per lane: each lane
        // is a chain of its own, so a live batch never waits behind a bulk one.
        let (to_chunker, chunker_inboxes) = mailbox(Chunker::NAME, MAILBOX_CAPACITY);
        let (to_embedder, embedder_inboxes) = mailbox(EmbedderClient::NAME, MAILBOX_CAPACITY);
        let (to_writer, writer_inboxes) = mailbox(IndexWriter::NAME, MAILBOX_CAPACITY);
        let mut actors = JoinSet::new();
        // With the extractor on, the Chunker hands its batches to it, and it to the embedder.
        let extraction = &self.engine.config().extractor;
        let chunker_next = if extraction.enabled {
            let extractor: Arc<dyn crate::graph::extractor::TripleExtractor> =
                Arc::new(HttpExtractor::new(extraction).map_err(|(key, reason)| {
                    ActorError::failed(NAME, format!("{key}: {reason}"))
                })?);
            let (to_extractor, extractor_inboxes) =
                mailbox(TripleExtraction::NAME, MAILBOX_CAPACITY);
            for inbox in extractor_inboxes {
                let stage = TripleExtraction {
                    extractor: extractor.clone(),
                    malformed_retries: extraction.malformed_retries,
                    dead_letters: Some(dead_letters.clone()),
                    next: to_embedder.clone(),
                };
                actors.spawn(actor::run(stage, inbox));
            }
            // The stages hold the embedder's mailbox now: it closes when they stop.
            drop(to_embedder);
            to_extractor
        } else {
            to_embedder
        };
        let source = IngestSource {
            consumer: consumer.clone(),
            topic: self.kafka.documents_topic.clone(),
            settings: IngestSourceSettings {
                batch_max_documents: self.kafka.batch_max_documents,
                batch_max_chunks: self.kafka.batch_max_chunks,
                chunker: self.engine.chunker().clone(),
                batch_max: Duration::from_millis(self.kafka.batch_max_ms),
                max_message_bytes: self.kafka.max_message_bytes,
                limits: self.engine.config().limits.document(),
                engine: self.engine.clone(),
            },
            dead_letters: dead_letters.clone(),
            assignment: assignment.clone(),
            // A partition within one batch of its end is live.
            lanes: Lanes::new(self.kafka.batch_max_documents),
            next: to_chunker,
        };
        actors.spawn(source.run(shutdown));
        for inbox in chunker_inboxes {
            let chunker = Chunker {
                engine: self.engine.clone(),
                checkpoints: checkpoints.clone(),
                dead_letters: dead_letters.clone(),
                next: chunker_next.clone(),
                health: Some(self.health.clone()),
            };
            actors.spawn(actor::run(chunker, inbox));
        }
        for inbox in embedder_inboxes {
            let embedder = EmbedderClient {
                embedder: self.engine.ingest_embedder().clone(),
                dead_letters: Some(dead_letters.clone()),
                next: to_writer.clone(),
            };
            actors.spawn(actor::run(embedder, inbox));
        }
        // The two writers may commit at once: to different indexes in parallel, to one index
        // in turn (`Checkpoints::turn`).
        for inbox in writer_inboxes {
            let writer = IndexWriter {
                engine: self.engine.clone(),
                checkpoints: checkpoints.clone(),
                assignment: assignment.clone(),
                monitor: Some(consumer.clone()),
                health: Some(self.health.clone()),
            };
            actors.spawn(actor::run(writer, inbox));
        }
        // The stages hold the next mailboxes now: each closes when its senders stop.
        drop((chunker_next, to_writer));

        // The first actor to fail stops the incarnation; dropping the set aborts the rest, the
        // source (and its consumer's group membership) included.
        while let Some(ended) = actors.join_next().await {
            match ended {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(e) => return Err(ActorError::failed(NAME, format!("actor task: {e}"))),
            }
        }
        // Drained: the group's offsets are committed once more, and waited for, so that a
        // restart sends no second dead letter for what was read since the last batch's
        // (asynchronous) commit.
        let positions = assignment.advanced_positions();
        tokio::task::spawn_blocking(move || {
            commit_group_offsets(&consumer, &positions, CommitMode::Sync)
        })
        .await
        .map_err(|e| ActorError::failed(NAME, format!("committing the group's offsets: {e}")))?;
        Ok(())
    }

    /// The log this incarnation reads: its identity (the cluster's id; the embedded broker
    /// keeps its own across restarts) and where the documents topic's partitions end now
    /// (asked of Kafka; a broker that does not answer fails the incarnation, which is
    /// retried with backoff).
    async fn log(&self) -> Result<KafkaLog, String> {
        let (kafka, bootstrap) = (self.kafka.clone(), self.bootstrap.clone());
        tokio::task::spawn_blocking(move || -> Result<KafkaLog, String> {
            let timeout = Duration::from_secs(10);
            let id = crate::kafka::cluster_id(&kafka, &bootstrap, timeout)
                .map_err(|e| e.to_string())?
                .map(|id| format!("kafka-cluster-{id}"))
                .ok_or("the brokers did not tell their cluster id")?;
            let topic = &kafka.documents_topic;
            let positions =
                crate::kafka::positions(&kafka, &bootstrap, topic, &kafka.group_id, timeout)
                    .map_err(|e| e.to_string())?;
            let key = |p: i32| super::partition_key(topic, p);
            Ok(KafkaLog {
                id,
                ends: positions
                    .iter()
                    .map(|p| (key(p.partition), p.end_offset))
                    .collect(),
                committed: positions
                    .iter()
                    .filter_map(|p| Some((key(p.partition), p.committed_offset?)))
                    .collect(),
            })
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// Where the documents topic's partitions end now, for checkpoints that other
    /// daemons committed past where it ended at this incarnation's start.
    fn ends_now(&self) -> super::checkpoints::EndsNow {
        let (kafka, bootstrap) = (self.kafka.clone(), self.bootstrap.clone());
        Arc::new(move || {
            let topic = &kafka.documents_topic;
            let positions = crate::kafka::positions(
                &kafka,
                &bootstrap,
                topic,
                &kafka.group_id,
                Duration::from_secs(10),
            )
            .ok()?;
            Some(
                positions
                    .iter()
                    .map(|p| (super::partition_key(topic, p.partition), p.end_offset))
                    .collect(),
            )
        })
    }

    fn consumer(
        &self,
        assignment: Arc<Assignment>,
    ) -> Result<Arc<StreamConsumer<CheckpointContext>>, rdkafka::error::KafkaError> {
        let consumer: StreamConsumer<CheckpointContext> =
            client_config(&self.kafka, &self.bootstrap)
                .set("group.id", &self.kafka.group_id)
                .set("enable.auto.commit", "false")
                .set("enable.auto.offset.store", "false")
                // Bound librdkafka's prefetch: the backlog belongs in Kafka, not in this process.
                .set(
                    "queued.max.messages.kbytes",
                    self.kafka.consumer_queue_kbytes.to_string(),
                )
                // A next offset the broker deleted unread is an error the source reports
                // (retention_loss.rs), not a silent jump. New partitions start explicitly
                // at the beginning (CheckpointContext).
                .set("auto.offset.reset", "error")
                // See the query consumer in daemon.rs: bounds the embedded broker's fetch wait,
                // which is part of freshness.
                .set("fetch.wait.max.ms", "50")
                .set("session.timeout.ms", "6000")
                .set("heartbeat.interval.ms", "500")
                .create_with_context(CheckpointContext {
                    assignment,
                    revocations: self.engine.revocations(),
                })?;
        consumer.subscribe(&[self.kafka.documents_topic.as_str()])?;
        Ok(Arc::new(consumer))
    }
}
