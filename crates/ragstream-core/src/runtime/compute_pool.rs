//! The threads local models embed on, and ingestion chunks documents on.
//!
//! Local embedders parallelise with rayon (model2vec's batch encoding, candle's matrix
//! products), and so does Lance when it builds vector indexes (HNSW graphs, k-means). On the
//! shared global pool an index build would queue every embedding behind it. Embeddings run
//! on a pool of their own instead; the operating system then shares the cores between
//! embedding and index building, and neither waits for the other. Chunking a batch (word
//! segmentation, entity keys per document) is the same kind of work and shares the pool.
//!
//! Live work (the ingest pipeline's live lane, [`live`]) has a pool of its own too: a
//! bulk batch holds its pool for as long as its embedding takes (minutes, for a large batch
//! on a transformer), and a live document must not wait that long. The operating system
//! shares the cores between the two pools.
//! Measured in `docs/benchmark-history.md`, "Scale: 10 minutes of continuous ingestion with
//! queries alongside".

use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    /// Whether work started on this thread is live work ([`live`]).
    static LIVE: Cell<bool> = const { Cell::new(false) };
}

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    static LIVE_POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let (cell, prefix) = if LIVE.get() {
        (&LIVE_POOL, "ragstream-live")
    } else {
        (&POOL, "ragstream-embed")
    };
    cell.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        match rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("{prefix}-{i}"))
            .build()
        {
            Ok(pool) => Some(pool),
            Err(e) => {
                tracing::warn!(error = %e, "no embedding thread pool; embedding on rayon's global pool");
                None
            }
        }
    })
    .as_ref()
}

/// Runs `work` with every [`run`] it makes on the live pool instead of the embedding pool.
pub fn live<R>(work: impl FnOnce() -> R) -> R {
    /// Unmarks the thread however `work` ends.
    struct Unmark(bool);
    impl Drop for Unmark {
        fn drop(&mut self) {
            LIVE.set(self.0);
        }
    }
    let _unmark = Unmark(LIVE.replace(true));
    work()
}

/// Runs `work` (and every rayon job it spawns) on the embedding pool, or on the live pool
/// inside [`live`].
pub(crate) fn run<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn work_runs_on_the_embedding_pool_not_the_global_one() {
        let name = super::run(|| {
            let nested = rayon::current_thread_index().is_some();
            (nested, std::thread::current().name().map(str::to_string))
        });
        assert!(name.0, "inside a rayon pool");
        assert!(name.1.unwrap_or_default().starts_with("ragstream-embed-"));
    }

    #[test]
    fn live_work_runs_on_a_pool_of_its_own_and_only_inside_live() {
        let thread = || super::run(|| std::thread::current().name().map(str::to_string));
        let live = super::live(thread).unwrap_or_default();
        assert!(live.starts_with("ragstream-live-"), "{live}");
        let after = thread().unwrap_or_default();
        assert!(after.starts_with("ragstream-embed-"), "{after}");
    }
}
