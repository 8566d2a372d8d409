//! Maintenance: compaction of the fragments streaming commits leave, purge of soft-deleted
//! chunks past their retention, version pruning that spares running queries and tags, index
//! updates for rows written after a build, and the append path of new documents.

use std::time::Duration;

use ragstream::index::maintenance::MaintenanceSettings;
use ragstream::index::vector_index::coverage;
use ragstream::index::DocumentOp;
use ragstream::retrieval::filters::Visibility;
use ragstream::retrieval::{SearchMethod, SearchRequest};

use crate::common::{
    config, doc, engine_with, hashing_engine, name, upserts, wait_for_vector_index,
};

fn keyword(q: &str, version: Option<u64>) -> SearchRequest {
    let mut r = SearchRequest::new(q, SearchMethod::Keyword, 10);
    r.index_version = version;
    r
}

fn ids(result: &ragstream::retrieval::SearchResult) -> Vec<String> {
    result
        .hits
        .iter()
        .map(|h| h.row.document_id.clone())
        .collect()
}

/// The documents a keyword query finds at the newest version, sorted.
async fn sorted_ids(
    e: &ragstream::Engine,
    kb: &ragstream::model::IndexName,
    query: &str,
) -> Vec<String> {
    let found = e.search(kb, &keyword(query, None)).await.unwrap();
    let mut found = ids(&found);
    found.sort();
    found
}

/// Documents `d0`…`d{n-1}` about lighthouses, one commit (so one fragment) each.
async fn write_lighthouses(e: &ragstream::Engine, kb: &ragstream::model::IndexName, n: usize) {
    for i in 0..n {
        let text = format!("harbour lighthouse number {i} keeps ships off the rocks");
        e.write(kb, upserts(vec![doc(&format!("d{i}"), "", &text)]))
            .await
            .unwrap();
    }
}

/// An engine whose retention policy keeps the newest two versions.
fn engine_keeping_two_versions(dir: &std::path::Path) -> ragstream::Engine {
    let mut c = config(dir);
    c.index.retain_versions = 2;
    engine_with(c)
}

fn settings(min_small_fragments: usize) -> MaintenanceSettings {
    MaintenanceSettings {
        min_small_fragments,
        ..MaintenanceSettings::default()
    }
}

#[tokio::test]
async fn compaction_merges_small_fragments_and_answers_stay_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    write_lighthouses(&e, &kb, 6).await;
    let index = e.index(&kb).await.unwrap();
    let before = e
        .search(&kb, &keyword("lighthouse rocks", None))
        .await
        .unwrap();
    let fragments = index.lance().latest().get_fragments().len();
    assert_eq!(fragments, 6, "one fragment per commit");

    // Below the threshold nothing is compacted.
    let report = index.maintenance().maintain(&settings(7)).await.unwrap();
    assert_eq!(report.fragments_compacted, 0);
    assert_eq!(report.fragments_after, 6);

    let report = index.maintenance().maintain(&settings(4)).await.unwrap();
    assert_eq!(report.fragments_before, 6);
    assert_eq!(report.fragments_compacted, 6);
    assert_eq!(report.fragments_after, 1);
    assert!(report.index_version > before.index_version);
    let after = e
        .search(&kb, &keyword("lighthouse rocks", None))
        .await
        .unwrap();
    assert_eq!(after.index_version, report.index_version);
    assert_eq!(ids(&after), ids(&before));
    // The version before compaction still answers, identically.
    let pinned = e
        .search(
            &kb,
            &keyword("lighthouse rocks", Some(before.index_version)),
        )
        .await
        .unwrap();
    assert_eq!(ids(&pinned), ids(&before));
    // Writes go on after a compaction commit.
    e.write(
        &kb,
        upserts(vec![doc("d9", "", "a new lighthouse on the rocks")]),
    )
    .await
    .unwrap();
    let found = e
        .search(&kb, &keyword("lighthouse rocks", None))
        .await
        .unwrap();
    assert!(ids(&found).contains(&"d9".to_string()));
}

