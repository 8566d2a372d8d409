//! Engine behaviour end to end on real Lance and tantivy stores (model-free embedder).

use ragstream::index::DocumentOp;
use ragstream::retrieval::{Filters, QueryPreprocessing, SearchMethod, SearchRequest};
use ragstream::EngineError;
use serde_json::json;

use crate::common::*;

fn request(q: &str, method: SearchMethod, k: usize) -> SearchRequest {
    SearchRequest::new(q, method, k)
}

/// `bread` of [`corpus`] with new text (the old text is about carbon dioxide).
fn sourdough_bread() -> ragstream::model::Document {
    doc(
        "bread",
        "Baking bread",
        "Sourdough relies on wild yeast and lactobacilli.",
    )
}

/// The documents of a keyword query's top 5, best first.
async fn keyword_documents(
    engine: &ragstream::Engine,
    kb: &ragstream::model::IndexName,
    q: &str,
) -> Vec<String> {
    let hits = engine
        .search(kb, &request(q, SearchMethod::Keyword, 5))
        .await
        .unwrap();
    hits.hits.into_iter().map(|h| h.row.document_id).collect()
}

#[tokio::test]
async fn upsert_unchanged_and_delete_semantics() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let first = engine.write(&kb, upserts(corpus())).await.unwrap();
    assert_eq!(first.upserted, 5);
    let v1 = first
        .index_version
        .expect("a first write creates a version");

    // Unchanged content: no version, nothing embedded.
    let again = engine.write(&kb, upserts(corpus())).await.unwrap();
    assert_eq!(again.index_version, None);
    assert_eq!((again.unchanged, again.chunks_written), (5, 0));
    assert_eq!(engine.stats(&kb).await.unwrap().index_version, v1);

    // Changing one document replaces its chunks only.
    let out = engine
        .write(&kb, upserts(vec![sourdough_bread()]))
        .await
        .unwrap();
    assert_eq!((out.upserted, out.unchanged), (1, 0));
    let v2 = out.index_version.unwrap();
    assert!(v2 > v1);
    let hits = keyword_documents(&engine, &kb, "sourdough lactobacilli").await;
    assert_eq!(hits[0], "bread");
    let old = keyword_documents(&engine, &kb, "carbon dioxide ferments").await;
    assert!(old.iter().all(|d| d != "bread"), "old chunks must be gone");
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(
        (stats.documents, stats.chunks as u64),
        (5, stats.keyword_chunks)
    );

    // Delete removes the document from every search method.
    let del = engine.write(&kb, vec![delete("rust")]).await.unwrap();
    assert_eq!(del.deleted, 1);
    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        let r = engine
            .search(&kb, &request("Rust memory safety ownership", method, 10))
            .await
            .unwrap();
        assert!(
            r.hits.iter().all(|h| h.row.document_id != "rust"),
            "{method:?}"
        );
    }
    // Deleting an absent document changes nothing.
    let noop = engine.write(&kb, vec![delete("nope")]).await.unwrap();
    assert_eq!((noop.index_version, noop.unchanged), (None, 1));
    assert_eq!(engine.stats(&kb).await.unwrap().documents, 4);
}

/// Planning looks up only the documents the index may hold (index/known_documents.rs): a
/// reopened index must still know every document it stored, soft-deleted ones included.
#[tokio::test]
async fn a_reopened_index_still_knows_its_documents() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    {
        let engine = hashing_engine(dir.path());
        engine.write(&kb, upserts(corpus())).await.unwrap();
        let del = engine.write(&kb, vec![delete("rust")]).await.unwrap();
        assert_eq!(del.deleted, 1);
    }
    let engine = hashing_engine(dir.path());
    let mut ops: Vec<DocumentOp> = upserts(
        corpus()
            .into_iter()
            .filter(|d| d.id != "bread" && d.id != "rust")
            .collect(),
    );
    ops.push(DocumentOp::Upsert(sourdough_bread()));
    ops.push(delete("apollo"));
    ops.push(DocumentOp::Upsert(doc(
        "new",
        "A new document",
        "Tidal pools shelter anemones at low tide.",
    )));
    let out = engine.write(&kb, ops).await.unwrap();
    // apollo is deleted, bread replaced, the new one added; the other two are unchanged.
    assert_eq!(
        (out.upserted, out.deleted, out.unchanged),
        (2, 1, 2),
        "{out:?}"
    );
    let old = keyword_documents(&engine, &kb, "carbon dioxide ferments").await;
    assert!(
        old.iter().all(|d| d != "bread"),
        "the replaced document's old chunks are gone from the keyword store"
    );
    // One row per chunk in each store: live ones and the soft-deleted (kept for `deleted`
    // visibility), none left behind by the replaced document.
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(
        (
            stats.documents,
            stats.deleted_documents,
            (stats.chunks + stats.deleted_chunks) as u64
        ),
        (4, 2, stats.keyword_chunks)
    );
    // The soft-deleted document comes back as an upsert, not as unchanged content.
    let back = engine
        .write(
            &kb,
            upserts(corpus().into_iter().filter(|d| d.id == "rust").collect()),
        )
        .await
        .unwrap();
    assert_eq!((back.upserted, back.unchanged), (1, 0));
}

