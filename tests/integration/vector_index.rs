//! The approximate vector index: built in the background once an index has enough rows,
//! new rows findable at once (searched exactly until the next build), and recall against
//! exact search at a version before the build.

use lance::index::DatasetIndexExt;
use ragstream::index::vector_index::{coverage, ID_INDEX, VECTOR_INDEX};
use ragstream::model::IndexName;
use ragstream::retrieval::filters::{Filters, Visibility};
use ragstream::retrieval::search::VectorSearch;
use ragstream::retrieval::{SearchMethod, SearchRequest};
use ragstream::Engine;

use crate::common::{config, delete, doc, engine_with, name, upserts, wait_for_vector_index};

const WORDS: &[&str] = &[
    "volcano", "glacier", "desert", "forest", "river", "ocean", "mountain", "canyon", "island",
    "meadow", "tundra", "swamp", "valley", "plateau", "lagoon", "delta", "reef", "savanna",
    "prairie", "fjord", "geyser", "marsh", "dune", "cliff", "cave", "crater", "estuary", "steppe",
    "taiga", "atoll",
];

/// Document `i`: four words picked by `i`, so that neighbours differ.
fn text(i: usize) -> String {
    let n = WORDS.len();
    format!(
        "{} {} {} {} number {i}",
        WORDS[i % n],
        WORDS[(i / n) % n],
        WORDS[(i * 7 + 3) % n],
        WORDS[(i * 13 + 5) % n]
    )
}

/// Documents `d0` … `d{n-1}`, each with [`text`] of its number.
fn numbered(n: usize) -> Vec<ragstream::model::Document> {
    (0..n)
        .map(|i| doc(&format!("d{i}"), "", &text(i)))
        .collect()
}

/// No filter: every row, soft-deleted or not.
fn everything() -> Filters {
    Filters {
        visibility: Visibility::All,
        ..Filters::default()
    }
}