#[tokio::test]
async fn soft_deleted_chunks_are_purged_once_their_retention_has_passed() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    e.write(
        &kb,
        upserts(vec![
            doc("keep", "", "copper wire conducts electricity"),
            doc("gone", "", "copper kettles boil water"),
        ]),
    )
    .await
    .unwrap();
    let deleted_version = e
        .write(
            &kb,
            vec![DocumentOp::Delete {
                document_id: "gone".into(),
            }],
        )
        .await
        .unwrap()
        .index_version
        .unwrap();
    let index = e.index(&kb).await.unwrap();
    let mut deleted = keyword("copper", None);
    deleted.filters.visibility = Visibility::Deleted;

    // Within the retention nothing is purged.
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert_eq!(report.chunks_purged, 0);
    assert_eq!(
        ids(&e.search(&kb, &deleted).await.unwrap()),
        vec!["gone".to_string()]
    );

    let purge_now = MaintenanceSettings {
        purge_deleted_after: Duration::ZERO,
        ..settings(100)
    };
    // The deletion timestamp has millisecond precision: let the cutoff pass it.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let report = index.maintenance().maintain(&purge_now).await.unwrap();
    assert_eq!(report.chunks_purged, 1);
    assert!(e.search(&kb, &deleted).await.unwrap().hits.is_empty());
    let stats = index.reader().stats().await.unwrap();
    assert_eq!((stats.chunks, stats.deleted_chunks), (1, 0));
    assert_eq!(stats.keyword_chunks, 1, "gone from the keyword store too");
    let active = e.search(&kb, &keyword("copper", None)).await.unwrap();
    assert_eq!(ids(&active), vec!["keep".to_string()]);
    // The version that showed the deletion still shows it.
    deleted.index_version = Some(deleted_version);
    assert_eq!(
        ids(&e.search(&kb, &deleted).await.unwrap()),
        vec!["gone".to_string()]
    );
    // Nothing left to purge.
    assert_eq!(
        index
            .maintenance()
            .maintain(&purge_now)
            .await
            .unwrap()
            .chunks_purged,
        0
    );
}

/// A compaction commits long after the snapshot it rewrote from. Under a high commit rate
/// that snapshot fell out of the versions retention keeps, and the commit, which reads its
/// manifest, failed (seen at a million chunks: "maintenance pass failed … manifest was not
/// found"). The rewrite holds its version until it commits, and lets go after.
#[tokio::test]
async fn a_compaction_that_outlasts_retention_still_commits() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_keeping_two_versions(dir.path());
    let kb = name("kb");
    write_lighthouses(&e, &kb, 4).await;
    let index = e.index(&kb).await.unwrap();
    let maintenance = index.maintenance();
    let started = index.latest_version();
    let rewrite = maintenance.rewrite_small_fragments(1000).await.unwrap();
    let rewrite = rewrite.expect("small fragments to rewrite");
    for i in 0..4 {
        let late = doc(&format!("late{i}"), "", "a late lighthouse on the rocks");
        e.write(&kb, upserts(vec![late])).await.unwrap();
    }
    let versions = index.lance().versions().await.unwrap();
    assert!(versions.contains(&started), "{versions:?}");
    let committed = maintenance.commit_rewrite(rewrite).await.unwrap();
    assert_eq!(committed, Some((4, 1)));
    let found = sorted_ids(&e, &kb, "lighthouse rocks").await;
    assert_eq!(
        found,
        vec!["d0", "d1", "d2", "d3", "late0", "late1", "late2", "late3"]
    );
    // Committed: the next pass prunes down to the policy again.
    index.maintenance().maintain(&settings(100)).await.unwrap();
    let versions = index.lance().versions().await.unwrap();
    assert!(!versions.contains(&started), "{versions:?}");
    assert_eq!(versions.len(), 2, "{versions:?}");
}

