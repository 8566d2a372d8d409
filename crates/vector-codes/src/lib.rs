//! Sign and byte codes of unit vectors, and the three scans of a resident vector search:
//! Hamming distance of sign codes over every row, the query's dot product with the signs of
//! a shortlist (asymmetric: the query keeps its floats), and its dot product with the byte
//! codes of a shorter list. Each is a pure function of its inputs; ties are broken by the
//! caller's row order, so a scan's result depends on nothing but the rows and the query.

use std::collections::BinaryHeap;

/// u64 words of a `dimensions`-long sign code.
pub fn words(dimensions: usize) -> usize {
    dimensions.div_ceil(64)
}

/// Appends the sign code of `v` around `center`: bit d is set when `v[d] > center[d]`.
pub fn push_signs(v: &[f32], center: &[f32], out: &mut Vec<u64>) {
    for (chunk, c) in v.chunks(64).zip(center.chunks(64)) {
        let mut w = 0u64;
        for (b, (x, m)) in chunk.iter().zip(c).enumerate() {
            if x > m {
                w |= 1 << b;
            }
        }
        out.push(w);
    }
}

/// Appends the byte code of `v` (`round(x / max|x| * 127)`) and returns its scale
/// (`max|x| / 127`), so that `scale * Σ q·code` approximates `q·v`.
pub fn push_bytes(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        out.extend(std::iter::repeat_n(0, v.len()));
        return 0.0;
    }
    out.extend(v.iter().map(|x| (x / max * 127.0).round() as i8));
    max / 127.0
}

/// A query rounded to 16-bit integers, for [`ByteQuery::dot`] with byte codes: integer
/// products vectorise on every x86-64 (a float conversion per byte does not), and integer
/// sums are exact, so the order of the additions cannot change a result.
pub struct ByteQuery {
    values: Vec<i16>,
    scale: f32,
}

impl ByteQuery {
    pub fn new(query: &[f32]) -> Self {
        let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max == 0.0 { 0.0 } else { max / 32767.0 };
        let values = query
            .iter()
            .map(|x| {
                if max == 0.0 {
                    0
                } else {
                    (x / scale).round() as i16
                }
            })
            .collect();
        ByteQuery { values, scale }
    }

    /// About the query's dot product with the vector a byte code encodes (times the code's
    /// own scale, which the caller applies).
    pub fn dot(&self, code: &[i8]) -> f32 {
        let sum: i64 = self
            .values
            .chunks(16)
            .zip(code.chunks(16))
            .map(|(q, c)| {
                q.iter()
                    .zip(c)
                    .map(|(a, b)| i32::from(*a) * i32::from(*b))
                    .sum::<i32>() as i64
            })
            .sum();
        sum as f32 * self.scale
    }
}

/// `Σ_d q[d] · (+1 if bit d is set, else −1)` for sign codes, by table: the sum of `q` over
/// the set bits of each byte of a code is looked up (one table of 256 sums per byte).
pub struct SignDot {
    tables: Vec<[f32; 256]>,
    /// `Σ q`: the score is `2 · Σ_{set bits} q − Σ q`.
    total: f32,
}

impl SignDot {
    /// Tables for `query` (already centred like the codes).
    pub fn new(query: &[f32]) -> Self {
        let tables = query
            .chunks(8)
            .map(|q| {
                let mut t = [0f32; 256];
                // Each entry adds one bit's value to an entry already made.
                for byte in 1..256usize {
                    let low = byte.trailing_zeros() as usize;
                    t[byte] = t[byte & (byte - 1)] + q.get(low).copied().unwrap_or(0.0);
                }
                t
            })
            .collect();
        SignDot {
            tables,
            total: query.iter().sum(),
        }
    }

    pub fn score(&self, signs: &[u64]) -> f32 {
        // Four sums, so that the additions do not wait on one another; added in a fixed
        // order.
        let mut sums = [0f32; 4];
        let mut tables = self.tables.iter();
        for w in signs {
            for (i, byte) in w.to_le_bytes().into_iter().enumerate() {
                if let Some(table) = tables.next() {
                    sums[i % 4] += table[byte as usize];
                }
            }
        }
        2.0 * ((sums[0] + sums[1]) + (sums[2] + sums[3])) - self.total
    }
}

