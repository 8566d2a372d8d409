//! Process tuning: how ragstream's threads share the machine.
//!
//! Queries, commits, embedding and background work (maintenance passes, vector-index builds,
//! keyword merges) all want the same cores. Left to the libraries' defaults, short work
//! queues behind long work: a commit behind an index build, an embedding behind an HNSW
//! update. This module holds every rule that keeps them apart, in one place:
//!
//! - [`lance_cpu_pool`]: the size of Lance's pool for CPU work, set before any thread starts;
//! - [`compute_pool`]: the rayon pool local embedders and chunking run on, apart from the
//!   global one Lance builds indexes on;
//! - [`background`]: background work on a runtime of its own, at a low scheduling priority,
//!   with the Lance tasks and the threads it starts.
//!
//! The measurements behind these rules are in `docs/benchmark-history.md`: "Scale: 10
//! minutes of continuous ingestion with queries alongside", "A commit behind an index build"
//! and "Background work on idle time".
//!
//! # The vendored patches and their way upstream
//!
//! Two of these rules need a patched `lance-core` (`vendor/lance-core`, described in
//! `vendor/README.md`). The plan is to upstream each change and then drop the copy:
//!
//! 1. **A CPU pool larger than its build fan-out.** Lance sizes its CPU pool and the number
//!    of index-build tasks it runs at once from one setting, so a build fills the pool. The
//!    change to propose: a separate setting for the pool size (or a build fan-out below it).
//!    Until then the patch doubles the pool. Drop it when `create_runtime` in
//!    `lance-core/src/utils/tokio.rs` sizes the pool apart from the fan-out.
//! 2. **A caller-chosen pool for CPU work.** Lance runs every `spawn_cpu` task on one pool,
//!    so background work and queries share it at one priority. The change to propose: let a
//!    caller pass the pool (or a priority) for the work a call starts. The patch adds
//!    `mark_background_thread(nice)`, which routes a marked thread's tasks to a second pool.
//!    Drop it when Lance offers such a hook, and call that hook from [`background`].
//!
//! The other vendored crate (`lance-encoding`) changes how data is read; `vendor/README.md`
//! gives its plan too.

pub mod background;
pub mod compute_pool;
pub mod lance_cpu_pool;
