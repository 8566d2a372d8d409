//! `Engine::reembed` (`ragstream index reembed`): every vector rebuilt with another embedder
//! in one new version; pinned older versions keep their model; the Kafka checkpoint survives;
//! an interrupted switch is finished on the next open.

use std::collections::HashMap;
use std::sync::Arc;

use ragstream::embedding::{Embedder, HashingEmbedder};
use ragstream::engine::EngineError;
use ragstream::index::{StoreError, KAFKA_CHECKPOINT};
use ragstream::retrieval::{SearchMethod, SearchRequest};
use ragstream::Engine;

use crate::common::{config, corpus, doc, name, upserts};

fn engine(dir: &std::path::Path, dimensions: usize) -> Engine {
    Engine::new(
        config(dir),
        Arc::new(HashingEmbedder::new(dimensions)) as Arc<dyn Embedder>,
    )
}

fn at(q: &str, version: u64) -> SearchRequest {
    let mut r = SearchRequest::new(q, SearchMethod::Semantic, 3);
    r.index_version = Some(version);
    r
}

#[tokio::test]
async fn reembed_writes_a_new_version_and_pinned_versions_keep_their_model() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    let old_version = {
        let e384 = engine(dir.path(), 384);
        let checkpoint =
            HashMap::from([(KAFKA_CHECKPOINT.to_string(), r#"{"docs:0":17}"#.to_string())]);
        e384.write_with_properties(&kb, upserts(corpus()), checkpoint)
            .await
            .unwrap()
            .index_version
            .unwrap()
    };

    let e64 = engine(dir.path(), 64);
    let mismatch = |r: Result<_, EngineError>| {
        matches!(
            r,
            Err(EngineError::Store(StoreError::EmbedderMismatch { .. }))
        )
    };
    assert!(mismatch(
        e64.search(&kb, &SearchRequest::new("moon", SearchMethod::Semantic, 3))
            .await
    ));
    let new_version = e64.reembed(&kb).await.unwrap();
    assert!(new_version > old_version);
    let stats = e64.stats(&kb).await.unwrap();
    assert_eq!(
        (stats.dimensions, stats.documents, stats.chunks),
        (64, 5, 5)
    );
    assert_eq!(stats.keyword_chunks, 5);

    // The new model answers the new version, with the vectors it computed.
    let hits = e64
        .search(&kb, &at("Moon astronauts Apollo", new_version))
        .await
        .unwrap();
    assert_eq!(hits.hits[0].row.document_id, "apollo");
    // ...but not the old version, whose vectors came from the 384-d model.
    let err = e64.search(&kb, &at("moon", old_version)).await;
    assert!(mismatch(err));
    drop(e64);

    let e384 = engine(dir.path(), 384);
    let old = e384
        .search(&kb, &at("Moon astronauts Apollo", old_version))
        .await
        .unwrap();
    assert_eq!(old.hits[0].row.document_id, "apollo");
    assert!(mismatch(e384.search(&kb, &at("moon", new_version)).await));
    // Writing with the old model is refused now.
    let refused = e384.write(&kb, upserts(corpus())).await;
    assert!(
        matches!(
            refused,
            Err(EngineError::Store(StoreError::EmbedderMismatch { .. }))
        ),
        "{refused:?}"
    );

    // The checkpoint the daemon resumes from was carried into the reembed commit.
    let index = e384.index(&kb).await.unwrap();
    assert_eq!(
        index.reader().kafka_checkpoint().await.unwrap()["docs:0"],
        17
    );
}

#[tokio::test]
async fn an_interrupted_reembed_is_finished_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    let info_path = dir.path().join("indexes/kb/index.json");
    {
        engine(dir.path(), 384)
            .write(&kb, upserts(corpus()))
            .await
            .unwrap();
    }
    let before = std::fs::read(&info_path).unwrap();
    {
        engine(dir.path(), 32).reembed(&kb).await.unwrap();
    }
    // A crash between the Lance commit and the index.json update leaves the old record.
    std::fs::write(&info_path, before).unwrap();
    let e32 = engine(dir.path(), 32);
    let stats = e32.stats(&kb).await.unwrap();
    assert_eq!(stats.dimensions, 32, "the recorded switch was finished");
    let hits = e32
        .search(
            &kb,
            &SearchRequest::new("bread yeast", SearchMethod::Semantic, 1),
        )
        .await
        .unwrap();
    assert_eq!(hits.hits[0].row.document_id, "bread");
}

#[tokio::test]
async fn re_ingesting_moved_text_is_served_from_the_embedding_cache() {
    let dir = tempfile::tempdir().unwrap();
    {
        let e = engine(dir.path(), 384);
        e.write(&name("first"), upserts(corpus())).await.unwrap();
        assert_eq!(e.embedding_report()["cache"]["misses"], 5);
        assert_eq!(e.embedding_report()["cache"]["hits"], 0);
    }
    // A new process: the same texts under another index hit the cache on disk.
    let e = engine(dir.path(), 384);
    e.write(&name("second"), upserts(corpus())).await.unwrap();
    let report = e.embedding_report();
    assert_eq!(report["cache"]["hits"], 5, "{report}");
    assert_eq!(report["cache"]["misses"], 0, "{report}");
    assert_eq!(report["cache"]["hit_ratio"], 1.0);
    // Another model does not share the entries.
    drop(e);
    let e = engine(dir.path(), 128);
    e.write(&name("third"), upserts(corpus())).await.unwrap();
    assert_eq!(e.embedding_report()["cache"]["hits"], 0);
}

#[tokio::test]
async fn the_embedding_cache_keeps_to_its_limit_and_drops_what_was_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // 1 MiB: a 384-dimension vector and its key take 1,568 bytes, so a generation holds
    // about 330.
    cfg.model.cache_max_mb = 1;
    let e = Engine::new(
        cfg,
        Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>,
    );
    let docs = |from: usize, to: usize| -> Vec<_> {
        (from..to)
            .map(|i| doc(&format!("d{i}"), "", &format!("passage number {i} of many")))
            .collect()
    };
    for start in (0..8_000).step_by(100) {
        e.write(&name("kb"), upserts(docs(start, start + 100)))
            .await
            .unwrap();
    }
    let report = e.embedding_report();
    let entries = report["cache"]["entries"].as_u64().unwrap();
    assert!((300..=800).contains(&entries), "{report}");
    // The newest are served from the cache; the oldest are embedded again.
    let misses = |r: &serde_json::Value| r["cache"]["misses"].as_u64().unwrap();
    let before = misses(&e.embedding_report());
    e.write(&name("copy"), upserts(docs(7_950, 8_000)))
        .await
        .unwrap();
    assert_eq!(
        misses(&e.embedding_report()),
        before,
        "the newest were kept"
    );
    e.write(&name("copy"), upserts(docs(0, 50))).await.unwrap();
    assert_eq!(
        misses(&e.embedding_report()),
        before + 50,
        "the oldest were dropped"
    );
    let file = std::fs::metadata(dir.path().join("embedding-cache.redb")).unwrap();
    assert!(
        file.len() < 8 << 20,
        "{} bytes for 8,000 vectors of 1.5 KiB",
        file.len()
    );
}