#[tokio::test]
async fn last_operation_in_a_batch_wins() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let ops = vec![
        DocumentOp::Upsert(doc("a", "A", "first text")),
        delete("a"),
        DocumentOp::Upsert(doc("a", "A", "final text")),
    ];
    engine.write(&kb, ops).await.unwrap();
    let r = engine
        .search(&kb, &request("text", SearchMethod::Keyword, 5))
        .await
        .unwrap();
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.hits[0].row.text, "final text");
}

#[tokio::test]
async fn hybrid_scores_follow_the_fusion_rule() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    let mut req = request("moon tides ocean", SearchMethod::Hybrid, 3);
    req.hybrid_alpha = 0.3;
    let r = engine.search(&kb, &req).await.unwrap();
    assert_eq!(r.hits.len(), 3);
    for h in &r.hits {
        let (s, k) = (h.semantic_score.unwrap(), h.keyword_score.unwrap());
        assert!((h.score - (0.3 * s + 0.7 * k)).abs() < 1e-12);
        assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&k));
    }
    // the best keyword match is scaled to exactly 1.0
    assert!(r.hits.iter().any(|h| h.keyword_score == Some(1.0)));
    assert_eq!(r.hits[0].row.document_id, "tides");
    // scores descend
    assert!(r.hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[tokio::test]
async fn keyword_scores_are_bm25_and_semantic_scores_similarities() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    let kw = engine
        .search(&kb, &request("espresso coffee", SearchMethod::Keyword, 5))
        .await
        .unwrap();
    assert_eq!(kw.hits[0].row.document_id, "coffee");
    assert!(kw.hits[0].score > 1.0, "BM25 scores are not normalised");
    let sem = engine
        .search(&kb, &request("espresso coffee", SearchMethod::Semantic, 5))
        .await
        .unwrap();
    assert_eq!(sem.hits.len(), 5);
    assert!(sem.hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
    assert_eq!(sem.hits[0].row.document_id, "coffee");
}

#[tokio::test]
async fn filters_are_pushed_down_and_never_starve_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    // 30 documents match the query well; 3 weaker ones carry the filtered project.
    let mut docs: Vec<_> = (0..30)
        .map(|i| {
            let mut d = doc(&format!("strong{i:02}"), "Moon", "moon moon moon landing");
            d.project_id = Some("other".into());
            d
        })
        .collect();
    for i in 0..3 {
        let mut d = doc(
            &format!("weak{i}"),
            "Misc",
            &format!("a note that mentions the moon once, item {i}"),
        );
        d.project_id = Some("target".into());
        d.tags = vec!["t1".into()];
        d.metadata.insert("lang".into(), json!("en"));
        docs.push(d);
    }
    engine.write(&kb, upserts(docs)).await.unwrap();
    let bag = json!({"project_id": "target", "tags": "t1", "lang": "en"});
    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        let mut req = request("moon", method, 3);
        req.filters = Filters::parse(bag.as_object().unwrap()).unwrap();
        let r = engine.search(&kb, &req).await.unwrap();
        assert_eq!(
            r.hits.len(),
            3,
            "{method:?} must find all 3 filtered documents"
        );
        assert!(r
            .hits
            .iter()
            .all(|h| h.row.project_id.as_deref() == Some("target")));
    }
    let mut req = request("moon", SearchMethod::Keyword, 3);
    req.filters = Filters::parse(json!({"page_number": 7}).as_object().unwrap()).unwrap();
    assert!(engine.search(&kb, &req).await.unwrap().hits.is_empty());
}

