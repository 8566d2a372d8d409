//! Deleting an index: gone at once, files removed by the purge, a stale handle cannot
//! commit, a new index of the same name starts empty, and the deleted index's Kafka
//! checkpoint keeps its replayed events out of the new one.

use std::collections::HashMap;

use ragstream::index::StoredCheckpoint;
use ragstream::pipeline::checkpoints::{Checkpoints, KafkaLog};
use ragstream::retrieval::{SearchMethod, SearchRequest};
use ragstream::EngineError;

use crate::common::*;

#[tokio::test]
async fn a_deleted_index_stops_answering_and_a_new_one_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let written = engine.write(&kb, upserts(corpus())).await.unwrap();
    let stale = engine.index(&kb).await.unwrap();

    let version = engine.delete_index(&kb).await.unwrap();
    assert_eq!(Some(version), written.index_version);
    let search = engine
        .search(&kb, &SearchRequest::new("bread", SearchMethod::Keyword, 3))
        .await;
    assert!(
        matches!(search, Err(EngineError::IndexNotFound(_))),
        "{search:?}"
    );
    assert!(!ragstream::store::index_storage::list_local_indexes(dir.path()).contains(&kb));
    // A handle taken before the delete cannot commit into the moved directory.
    let tagged = stale.tag("kept", None).await;
    assert!(tagged.is_err(), "{tagged:?}");
    // Deleting it again is an unknown index, not a crash.
    assert!(matches!(
        engine.delete_index(&kb).await,
        Err(EngineError::IndexNotFound(_))
    ));

    assert_eq!(engine.purge_deleted_indexes().unwrap(), 1);
    assert_eq!(engine.purge_deleted_indexes().unwrap(), 0);
    assert!(dir.path().join("deleted").join("kb.json").is_file());

    engine
        .write(&kb, upserts(vec![doc("new", "New", "A new beginning.")]))
        .await
        .unwrap();
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.documents, 1, "{stats:?}");
}

#[tokio::test]
async fn the_deleted_index_checkpoint_keeps_replayed_events_out() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    hashing_engine(dir.path())
        .write(&kb, upserts(corpus()))
        .await
        .unwrap();
    let reached = StoredCheckpoint {
        offsets: HashMap::from([("docs:0".to_string(), 7)]),
        log: Some("log-1".into()),
    };
    let storage = ragstream::index::IndexStorage::Local {
        data_dir: dir.path().to_path_buf(),
    };
    ragstream::index::deleted::retire(&storage, &kb, reached).unwrap();

    // A pipeline that starts on the same log finds the deleted index's checkpoint.
    let log = KafkaLog {
        id: "log-1".into(),
        ends: HashMap::from([("docs:0".to_string(), 9)]),
        committed: HashMap::new(),
    };
    let engine = hashing_engine(dir.path());
    let checkpoint = Checkpoints::for_log(log, None)
        .get(&engine, &kb)
        .await
        .unwrap();
    assert_eq!(checkpoint.get("docs:0"), Some(&7), "{checkpoint:?}");
    // An index that was never deleted has none.
    let other = Checkpoints::default()
        .get(&engine, &name("never"))
        .await
        .unwrap();
    assert!(other.is_empty(), "{other:?}");
}
