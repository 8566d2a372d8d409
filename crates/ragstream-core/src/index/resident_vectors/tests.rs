//! Tests of the resident vectors.

use super::*;

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Vectors from a small deterministic generator, clustered around a shared direction
/// (as a model's are), so that neighbours exist and the centre matters.
fn vectors(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let shared: Vec<f32> = (0..dims).map(|_| rng.f32()).collect();
    let centres: Vec<Vec<f32>> = (0..16)
        .map(|_| (0..dims).map(|d| shared[d] + rng.f32() - 0.5).collect())
        .collect();
    (0..n)
        .map(|i| {
            let c = &centres[i % centres.len()];
            unit(c.iter().map(|x| x + 0.6 * (rng.f32() - 0.5)).collect())
        })
        .collect()
}

fn mean(vs: &[Vec<f32>]) -> Vec<f32> {
    let mut m = vec![0f32; vs[0].len()];
    for v in vs {
        for (a, x) in m.iter_mut().zip(v) {
            *a += x / vs.len() as f32;
        }
    }
    m
}

fn codes_of(
    id: u64,
    vs: &[Vec<f32>],
    center: &[f32],
    soft: impl Fn(usize) -> bool,
) -> FragmentCodes {
    let mut c = FragmentCodes::new(id, vs.len(), center.len(), Some(&std::env::temp_dir()));
    for (i, v) in vs.iter().enumerate() {
        let chunk_id = format!("c{id}-{i}");
        let stored = StoredRow::for_test(&chunk_id, "doc", i as u32, soft(i));
        c.push(i as u32, &stored, v, center);
    }
    c.seal()
}

fn view_of(fragments: Vec<(FragmentCodes, Option<Vec<u64>>)>, center: Vec<f32>) -> View {
    View {
        version: 1,
        center: Arc::new(center),
        fragments: fragments
            .into_iter()
            .map(|(f, d)| (Arc::new(f), d))
            .collect(),
    }
}

fn exact(vs: &[(u64, Vec<f32>)], q: &[f32], k: usize) -> Vec<u64> {
    let mut scored: Vec<(f32, u64)> = vs
        .iter()
        .map(|(a, v)| (v.iter().zip(q).map(|(x, y)| x * y).sum(), *a))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|(_, a)| a).collect()
}

/// A third of the rows by sign codes, a tenth by the signs' dot product.
const STAGES: Stages = Stages {
    by_hamming: 1000,
    by_signs: 300,
};

#[test]
fn a_search_finds_the_exact_neighbours_and_answers_the_same_every_time() {
    let dims = 96;
    // Rows and queries from the same clusters: the first 3,000 vectors are rows, the
    // next 40 queries.
    let mut vs = vectors(3040, dims, 7);
    let queries = vs.split_off(3000);
    let center = mean(&vs[..1000]);
    let (a, b) = vs.split_at(1700);
    let view = view_of(
        vec![
            (codes_of(3, a, &center, |_| false), None),
            (codes_of(5, b, &center, |_| false), None),
        ],
        center.clone(),
    );
    let addressed: Vec<(u64, Vec<f32>)> = a
        .iter()
        .enumerate()
        .map(|(i, v)| (3u64 << 32 | i as u64, v.clone()))
        .chain(
            b.iter()
                .enumerate()
                .map(|(i, v)| (5u64 << 32 | i as u64, v.clone())),
        )
        .collect();
    let recall = |view: &View, stages: Stages| {
        let (mut found, mut wanted) = (0, 0);
        for q in &queries {
            // As a search uses it: 30 candidates, of which the exact top 10 is taken.
            let want = exact(&addressed, q, 10);
            let got = view.nearest(q, 30, stages, Visibility::All);
            assert_eq!(got.len(), 30);
            assert_eq!(got, view.nearest(q, 30, stages, Visibility::All));
            wanted += want.len();
            found += want.iter().filter(|a| got.contains(a)).count();
        }
        found as f64 / wanted as f64
    };
    let centred = recall(&view, STAGES);
    assert!(centred >= 0.9, "recall@10 {centred}");
    // Keeping every row at every stage is an exact search up to the byte codes' rounding
    // (which the exact scores of the 30 then undo).
    let all = Stages {
        by_hamming: 3000,
        by_signs: 3000,
    };
    assert!(recall(&view, all) >= 0.99);
    // Around zero, the sign codes of vectors that share a direction say less.
    let zero = vec![0f32; dims];
    let uncentred = view_of(
        vec![
            (codes_of(3, a, &zero, |_| false), None),
            (codes_of(5, b, &zero, |_| false), None),
        ],
        zero,
    );
    // Compared where the first stage keeps few rows (5 %), so that it decides.
    let tight = Stages {
        by_hamming: 150,
        by_signs: 40,
    };
    let (around_mean, around_zero) = (recall(&view, tight), recall(&uncentred, tight));
    assert!(around_zero < around_mean, "{around_zero} vs {around_mean}");
}

