//! Sign and byte codes of unit vectors, and the three scans of a resident vector search:
//! Hamming distance of sign codes over every row, the query's dot product with the signs of
//! a shortlist (asymmetric: the query keeps its floats), and its dot product with the byte
//! codes of a shorter list. Each is a pure function of its inputs; ties are broken by the
//! caller's row order, so a scan's result depends on nothing but the rows and the query.

mod code_buffer;

pub use code_buffer::CodeBuffer;

/// u64 words of a `dimensions`-long sign code.
pub fn words(dimensions: usize) -> usize {
    dimensions.div_ceil(64)
}

/// Appends the sign code of `v` around `center`: bit d is set when `v[d] > center[d]`.
pub fn push_signs(v: &[f32], center: &[f32], out: &mut impl Extend<u64>) {
    out.extend(v.chunks(64).zip(center.chunks(64)).map(|(chunk, c)| {
        let mut w = 0u64;
        for (b, (x, m)) in chunk.iter().zip(c).enumerate() {
            if x > m {
                w |= 1 << b;
            }
        }
        w
    }));
}

/// Appends the byte code of `v` (`round(x / max|x| * 127)`) and returns its scale
/// (`max|x| / 127`), so that `scale * Σ q·code` approximates `q·v`.
pub fn push_bytes(v: &[f32], out: &mut impl Extend<i8>) -> f32 {
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

/// A row kept by [`hamming_scan`]: (distance, caller's tag, row).
pub type Shortlisted = (u32, u32, u32);

/// The rows a scan keeps: the `keep` nearest by Hamming distance, the earlier row first
/// among equals. Distances are small integers (at most the code's bits), so instead of a
/// heap — a pop and a push for every row that enters, most of a scan's time at a million
/// rows — it counts kept rows by distance and lowers the distance a row must beat as soon
/// as `keep` rows are at or below a lower one. A row that enters costs a push and a count.
pub struct Shortlist {
    keep: usize,
    /// Rows entered, in scan order; some are past `worst` (dropped when the list is
    /// compacted, and by [`merge_shortlists`]).
    rows: Vec<Shortlisted>,
    /// Rows entered by distance (valid at and below `worst`).
    counts: Vec<u32>,
    /// Rows entered at or below `worst`.
    within: usize,
    /// A row is entered only nearer than this: `u32::MAX` until `keep` rows are in.
    worst: u32,
    /// `rows`' length at which rows past `worst` are dropped.
    compact_at: usize,
}

impl Shortlist {
    pub fn new(keep: usize) -> Self {
        Shortlist {
            keep,
            rows: Vec::with_capacity(keep.min(1 << 20)),
            counts: Vec::new(),
            within: 0,
            worst: if keep == 0 { 0 } else { u32::MAX },
            compact_at: keep.saturating_mul(2).max(1024),
        }
    }

    /// Enters a row nearer than `self.worst`; returns the distance the next row must beat.
    /// Rows entered at `worst` before it fell there are the earliest of their distance, and
    /// later rows at that distance are not entered: ties go to the earlier row.
    #[inline]
    fn enter(&mut self, distance: u32, tag: u32, row: u32) -> u32 {
        let d = distance as usize;
        if d >= self.counts.len() {
            self.counts.resize(d + 1, 0);
        }
        self.counts[d] += 1;
        self.within += 1;
        self.rows.push((distance, tag, row));
        if self.within >= self.keep {
            if self.worst == u32::MAX {
                self.worst = (self.counts.len() - 1) as u32;
            }
            // The lowest distance at or below which `keep` rows are.
            while self.within - self.counts[self.worst as usize] as usize >= self.keep {
                self.within -= self.counts[self.worst as usize] as usize;
                self.worst -= 1;
            }
            if self.rows.len() >= self.compact_at {
                let worst = self.worst;
                self.rows.retain(|r| r.0 <= worst);
                self.compact_at = (self.rows.len() * 2).max(self.compact_at);
            }
        }
        self.worst
    }

    /// The rows entered that may still be among the `keep` nearest.
    fn kept(self) -> impl Iterator<Item = Shortlisted> {
        let worst = self.worst;
        self.rows.into_iter().filter(move |r| r.0 <= worst)
    }
}

/// Keeps in `list` the rows of `signs` (`query.len()` words each; the first is row
/// `first_row`) nearest `query` by Hamming distance, skipping rows whose bit is set in
/// `skip` (indexed by row). Rows must come in the caller's order (`tag`, then row) across
/// calls: an equal distance never displaces an earlier row. A row costs one distance and one
/// comparison unless it enters the list.
pub fn hamming_scan(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    tag: u32,
    first_row: u32,
    list: &mut Shortlist,
) {
    if list.keep == 0 || query.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has just been found to support the one feature the function is
        // compiled for.
        return unsafe { hamming_scan_popcnt(signs, query, skip, tag, first_row, list) };
    }
    hamming_scan_any(signs, query, skip, tag, first_row, list)
}