#[tokio::test]
async fn ties_are_ordered_by_document_id_then_chunk_index() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let docs = ["d3", "d1", "d2"]
        .iter()
        .map(|id| doc(id, "Same", "identical words"))
        .collect();
    engine.write(&kb, upserts(docs)).await.unwrap();
    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        let r = engine
            .search(&kb, &request("identical words", method, 3))
            .await
            .unwrap();
        let ids: Vec<&str> = r.hits.iter().map(|h| h.row.document_id.as_str()).collect();
        assert_eq!(ids, vec!["d1", "d2", "d3"], "{method:?}");
    }
    // Cut inside the tie: hybrid over-fetches every tied chunk, and the order decides which
    // rows are read and returned. (A branch that fetches exactly top_k leaves the choice
    // among chunks tied at the cut to the store: Lance or tantivy.)
    let r = engine
        .search(&kb, &request("identical words", SearchMethod::Hybrid, 2))
        .await
        .unwrap();
    let ids: Vec<&str> = r.hits.iter().map(|h| h.row.document_id.as_str()).collect();
    assert_eq!(ids, vec!["d1", "d2"]);
}

#[tokio::test]
async fn keyword_search_over_many_segments_finds_the_best_and_answers_alike_every_time() {
    // Tantivy searches a snapshot's segments on several threads: the per-segment tops must
    // merge into the true top, and identically on every run, ties at the cut included.
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.index.keyword.merge_min_segments = 0; // one segment per write
    let engine = engine_with(config);
    let kb = name("kb");
    // Equal lengths, so BM25 grows with the term's count: doc i holds "alpha" i times.
    for i in 1..=12 {
        let text = format!("{}{}", "alpha ".repeat(i), "filler ".repeat(12 - i));
        engine
            .write(&kb, upserts(vec![doc(&format!("d{i:02}"), "T", &text)]))
            .await
            .unwrap();
    }
    // Four more that tie with d08, written as two segments of two.
    for pair in [["t1", "t2"], ["t3", "t4"]] {
        let text = format!("{}{}", "alpha ".repeat(8), "filler ".repeat(4));
        let docs = pair.iter().map(|id| doc(id, "T", &text)).collect();
        engine.write(&kb, upserts(docs)).await.unwrap();
    }
    let index = engine.index(&kb).await.unwrap();
    let stats = index.reader().stats().await.unwrap();
    let searcher = index.keyword().searcher(stats.index_version).unwrap();
    assert!(
        searcher.segment_readers().len() >= 14,
        "one segment per write"
    );
    let top = |k| {
        index
            .keyword()
            .search(&searcher, "alpha", &Filters::default(), k)
            .unwrap()
    };
    let ids = |hits: &[(String, f32)]| -> Vec<String> {
        hits.iter().map(|(chunk_id, _)| chunk_id.clone()).collect()
    };
    let first = top(6);
    assert_eq!(first.len(), 6);
    assert!(first.windows(2).all(|w| w[0].1 >= w[1].1), "scores descend");
    assert!(first[3].1 > first[4].1, "d12..d09 outscore the d08 tie");
    let strongest = top(4);
    let best = engine
        .search(&kb, &request("alpha", SearchMethod::Keyword, 4))
        .await
        .unwrap();
    let docs: Vec<&str> = best
        .hits
        .iter()
        .map(|h| h.row.document_id.as_str())
        .collect();
    assert_eq!(docs, vec!["d12", "d11", "d10", "d09"]);
    assert_eq!(ids(&strongest), ids(&first[..4]));
    for _ in 0..25 {
        assert_eq!(ids(&top(6)), ids(&first), "the cut inside a tie moved");
    }
}