#[tokio::test]
async fn retention_spares_versions_running_queries_read_and_tagged_versions() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_keeping_two_versions(dir.path());
    let kb = name("kb");
    let write = |i: usize| {
        let e = &e;
        let kb = kb.clone();
        async move {
            e.write(
                &kb,
                upserts(vec![doc(
                    &format!("d{i}"),
                    "",
                    &format!("granite quarry {i}"),
                )]),
            )
            .await
            .unwrap()
            .index_version
            .unwrap()
        }
    };
    let first = write(0).await;
    let tagged = write(1).await;
    let index = e.index(&kb).await.unwrap();
    assert_eq!(
        index.maintenance().tag("release", None).await.unwrap(),
        tagged
    );
    // A query in flight holds its snapshot.
    let running = index.reader().snapshot(Some(first)).await.unwrap();
    for i in 2..6 {
        write(i).await;
    }
    let versions = index.lance().versions().await.unwrap();
    assert!(versions.contains(&first), "{versions:?}");
    assert!(versions.contains(&tagged), "{versions:?}");
    assert_eq!(running.version, first);
    drop(running);

    // Released: the next pass prunes it; the tag still keeps its version.
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert!(report.versions_pruned >= 1, "{report:?}");
    let versions = index.lance().versions().await.unwrap();
    assert!(!versions.contains(&first), "{versions:?}");
    assert!(versions.contains(&tagged), "{versions:?}");
    let at_tag = e
        .search(&kb, &keyword("granite", Some(tagged)))
        .await
        .unwrap();
    assert_eq!(at_tag.hits.len(), 2);
    assert!(e
        .search(&kb, &keyword("granite", Some(first)))
        .await
        .is_err());
    assert_eq!(
        index.reader().stats().await.unwrap().tags.get("release"),
        Some(&tagged)
    );

    // Tagging a pruned version is the usual unavailable-version error.
    assert!(index.maintenance().tag("old", Some(first)).await.is_err());
    index.maintenance().untag("release").await.unwrap();
    index.maintenance().maintain(&settings(100)).await.unwrap();
    let versions = index.lance().versions().await.unwrap();
    assert!(!versions.contains(&tagged), "{versions:?}");
    assert_eq!(versions.len(), 2);
}

/// An engine (in `dir`) whose index `kb` holds 200 documents and a vector index built over
/// them, far from a rebuild, so that only maintenance can cover rows written after.
async fn indexed_kb(
    dir: &std::path::Path,
) -> (
    ragstream::Engine,
    ragstream::model::IndexName,
    std::sync::Arc<ragstream::index::Index>,
) {
    let mut c = config(dir);
    c.index.vector.min_rows = 200;
    c.index.vector.rebuild_unindexed_share = 10.0;
    let e = engine_with(c);
    let kb = name("kb");
    let docs: Vec<_> = (0..200)
        .map(|i| {
            doc(
                &format!("d{i}"),
                "",
                &format!("basalt column {i} of the causeway"),
            )
        })
        .collect();
    e.write(&kb, upserts(docs)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    wait_for_vector_index(&e, &index).await;
    (e, kb, index)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_written_after_a_build_are_added_to_the_indexes_by_maintenance() {
    let dir = tempfile::tempdir().unwrap();
    let (e, kb, index) = indexed_kb(dir.path()).await;
    let more: Vec<_> = (200..260)
        .map(|i| {
            doc(
                &format!("d{i}"),
                "",
                &format!("obsidian shard {i} near the vent"),
            )
        })
        .collect();
    e.write(&kb, upserts(more)).await.unwrap();
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (200, 260));
    // The write started a background check for a due build; no build is due, so the check
    // leaves the build slot alone and the pass right after the write is not deferred.
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert!(!report.deferred, "{report:?}");
    assert_eq!(report.rows_indexed, 60, "{report:?}");
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (260, 260));
    // The new rows are found through the index, by both branches.
    let mut semantic = SearchRequest::new(
        "obsidian shard 231 near the vent",
        SearchMethod::Semantic,
        5,
    );
    semantic.top_k = 5;
    let found = e.search(&kb, &semantic).await.unwrap();
    assert_eq!(found.hits[0].row.document_id, "d231");
    let found = e.search(&kb, &keyword("obsidian 231", None)).await.unwrap();
    assert_eq!(found.hits[0].row.document_id, "d231");
}

