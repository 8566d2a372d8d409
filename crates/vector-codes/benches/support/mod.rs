//! What the scan benchmarks share: reproducible codes and the median of timed rounds.

use std::time::Instant;

/// xorshift64*: `n` reproducible code words without a dependency.
pub fn codes(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed;
    (0..n).map(move |_| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// The median milliseconds of `rounds` calls of `run`, each after `before` (untimed) is
/// called with the round's number, and what the last call returned.
pub fn median_ms<T>(
    rounds: usize,
    mut before: impl FnMut(usize),
    mut run: impl FnMut() -> T,
) -> (f64, T) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for round in 0..rounds {
        before(round);
        let t = Instant::now();
        last = Some(std::hint::black_box(run()));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[rounds / 2], last.expect("at least one round"))
}