/// [`hamming_scan_any`] compiled with the POPCNT instruction (x86-64's baseline does not
/// have it, and counting bits without it is most of a scan's time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn hamming_scan_popcnt(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    tag: u32,
    first_row: u32,
    list: &mut Shortlist,
) {
    hamming_scan_any(signs, query, skip, tag, first_row, list)
}

/// The scan with the code length fixed at compile time for the common dimensions (the
/// per-row loop then unrolls), and any other length as it comes.
#[inline(always)]
fn hamming_scan_any(
    signs: &[u64],
    query: &[u64],
    skip: Option<&[u64]>,
    tag: u32,
    first_row: u32,
    list: &mut Shortlist,
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
                    }, skip, tag, first_row, list)
                })*
                w => scan_rows(signs.chunks_exact(w), |code| {
                    code.iter().zip(query).map(|(a, b)| (a ^ b).count_ones()).sum()
                }, skip, tag, first_row, list),
            }
        };
    }
    fixed!(2 4 6 8 12 16 24)
}

/// How far ahead of the row it scores a scan asks for memory: 1.5 KiB, some 30 rows of
/// 384-bit codes. The CPU's own prefetchers stop at each page's end; asking ahead carries
/// the stream across, so a scan out of cache runs faster on huge pages and on 4 KiB pages
/// alike (docs/benchmark-history.md, "The resident scan out of cache").
const PREFETCH_AHEAD_WORDS: usize = 1536 / 8;

/// Asks the CPU to load the cache line at `p` into its caches. A hint: it reads nothing the
/// program sees and cannot fault, so `p` may point anywhere, past the codes' end too.
#[inline(always)]
fn prefetch(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch dereferences nothing; SSE, which it needs, is in x86-64's baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[inline(always)]
fn scan_rows<'a>(
    rows: impl Iterator<Item = &'a [u64]>,
    distance: impl Fn(&[u64]) -> u32,
    skip: Option<&[u64]>,
    tag: u32,
    first_row: u32,
    list: &mut Shortlist,
) {
    let mut worst = list.worst;
    for (i, code) in rows.enumerate() {
        prefetch(code.as_ptr().wrapping_add(PREFETCH_AHEAD_WORDS));
        let d = distance(code);
        if d >= worst {
            continue;
        }
        let row = first_row as usize + i;
        if skip.is_some_and(|s| s[row / 64] >> (row % 64) & 1 == 1) {
            continue;
        }
        worst = list.enter(d, tag, row as u32);
    }
}