/// The vector index's segments, oldest first: (uuid, fragments covered).
async fn vector_segments(index: &ragstream::index::Index) -> Vec<(uuid::Uuid, u64)> {
    use lance::index::DatasetIndexExt;
    index
        .lance()
        .latest()
        .load_indices()
        .await
        .unwrap()
        .iter()
        .filter(|i| i.name == ragstream::index::vector_index::VECTOR_INDEX)
        .map(|i| (i.uuid, i.fragment_bitmap.as_ref().map_or(0, |b| b.len())))
        .collect()
}

#[tokio::test]
async fn updates_merge_small_deltas_among_themselves_and_never_into_the_trained_segment() {
    let dir = tempfile::tempdir().unwrap();
    let (e, kb, index) = indexed_kb(dir.path()).await;
    let batch = |from: usize, what: &str| -> Vec<_> {
        (from..from + 40)
            .map(|i| doc(&format!("d{i}"), "", &format!("{what} {i} of the causeway")))
            .collect()
    };
    let trained = vector_segments(&index).await;
    assert_eq!(trained.len(), 1);
    for (pass, what) in ["obsidian shard", "pumice stone", "tuff layer"]
        .iter()
        .enumerate()
    {
        let from = 200 + 40 * pass;
        e.write(&kb, upserts(batch(from, what))).await.unwrap();
        let report = index.maintenance().maintain(&settings(100)).await.unwrap();
        assert!(!report.deferred, "pass {pass}: {report:?}");
        assert_eq!(report.rows_indexed, 40, "pass {pass}: {report:?}");
        let segments = vector_segments(&index).await;
        // The first update makes a delta; later ones fold into it (it is below the floor),
        // and the trained segment is never rebuilt.
        assert_eq!(segments.len(), 2, "pass {pass}: {segments:?}");
        assert_eq!(segments[0], trained[0], "pass {pass}");
        let found = e
            .search(
                &kb,
                &SearchRequest::new(
                    format!("{what} {} of the causeway", from + 7),
                    SearchMethod::Semantic,
                    5,
                ),
            )
            .await
            .unwrap();
        assert_eq!(found.hits[0].row.document_id, format!("d{}", from + 7));
    }
    assert_eq!(coverage(&index.lance().latest()).await.unwrap(), (320, 320));
}

#[tokio::test]
async fn new_documents_are_appended_and_changed_ones_still_replace_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    e.write(
        &kb,
        upserts(vec![
            doc("a", "", "alpine lake"),
            doc("b", "", "boreal forest"),
        ]),
    )
    .await
    .unwrap();
    // A batch mixing a new document and a changed one, then one of new documents only.
    e.write(
        &kb,
        upserts(vec![
            doc("a", "", "alpine glacier"),
            doc("c", "", "coral reef"),
        ]),
    )
    .await
    .unwrap();
    e.write(&kb, upserts(vec![doc("d", "", "desert dune")]))
        .await
        .unwrap();
    let index = e.index(&kb).await.unwrap();
    let stats = index.reader().stats().await.unwrap();
    assert_eq!((stats.documents, stats.chunks), (4, 4));
    let ids = index
        .lance()
        .all_chunk_ids(&index.lance().latest())
        .await
        .unwrap();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids, unique, "no chunk stored twice");
    let found = e.search(&kb, &keyword("alpine", None)).await.unwrap();
    assert_eq!(found.hits.len(), 1);
    assert!(found.hits[0].row.text.contains("glacier"));
}

