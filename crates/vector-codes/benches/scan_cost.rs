//! What a Hamming scan over a million codes costs one thread, and what it would cost with a
//! first pass over the codes' first two words (docs/benchmark-history.md, "Offline: a first
//! Hamming stage over 128 of the 384 sign bits"). Random codes: the cost of reading and counting,
//! not the recall (which `scripts/two_stage_hamming.py` measures on real vectors).
//!
//!     cargo bench --manifest-path crates/vector-codes/Cargo.toml --bench scan_cost

mod support;

use vector_codes::{hamming_scan, merge_shortlists, Shortlist};

const ROWS: usize = 1_000_000;
const WORDS: usize = 6;
const HEAD: usize = 2;
const KEEP: usize = 8_000;
const ROUNDS: usize = 30;

fn median_ms(run: impl FnMut() -> usize) -> (f64, usize) {
    support::median_ms(ROUNDS, |_| {}, run)
}

fn main() {
    let signs: Vec<u64> = support::codes(ROWS * WORDS, 0x9E37_79B9_7F4A_7C15).collect();
    let head: Vec<u64> = signs
        .chunks_exact(WORDS)
        .flat_map(|c| c[..HEAD].iter().copied())
        .collect();
    let query: Vec<u64> = support::codes(WORDS, 42).collect();

    let (one, kept) = median_ms(|| {
        let mut list = Shortlist::new(KEEP);
        hamming_scan(&signs, &query, None, 0, 0, &mut list);
        merge_shortlists([list], KEEP).len()
    });
    println!("one pass, {WORDS} words x {ROWS} rows, keep {KEEP}: {one:.2} ms ({kept} kept)");

    for share in [0.10, 0.20, 0.30] {
        let first_keep = (ROWS as f64 * share) as usize;
        let (two, kept) = median_ms(|| {
            let mut first = Shortlist::new(first_keep);
            hamming_scan(&head, &query[..HEAD], None, 0, 0, &mut first);
            let rows = merge_shortlists([first], first_keep);
            let mut gathered = Vec::with_capacity(rows.len() * WORDS);
            for &(_, row) in &rows {
                let row = row as usize;
                gathered.extend_from_slice(&signs[row * WORDS..(row + 1) * WORDS]);
            }
            let mut list = Shortlist::new(KEEP);
            hamming_scan(&gathered, &query, None, 0, 0, &mut list);
            merge_shortlists([list], KEEP).len()
        });
        println!(
            "first pass over {HEAD} words keeping {:.0} %, then {WORDS} words: {two:.2} ms \
             ({kept} kept), x{:.2} of one pass",
            share * 100.0,
            two / one
        );
    }
}
