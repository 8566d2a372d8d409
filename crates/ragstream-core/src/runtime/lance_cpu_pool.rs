//! The size of Lance's pool for CPU work.
//!
//! Lance runs its CPU-bound work — decoding pages, searching index partitions, encoding
//! written data, building HNSW graphs — as blocking tasks on one pool of
//! `cores − LANCE_IO_CORE_RESERVATION (2)` threads, and of one thread on a machine with two
//! cores or fewer. There, every query and every commit queues behind whatever runs. With a
//! few more threads than cores the operating system shares the cores between them instead.
//! But Lance also fans a build out to as many long tasks as this setting (one HNSW partition
//! each), which would fill the pool again: the patched `vendor/lance-core` makes the pool
//! twice that size, so that short tasks always find a thread (the way upstream: the
//! [`super`] module). Measured in `docs/benchmark-history.md`, "A commit behind an index
//! build".

/// Lance's own setting; when it is set, ragstream leaves it alone.
pub const LANCE_CPU_THREADS: &str = "LANCE_CPU_THREADS";

/// The pool size ragstream asks for on a machine with `cores` cores: Lance's default
/// (`cores − 2`), but never fewer than 4 threads.
pub fn default_threads(cores: usize) -> usize {
    cores.saturating_sub(2).max(4)
}

/// Sizes the pool unless `LANCE_CPU_THREADS` is set; returns the size in effect. Call it
/// first thing in `main`, before any other thread starts (it sets an environment variable,
/// which Lance reads once, on first use).
pub fn configure() -> String {
    if let Some(set) = std::env::var_os(LANCE_CPU_THREADS) {
        return set.to_string_lossy().into_owned();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = default_threads(cores).to_string();
    std::env::set_var(LANCE_CPU_THREADS, &threads);
    threads
}

#[cfg(test)]
mod tests {
    use super::default_threads;

    #[test]
    fn small_machines_get_more_threads_than_lances_single_one_and_large_ones_lances_default() {
        assert_eq!(default_threads(1), 4);
        assert_eq!(default_threads(2), 4);
        assert_eq!(default_threads(6), 4);
        assert_eq!(default_threads(8), 6);
        assert_eq!(default_threads(32), 30);
    }
}