/// Compaction rewrites outside the write lock and commits under it: a write that lands
/// in between is never lost. An append is kept next to the compacted fragments; a replace
/// of a document in a rewritten fragment makes the compaction stand down.
#[tokio::test]
async fn writes_made_while_compaction_rewrites_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    write_lighthouses(&e, &kb, 4).await;
    let index = e.index(&kb).await.unwrap();
    let maintenance = index.maintenance();

    // An append between rewrite and commit: the commit goes through and keeps it.
    let rewrite = maintenance.rewrite_small_fragments(1000).await.unwrap();
    let rewrite = rewrite.expect("small fragments to rewrite");
    e.write(
        &kb,
        upserts(vec![doc("new", "", "a new lighthouse on the rocks")]),
    )
    .await
    .unwrap();
    let committed = maintenance.commit_rewrite(rewrite).await.unwrap();
    assert_eq!(committed, Some((4, 1)));
    let fragments = index.lance().latest().get_fragments().len();
    assert_eq!(fragments, 2, "the compacted fragment and the appended one");
    let found = sorted_ids(&e, &kb, "lighthouse rocks").await;
    assert_eq!(found, vec!["d0", "d1", "d2", "d3", "new"]);

    // A replace of a rewritten document between rewrite and commit: the compaction stands
    // down and the replace stands.
    let rewrite = maintenance.rewrite_small_fragments(1000).await.unwrap();
    let rewrite = rewrite.expect("small fragments to rewrite");
    e.write(
        &kb,
        upserts(vec![doc("d1", "", "the lighthouse was replaced by a buoy")]),
    )
    .await
    .unwrap();
    let version = index.latest_version();
    assert_eq!(maintenance.commit_rewrite(rewrite).await.unwrap(), None);
    assert_eq!(index.latest_version(), version, "nothing committed");
    let found = e.search(&kb, &keyword("buoy", None)).await.unwrap();
    assert_eq!(ids(&found), vec!["d1"]);
    let old = e.search(&kb, &keyword("ships rocks", None)).await.unwrap();
    assert!(!ids(&old).contains(&"d1".to_string()), "old text gone");
    // The next pass compacts what is there now.
    let report = maintenance.maintain(&settings(2)).await.unwrap();
    assert!(report.fragments_compacted >= 2);
    assert!(!report.deferred);
}