#[tokio::test]
async fn hits_carry_the_rows_they_were_ranked_on() {
    // Candidates are ranked on ids and vectors and only the kept ones read by row address:
    // each hit's row must be its chunk's whole row, across fragments and after rewrites.
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    let mut more: Vec<_> = (0..8)
        .map(|i| {
            let mut d = doc(
                &format!("moon{i}"),
                "Moon notes",
                &format!("the moon, note {i}"),
            );
            d.tags = vec![format!("t{i}")];
            d
        })
        .collect();
    more.push(doc(
        "tides",
        "Ocean tides, revised",
        "Tides follow the Moon; spring tides follow the Sun and the Moon in line.",
    ));
    engine.write(&kb, upserts(more)).await.unwrap();
    let index = engine.index(&kb).await.unwrap();
    let ds = index.lance().latest();
    for method in [SearchMethod::Semantic, SearchMethod::Hybrid] {
        for k in [1, 4, 13] {
            let r = engine
                .search(&kb, &request("moon tides", method, k))
                .await
                .unwrap();
            assert_eq!(r.hits.len(), k.min(13), "{method:?} top {k}");
            let ids: Vec<String> = r.hits.iter().map(|h| h.row.chunk_id.clone()).collect();
            let full = index.lance().rows(&ds, &ids, false).await.unwrap();
            for h in &r.hits {
                let row = full.iter().find(|f| f.chunk_id == h.row.chunk_id).unwrap();
                assert_eq!(&h.row, row, "{method:?} top {k}");
            }
        }
    }
    let r = engine
        .search(&kb, &request("spring tides", SearchMethod::Hybrid, 1))
        .await
        .unwrap();
    assert_eq!(r.hits[0].row.title.as_deref(), Some("Ocean tides, revised"));
}

