//! Tests of the keyword store.

use super::*;
use crate::index::rows::test_row;

/// Every chunk id `version` finds for `query`, sorted.
fn ids(store: &KeywordStore, version: u64, query: &str) -> Vec<String> {
    let searcher = store.searcher(version).unwrap();
    let mut found: Vec<String> = store
        .search(&searcher, query, &Filters::default(), 1000)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    found.sort();
    found
}

#[test]
fn staged_changes_commit_under_the_version_given_later_and_are_discarded_when_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let store = KeywordStore::open(dir.path(), &KeywordSettings::default()).unwrap();
    store
        .apply(1, &[], &[test_row("a", "T", "walrus tusks")])
        .unwrap();

    // Staged, then committed once "Lance" has named the version.
    let staged = store
        .stage(&["a".into()], &[test_row("b", "T", "walrus colony")])
        .unwrap();
    assert_eq!(
        store.latest_version().unwrap(),
        Some(1),
        "nothing committed yet"
    );
    staged.commit(2).unwrap();
    assert_eq!(store.latest_version().unwrap(), Some(2));
    assert_eq!(ids(&store, 2, "walrus"), vec!["b"], "a removed, b added");

    // Staged and dropped (the Lance commit failed): never committed, not even with the
    // next commit, and the writer still works.
    drop(
        store
            .stage(&["b".into()], &[test_row("c", "T", "walrus ghost")])
            .unwrap(),
    );
    store
        .apply(3, &[], &[test_row("d", "T", "walrus pup")])
        .unwrap();
    assert_eq!(store.latest_version().unwrap(), Some(3));
    assert_eq!(ids(&store, 3, "walrus"), vec!["b", "d"]);
    assert_eq!(
        ids(&store, 2, "walrus"),
        vec!["b"],
        "the older snapshot is as committed"
    );
}

#[test]
fn background_merges_leave_every_retained_snapshot_whole() {
    let dir = tempfile::tempdir().unwrap();
    let settings = KeywordSettings {
        merge_min_segments: 2,
        ..KeywordSettings::default()
    };
    let store = KeywordStore::open(dir.path(), &settings).unwrap();
    let (mut live, mut committed) = (Vec::<String>::new(), HashMap::new());
    for v in 1..=40u64 {
        // Two chunks per commit; every third commit also removes the oldest, so deletes
        // land while merges of the segments holding them run.
        let added: Vec<ChunkRow> = ["a", "b"]
            .iter()
            .map(|s| test_row(&format!("c{v:02}{s}"), "T", "walrus"))
            .collect();
        let removed = if v % 3 == 0 {
            vec![live.remove(0)]
        } else {
            Vec::new()
        };
        store.apply(v, &removed, &added).unwrap();
        live.extend(added.iter().map(|r| r.chunk_id.clone()));
        live.sort();
        committed.insert(v, live.clone());
        // Retention every fifth commit, with a round of merges likely in flight.
        let kept: BTreeSet<u64> = (v.saturating_sub(4).max(1)..=v).collect();
        if v % 5 == 0 {
            store.retain(&kept).unwrap();
        }
        for k in &kept {
            assert_eq!(
                ids(&store, *k, "walrus"),
                committed[k],
                "version {k} at {v}"
            );
        }
    }
    store.finish_merges();
    // Merges ran: without them, 40 commits leave at least 40 segments. How many rounds fit
    // between the commits depends on the machine: merges run at the background priority,
    // which another test of this binary sets to idle, so a busy machine starves them (one
    // round at a time; the next commit starts the next). At least the last round finished.
    let segments = store.index.searchable_segment_metas().unwrap().len();
    assert!(segments < 40, "40 commits left {segments} segments");

    // Retention keeps exactly the files the kept snapshot and the live commit need.
    store.retain(&BTreeSet::from([40])).unwrap();
    let mut needed = segment_files(&store.index).unwrap();
    needed.extend(segment_files(&open_index(store.dir.pinned(40)).unwrap()).unwrap());
    let on_disk: BTreeSet<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| PathBuf::from(e.unwrap().file_name()))
        .filter(|n| {
            let n = n.to_string_lossy();
            !(n.starts_with("meta.") || n.starts_with('.') || n.ends_with(".lock"))
        })
        .collect();
    // (tantivy lists a segment's `.del` file even when it has no deletes.)
    assert!(on_disk.is_subset(&needed), "{on_disk:?} ⊄ {needed:?}");
    assert!(needed
        .iter()
        .all(|f| on_disk.contains(f) || f.to_string_lossy().ends_with(".del")));

    // Reopened, the newest snapshot answers as committed.
    drop(store);
    let store = KeywordStore::open(dir.path(), &settings).unwrap();
    assert_eq!(ids(&store, 40, "walrus"), committed[&40]);
}