/// A row kept by [`hamming_scan`]: (distance, caller's tag, row). A max-heap's top is the
/// worst kept: the largest distance, then the latest row.
pub type Shortlisted = (u32, u32, u32);

/// Keeps in `heap` (at most `keep` entries) the rows of `signs` (`query.len()` words each)
/// nearest `query` by Hamming distance, skipping rows whose bit is set in `skip`. Rows must
/// come in the caller's order (`tag`, then row) across calls: an equal distance never
/// displaces an earlier row. Once the heap is full a row costs one distance and one
/// comparison, so the scan runs at the speed memory delivers the codes.
pub fn hamming_scan(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    keep: usize,
    tag: u32,
    heap: &mut BinaryHeap<Shortlisted>,
) {
    if keep == 0 || query.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has just been found to support the one feature the function is
        // compiled for.
        return unsafe { hamming_scan_popcnt(signs, query, skip, keep, tag, heap) };
    }
    hamming_scan_any(signs, query, skip, keep, tag, heap)
}

/// [`hamming_scan_any`] compiled with the POPCNT instruction (x86-64's baseline does not
/// have it, and counting bits without it is most of a scan's time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn hamming_scan_popcnt(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    keep: usize,
    tag: u32,
    heap: &mut BinaryHeap<Shortlisted>,
) {
    hamming_scan_any(signs, query, skip, keep, tag, heap)
}

/// The scan with the code length fixed at compile time for the common dimensions (the
/// per-row loop then unrolls), and any other length as it comes.
#[inline(always)]
fn hamming_scan_any(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    keep: usize,
    tag: u32,
    heap: &mut BinaryHeap<Shortlisted>,
) {
    macro_rules! fixed {
        ($($w:literal)*) => {
            match query.len() {
                $($w => {
                    let q: &[u64; $w] = query.try_into().expect("length matched");
                    scan_rows(signs.chunks_exact($w), |code| {
                        let mut d = 0;
                        for i in 0..$w {
                            d += (code[i] ^ q[i]).count_ones();
                        }
                        d
                    }, skip, keep, tag, heap)
                })*
                w => scan_rows(signs.chunks_exact(w), |code| {
                    code.iter().zip(query).map(|(a, b)| (a ^ b).count_ones()).sum()
                }, skip, keep, tag, heap),
            }
        };
    }
    fixed!(2 4 6 8 12 16 24)
}

#[inline(always)]
fn scan_rows<'a>(
    rows: impl Iterator<Item = &'a [u64]>,
    distance: impl Fn(&[u64]) -> u32,
    skip: Option<&[u64]>,
    keep: usize,
    tag: u32,
    heap: &mut BinaryHeap<Shortlisted>,
) {
    let mut worst = match heap.peek() {
        Some(top) if heap.len() >= keep => top.0,
        _ => u32::MAX,
    };
    for (row, code) in rows.enumerate() {
        let d = distance(code);
        if d >= worst {
            continue;
        }
        if skip.is_some_and(|s| s[row / 64] >> (row % 64) & 1 == 1) {
            continue;
        }
        heap.push((d, tag, row as u32));
        if heap.len() > keep {
            heap.pop();
        }
        if heap.len() >= keep {
            worst = heap.peek().map_or(u32::MAX, |t| t.0);
        }
    }
}

/// Merges shortlists kept by separate scans (of disjoint rows) into the `keep` best by
/// (distance, tag, row) — what one scan over all of them in that order would have kept —
/// as (tag, row) in that order.
pub fn merge_shortlists(
    parts: impl IntoIterator<Item = BinaryHeap<Shortlisted>>,
    keep: usize,
) -> Vec<(u32, u32)> {
    let mut all: Vec<Shortlisted> = parts.into_iter().flatten().collect();
    if all.len() > keep {
        all.select_nth_unstable(keep);
        all.truncate(keep);
    }
    let mut kept: Vec<(u32, u32)> = all.into_iter().map(|(_, tag, row)| (tag, row)).collect();
    kept.sort_unstable();
    kept
}