#[tokio::test]
async fn normalize_preprocessing_is_applied_and_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    let mut req = request("  ESPRESSO?? ", SearchMethod::Keyword, 2);
    req.preprocessing = QueryPreprocessing::Normalize;
    let r = engine.search(&kb, &req).await.unwrap();
    assert_eq!(r.query, "espresso");
    assert_eq!(r.hits[0].row.document_id, "coffee");
    let mut empty = request("?!", SearchMethod::Keyword, 2);
    empty.preprocessing = QueryPreprocessing::Normalize;
    match engine.search(&kb, &empty).await {
        Err(EngineError::Invalid(e)) => assert_eq!(e.field, "query"),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    match engine
        .search(&name("missing"), &request("q", SearchMethod::Semantic, 5))
        .await
    {
        Err(EngineError::IndexNotFound(n)) => assert_eq!(n, "missing"),
        other => panic!("{other:?}"),
    }
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    match engine
        .search(&kb, &request("q", SearchMethod::Semantic, 101))
        .await
    {
        Err(EngineError::Invalid(e)) => assert_eq!(e.field, "top_k"),
        other => panic!("{other:?}"),
    }
    let mut bad = doc("x", "X", "text");
    bad.updated_at = Some("not a time".into());
    match engine.write(&kb, upserts(vec![bad])).await {
        Err(EngineError::Invalid(e)) => assert_eq!(e.field, "updated_at"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_index_refuses_a_different_embedder() {
    let dir = tempfile::tempdir().unwrap();
    let kb = name("kb");
    hashing_engine(dir.path())
        .write(&kb, upserts(corpus()))
        .await
        .unwrap();
    let other = ragstream::Engine::new(
        config(dir.path()),
        std::sync::Arc::new(ragstream::embedding::HashingEmbedder::new(16)),
    );
    let err = other
        .search(&kb, &request("moon", SearchMethod::Semantic, 5))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("created for embedder hashing (384-d)"),
        "{err}"
    );
    assert!(other
        .write(&kb, upserts(vec![doc("n", "N", "new")]))
        .await
        .is_err());
}

#[tokio::test]
async fn chunks_carry_contract_000_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let d = ragstream::model::Document {
        id: "manual".into(),
        title: Some("Manual".into()),
        pages: Some(vec![
            ragstream::model::Page {
                page_number: 1,
                text: "Introduction to pumps.".into(),
            },
            ragstream::model::Page {
                page_number: 2,
                text: "Pump maintenance schedule.".into(),
            },
        ]),
        uri: Some("https://example.com/manual.pdf".into()),
        source_type: Some("pdf".into()),
        source_name: Some("manuals".into()),
        source_id: Some("m-1".into()),
        source_path: Some("/docs/manual.pdf".into()),
        managed_by_source: Some(true),
        ..Default::default()
    };
    engine.write(&kb, upserts(vec![d])).await.unwrap();
    let r = engine
        .search(
            &kb,
            &request("maintenance schedule", SearchMethod::Keyword, 1),
        )
        .await
        .unwrap();
    let meta = ragstream::contracts::wire::chunk_metadata::ChunkMetadata::of(&r.hits[0].row);
    for key in ragstream::model::metadata::BUILT_IN_FIELDS {
        assert!(meta.contains_key(*key), "missing {key}");
    }
    assert_eq!(meta["page_number"], json!(2));
    assert_eq!(meta["knowledge_base_id"], json!("kb"));
    assert_eq!(meta["chunk_index"], json!(1));
    assert_eq!(meta["offsets"], json!({"start": 0, "end": 26}));
}

#[tokio::test]
async fn diversification_skips_near_duplicates_with_the_vectors_ranking_read() {
    // Semantic and hybrid hits bring their candidates' vectors to MMR (keyword hits have
    // theirs read); either way no vector is left on a returned row.
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let docs = vec![
        doc("a1", "", "apollo moon landing crew"),
        doc("a2", "", "apollo moon landing crew"),
        doc("t", "", "moon tides and the apollo crew"),
    ];
    engine.write(&kb, upserts(docs)).await.unwrap();
    for method in [
        SearchMethod::Semantic,
        SearchMethod::Keyword,
        SearchMethod::Hybrid,
    ] {
        let mut req = request("apollo moon landing crew", method, 2);
        req.candidates.semantic = Some(3);
        req.candidates.keyword = Some(3);
        let plain = engine.search(&kb, &req).await.unwrap();
        let ids: Vec<&str> = plain
            .hits
            .iter()
            .map(|h| h.row.document_id.as_str())
            .collect();
        assert_eq!(ids, vec!["a1", "a2"], "{method:?} without diversification");
        req.diversify = 0.9;
        let diverse = engine.search(&kb, &req).await.unwrap();
        let ids: Vec<&str> = diverse
            .hits
            .iter()
            .map(|h| h.row.document_id.as_str())
            .collect();
        assert_eq!(ids, vec!["a1", "t"], "{method:?} skips the duplicate");
        assert!(diverse.hits.iter().all(|h| h.row.vector.is_none()));
    }
}

/// Rows read by address out of one large fragment, in any order, are the rows at those
/// addresses — columns whose pages are constant (the same value, or null, in every row)
/// included. (Lance's constant-page decoder is patched to skip to a row arithmetically:
/// vendor/README.md.)
#[tokio::test]
async fn rows_read_by_address_from_constant_pages_are_the_rows_at_those_addresses() {
    use futures::TryStreamExt;
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    let docs: Vec<_> = (0..3000usize)
        .map(|i| ragstream::model::Document {
            source_type: Some("web".into()),
            tags: vec!["shared".into(), "corpus".into()],
            // Every 700th row has a uri: a column with nulls and a few values.
            uri: i
                .is_multiple_of(700)
                .then(|| format!("https://example.com/{i}")),
            ..doc(&format!("d{i:04}"), "", &format!("passage number {i}"))
        })
        .collect();
    engine.write(&kb, upserts(docs)).await.unwrap();
    let index = engine.index(&kb).await.unwrap();
    let ds = index.lance().latest();
    assert_eq!(
        ds.get_fragments().len(),
        1,
        "one fragment, one page per column"
    );

    // Where every row is, by a full scan.
    let mut scanner = ds.scan();
    scanner
        .project(&["document_id"])
        .unwrap()
        .with_row_address();
    let batches: Vec<arrow_array::RecordBatch> = scanner
        .try_into_stream()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut at = std::collections::HashMap::new();
    for b in &batches {
        use arrow_array::cast::AsArray;
        let ids = b.column_by_name("document_id").unwrap().as_string::<i32>();
        let addresses = b
            .column_by_name("_rowaddr")
            .unwrap()
            .as_primitive::<arrow_array::types::UInt64Type>();
        for (id, address) in ids.iter().zip(addresses.iter()) {
            at.insert(address.unwrap(), id.unwrap().to_string());
        }
    }
    assert_eq!(at.len(), 3000);

    // Backwards, forwards, adjacent, the last row and the first.
    let mut addresses: Vec<u64> = at.keys().copied().collect();
    addresses.sort();
    let picks: Vec<u64> = [2999, 0, 1400, 1401, 700, 2100, 5, 2998]
        .iter()
        .map(|&i| addresses[i])
        .collect();
    let rows = index.lance().rows_at(&ds, &picks, false).await.unwrap();
    assert_eq!(rows.len(), picks.len());
    for (row, address) in rows.iter().zip(&picks) {
        let id = &at[address];
        assert_eq!(&row.document_id, id);
        let i: usize = id[1..].parse().unwrap();
        assert_eq!(row.text, format!("passage number {i}"));
        assert_eq!(row.source_type.as_deref(), Some("web"));
        assert_eq!(row.tags, vec!["shared".to_string(), "corpus".to_string()]);
        assert_eq!(row.page_number, None);
        assert_eq!(row.deleted_at, None);
        let uri = i
            .is_multiple_of(700)
            .then(|| format!("https://example.com/{i}"));
        assert_eq!(row.uri, uri, "{id}");
    }
}

/// The operation of the commit that made the newest version.
async fn newest_operation(engine: &ragstream::Engine, kb: &ragstream::model::IndexName) -> String {
    let index = engine.index(kb).await.unwrap();
    let transaction = index.lance().latest().read_transaction().await.unwrap();
    match transaction
        .expect("a commit records its transaction")
        .operation
    {
        lance::dataset::transaction::Operation::Append { .. } => "append".into(),
        other => format!("{other}"),
    }
}

#[tokio::test]
async fn a_batch_prepared_while_others_commit_appends_unless_they_gave_its_documents_rows() {
    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    // Three batches planned against the same version, committed one after another.
    let prepare = |id: &str, title: &str, text: &str| {
        engine.prepare_write(&kb, upserts(vec![doc(id, title, text)]))
    };
    let first = prepare("nova", "Nova", "A nova flares in a binary star.")
        .await
        .unwrap();
    let second = prepare("comet", "Comet", "A comet sheds ice near the sun.")
        .await
        .unwrap();
    let again = prepare("nova", "Nova", "A recurrent nova flares twice.")
        .await
        .unwrap();
    let none = std::collections::HashMap::new();
    engine.commit_prepared(first, none.clone()).await.unwrap();
    assert_eq!(newest_operation(&engine, &kb).await, "append");
    // The commit in between gave rows to `nova` only: `comet` is still new, so an append.
    engine.commit_prepared(second, none.clone()).await.unwrap();
    assert_eq!(newest_operation(&engine, &kb).await, "append");
    // `nova` was new when this batch was planned, but has rows now: they are replaced.
    engine.commit_prepared(again, none).await.unwrap();
    assert_ne!(newest_operation(&engine, &kb).await, "append");
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.documents, corpus().len() + 2);
    let hits = engine
        .search(&kb, &request("nova flares", SearchMethod::Keyword, 10))
        .await
        .unwrap();
    let nova: Vec<_> = hits
        .hits
        .iter()
        .filter(|h| h.row.document_id == "nova")
        .collect();
    assert_eq!(
        nova.len(),
        1,
        "one chunk of nova, not the first one beside it"
    );
    assert!(nova[0].row.text.contains("recurrent"));
}