#[cfg(target_os = "linux")]
#[test]
fn merges_run_on_idle_time() {
    use crate::runtime::background as bg;
    bg::configure(bg::BackgroundPriority::Idle);
    let dir = tempfile::tempdir().unwrap();
    let settings = KeywordSettings {
        merge_min_segments: 2,
        ..KeywordSettings::default()
    };
    let store = KeywordStore::open(dir.path(), &settings).unwrap();
    for v in 1..=4u64 {
        store
            .apply(v, &[], &[test_row(&format!("c{v}"), "T", "walrus")])
            .unwrap();
    }
    store.finish_merges();
    assert!(
        store.index.searchable_segment_metas().unwrap().len() < 4,
        "a round of merges ran"
    );
    // Tests alongside may have merge threads of their own, started before any round of
    // theirs moved them: this store's are among those on idle time.
    let merge_threads = bg::scheduling_of_threads_named(TANTIVY_MERGE_THREADS);
    assert!(
        merge_threads.contains(&(19, bg::SCHED_IDLE)),
        "{merge_threads:?}"
    );
}

/// Live chunks per segment of the live commit, smallest first.
fn segment_sizes(store: &KeywordStore) -> Vec<u32> {
    let metas = store.index.searchable_segment_metas().unwrap();
    let mut sizes: Vec<u32> = metas.iter().map(|m| m.num_docs()).collect();
    sizes.sort_unstable();
    sizes
}

#[test]
fn segments_past_merge_max_docs_take_part_in_no_more_merges() {
    let commit_fours = |settings: &KeywordSettings| {
        let dir = tempfile::tempdir().unwrap();
        let store = KeywordStore::open(dir.path(), settings).unwrap();
        for v in 1..=6u64 {
            let rows: Vec<ChunkRow> = (0..4)
                .map(|i| test_row(&format!("c{v}-{i}"), "T", "walrus"))
                .collect();
            store.apply(v, &[], &rows).unwrap();
            store.finish_merges();
        }
        (dir, store)
    };
    let (_dir, unlimited) = commit_fours(&KeywordSettings {
        merge_min_segments: 2,
        merge_max_docs: 0,
        ..KeywordSettings::default()
    });
    assert!(
        segment_sizes(&unlimited).len() < 6,
        "without a limit the segments merge: {:?}",
        segment_sizes(&unlimited)
    );

    let (_dir, store) = commit_fours(&KeywordSettings {
        merge_min_segments: 2,
        merge_max_docs: 3,
        ..KeywordSettings::default()
    });
    assert_eq!(
        segment_sizes(&store),
        vec![4; 6],
        "four live chunks > 3: no merges"
    );
    assert_eq!(ids(&store, 6, "walrus").len(), 24);

    // Deletes that bring two segments back under the limit make them mergeable again.
    let removed: Vec<String> = (1..=2u64)
        .flat_map(|v| (0..3).map(move |i| format!("c{v}-{i}")))
        .collect();
    store.apply(7, &removed, &[]).unwrap();
    store.finish_merges();
    assert_eq!(
        segment_sizes(&store),
        vec![2, 4, 4, 4, 4],
        "{removed:?} gone"
    );
    assert_eq!(ids(&store, 7, "walrus").len(), 18);
}