#[test]
fn the_daemons_maintenance_actor_compacts_purges_and_prunes_and_reports_it_in_metrics() {
    use crate::daemon::{curl, kcat_produce, start_daemon_with, upsert, wait_for};
    use crate::telemetry::{sample, scrape};
    // One commit (one fragment, one version) per document, and a pass every 300 ms.
    let d = start_daemon_with(&[
        ("RAGSTREAM_KAFKA_BATCH_MAX_CHUNKS", "1"),
        ("RAGSTREAM_KAFKA_PARTITIONS", "1"),
        ("RAGSTREAM_INDEX__MAINTENANCE__INTERVAL_MS", "300"),
        (
            "RAGSTREAM_INDEX__MAINTENANCE__COMPACTION_MIN_FRAGMENTS",
            "4",
        ),
        (
            "RAGSTREAM_INDEX__MAINTENANCE__PURGE_DELETED_AFTER_SECONDS",
            "0",
        ),
        ("RAGSTREAM_INDEX_RETAIN_VERSIONS", "3"),
        ("RAGSTREAM_INDEX__KEYWORD__MERGE_MIN_SEGMENTS", "2"),
    ]);
    let mut lines: Vec<String> = (0..8)
        .map(|i| upsert(&format!("log{i}"), &format!("the harbour log, entry {i}")))
        .collect();
    lines.push(
        serde_json::json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": "log0"})
            .to_string(),
    );
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &lines);
    let stats_url = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("eight documents written and one deleted", || {
        curl(&[&stats_url]).1["documents"] == 7
    });
    let metric = |name: &str| sample(&scrape(&d.http), &format!("{name}{{index=\"kb\"}}"));
    wait_for("a pass that compacted, purged and pruned", || {
        metric("ragstream_maintenance_fragments_compacted_total").unwrap_or(0.0) >= 4.0
            && metric("ragstream_maintenance_chunks_purged_total").unwrap_or(0.0) >= 1.0
            && metric("ragstream_maintenance_versions_pruned_total").unwrap_or(0.0) >= 1.0
    });
    // The gauges describe the newest version: fewer fragments than the nine commits made,
    // no more versions than retention keeps (plus a version a query may pin), and once the
    // writes stop, the keyword segments of the nine commits merged into one.
    wait_for("the gauges to follow", || {
        metric("ragstream_index_fragments").is_some_and(|f| f < 8.0)
            && metric("ragstream_index_versions").is_some_and(|v| v <= 4.0)
            && metric("ragstream_index_keyword_segments") == Some(1.0)
    });
    assert!(metric("ragstream_maintenance_runs_total").unwrap() >= 1.0);
    // Answers are what they were: the seven live documents, the deleted one gone.
    let url = format!("{}/v1/retrieve", d.http);
    let q = serde_json::json!({"retrieval": {"index": "kb", "query": "harbour log entry",
        "search_method": "keyword", "top_k": 10}});
    let (code, r) = curl(&["-X", "POST", "-d", &q.to_string(), &url]);
    assert_eq!(code, 200, "{r}");
    let mut found: Vec<String> = r["retrieval_calls"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["metadata"]["document_id"].as_str().unwrap().to_string())
        .collect();
    found.sort();
    let expected: Vec<String> = (1..8).map(|i| format!("log{i}")).collect();
    assert_eq!(found, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn id_indexes_come_before_the_vector_index_and_maintenance_keeps_them_whole() {
    use lance::index::DatasetIndexExt;
    use ragstream::index::vector_index::{index_coverage, DOCUMENT_INDEX, ID_INDEX, VECTOR_INDEX};
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.vector.min_rows = 1_000_000;
    c.index.vector.id_min_rows = 50;
    let e = engine_with(c);
    let kb = name("kb");
    let text = |i: usize| format!("tide gauge reading {i} at the pier");
    let batch = |range: std::ops::Range<usize>| -> Vec<DocumentOp> {
        upserts(range.map(|i| doc(&format!("d{i}"), "", &text(i))).collect())
    };
    let names = |index: std::sync::Arc<ragstream::index::Index>| async move {
        let mut names: Vec<String> = index
            .lance()
            .latest()
            .load_indices()
            .await
            .unwrap()
            .iter()
            .map(|i| i.name.clone())
            .collect();
        names.sort();
        names
    };
    // Index builds run in the background after a commit; this waits for the one running.
    let settled = |index: std::sync::Arc<ragstream::index::Index>| async move {
        while index.maintenance().build_pending() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    e.write(&kb, batch(0..40)).await.unwrap();
    let index = e.index(&kb).await.unwrap();
    settled(index.clone()).await;
    assert!(
        names(index.clone()).await.is_empty(),
        "40 rows: no index yet"
    );
    e.write(&kb, batch(40..60)).await.unwrap();
    let started = std::time::Instant::now();
    while names(index.clone()).await.is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "no id indexes");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        names(index.clone()).await,
        vec![ID_INDEX.to_string(), DOCUMENT_INDEX.to_string()],
        "the BTrees, not the vector index ({VECTOR_INDEX})"
    );
    // Rows written since are scanned: a document of the indexed rows and a new one are both
    // replaced (planning finds their old rows through the index and the scan alike).
    settled(index.clone()).await;
    e.write(&kb, batch(60..70)).await.unwrap();
    assert_eq!(
        index_coverage(&index.lance().latest()).await.unwrap(),
        (60, 70)
    );
    e.write(
        &kb,
        upserts(vec![
            doc("d5", "", "the pier gauge was replaced"),
            doc("d65", "", "the second gauge was replaced too"),
        ]),
    )
    .await
    .unwrap();
    assert_eq!(
        index.reader().stats().await.unwrap().chunks,
        70,
        "replaced, not added"
    );
    let found = e.search(&kb, &keyword("replaced", None)).await.unwrap();
    let mut ids: Vec<&str> = found
        .hits
        .iter()
        .map(|h| h.row.document_id.as_str())
        .collect();
    ids.sort();
    assert_eq!(ids, vec!["d5", "d65"]);
    // Maintenance adds the new rows to the id indexes.
    settled(index.clone()).await;
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert!(report.rows_indexed > 0, "{report:?}");
    let (covered, total) = index_coverage(&index.lance().latest()).await.unwrap();
    assert_eq!(covered, total, "{report:?}");
}