/// A calibration on the index's own queries can run for minutes. What is set meanwhile, by
/// hand or on judged queries, stands: the calibration stores only over defaults it may
/// replace as they are when it writes.
#[tokio::test]
async fn a_self_calibration_never_overwrites_settings_made_while_it_ran() {
    use ragstream::calibration::calibrate::{store, store_own, Calibration};
    use ragstream::index::{CalibrationSource, IndexDefaults};
    use ragstream::model::BranchFusion;

    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    engine.write(&kb, upserts(corpus())).await.unwrap();
    let handle = engine.index(&kb).await.unwrap();
    let measured = Calibration {
        center: 0.3,
        ndcg_at_10_by_center: Vec::new(),
        queries: 10,
        passage_weight: Some(0.2),
        ndcg_at_10_by_passage_weight: Vec::new(),
        passage_queries: 10,
        fusion: BranchFusion::MinMax,
        ndcg_at_10_by_fusion: Vec::new(),
    };

    // Set by hand while the calibration ran: it stands.
    let by_hand = IndexDefaults {
        auto_semantic_center: Some(0.8),
        ..Default::default()
    };
    handle.writer().set_defaults(by_hand).await.unwrap();
    assert!(!store_own(&engine, &kb, &measured).await.unwrap());
    assert_eq!(handle.info().defaults, by_hand);

    // Cleared by hand: the calibration may fill them.
    handle
        .writer()
        .set_defaults(IndexDefaults::default())
        .await
        .unwrap();
    assert!(store_own(&engine, &kb, &measured).await.unwrap());
    let stored = handle.info().defaults;
    assert_eq!(stored.auto_semantic_center, Some(0.3));
    assert_eq!(stored.auto_passage_weight, Some(0.2));
    assert_eq!(stored.fusion, Some(BranchFusion::MinMax));
    assert_eq!(
        stored.auto_calibration.map(|c| c.source),
        Some(CalibrationSource::Synthetic)
    );

    // A later self-calibration replaces its own; a judged one it never replaces.
    let later = Calibration {
        center: 0.6,
        ..measured.clone()
    };
    assert!(store_own(&engine, &kb, &later).await.unwrap());
    assert_eq!(handle.info().defaults.auto_semantic_center, Some(0.6));
    let judged = Calibration {
        center: 0.9,
        ..measured.clone()
    };
    store(&engine, &kb, &judged, CalibrationSource::Judged)
        .await
        .unwrap();
    assert!(!store_own(&engine, &kb, &later).await.unwrap());
    assert_eq!(handle.info().defaults.auto_semantic_center, Some(0.9));
    // And what was stored is what a reopened index reads.
    drop(handle);
    drop(engine);
    let reopened = engine_with(config(dir.path()));
    assert_eq!(
        reopened
            .index(&kb)
            .await
            .unwrap()
            .info()
            .defaults
            .auto_semantic_center,
        Some(0.9)
    );
}