/// The `n` best of `rows` by score descending, then by key ascending, in that order. A
/// selection, then a sort of only what is kept.
pub fn best_first<K: Ord + Copy>(rows: &mut Vec<(f32, K)>, n: usize) {
    let order = |a: &(f32, K), b: &(f32, K)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if rows.len() > n && n > 0 {
        rows.select_nth_unstable_by(n - 1, order);
    }
    rows.truncate(n);
    rows.sort_unstable_by(order);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_are_taken_around_the_centre() {
        let mut out = Vec::new();
        push_signs(&[0.5, -0.25, 0.1, 1.0], &[0.0, -0.5, 0.2, 0.0], &mut out);
        assert_eq!(out, vec![0b1011]);
        let mut long = Vec::new();
        push_signs(&[1.0; 70], &[0.0; 70], &mut long);
        assert_eq!(long, vec![u64::MAX, 0b11_1111]);
    }

    #[test]
    fn byte_codes_approximate_the_dot_product() {
        let v = [0.5f32, -0.25, 0.0, 0.8, -0.1, 0.2, 0.0, 0.0, 0.3];
        let q = [0.1f32, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
        let mut code = Vec::new();
        let scale = push_bytes(&v, &mut code);
        assert_eq!(code[3], 127);
        let exact: f32 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
        assert!((ByteQuery::new(&q).dot(&code) * scale - exact).abs() < 0.005);
        assert_eq!(push_bytes(&[0.0; 3], &mut code), 0.0);
    }

    #[test]
    fn the_sign_dot_table_sums_the_query_with_the_signs() {
        let q: Vec<f32> = (0..70).map(|i| (i as f32 - 30.0) / 10.0).collect();
        let v: Vec<f32> = (0..70)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let mut signs = Vec::new();
        push_signs(&v, &[0.0; 70], &mut signs);
        let want: f32 = q.iter().zip(&v).map(|(a, b)| a * b).sum();
        assert!((SignDot::new(&q).score(&signs) - want).abs() < 1e-3);
    }

    #[test]
    fn the_hamming_scan_keeps_the_nearest_and_the_earliest_of_equals() {
        let query = [0b0000u64];
        let signs = [0b0111u64, 0b0001, 0b0011, 0b0001, 0b1111];
        let mut heap = BinaryHeap::new();
        hamming_scan(&signs, &query, None, 2, 0, &mut heap);
        assert_eq!(merge_shortlists([heap], 2), vec![(0, 1), (0, 3)]);
        // Row 1 skipped; a second call (tag 1) competes with the first's rows.
        let mut heap = BinaryHeap::new();
        hamming_scan(&signs, &query, Some(&[0b10]), 2, 0, &mut heap);
        hamming_scan(&[0u64], &query, None, 2, 1, &mut heap);
        assert_eq!(merge_shortlists([heap], 2), vec![(0, 3), (1, 0)]);
    }

    #[test]
    fn merged_shortlists_are_what_one_scan_keeps() {
        let query = [7u64; 6];
        let rows: Vec<u64> = (0..600u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut one = BinaryHeap::new();
        hamming_scan(&rows[..300], &query, None, 7, 0, &mut one);
        hamming_scan(&rows[300..], &query, None, 7, 1, &mut one);
        let (mut a, mut b) = (BinaryHeap::new(), BinaryHeap::new());
        hamming_scan(&rows[..300], &query, None, 7, 0, &mut a);
        hamming_scan(&rows[300..], &query, None, 7, 1, &mut b);
        let want = merge_shortlists([one], 7);
        assert_eq!(merge_shortlists([b, a], 7), want);
        // The unrolled six-word distance agrees with a direct count.
        let mut all = BinaryHeap::new();
        hamming_scan(&rows, &query, None, 100, 0, &mut all);
        for (d, _, row) in all {
            let r = row as usize;
            let direct: u32 = rows[r * 6..r * 6 + 6]
                .iter()
                .map(|w| (w ^ 7).count_ones())
                .sum();
            assert_eq!(d, direct);
        }
    }

    #[test]
    fn best_first_selects_then_orders_ties_by_key() {
        let mut rows = vec![(0.5f32, 3u64), (0.9, 1), (0.5, 2), (0.1, 0), (0.7, 4)];
        best_first(&mut rows, 3);
        assert_eq!(rows, vec![(0.9, 1), (0.7, 4), (0.5, 2)]);
    }
}