#[tokio::test]
async fn compaction_merges_the_newest_run_and_leaves_a_larger_fragment_alone() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    // One commit larger than the tiering floor (8,192 rows), then four small ones.
    let bulk: Vec<_> = (0..9_000)
        .map(|i| doc(&format!("bulk{i}"), "", &format!("ledger entry {i}")))
        .collect();
    e.write(&kb, upserts(bulk)).await.unwrap();
    write_lighthouses(&e, &kb, 4).await;
    let index = e.index(&kb).await.unwrap();
    let large = index.lance().latest().get_fragments()[0].id();
    let report = index.maintenance().maintain(&settings(2)).await.unwrap();
    assert_eq!(report.fragments_before, 5);
    assert_eq!(
        (report.fragments_compacted, report.fragments_written),
        (4, 1),
        "the four small fragments, not the large one"
    );
    let fragments = index.lance().latest().get_fragments();
    assert_eq!(fragments.len(), 2);
    assert_eq!(fragments[0].id(), large, "the large fragment is untouched");
    let found = e
        .search(&kb, &keyword("lighthouse rocks", None))
        .await
        .unwrap();
    assert_eq!(found.hits.len(), 4);
    assert_eq!(e.stats(&kb).await.unwrap().documents, 9_004);
}

/// Each hit's document and score, by document.
fn scored(result: &ragstream::retrieval::SearchResult) -> Vec<(String, f64)> {
    let mut hits: Vec<(String, f64)> = result
        .hits
        .iter()
        .map(|h| (h.row.document_id.clone(), h.score))
        .collect();
    hits.sort_by(|a, b| a.0.cmp(&b.0));
    hits
}

#[tokio::test]
async fn an_idle_index_takes_its_keyword_merges_with_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.keyword.merge_min_segments = 2;
    let e = engine_with(c);
    let kb = name("kb");
    write_lighthouses(&e, &kb, 12).await;
    let index = e.index(&kb).await.unwrap();
    let segments = |v: u64| index.keyword().searcher(v).unwrap().segment_readers().len();
    let burst = index.latest_version();
    // Every document matches, so the answers hold all of them whatever the order of ties.
    let query = SearchRequest::new("lighthouse rocks", SearchMethod::Keyword, 20);
    let before = e.search(&kb, &query).await.unwrap();
    assert_eq!(before.hits.len(), 12);
    assert!(
        segments(burst) > 1,
        "the last commit's batch is a segment of its own"
    );

    let adopted = passes_until_one_keyword_segment(&index).await;
    assert!(adopted > 0);
    let after = e.search(&kb, &query).await.unwrap();
    assert!(after.index_version > burst);
    assert_eq!(after.index_version, index.latest_version());
    assert_eq!(scored(&after), scored(&before), "same chunks, same scores");
    // Nothing merged since: a pass makes no version.
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert!(!report.keyword_merges_adopted);
    assert_eq!(report.index_version, after.index_version);

    // A write since the last pass: that pass leaves the merges to the writes; the passes
    // after it, with no write between, take them.
    e.write(
        &kb,
        upserts(vec![doc("d12", "", "a lighthouse on the rocks")]),
    )
    .await
    .unwrap();
    let report = index.maintenance().maintain(&settings(100)).await.unwrap();
    assert!(!report.keyword_merges_adopted);
    assert!(passes_until_one_keyword_segment(&index).await > 0);
}

/// Maintenance passes until the newest version searches one keyword segment (each takes
/// the merges that ended and starts the round now due); how many took merges.
async fn passes_until_one_keyword_segment(index: &ragstream::index::Index) -> usize {
    let segments = |v: u64| index.keyword().searcher(v).unwrap().segment_readers().len();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut adopted = 0;
    loop {
        let report = index.maintenance().maintain(&settings(100)).await.unwrap();
        assert_eq!(report.keyword_segments, segments(report.index_version));
        adopted += usize::from(report.keyword_merges_adopted);
        if report.keyword_segments == 1 {
            return adopted;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} segments after a minute of passes",
            report.keyword_segments
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
