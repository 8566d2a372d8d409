//! The threads local models embed on, and ingestion chunks documents on.
//!
//! Local embedders parallelise with rayon (model2vec's batch encoding, candle's matrix
//! products), and so does Lance when it builds vector indexes (HNSW graphs, k-means). On the
//! shared global pool an index build would queue every embedding behind it. Embeddings run
//! on a pool of their own instead; the operating system then shares the cores between
//! embedding and index building, and neither waits for the other. Chunking a batch (word
//! segmentation, entity keys per document) is the same kind of work and shares the pool.
//! Measured in `docs/benchmark-history.md`, "Scale: 10 minutes of continuous ingestion with
//! queries alongside".

use std::sync::OnceLock;

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        match rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("ragstream-embed-{i}"))
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

/// Runs `work` (and every rayon job it spawns) on the embedding pool.
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
}
