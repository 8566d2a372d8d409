//! Soft deletes: a deleted document leaves every `active` search at once, stays findable
//! through contract 003's `deleted`/`all` visibility (with the override) and in pinned older
//! versions, is counted in `deleted_matches_blocked` when withheld, and comes back when it is
//! upserted again.

use ragstream::contracts::Contract;
use ragstream::index::DocumentOp;
use ragstream::retrieval::{SearchMethod, SearchRequest};
use ragstream::Engine;
use serde_json::{json, Value};

use crate::common::{answer, config, corpus, engine_with, name, upserts};

async fn engine(dir: &std::path::Path, override_ok: bool) -> Engine {
    let mut c = config(dir);
    c.contracts.default_index = "kb".into();
    c.contracts.visibility_override_allowed = override_ok;
    c.contracts.tenant_scoped = true;
    let e = engine_with(c);
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    e
}

fn delete(id: &str) -> Vec<DocumentOp> {
    vec![DocumentOp::Delete {
        document_id: id.into(),
    }]
}

async fn c003(e: &Engine, body: Value) -> Value {
    let r = answer(e, Contract::C003, None, body.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

fn match_ids(body: &Value) -> Vec<String> {
    body["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_deleted_document_is_hidden_from_active_searches_but_kept() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let kb = name("kb");
    let before = e.stats(&kb).await.unwrap();
    let out = e.write(&kb, delete("apollo")).await.unwrap();
    assert_eq!((out.deleted, out.chunks_written), (1, 0));
    let after_delete = out.index_version.unwrap();

    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        let r = e
            .search(
                &kb,
                &SearchRequest::new("Apollo astronauts Moon", method, 5),
            )
            .await
            .unwrap();
        assert!(
            r.hits.iter().all(|h| h.row.document_id != "apollo"),
            "{method:?}"
        );
    }
    let stats = e.stats(&kb).await.unwrap();
    assert_eq!((stats.documents, stats.deleted_documents), (4, 1));
    assert_eq!(stats.chunks + stats.deleted_chunks, before.chunks);
    assert_eq!(
        stats.keyword_chunks,
        (stats.chunks + stats.deleted_chunks) as u64,
        "the keyword store keeps the deleted rows too"
    );

    // A pinned version from before the delete still answers with the document.
    let mut pinned = SearchRequest::new("Apollo astronauts", SearchMethod::Hybrid, 5);
    pinned.index_version = Some(before.index_version);
    let r = e.search(&kb, &pinned).await.unwrap();
    assert_eq!(r.hits[0].row.document_id, "apollo");

    // Deleting it again changes nothing.
    let again = e.write(&kb, delete("apollo")).await.unwrap();
    assert_eq!((again.index_version, again.unchanged), (None, 1));

    // Hydration treats the deleted chunks as gone.
    let mut all = SearchRequest::new("Apollo astronauts", SearchMethod::Keyword, 5);
    all.filters.visibility = ragstream::retrieval::filters::Visibility::Deleted;
    let deleted = e.search(&kb, &all).await.unwrap();
    assert_eq!(deleted.hits.len(), 1);
    assert!(deleted.hits[0].row.deleted_at.is_some());
    let chunk_id = deleted.hits[0].row.chunk_id.clone();
    let h =
        ragstream::contracts::hydrate::hydrate(&e, &kb, &json!({"chunk_ids": [chunk_id]})).await;
    assert_eq!(h.body["not_found"], json!([chunk_id]), "{}", h.body);

    // Upserting it again brings it back.
    let back = e
        .write(&kb, upserts(vec![corpus().remove(0)]))
        .await
        .unwrap();
    assert_eq!(back.upserted, 1, "a deleted document is not 'unchanged'");
    assert!(back.index_version.unwrap() > after_delete);
    let stats = e.stats(&kb).await.unwrap();
    assert_eq!((stats.documents, stats.deleted_documents), (5, 0));
    let r = e
        .search(
            &kb,
            &SearchRequest::new("Apollo astronauts", SearchMethod::Hybrid, 1),
        )
        .await
        .unwrap();
    assert_eq!(r.hits[0].row.document_id, "apollo");
}

#[tokio::test]
async fn c003_visibility_sees_deleted_documents_only_with_the_override() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    e.write(&name("kb"), delete("apollo")).await.unwrap();
    let ask = |visibility: &str, override_flag: Option<bool>| {
        let mut body = json!({
            "query": "Apollo astronauts Moon",
            "visibility": visibility,
            "hybrid": {"min_sim": 0.0, "top_k": 5, "diversify_strength": 0.0},
        });
        if let Some(f) = override_flag {
            body["visibility_override_allowed"] = json!(f);
        }
        body
    };

    let deleted = c003(&e, ask("deleted", Some(true))).await;
    assert_eq!(deleted["meta"]["visibility_effective"], "deleted");
    assert_eq!(match_ids(&deleted), ["apollo"]);
    assert_eq!(deleted["meta"]["deleted_matches_blocked"], 0);

    let all = c003(&e, ask("all", Some(true))).await;
    assert_eq!(all["meta"]["visibility_effective"], "all");
    assert_eq!(match_ids(&all)[0], "apollo");

    // The request declines the override: active is enforced and the withheld match counted.
    let active = c003(&e, ask("all", Some(false))).await;
    assert_eq!(active["meta"]["visibility_effective"], "active");
    assert!(!match_ids(&active).contains(&"apollo".to_string()));
    assert_eq!(active["meta"]["deleted_matches_blocked"], 1, "{active}");

    // Plain active search counts what it withheld as well.
    let plain = c003(
        &e,
        json!({"query": "Apollo astronauts Moon", "hybrid": {"min_sim": 0.0}}),
    )
    .await;
    assert_eq!(plain["meta"]["deleted_matches_blocked"], 1);
    // A query the deleted document does not match blocks nothing.
    let other = c003(
        &e,
        json!({"query": "espresso coffee", "hybrid": {"top_k": 1}}),
    )
    .await;
    assert_eq!(other["meta"]["deleted_matches_blocked"], 0);

    // The caller's context does not allow the override: the request's flag cannot grant it.
    let dir2 = tempfile::tempdir().unwrap();
    let strict = engine(dir2.path(), false).await;
    strict.write(&name("kb"), delete("apollo")).await.unwrap();
    let denied = c003(&strict, ask("deleted", Some(true))).await;
    assert_eq!(denied["meta"]["visibility_effective"], "active");
    assert!(!match_ids(&denied).contains(&"apollo".to_string()));
}

/// An index written before soft deletes (no `deleted_at` column, no keyword store) opens:
/// the column is added, every row reads as live, and the keyword store is rebuilt.
#[tokio::test]
async fn an_index_written_before_soft_deletes_is_upgraded_on_open() {
    use arrow_array::RecordBatchIterator;
    use ragstream::index::rows::{chunk_schema, rows_to_batch, ChunkRow};
    use ragstream::model::{Chunk, ChunkId, Offsets};

    let dir = tempfile::tempdir().unwrap();
    let kb_dir = dir.path().join("indexes").join("kb");
    std::fs::create_dir_all(&kb_dir).unwrap();
    let doc = crate::common::doc("old", "Old doc", "Lighthouses guide ships at night.");
    let chunk = Chunk {
        chunk_id: ChunkId("old-0".into()),
        document_id: "old".into(),
        chunk_index: 0,
        text: doc.text.clone().unwrap(),
        section_path: vec![],
        page_number: None,
        offsets: Offsets { start: 0, end: 33 },
    };
    let mut row = ChunkRow::new("kb", &doc, "h", chunk);
    let embedder = ragstream::embedding::HashingEmbedder::new(384);
    use ragstream::embedding::Embedder;
    row.vector = Some(
        embedder
            .embed(&[row.search_text().as_str()])
            .unwrap()
            .remove(0),
    );
    let full = rows_to_batch(&[row], 384).unwrap();
    // The schema of earlier releases: everything but the trailing deleted_at column.
    let old = full
        .project(&(0..full.num_columns() - 1).collect::<Vec<_>>())
        .unwrap();
    let old_schema = std::sync::Arc::new(
        chunk_schema(384)
            .project(&(0..full.num_columns() - 1).collect::<Vec<_>>())
            .unwrap(),
    );
    lance::Dataset::write(
        RecordBatchIterator::new(vec![Ok(old)], old_schema),
        kb_dir.join("chunks.lance").to_str().unwrap(),
        None,
    )
    .await
    .unwrap();
    std::fs::write(
        kb_dir.join("index.json"),
        json!({"name": "kb", "embedder": embedder.id(), "dimensions": 384,
               "created_at": "2026-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();

    let e = engine_with(config(dir.path()));
    let kb = name("kb");
    let r = e
        .search(
            &kb,
            &SearchRequest::new("lighthouses ships", SearchMethod::Hybrid, 3),
        )
        .await
        .unwrap();
    assert_eq!(r.hits[0].row.document_id, "old");
    assert_eq!(r.hits[0].row.deleted_at, None);
    // And it takes soft deletes from now on.
    e.write(&kb, delete("old")).await.unwrap();
    assert_eq!(e.stats(&kb).await.unwrap().deleted_documents, 1);
}