/// A hybrid search that keeps its candidates ranks them again, at any weight and with any
/// fusion, exactly as a search at that weight and fusion does: calibration searches each
/// query once and ranks it at every setting it tries.
#[tokio::test]
async fn a_kept_fusion_input_ranks_as_the_search_at_every_setting() {
    use ragstream::model::BranchFusion;

    let dir = tempfile::tempdir().unwrap();
    let engine = hashing_engine(dir.path());
    let kb = name("kb");
    // Many documents of few words: pools larger than `top_k`, and documents alike word for
    // word, whose equal scores the ranking order settles.
    let words = [
        "yeast", "bread", "carbon", "dioxide", "rust", "memory", "safety", "ocean", "salt", "tide",
        "river", "stone",
    ];
    let docs = (0..80)
        .map(|i| {
            let text: Vec<&str> = (0..12).map(|j| words[(i * 7 + j * j * 3) % 12]).collect();
            doc(
                &format!("d{i:02}"),
                &format!("notes on {}", words[i % 12]),
                &text.join(" "),
            )
        })
        .collect();
    engine.write(&kb, upserts(docs)).await.unwrap();
    let top_k = 5;
    for query in [
        "bread yeast",
        "carbon dioxide in the ocean",
        "memory safety",
        "salt",
    ] {
        let mut keeping = request(query, SearchMethod::Hybrid, top_k);
        keeping.keep_pools = true;
        let input = engine
            .search(&kb, &keeping)
            .await
            .unwrap()
            .pools
            .fusion_input;
        assert!(
            input.candidates.len() > top_k && !input.keyword.is_empty(),
            "{query}: {input:?}"
        );
        for alpha in [0.0, 0.2, 0.5, 0.7, 1.0] {
            for fusion in [
                BranchFusion::Contract,
                BranchFusion::MinMax,
                BranchFusion::ZScore,
                BranchFusion::Rrf,
            ] {
                let mut r = request(query, SearchMethod::Hybrid, top_k);
                r.hybrid_alpha = alpha;
                r.fusion = fusion;
                let searched: Vec<(String, f64)> = engine
                    .search(&kb, &r)
                    .await
                    .unwrap()
                    .hits
                    .into_iter()
                    .map(|h| (h.row.chunk_id, h.score))
                    .collect();
                let ranked: Vec<(String, f64)> = input
                    .rank(alpha, fusion, top_k)
                    .into_iter()
                    .map(|(c, score)| (c.chunk_id.clone(), score))
                    .collect();
                assert_eq!(ranked, searched, "{query} at {alpha} with {fusion:?}");
            }
        }
    }
}