/// Merges shortlists kept by separate scans (of disjoint rows) into the `keep` best by
/// (distance, tag, row) — what one scan over all of them in that order would have kept —
/// as (tag, row) in that order.
pub fn merge_shortlists(
    parts: impl IntoIterator<Item = Shortlist>,
    keep: usize,
) -> Vec<(u32, u32)> {
    let mut all: Vec<Shortlisted> = parts.into_iter().flat_map(Shortlist::kept).collect();
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
        let mut list = Shortlist::new(2);
        hamming_scan(&signs, &query, None, 0, 0, &mut list);
        assert_eq!(merge_shortlists([list], 2), vec![(0, 1), (0, 3)]);
        // Row 1 skipped; a second call (tag 1) competes with the first's rows.
        let mut list = Shortlist::new(2);
        hamming_scan(&signs, &query, Some(&[0b10]), 0, 0, &mut list);
        hamming_scan(&[0u64], &query, None, 1, 0, &mut list);
        assert_eq!(merge_shortlists([list], 2), vec![(0, 3), (1, 0)]);
    }

    #[test]
    fn merged_shortlists_are_what_one_scan_keeps() {
        let query = [7u64; 6];
        let rows: Vec<u64> = (0..600u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut one = Shortlist::new(7);
        hamming_scan(&rows[..300], &query, None, 0, 0, &mut one);
        hamming_scan(&rows[300..], &query, None, 1, 0, &mut one);
        let (mut a, mut b) = (Shortlist::new(7), Shortlist::new(7));
        hamming_scan(&rows[..300], &query, None, 0, 0, &mut a);
        hamming_scan(&rows[300..], &query, None, 1, 0, &mut b);
        let want = merge_shortlists([one], 7);
        assert_eq!(merge_shortlists([b, a], 7), want);
        // The unrolled six-word distance agrees with a direct count.
        let mut all = Shortlist::new(100);
        hamming_scan(&rows, &query, None, 0, 0, &mut all);
        for (d, _, row) in all.kept() {
            let r = row as usize;
            let direct: u32 = rows[r * 6..r * 6 + 6]
                .iter()
                .map(|w| (w ^ 7).count_ones())
                .sum();
            assert_eq!(d, direct);
        }
    }

    #[test]
    fn a_shortlist_keeps_what_sorting_every_row_keeps() {
        // Many rows at few distinct distances (ties everywhere), enough rows that the list
        // is compacted several times, rows skipped, and keep from none to every row.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let rows: Vec<u64> = (0..6000).map(|_| next() & next() & next()).collect();
        let skip: Vec<u64> = (0..rows.len().div_ceil(64))
            .map(|_| next() & next())
            .collect();
        let skipped = |r: usize| skip[r / 64] >> (r % 64) & 1 == 1;
        let query = [0u64];
        for keep in [0, 1, 5, 64, 700, 3000, 6000, 9000] {
            // Two "fragments" (tags 0 and 1, the second's skip mask its own rows'), scanned
            // in one pass, and again as two halves that cut the second fragment at its row
            // 1,200 (what two threads scan).
            let second_skip = &skip[2560 / 64..];
            let mut list = Shortlist::new(keep);
            hamming_scan(&rows[..2500], &query, Some(&skip[..]), 0, 0, &mut list);
            hamming_scan(&rows[2560..], &query, Some(second_skip), 1, 0, &mut list);
            let (mut a, mut b) = (Shortlist::new(keep), Shortlist::new(keep));
            hamming_scan(&rows[..2500], &query, Some(&skip[..]), 0, 0, &mut a);
            hamming_scan(&rows[2560..3760], &query, Some(second_skip), 1, 0, &mut a);
            hamming_scan(&rows[3760..], &query, Some(second_skip), 1, 1200, &mut b);
            let mut want: Vec<Shortlisted> = rows
                .iter()
                .enumerate()
                .filter(|(r, _)| (*r < 2500 || *r >= 2560) && !skipped(*r))
                .map(|(r, w)| match r < 2500 {
                    true => (w.count_ones(), 0, r as u32),
                    false => (w.count_ones(), 1, (r - 2560) as u32),
                })
                .collect();
            want.sort_unstable();
            want.truncate(keep);
            let mut want: Vec<(u32, u32)> = want.into_iter().map(|(_, t, r)| (t, r)).collect();
            want.sort_unstable();
            assert_eq!(merge_shortlists([list], keep), want, "keep {keep}");
            assert_eq!(merge_shortlists([b, a], keep), want, "keep {keep}, halves");
        }
    }

    #[test]
    fn best_first_selects_then_orders_ties_by_key() {
        let mut rows = vec![(0.5f32, 3u64), (0.9, 1), (0.5, 2), (0.1, 0), (0.7, 4)];
        best_first(&mut rows, 3);
        assert_eq!(rows, vec![(0.9, 1), (0.7, 4), (0.5, 2)]);
    }
}