#[test]
fn deleted_and_soft_deleted_rows_are_masked_by_visibility() {
    let dims = 64;
    let vs = vectors(200, dims, 3);
    let center = mean(&vs);
    let q = vs[10].clone();
    // Row 10 is the query itself; it is deleted (deletion vector) in one view and
    // soft-deleted in another.
    let mut deleted = vec![0u64; 4];
    deleted[0] |= 1 << 10;
    let stages = Stages {
        by_hamming: 50,
        by_signs: 20,
    };
    let hard = view_of(
        vec![(codes_of(1, &vs, &center, |_| false), Some(deleted))],
        center.clone(),
    );
    assert!(!hard
        .nearest(&q, 5, stages, Visibility::All)
        .contains(&(1 << 32 | 10)));
    let soft = view_of(vec![(codes_of(1, &vs, &center, |i| i == 10), None)], center);
    assert!(!soft
        .nearest(&q, 5, stages, Visibility::Active)
        .contains(&(1 << 32 | 10)));
    assert_eq!(
        soft.nearest(&q, 5, stages, Visibility::All)[0],
        1 << 32 | 10
    );
    assert_eq!(
        soft.nearest(&q, 5, stages, Visibility::Deleted),
        vec![1 << 32 | 10]
    );
}

#[test]
fn equal_vectors_go_to_the_lower_address() {
    let v = unit(vec![1.0; 8]);
    let rows = [v.clone(), v.clone(), v.clone()];
    let view = view_of(
        vec![(codes_of(2, &rows, &[0.0; 8], |_| false), None)],
        vec![0.0; 8],
    );
    let stages = Stages {
        by_hamming: 2,
        by_signs: 2,
    };
    assert_eq!(
        view.nearest(&v, 2, stages, Visibility::All),
        vec![2 << 32, 2 << 32 | 1]
    );
}

#[test]
fn chunk_ids_find_their_rows_except_where_the_version_deleted_them() {
    let vs = vectors(300, 16, 5);
    let center = mean(&vs);
    // Row 7 of fragment 3 is deleted at this version; fragment 4 holds chunk c3-12 again
    // (both rows are found, as a read by id finds both).
    let mut deleted = vec![0u64; 5];
    deleted[0] |= 1 << 7;
    let mut again = FragmentCodes::new(4, 1, center.len(), None);
    again.push(
        5,
        &StoredRow::for_test("c3-12", "doc", 12, false),
        &vs[12],
        &center,
    );
    let view = view_of(
        vec![
            (codes_of(3, &vs, &center, |i| i == 9), Some(deleted)),
            (again.seal(), None),
        ],
        center,
    );
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        view.addresses_of(&ids(&["c3-250", "c3-9", "c3-7", "c3-12", "c9-1"])),
        vec![3 << 32 | 9, 3 << 32 | 12, 3 << 32 | 250, 4 << 32 | 5],
        "soft-deleted row 9 is found; deleted row 7 and an unknown id are not"
    );
    assert!(view.addresses_of(&[]).is_empty());

    // A candidate's ids come from the codes, its exact vector from the fragment's file;
    // fragment 4 has none, so its row is left for a read from Lance.
    let (found, unread) = view
        .candidates_from_files(&[3 << 32 | 250, 4 << 32 | 5])
        .unwrap();
    assert_eq!(unread, vec![1]);
    assert_eq!(
        (found[0].chunk_id.as_str(), found[0].chunk_index),
        ("c3-250", 250)
    );
    assert_eq!(
        (found[1].chunk_id.as_str(), found[1].chunk_index),
        ("c3-12", 12)
    );
    assert_eq!(found[0].vector, vs[250]);
    assert!(found[1].vector.is_empty());
    assert!(view
        .candidates_from_files(&[3 << 32 | 999, 4 << 32 | 5])
        .is_err());
    assert!(view.candidates_from_files(&[9 << 32 | 1]).is_err());
}