fn semantic(q: &str, version: Option<u64>) -> SearchRequest {
    let mut r = SearchRequest::new(q, SearchMethod::Semantic, 10);
    r.index_version = version;
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_is_built_in_the_background_and_new_rows_are_found_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 600;
    c.index.vector.partitions = 8;
    // The hashing embedder's sparse vectors lose more to 8-bit quantisation than a model's;
    // re-ranking more candidates exactly makes up for it.
    c.index.vector.refine_factor = 10;
    let e = engine_with(c);
    let kb = name("kb");
    let docs = numbered(800);
    e.write(&kb, upserts(docs)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    let exact_version = index.latest_version();
    // The build runs in the background after the commit; wait for its version.
    wait_for_vector_index(&e, &index).await;
    let indexed_version = index.latest_version();
    assert!(indexed_version > exact_version);
    // The search indexes are loaded into Lance's cache once per set of index segments (this
    // engine does not keep indexes warm by itself, so the first call here loads them).
    assert!(index.reader().prewarm_search_indexes().await.unwrap());
    assert!(!index.reader().prewarm_search_indexes().await.unwrap());
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (800, 800));
    // The chunk-id index comes with it (hydration by id is then a lookup).
    let names: Vec<String> = index
        .lance()
        .latest()
        .load_indices()
        .await
        .unwrap()
        .iter()
        .map(|i| i.name.clone())
        .collect();
    assert!(names.contains(&ID_INDEX.to_string()), "{names:?}");

    // Recall@10 of the index against exact search (the version before the build).
    let mut found = 0;
    let mut wanted = 0;
    for i in (0..800).step_by(40) {
        let (exact, approx) =
            exact_and_approximate(&e, &kb, &text(i), (exact_version, indexed_version)).await;
        wanted += exact.hits.len();
        found += found_of(&exact, &approx);
    }
    let recall = found as f64 / wanted as f64;
    assert!(recall >= 0.9, "recall@10 {recall}");
    // Each answer says how its semantic branch searched.
    let q = text(7);
    for (version, how) in [
        (exact_version, VectorSearch::Exact),
        (indexed_version, VectorSearch::Approximate),
    ] {
        let r = e.search(&kb, &semantic(&q, Some(version))).await.unwrap();
        assert_eq!(r.vector_search, Some(how), "version {version}");
    }
    let keyword_only = SearchRequest::new(&q, SearchMethod::Keyword, 10);
    assert_eq!(
        e.search(&kb, &keyword_only).await.unwrap().vector_search,
        None
    );

    // A new document is findable at once: its fragment is not indexed yet and is searched
    // exactly.
    e.write(
        &kb,
        upserts(vec![doc("new", "", "aurora borealis over the polar night")]),
    )
    .await
    .unwrap();
    let hits = e
        .search(&kb, &semantic("aurora borealis over the polar night", None))
        .await
        .unwrap();
    assert_eq!(hits.hits[0].row.document_id, "new");
    let (covered, total) = coverage(&index.lance().latest()).await.unwrap();
    assert_eq!(
        (covered, total),
        (800, 801),
        "the new row is not covered yet"
    );
    // The vector search gives candidates (ids, vectors, row addresses) — the new, unindexed
    // row among them — and rows read at their addresses are theirs, in order.
    let ds = index.lance().latest();
    let v = e
        .embedder()
        .embed(&["aurora borealis over the polar night"])
        .unwrap()
        .remove(0);
    let found = index
        .lance()
        .nearest(&ds, &v, 5, &everything())
        .await
        .unwrap();
    assert_eq!(found.len(), 5);
    assert_eq!(found[0].document_id, "new");
    // Indexed and unindexed candidates come back as one list, nearest first (the read runs
    // on one DataFusion partition: no merge of partial lists to rely on).
    let similarity = |c: &ragstream::index::rows::CandidateRow| -> f32 {
        c.vector.iter().zip(&v).map(|(a, b)| a * b).sum()
    };
    for pair in found.windows(2) {
        assert!(
            similarity(&pair[0]) >= similarity(&pair[1]) - 1e-6,
            "candidates out of order: {} before {}",
            pair[0].chunk_id,
            pair[1].chunk_id
        );
    }
    let addresses: Vec<u64> = found.iter().map(|c| c.address).collect();
    let read = index.lance().rows_at(&ds, &addresses, true).await.unwrap();
    for (row, c) in read.iter().zip(&found) {
        assert_eq!(
            (&row.chunk_id, &row.document_id, row.chunk_index),
            (&c.chunk_id, &c.document_id, c.chunk_index)
        );
        assert_eq!(row.vector.as_ref(), Some(&c.vector));
    }
    assert_eq!(read.len(), found.len());
    assert!(
        index.lance().rows_at(&ds, &addresses, false).await.unwrap()[0]
            .vector
            .is_none()
    );
    // Looked up by chunk id, the same rows are the same candidates.
    let ids: Vec<String> = found.iter().map(|c| c.chunk_id.clone()).collect();
    let mut by_id = index.lance().candidates(&ds, &ids).await.unwrap();
    by_id.sort_by_key(|c| c.address);
    let mut expected = found.clone();
    expected.sort_by_key(|c| c.address);
    assert_eq!(by_id, expected);
    // The keyword store has the index version's snapshot too (hybrid works at it).
    let mut hybrid = SearchRequest::new("volcano", SearchMethod::Hybrid, 5);
    hybrid.index_version = Some(indexed_version);
    assert!(!e.search(&kb, &hybrid).await.unwrap().hits.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_racing_ingestion_commits_and_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 400;
    c.index.vector.partitions = 4;
    let e = std::sync::Arc::new(engine_with(c));
    let kb = name("kb");
    let docs = numbered(500);
    e.write(&kb, upserts(docs)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    // Commits keep coming (and some replace earlier documents) while the build trains.
    for round in 0..20 {
        let docs: Vec<_> = (0..10)
            .map(|i| {
                let n = 500 + round * 10 + i;
                doc(&format!("d{}", n % 520), "", &text(n))
            })
            .collect();
        e.write(&kb, upserts(docs)).await.unwrap();
    }
    wait_for_vector_index(&e, &index).await;
    // Every document is found by its current text, indexed or not: d10 was replaced during
    // the build (its text is now text(530)), d300 never changed, d505 came with the races.
    for (id, n) in [("d10", 530), ("d300", 300), ("d505", 505)] {
        let r = e.search(&kb, &semantic(&text(n), None)).await.unwrap();
        assert_eq!(r.hits[0].row.document_id, id, "{id}");
    }
    assert_eq!(e.stats(&kb).await.unwrap().documents, 520);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuild_applies_changed_graph_settings_whether_or_not_a_build_is_due() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    // Never due by row count: only the explicit rebuild builds.
    c.index.vector.min_rows = 1_000_000;
    c.index.vector.partitions = 2;
    c.index.vector.hnsw_m = 6;
    c.index.vector.hnsw_ef_construction = 40;
    c.index.vector.refine_factor = 10;
    let e = engine_with(c.clone());
    let kb = name("kb");
    let docs = numbered(300);
    e.write(&kb, upserts(docs)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (0, 300));

    let (version, rows) = e.rebuild_vector_index(&kb).await.unwrap();
    assert_eq!((version, rows), (index.latest_version(), 300));
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (300, 300));
    assert_eq!(index.info().vector_index_trained_rows, Some(300));
    let graph = |stats: &str| {
        let stats: serde_json::Value = serde_json::from_str(stats).unwrap();
        let index = &stats["indices"][0];
        (
            index["num_partitions"].as_u64(),
            index["sub_index"]["params"]["m"].as_u64(),
            index["sub_index"]["params"]["ef_construction"].as_u64(),
        )
    };
    let ds = index.lance().latest();
    let stats = ds.index_statistics(VECTOR_INDEX).await.unwrap();
    assert_eq!(graph(&stats), (Some(2), Some(6), Some(40)), "{stats}");
    for i in [0, 150, 299] {
        let r = e.search(&kb, &semantic(&text(i), None)).await.unwrap();
        assert_eq!(r.hits[0].row.document_id, format!("d{i}"));
    }

    // Changed settings take effect at the next rebuild, as a new version.
    let mut changed = c;
    changed.index.vector.hnsw_m = 12;
    changed.index.vector.hnsw_ef_construction = 60;
    // The index's writer holds the keyword store's lock until the last handle goes.
    drop((index, e));
    let e = engine_with(changed);
    let index = e.index(&kb).await.unwrap();
    let (again, _) = e.rebuild_vector_index(&kb).await.unwrap();
    assert!(again > version);
    let stats = index
        .lance()
        .latest()
        .index_statistics(VECTOR_INDEX)
        .await
        .unwrap();
    assert_eq!(graph(&stats), (Some(2), Some(12), Some(60)), "{stats}");

    // One build at a time per index: a rebuild waits for a build already running.
    assert!(index.maintenance().begin_vector_build());
    let e = std::sync::Arc::new(e);
    let waiting = tokio::spawn({
        let (e, kb) = (e.clone(), kb.clone());
        async move { e.rebuild_vector_index(&kb).await.unwrap() }
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!waiting.is_finished());
    assert_eq!(
        index.latest_version(),
        again,
        "nothing built while the other build runs"
    );
    index.maintenance().end_vector_build();
    let (after, _) = waiting.await.unwrap();
    assert!(after > again);

    // Settings that cannot fit this index's vectors are refused before any work, naming
    // the key: PQ sub-vectors must divide the 384 dimensions.
    let mut bad = config(dir.path());
    bad.index.vector.kind = ragstream::index::vector_index::VectorIndexKind::IvfPq;
    bad.index.vector.sub_vectors = 7;
    drop((index, e));
    let e = engine_with(bad);
    let refused = e.rebuild_vector_index(&kb).await.unwrap_err();
    assert!(
        refused.to_string().contains("index.vector.sub_vectors"),
        "{refused}"
    );
    assert_eq!(e.index(&kb).await.unwrap().latest_version(), after);
}

/// How many of the exact search's hits the approximate search found too.
fn found_of(
    exact: &ragstream::retrieval::SearchResult,
    approx: &ragstream::retrieval::SearchResult,
) -> usize {
    exact
        .hits
        .iter()
        .filter(|h| approx.hits.iter().any(|a| a.row.chunk_id == h.row.chunk_id))
        .count()
}

/// A semantic search for `q` at the version before the vector index (exact) and at the one
/// with it (approximate).
async fn exact_and_approximate(
    e: &Engine,
    kb: &IndexName,
    q: &str,
    (exact_version, indexed_version): (u64, u64),
) -> (
    ragstream::retrieval::SearchResult,
    ragstream::retrieval::SearchResult,
) {
    let exact = e
        .search(kb, &semantic(q, Some(exact_version)))
        .await
        .unwrap();
    let approx = e
        .search(kb, &semantic(q, Some(indexed_version)))
        .await
        .unwrap();
    (exact, approx)
}

/// The chunks the exact search ranks above the approximate one's last hit that the
/// approximate one left out (above it: not a tie that either search may order its way).
fn missed_by(
    exact: &ragstream::retrieval::SearchResult,
    approx: &ragstream::retrieval::SearchResult,
) -> Vec<String> {
    let last = approx.hits.last().map_or(0.0, |h| h.score);
    exact
        .hits
        .iter()
        .filter(|h| h.score > last && !approx.hits.iter().any(|a| a.row.chunk_id == h.row.chunk_id))
        .map(|h| h.row.chunk_id.clone())
        .collect()
}

/// The ids and scores of a search's hits, for comparing two answers exactly.
fn answer_of(r: &ragstream::retrieval::SearchResult) -> Vec<(String, u64)> {
    r.hits
        .iter()
        .map(|h| (h.row.chunk_id.clone(), h.score.to_bits()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resident_vectors_find_the_neighbours_and_reproduce_a_pinned_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 600;
    c.index.vector.partitions = 4;
    // Fewer rows shortlisted than the index holds, so the sign bits choose.
    c.index.vector.resident_shortlist = 150;
    c.index.maintenance.min_small_fragments = 2;
    let kb = name("kb");
    let queries: Vec<String> = (0..800).step_by(40).map(text).collect();
    let (pinned, before) = {
        let e = engine_with(c.clone());
        let docs = numbered(800);
        // Two commits: two fragments, each read into the resident vectors.
        e.write(&kb, upserts(docs[..500].to_vec())).await.unwrap();
        e.write(&kb, upserts(docs[500..].to_vec())).await.unwrap();
        let index = e.index(&kb).await.unwrap();
        let exact_version = index.latest_version();
        wait_for_vector_index(&e, &index).await;
        let pinned = index.latest_version();
        // The version that first carries the vector index carries its centre too, so a
        // query pinned to it takes the resident path from the first query on.
        assert!(index.info().resident_center.is_some());

        // Recall@10 against the exact search of the version before the index.
        let (mut found, mut wanted) = (0, 0);
        let mut before = Vec::new();
        for q in &queries {
            let exact = e
                .search(&kb, &semantic(q, Some(exact_version)))
                .await
                .unwrap();
            let resident = e.search(&kb, &semantic(q, Some(pinned))).await.unwrap();
            wanted += exact.hits.len();
            found += found_of(&exact, &resident);
            before.push(answer_of(&resident));
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.9, "recall@10 {recall}");

        // Later versions: a new document, a deleted one, a compaction.
        e.write(
            &kb,
            upserts(vec![doc("new", "", "aurora borealis over the polar night")]),
        )
        .await
        .unwrap();
        let top = e
            .search(&kb, &semantic(&text(40), None))
            .await
            .unwrap()
            .hits[0]
            .row
            .document_id
            .clone();
        e.write(
            &kb,
            vec![ragstream::index::DocumentOp::Delete {
                document_id: top.clone(),
            }],
        )
        .await
        .unwrap();
        let report = e.maintain(&kb).await.unwrap();
        assert!(report.fragments_compacted >= 2, "{report:?}");
        let latest = e.search(&kb, &semantic(&text(40), None)).await.unwrap();
        assert!(
            latest.hits.iter().all(|h| h.row.document_id != top),
            "deleted: {top}"
        );
        let new = e
            .search(&kb, &semantic("aurora borealis over the polar night", None))
            .await
            .unwrap();
        assert_eq!(new.hits[0].row.document_id, "new");
        // The pinned version answers as it did, the deleted document included.
        for (q, was) in queries.iter().zip(&before) {
            let again = e.search(&kb, &semantic(q, Some(pinned))).await.unwrap();
            assert_eq!(&answer_of(&again), was, "{q}");
        }
        (pinned, before)
    };
    // And so after a restart, when nothing of it is in memory.
    let e = engine_with(c);
    for (q, was) in queries.iter().zip(&before) {
        let again = e.search(&kb, &semantic(q, Some(pinned))).await.unwrap();
        assert_eq!(&answer_of(&again), was, "{q} after a restart");
    }
}

/// Every semantic and hybrid answer to `queries` at `version`: each hit's whole row (text,
/// metadata, everything returned) and its score's bits.
async fn answers(
    e: &ragstream::Engine,
    kb: &ragstream::model::IndexName,
    queries: &[String],
    version: u64,
) -> Vec<Vec<(ragstream::index::ChunkRow, u64)>> {
    let mut out = Vec::new();
    for q in queries {
        for method in [SearchMethod::Semantic, SearchMethod::Hybrid] {
            let mut r = SearchRequest::new(q, method, 10);
            r.index_version = Some(version);
            let hits = e.search(kb, &r).await.unwrap().hits;
            out.push(
                hits.into_iter()
                    .map(|h| (h.row, h.score.to_bits()))
                    .collect(),
            );
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_scratch_files_candidates_and_hits_are_read_from_lance_and_answers_are_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 400;
    c.index.vector.partitions = 2;
    let kb = name("kb");
    let queries: Vec<String> = (0..500).step_by(50).map(text).collect();
    let scratch = dir.path().join("indexes").join("kb").join("resident");
    let (version, with_files) = {
        let e = engine_with(c.clone());
        // Rows with every kind of column filled, the hits' rows compared whole: a row read
        // back from a scratch file must be the row Lance holds.
        let docs: Vec<_> = (0..500)
            .map(|i| {
                let mut d = doc(&format!("d{i}"), &format!("Title \"{i}\" é"), &text(i));
                d.tags = vec![format!("t{}", i % 3), "ünï".into()];
                d.uri = (i % 2 == 0).then(|| format!("https://example.org/{i}"));
                d.updated_at = Some("2026-11-27T10:00:00+02:00".into());
                d.managed_by_source = Some(i % 5 == 0);
                d.metadata = serde_json::json!({"n": i, "x": 0.1 + i as f64 / 3.0, "nested": {"a": [1, "b", null]}})
                    .as_object()
                    .unwrap()
                    .clone();
                d
            })
            .collect();
        e.write(&kb, upserts(docs)).await.unwrap();
        // A soft-deleted document: its rows keep a `deleted_at` (an unfiltered search
        // finds none of them, the pinned version still holds them).
        e.write(&kb, vec![delete("d0")]).await.unwrap();
        let index = e.index(&kb).await.unwrap();
        wait_for_vector_index(&e, &index).await;
        let version = index.latest_version();
        let with_files = answers(&e, &kb, &queries, version).await;
        // The resident vectors hold their fragments' vectors in unlinked files there.
        let held = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter(|target| target.starts_with(&scratch))
            .count();
        assert!(held > 0, "no scratch file open under {}", scratch.display());
        (version, with_files)
    };
    assert!(with_files.iter().all(|a| a.len() == 10));
    assert!(with_files
        .iter()
        .flatten()
        .all(|(row, _)| row.title.is_some() && !row.metadata.is_empty() && row.vector.is_none()));
    // The scratch directory cannot be made (a file stands in its place): every candidate's
    // vector and every hit's row now come from Lance, and the answers, whole rows and
    // scores to the bit, are the same.
    std::fs::remove_dir_all(&scratch).unwrap();
    std::fs::write(&scratch, b"not a directory").unwrap();
    let e = engine_with(c);
    assert_eq!(answers(&e, &kb, &queries, version).await, with_files);
}

/// An approximate search says so, in a contract 002 query's debug fields and in an explanation, and
/// an explanation names a chunk it missed that a search of every vector would have found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approximate_search_says_so_and_explain_names_what_it_missed() {
    use ragstream::contracts::Contract;
    use serde_json::{json, Value};

    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 600;
    c.index.vector.partitions = 8;
    // One partition of eight probed, nothing re-ranked, no resident shortlists: a search
    // that misses neighbours.
    c.index.vector.nprobes = 1;
    c.index.vector.refine_factor = 1;
    c.index.vector.resident_shortlist = 0;
    let e = engine_with(c);
    let kb = name("kb");
    let docs = numbered(800);
    e.write(&kb, upserts(docs)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    let debug_of = |version: u64| {
        let e = &e;
        let kb = kb.clone();
        async move {
            let body = json!({"query": text(3), "index_version": version, "debug": true});
            let reply =
                crate::common::answer(e, Contract::C002, Some(kb), body.to_string().as_bytes())
                    .await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body["vector_search_effective"].clone()
        }
    };
    let exact_version = index.latest_version();
    assert_eq!(debug_of(exact_version).await, "exact");
    wait_for_vector_index(&e, &index).await;
    let indexed_version = index.latest_version();
    assert_eq!(debug_of(indexed_version).await, "approximate");

    // A chunk that a search of every vector ranks in the top 10 and the index misses.
    let mut missed = None;
    for i in (0..800).step_by(7) {
        let q = text(i);
        let (exact, approx) =
            exact_and_approximate(&e, &kb, &q, (exact_version, indexed_version)).await;
        if let Some(chunk) = missed_by(&exact, &approx).into_iter().next() {
            missed = Some((q, chunk));
            break;
        }
    }
    let (q, chunk) = missed.expect("one probe of eight partitions missed no neighbour");
    let body = json!({"contract": "000",
        "request": {"retrieval": {"index": "kb", "query": q, "top_k": 10,
                                  "search_method": "semantic"}},
        "targets": [{"chunk_id": chunk}]});
    let r = ragstream::contracts::explain::answer(&e, &kb, &body, true).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v: &Value = &r.body;
    assert_eq!(v["index_version"], indexed_version, "{v}");
    assert_eq!(v["vector_search"], "approximate", "{v}");
    let verdict = v["targets"][0]["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("the approximate vector search missed it"),
        "{verdict}"
    );
}

/// By default (`nprobes` 0) a search probes every partition: the index finds what a search of
/// every vector finds, where one probe of eight misses neighbours (the test above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_every_partition_is_probed_and_no_neighbour_is_missed() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 600;
    c.index.vector.partitions = 8;
    c.index.vector.resident_shortlist = 0;
    assert_eq!(c.index.vector.nprobes, 0, "the default");
    let e = engine_with(c);
    let kb = name("kb");
    e.write(&kb, upserts(numbered(800))).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    let exact_version = index.latest_version();
    wait_for_vector_index(&e, &index).await;
    let indexed_version = index.latest_version();
    for i in (0..800).step_by(7) {
        let q = text(i);
        let (exact, approx) =
            exact_and_approximate(&e, &kb, &q, (exact_version, indexed_version)).await;
        assert_eq!(approx.vector_search, Some(VectorSearch::Approximate));
        let missed = missed_by(&exact, &approx);
        assert!(missed.is_empty(), "{q}: missed {missed:?}");
    }
}
