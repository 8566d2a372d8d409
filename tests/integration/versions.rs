//! Reproducible answers by `index_version`, retention, and repair after a crash between the
//! Lance and the tantivy commit.

use std::process::Command;

use ragstream::contracts::c000_retrieval_calls::render_response;
use ragstream::index::DocumentOp;
use ragstream::retrieval::{SearchMethod, SearchRequest};
use ragstream::EngineError;
use serde_json::Value;

use crate::common::*;

/// The contract 000 response without the fields that legitimately vary per call.
async fn answer(engine: &ragstream::Engine, req: &SearchRequest) -> String {
    let kb = name("kb");
    let result = engine.search(&kb, req).await.unwrap();
    let mut v = serde_json::to_value(render_response(&kb, req, &result, "-", 0.0)).unwrap();
    let call = v["retrieval_calls"][0].as_object_mut().unwrap();
    call.remove("latency_ms");
    call.remove("query_id");
    serde_json::to_string(&v).unwrap()
}

fn requests(version: Option<u64>) -> Vec<SearchRequest> {
    [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ]
    .into_iter()
    .map(|m| {
        let mut r = SearchRequest::new("moon gravity ocean tides", m, 4);
        r.index_version = version;
        r
    })
    .collect()
}

#[tokio::test]
async fn a_pinned_version_answers_identically_after_writes_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    let engine = hashing_engine(dir.path());
    let v1 = engine
        .write(&kb, upserts(corpus()))
        .await
        .unwrap()
        .index_version
        .unwrap();
    let mut before = Vec::new();
    for r in requests(None) {
        before.push(answer(&engine, &r).await);
    }
    // Later writes change statistics, documents and rankings.
    let more = vec![
        doc(
            "moon2",
            "Moon facts",
            "The Moon drives ocean tides through gravity; gravity and tides.",
        ),
        doc(
            "tides2",
            "Tide tables",
            "Tide tables predict ocean tides from lunar gravity.",
        ),
    ];
    engine.write(&kb, upserts(more)).await.unwrap();
    engine
        .write(
            &kb,
            vec![DocumentOp::Delete {
                document_id: "tides".into(),
            }],
        )
        .await
        .unwrap();
    for _ in 0..12 {
        // enough commits to trigger keyword-segment merges
        let d = doc(
            &format!("filler{}", rand_id()),
            "Filler",
            "ocean gravity filler text",
        );
        engine.write(&kb, upserts(vec![d])).await.unwrap();
    }
    let latest: Vec<String> = {
        let mut out = Vec::new();
        for r in requests(None) {
            out.push(answer(&engine, &r).await);
        }
        out
    };
    assert_ne!(
        latest, before,
        "the later writes must change the latest answers"
    );
    for (r, expected) in requests(Some(v1)).iter().zip(&before) {
        assert_eq!(
            &answer(&engine, r).await,
            expected,
            "{:?} before restart",
            r.method
        );
    }
    drop(engine);
    let engine = hashing_engine(dir.path());
    for (r, expected) in requests(Some(v1)).iter().zip(&before) {
        assert_eq!(
            &answer(&engine, r).await,
            expected,
            "{:?} after restart",
            r.method
        );
    }
}

fn rand_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

#[tokio::test]
async fn pruned_and_unknown_versions_name_the_oldest_available() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.retain_versions = 3;
    let engine = engine_with(c);
    let kb = name("kb");
    let mut versions = Vec::new();
    for i in 0..5 {
        let d = doc(&format!("d{i}"), "T", &format!("text number {i}"));
        versions.push(
            engine
                .write(&kb, upserts(vec![d]))
                .await
                .unwrap()
                .index_version
                .unwrap(),
        );
    }
    let latest = *versions.last().unwrap();
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.retained_versions, 3);
    assert_eq!(stats.oldest_version, latest - 2);
    for wanted in [versions[0], latest + 10] {
        let mut r = SearchRequest::new("text", SearchMethod::Keyword, 3);
        r.index_version = Some(wanted);
        match engine.search(&kb, &r).await {
            Err(EngineError::VersionUnavailable {
                requested,
                oldest,
                latest: l,
            }) => {
                assert_eq!((requested, oldest, l), (wanted, latest - 2, latest));
            }
            other => panic!("expected VersionUnavailable, got {other:?}"),
        }
    }
    // the oldest retained version still answers, from both stores
    let mut r = SearchRequest::new("text", SearchMethod::Hybrid, 10);
    r.index_version = Some(latest - 2);
    assert_eq!(engine.search(&kb, &r).await.unwrap().hits.len(), 3);
}