/// Embeds as `HashingEmbedder` until it has embedded `fail_after` texts, then refuses.
struct FailsPartWay {
    inner: HashingEmbedder,
    embedded: std::sync::atomic::AtomicUsize,
    fail_after: usize,
}

impl Embedder for FailsPartWay {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ragstream::embedding::EmbedError> {
        use std::sync::atomic::Ordering;
        if self.embedded.fetch_add(texts.len(), Ordering::SeqCst) >= self.fail_after {
            return Err(ragstream::embedding::EmbedError::Rejected {
                provider: "test".into(),
                reason: "refused part-way".into(),
            });
        }
        self.inner.embed(texts)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reembed_streams_an_index_larger_than_a_scan_batch_and_a_failure_part_way_commits_nothing(
) {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    // More rows than one scan batch of Lance's (8,192), so the rewrite spans several.
    let rows = 20_000;
    let docs: Vec<_> = (0..rows)
        .map(|i| {
            doc(
                &format!("d{i}"),
                "",
                &format!("row {i} about topic {}", i % 97),
            )
        })
        .collect();
    let before = {
        let e = engine(dir.path(), 384);
        let mut version = 0;
        for part in docs.chunks(5_000) {
            version = e
                .write(&kb, upserts(part.to_vec()))
                .await
                .unwrap()
                .index_version
                .unwrap();
        }
        version
    };

    // A model that fails part-way: nothing is committed, the old model still answers.
    let failing = Engine::new(
        config(dir.path()),
        Arc::new(FailsPartWay {
            inner: HashingEmbedder::new(64),
            embedded: Default::default(),
            fail_after: 10_000,
        }) as Arc<dyn Embedder>,
    );
    let err = failing.reembed(&kb).await.unwrap_err();
    assert!(err.to_string().contains("refused part-way"), "{err}");
    drop(failing);
    let e384 = engine(dir.path(), 384);
    let stats = e384.stats(&kb).await.unwrap();
    assert_eq!(
        (stats.dimensions, stats.chunks, stats.index_version),
        (384, rows, before),
        "{stats:?}"
    );
    drop(e384);

    // A model that works: every row once, with the new vectors.
    let e32 = engine(dir.path(), 32);
    let after = e32.reembed(&kb).await.unwrap();
    assert!(after > before);
    let stats = e32.stats(&kb).await.unwrap();
    assert_eq!(
        (stats.dimensions, stats.documents, stats.chunks),
        (32, rows, rows),
        "{stats:?}"
    );
    // Each row's vector is its own text's under the new model (several rows may share it).
    for i in [0, 8_191, 8_192, 16_500, rows - 1] {
        let text = format!("row {i} about topic {}", i % 97);
        let hits = e32
            .search(&kb, &SearchRequest::new(&text, SearchMethod::Semantic, 50))
            .await
            .unwrap();
        let own = hits
            .hits
            .iter()
            .find(|h| h.row.document_id == format!("d{i}"));
        assert!(
            own.is_some_and(|h| h.score > 0.9999),
            "d{i}: {:?}",
            own.map(|h| h.score)
        );
    }
}
