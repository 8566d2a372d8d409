//! The ingest actors driven with messages, without Kafka: what each one emits and commits.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use ragstream::index::DocumentOp;
use ragstream::kafka::dead_letters::DeadLetters;
use ragstream::pipeline::actor::{self, mailbox, Actor};
use ragstream::pipeline::assignment::Assignment;
use ragstream::pipeline::checkpoints::Checkpoints;
use ragstream::pipeline::chunker::Chunker;
use ragstream::pipeline::events::DocumentEvent;
use ragstream::pipeline::index_writer::IndexWriter;
use ragstream::pipeline::{Batch, IndexWork, PlannedBatch, SourcedEvent};
use rdkafka::producer::FutureProducer;
use rdkafka::ClientConfig;

use crate::common::{doc, hashing_engine, name, upserts};

fn event(partition: i32, offset: i64, op: DocumentOp) -> SourcedEvent {
    SourcedEvent {
        event: DocumentEvent {
            index: name("kb"),
            op,
        },
        topic: "docs".into(),
        partition,
        offset,
        produced_at_ms: None,
        trace: Default::default(),
    }
}

/// Dead letters that must not be used (no broker behind them).
fn no_dead_letters() -> DeadLetters {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", "127.0.0.1:9")
        .create()
        .unwrap();
    let parked = std::env::temp_dir().join(format!("ragstream-test-{}", std::process::id()));
    DeadLetters::new(producer, "dlq".into(), &parked)
}

#[tokio::test]
async fn the_chunker_skips_committed_and_unchanged_documents_and_plans_only_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(hashing_engine(dir.path()));
    let stored = doc("same", "Same", "text that is already stored");
    engine
        .write(&name("kb"), upserts(vec![stored.clone()]))
        .await
        .unwrap();
    let checkpoints = Arc::new(Checkpoints::default());
    let version = engine.index(&name("kb")).await.unwrap().latest_version();
    checkpoints
        .set(&name("kb"), version, [("docs:0".to_string(), 10)].into())
        .await;
    let (next, [_, mut emitted]) = mailbox("test-next", 4);
    let chunker = Chunker {
        engine: engine.clone(),
        checkpoints,
        dead_letters: no_dead_letters(),
        next,
        health: None,
    };
    let (tx, [_, inbox]) = mailbox("test-chunker", 1);
    let task = actor::spawn(chunker, inbox);
    let batch = Batch {
        events: vec![
            // below the checkpoint: already committed
            event(
                0,
                9,
                DocumentOp::Upsert(doc("old", "Old", "committed before")),
            ),
            event(0, 10, DocumentOp::Upsert(stored)),
            event(
                0,
                11,
                DocumentOp::Upsert(doc("new", "New", "brand new text")),
            ),
        ],
        next_offsets: [("docs:0".to_string(), 12)].into(),
        epochs: [("docs:0".to_string(), 1)].into(),
        chunks: 3,
        ..Default::default()
    };
    tx.send(batch).await.unwrap();
    let planned = emitted.recv().await.unwrap();
    assert_eq!(
        planned.next_offsets,
        BTreeMap::from([("docs:0".to_string(), 12)])
    );
    assert_eq!(planned.work.len(), 1);
    let offsets: Vec<i64> = planned.work[0].events.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, vec![10, 11], "offset 9 is below the checkpoint");
    let chunked: Vec<&str> = planned.work[0]
        .rows
        .iter()
        .map(|r| r.document_id.as_str())
        .collect();
    assert_eq!(
        chunked,
        vec!["new"],
        "the unchanged document is not chunked again"
    );
    drop(tx);
    assert_eq!(task.await.unwrap(), Ok(()));
}

#[tokio::test]
async fn the_writer_commits_the_checkpoint_and_fences_revoked_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(hashing_engine(dir.path()));
    engine.create_index(&name("kb")).await.unwrap();
    let assignment = Arc::new(Assignment::new(HashMap::new()));
    assignment.assign("docs:0");
    assignment.assign("docs:1");
    let epochs: BTreeMap<String, u64> = [
        ("docs:0".to_string(), assignment.epoch("docs:0").unwrap()),
        ("docs:1".to_string(), assignment.epoch("docs:1").unwrap()),
    ]
    .into();
    // Partition 1 is revoked while its batch is in flight.
    assignment.revoke(&["docs:1".to_string()]);
    let mut writer = IndexWriter {
        engine: engine.clone(),
        checkpoints: Arc::new(Checkpoints::default()),
        assignment: assignment.clone(),
        monitor: None,
        health: None,
    };
    let batch = PlannedBatch {
        work: vec![IndexWork {
            index: name("kb"),
            events: vec![
                event(0, 0, DocumentOp::Upsert(doc("mine", "Mine", "owned text"))),
                event(
                    1,
                    0,
                    DocumentOp::Upsert(doc("theirs", "Theirs", "revoked text")),
                ),
            ],
            // No vectors: the writer embeds what the plan lacks.
            rows: vec![],
            triples: vec![],
        }],
        next_offsets: [("docs:0".to_string(), 1), ("docs:1".to_string(), 1)].into(),
        epochs,
        ..Default::default()
    };
    writer.handle(batch).await.unwrap();
    let index = engine.index(&name("kb")).await.unwrap();
    let checkpoint = index.reader().kafka_checkpoint().await.unwrap();
    assert_eq!(checkpoint, HashMap::from([("docs:0".to_string(), 1)]));
    let stats = engine.stats(&name("kb")).await.unwrap();
    assert_eq!(
        stats.documents, 1,
        "only the owned partition's document: {stats:?}"
    );
    // Re-delivery of the same event is skipped: no new version.
    let version = index.latest_version();
    let again = PlannedBatch {
        work: vec![IndexWork {
            index: name("kb"),
            events: vec![event(
                0,
                0,
                DocumentOp::Upsert(doc("mine", "Mine", "changed")),
            )],
            rows: vec![],
            triples: vec![],
        }],
        next_offsets: [("docs:0".to_string(), 1)].into(),
        epochs: [("docs:0".to_string(), assignment.epoch("docs:0").unwrap())].into(),
        ..Default::default()
    };
    writer.handle(again).await.unwrap();
    assert_eq!(
        engine.index(&name("kb")).await.unwrap().latest_version(),
        version
    );
}
