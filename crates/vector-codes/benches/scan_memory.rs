//! What a Hamming scan of a million codes costs one thread when the codes are not in the
//! CPU's caches (as in a daemon, where other work evicts them between queries), held in a
//! heap `Vec` (4 KiB pages) and in a `CodeBuffer` (advised to huge pages); and, for
//! reference, when they are cached. docs/benchmark-history.md, "The resident scan out of cache".
//!
//!     cargo bench --manifest-path crates/vector-codes/Cargo.toml --bench scan_memory

mod support;

use support::codes;
use vector_codes::{hamming_scan, merge_shortlists, CodeBuffer, Shortlist};

const ROWS: usize = 1_000_000;
const WORDS: usize = 6;
const KEEP: usize = 8_000;
const ROUNDS: usize = 15;
/// Written between rounds to push the codes out of the caches (this machine's L3 is
/// reported as 480 MiB, shared).
const EVICT_BYTES: usize = 1 << 30;

fn main() {
    let mut evict = vec![0u8; EVICT_BYTES];
    let query: Vec<u64> = codes(WORDS, 42).collect();
    let heap: Vec<u64> = codes(ROWS * WORDS, 7).collect();
    let mut mapped = CodeBuffer::<u64>::with_capacity(ROWS * WORDS);
    mapped.extend(codes(ROWS * WORDS, 7));
    assert!(mapped.is_mapped() && mapped[..] == heap[..]);
    let mut median_ms = |signs: &[u64], cold: bool| {
        let evict_caches = |round: usize| {
            if cold {
                for (i, b) in evict.iter_mut().enumerate().step_by(64) {
                    *b = (i + round) as u8;
                }
            }
        };
        let scan = || {
            let mut list = Shortlist::new(KEEP);
            hamming_scan(signs, &query, None, 0, 0, &mut list);
            merge_shortlists([list], KEEP)
        };
        support::median_ms(ROUNDS, evict_caches, scan).0
    };
    // Alternated, twice: the machine's speed drifts.
    for _ in 0..2 {
        for cold in [true, false] {
            let on_heap = median_ms(&heap, cold);
            let on_buffer = median_ms(&mapped, cold);
            println!(
                "{} cache: Vec {on_heap:.2} ms, CodeBuffer {on_buffer:.2} ms, x{:.2}",
                if cold { "out of" } else { "in" },
                on_buffer / on_heap
            );
        }
    }
    let smaps = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    for line in smaps.lines().filter(|l| l.starts_with("AnonHugePages")) {
        println!("{line} (the CodeBuffer's {} MiB)", (ROWS * WORDS * 8) >> 20);
    }
}