/// A write prunes once more than a tenth of the policy's versions have piled up past it
/// (Lance's cleanup reads every version's manifest, too dear for every commit); a tagged
/// version does not count towards that tenth; a maintenance pass prunes to the policy.
#[tokio::test]
async fn writes_prune_in_steps_of_a_tenth_and_maintenance_to_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.retain_versions = 20;
    let engine = engine_with(c);
    let kb = name("kb");
    let mut retained = Vec::new();
    let mut tagged = 0;
    for i in 0..40 {
        let d = doc(&format!("d{i}"), "T", &format!("text number {i}"));
        let version = engine
            .write(&kb, upserts(vec![d]))
            .await
            .unwrap()
            .index_version
            .unwrap();
        if i == 0 {
            let index = engine.index(&kb).await.unwrap();
            tagged = index
                .maintenance()
                .tag("first", Some(version))
                .await
                .unwrap();
        }
        retained.push(engine.stats(&kb).await.unwrap().retained_versions);
    }
    // The policy's 20, its tenth (2) and the tagged version.
    assert!(
        retained.iter().all(|n| *n <= 23),
        "never more than the policy, its tenth and the tag: {retained:?}"
    );
    assert!(
        retained[21..].iter().any(|n| *n > 21),
        "versions past the policy wait for the step, tag or no tag: {retained:?}"
    );
    engine.maintain(&kb).await.unwrap();
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.retained_versions, 21, "the policy's 20 and the tag");
    assert_eq!(stats.oldest_version, tagged);
    let versions = engine
        .index(&kb)
        .await
        .unwrap()
        .lance()
        .versions()
        .await
        .unwrap();
    assert_eq!(versions[1], stats.index_version - 19, "{versions:?}");
}

fn ragstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragstream"))
}

#[tokio::test]
async fn keyword_index_is_repaired_after_a_crash_between_commits() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let docs = dir.path().join("docs.jsonl");
    let write_docs = |docs_list: Vec<ragstream::model::Document>| {
        let lines: Vec<String> = docs_list
            .iter()
            .map(|d| serde_json::to_string(d).unwrap())
            .collect();
        std::fs::write(&docs, lines.join("\n")).unwrap();
    };
    let run = |failpoint: Option<&str>| {
        let mut cmd = ragstream();
        cmd.args(["ingest", "--index", "kb"])
            .arg(&docs)
            .env("RAGSTREAM_STORAGE_DATA_DIR", &data)
            .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
            .env_remove("RAGSTREAM_FAILPOINT");
        if let Some(f) = failpoint {
            cmd.env("RAGSTREAM_FAILPOINT", f);
        }
        cmd.output().unwrap()
    };
    write_docs(corpus());
    assert!(run(None).status.success());
    write_docs(vec![doc(
        "volcano",
        "Volcanoes",
        "Magma erupts from volcanoes as lava.",
    )]);
    let crashed = run(Some("after-lance-commit"));
    assert!(
        !crashed.status.success(),
        "the failpoint must kill the process"
    );

    // Lance has the new version; opening the index repairs tantivy from it.
    let engine = hashing_engine(&data);
    let kb = name("kb");
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.documents, 6);
    assert_eq!(
        stats.chunks as u64, stats.keyword_chunks,
        "Lance and tantivy agree"
    );
    let r = engine
        .search(
            &kb,
            &SearchRequest::new("magma lava", SearchMethod::Keyword, 3),
        )
        .await
        .unwrap();
    assert_eq!(r.hits[0].row.document_id, "volcano");
    assert_eq!(r.index_version, stats.index_version);
    let index = engine.index(&kb).await.unwrap();
    assert_eq!(
        index.keyword().chunk_ids(stats.index_version).unwrap(),
        index
            .lance()
            .all_chunk_ids(&index.lance().latest())
            .await
            .unwrap()
    );
    // Re-running the same ingest is now a no-op.
    let again = run(None);
    assert!(again.status.success());
    let out: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(out["unchanged"], 1);
    assert_eq!(out["index_version"], stats.index_version);
}
