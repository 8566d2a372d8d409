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
    let tagged = stale.maintenance().tag("kept", None).await;
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

/// In a running daemon: DELETE answers at once, the index stops answering, and the
/// maintenance actor removes the moved-aside files on its next pass, keeping the record.
#[test]
fn the_daemon_removes_a_deleted_index_files_on_its_next_maintenance_pass() {
    use crate::daemon::{curl, post_json, start_daemon_at, wait_for};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // A long first pass interval would hide the purge; one pass every 300 ms.
    let d = start_daemon_at(
        &data,
        &[("RAGSTREAM_INDEX__MAINTENANCE__INTERVAL_MS", "300")],
    );
    let docs = serde_json::json!({"documents": [{"id": "a", "text": "Tides follow the moon."}]});
    let documents = format!("{}/v1/indexes/kb/documents", d.http);
    let (status, body) = post_json(&documents, &docs);
    assert_eq!(status, 202, "{body}");
    let stats = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("the document", || curl(&[&stats]).1["documents"] == 1);
    assert!(data.join("indexes").join("kb").is_dir());

    let (status, body) = curl(&["-X", "DELETE", &format!("{}/v1/indexes/kb", d.http)]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deleted"], true, "{body}");
    assert_eq!(curl(&[&stats]).0, 404);
    assert!(!data.join("indexes").join("kb").exists());
    let moved_aside = || {
        std::fs::read_dir(data.join("deleted"))
            .map(|entries| entries.flatten().filter(|e| e.path().is_dir()).count())
            .unwrap_or(0)
    };
    wait_for("maintenance to remove the deleted index's files", || {
        moved_aside() == 0
    });
    assert!(data.join("deleted").join("kb.json").is_file());
    // The daemon goes on: a write makes a new, empty index of the same name.
    let (status, _) = post_json(&documents, &docs);
    assert_eq!(status, 202);
    wait_for("the new index", || curl(&[&stats]).1["documents"] == 1);
}