#[test]
fn a_repeated_query_term_scores_as_often_as_it_is_repeated_by_either_search() {
    let mut answers = Vec::new();
    for search in [DisjunctionSearch::BlockMaxWand, DisjunctionSearch::MaxScore] {
        let dir = tempfile::tempdir().unwrap();
        let settings = KeywordSettings {
            disjunction_search: search,
            ..KeywordSettings::default()
        };
        let store = KeywordStore::open(dir.path(), &settings).unwrap();
        assert_eq!(store.disjunction_search(), search);
        let rows = [
            test_row("a", "T", "walrus tusks and a walrus"),
            test_row("b", "T", "one walrus among seals"),
            test_row("c", "T", "seals on the ice"),
        ];
        store.apply(1, &[], &rows).unwrap();
        let searcher = store.searcher(1).unwrap();
        let scores = |q: &str| {
            let mut hits = store.search(&searcher, q, &Filters::default(), 10).unwrap();
            hits.sort_by(|a, b| a.0.cmp(&b.0));
            hits
        };
        let (once, thrice) = (scores("walrus"), scores("walrus WALRUS walrus"));
        assert_eq!(once.len(), 2);
        for ((id1, s1), (id3, s3)) in once.iter().zip(&thrice) {
            assert_eq!(id1, id3);
            assert!((s3 - 3.0 * s1).abs() < 1e-4, "{id1}: {s3} against 3 × {s1}");
        }
        answers.push(scores("walrus seals seals ice"));
    }
    assert_eq!(answers[0].len(), 3);
    for (wand, max_score) in answers[0].iter().zip(&answers[1]) {
        assert_eq!(wand.0, max_score.0);
        assert!(
            (wand.1 - max_score.1).abs() < 1e-5,
            "{wand:?} {max_score:?}"
        );
    }
}

#[test]
fn a_long_query_searches_only_its_rarest_terms() {
    let dir = tempfile::tempdir().unwrap();
    let settings = KeywordSettings {
        max_query_terms: 2,
        ..KeywordSettings::default()
    };
    let store = KeywordStore::open(dir.path(), &settings).unwrap();
    let mut rows: Vec<ChunkRow> = (0..6)
        .map(|i| test_row(&format!("common{i}"), "T", "ocean"))
        .collect();
    rows.push(test_row("mid1", "T", "ocean kelp"));
    rows.push(test_row("mid2", "T", "kelp"));
    rows.push(test_row("rare", "T", "narwhal"));
    store.apply(1, &[], &rows).unwrap();
    let searcher = store.searcher(1).unwrap();

    let q = store
        .prepare(&searcher, "ocean kelp narwhal", &Filters::default())
        .unwrap()
        .unwrap();
    assert_eq!(q.dropped_terms(), ["ocean"], "the most common term goes");
    let mut found: Vec<String> = q.top(100).unwrap().into_iter().map(|(id, _)| id).collect();
    found.sort();
    assert_eq!(found, ["mid1", "mid2", "rare"], "only the kept terms match");

    // Terms no chunk holds take no place among the kept.
    let q = store
        .prepare(&searcher, "ocean zzyzx kelp narwhal", &Filters::default())
        .unwrap()
        .unwrap();
    assert_eq!(q.dropped_terms(), ["ocean"]);

    // Up to the limit nothing is dropped.
    let q = store
        .prepare(&searcher, "ocean narwhal ocean", &Filters::default())
        .unwrap()
        .unwrap();
    assert!(q.dropped_terms().is_empty());
    assert_eq!(q.top(100).unwrap().len(), 8);
}

#[test]
fn merges_due_on_an_index_no_write_reaches_start_and_show_as_merged_since_its_newest_commit() {
    let dir = tempfile::tempdir().unwrap();
    let never = KeywordSettings {
        merge_min_segments: 0,
        ..KeywordSettings::default()
    };
    let store = KeywordStore::open(dir.path(), &never).unwrap();
    for v in 1..=4u64 {
        store
            .apply(v, &[], &[test_row(&format!("c{v}"), "T", "walrus")])
            .unwrap();
    }
    assert_eq!(store.segments(4).unwrap(), 4);
    store.start_due_merges().unwrap();
    assert!(
        !store.merged_since(4).unwrap(),
        "no merge policy, no merges"
    );
    drop(store);

    // Opened with a policy and not written to: the pass's call starts the round.
    let merging = KeywordSettings {
        merge_min_segments: 2,
        ..KeywordSettings::default()
    };
    let store = KeywordStore::open(dir.path(), &merging).unwrap();
    store.start_due_merges().unwrap();
    store.finish_merges();
    assert_eq!(segment_sizes(&store), vec![4], "the live commit merged");
    assert!(store.merged_since(4).unwrap());
    assert!(
        !store.merged_since(3).unwrap(),
        "3 is not the newest commit"
    );
    // Version 4's snapshot is as committed until a commit takes the merge.
    assert_eq!(store.segments(4).unwrap(), 4);
    store.apply(5, &[], &[]).unwrap();
    assert_eq!(store.segments(5).unwrap(), 1);
    assert!(!store.merged_since(5).unwrap());
    assert_eq!(ids(&store, 5, "walrus"), ids(&store, 4, "walrus"));
}