#[test]
fn scratch_files_give_back_each_rows_vector_and_columns_and_leave_nothing_on_disk() {
    // The scratch files are unlinked from the start: a crash or a dropped fragment
    // leaves no file behind to clean up.
    let dir = tempfile::tempdir().unwrap();
    let resident = ResidentVectors::new(dir.path().join("resident"));
    let scratch = resident.scratch.clone().expect("a scratch directory");
    let vs = vectors(10, 8, 3);
    // Rows of differing lengths at offsets with gaps (rows deleted before a rewrite).
    let stored: Vec<StoredRow> = (0..vs.len())
        .map(|i| StoredRow::for_test(&"c".repeat(i + 1), "d", i as u32, i % 3 == 0))
        .collect();
    let mut c = FragmentCodes::new(1, vs.len(), 8, Some(&scratch));
    for (i, v) in vs.iter().enumerate() {
        c.push(2 * i as u32, &stored[i], v, &mean(&vs));
    }
    let c = c.seal();
    for i in [0, 4, 9] {
        let row = c.row(2 * i as u32).unwrap();
        assert_eq!(c.file.vector(row, 8).unwrap(), Some(vs[i].clone()));
        assert_eq!(c.file.stored(i, 8).unwrap(), Some(stored[i].clone()));
    }
    assert_eq!(c.row(3), None);
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);

    // Without a file, neither is there: the caller reads them from Lance.
    let mut without_file = FragmentCodes::new(2, 1, 8, None);
    without_file.push(0, &stored[0], &vs[0], &mean(&vs));
    let without_file = without_file.seal();
    assert_eq!(without_file.file.vector(0, 8).unwrap(), None);
    assert_eq!(without_file.file.stored(0, 8).unwrap(), None);

    // Where the directory cannot be made, fragments go without files.
    std::fs::write(dir.path().join("a file"), b"").unwrap();
    let without = ResidentVectors::new(dir.path().join("a file").join("resident"));
    assert!(without.scratch.is_none());
}

#[test]
fn two_halves_scan_what_one_pass_scans_even_within_one_large_fragment() {
    // One large fragment beside two small ones (what compaction leaves): the halves cut
    // the large one, and together keep what a single pass over every row keeps.
    let dims = 16;
    let big = vectors(PARALLEL_SCAN_ROWS + 1000, dims, 9);
    let center = mean(&big[..2000]);
    let view = view_of(
        vec![
            (codes_of(1, &big, &center, |i| i % 97 == 0), None),
            (codes_of(2, &big[..40], &center, |_| false), Some(vec![1])),
            (codes_of(3, &big[40..45], &center, |_| false), None),
        ],
        center.clone(),
    );
    let [first, second] = view.halves();
    let mid = (view.rows() / 2) as u32;
    assert_eq!(first, vec![(0, 0..mid as usize)]);
    assert_eq!(second[0], (0, mid as usize..big.len()));
    assert_eq!(second.len(), 3);
    let mut q = Vec::new();
    codes::push_signs(&big[123], &center, &mut q);
    for visibility in [Visibility::All, Visibility::Active] {
        let mut one = codes::Shortlist::new(500);
        for (fi, (f, deleted)) in view.fragments.iter().enumerate() {
            let skip = skip_mask(f, deleted.as_deref(), visibility);
            codes::hamming_scan(&f.signs, &q, skip.as_deref(), fi as u32, 0, &mut one);
        }
        let want = codes::merge_shortlists([one], 500);
        assert_eq!(view.hamming_shortlist(&q, 500, visibility), want);
        assert!(want.contains(&(0, 123)));
    }
}
