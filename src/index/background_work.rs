//! Background work — maintenance passes, vector-index builds and their updates — at a low
//! scheduling priority.
//!
//! On two cores a maintenance pass (rewriting fragments, adding new rows to the HNSW graphs,
//! reading the rewritten fragments' codes) shared the cores equally with queries: over the
//! 10-minute steady ingestion bench the hybrid p99 rose ×3.95 from the first minute to the
//! last. Linux can run such work only on time nobody else wants: a `SCHED_IDLE` thread runs
//! when a core would otherwise idle, and a core running only such threads counts as idle
//! when a query's thread wakes. Nice 19 (`low`) is the milder choice: such a thread weighs 15
//! against 1,024 at nice 0, but its core is busy to a waking thread.
//!
//! Background CPU work runs in three places, and all three run at `index.background_priority`:
//! - the futures themselves (planning, reading codes): [`run`] and [`spawn`] put them on a
//!   runtime of their own;
//! - the Lance CPU tasks they start (`spawn_cpu`: encoding rewritten fragments, searching
//!   partitions while an index is updated): the patched `lance-core` sends the tasks of a
//!   thread marked by `mark_background_thread` to a second pool (vendor/README.md), whose
//!   threads are started by the marked threads and so inherit their policy and nice value;
//! - rayon's global pool, where Lance trains k-means and builds HNSW graphs (ragstream's
//!   own rayon work, embedding and chunking, runs on `embedding::compute_pool`, and queries
//!   use no rayon pool).
//!
//! Policies and nice values are per thread on Linux, and lowering one's own needs no
//! privilege. Elsewhere the work is only kept apart (its own runtime and Lance pool).

use std::future::Future;
use std::sync::OnceLock;

use lance_core::utils::tokio::mark_background_thread;

/// How background work is scheduled (`index.background_priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundPriority {
    /// `SCHED_IDLE`: only time no other thread wants.
    #[default]
    Idle,
    /// Nice 19: the smallest share of a contended core.
    Low,
    /// As queries and the writer (still on threads of its own).
    Normal,
}

impl BackgroundPriority {
    /// The nice value the threads run at, if this priority sets one (`Idle` threads ignore
    /// it, but a later change of policy would not); `Normal` leaves the threads as started.
    fn nice(self) -> Option<i32> {
        match self {
            BackgroundPriority::Idle | BackgroundPriority::Low => Some(19),
            BackgroundPriority::Normal => None,
        }
    }

    /// Applies this priority to the calling thread.
    fn apply_to_this_thread(self) {
        if let Some(nice) = self.nice() {
            lance_core::utils::tokio::set_this_thread_nice(nice);
        }
        #[cfg(target_os = "linux")]
        if self == BackgroundPriority::Idle {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param. Moving to
            // SCHED_IDLE lowers priority, which needs no privilege, but a sandbox may refuse
            // it: the thread then keeps nice 19.
            if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
                tracing::warn!(error = %std::io::Error::last_os_error(),
                    "cannot run background work as SCHED_IDLE; it runs at nice 19");
            }
        }
    }

    /// The nice value the patched Lance pool gives the tasks of a background thread: this
    /// priority's, or the calling thread's own for `Normal`.
    fn nice_of_this_thread(self) -> i32 {
        #[cfg(target_os = "linux")]
        // SAFETY: getpriority only reads the calling thread's nice value.
        let own = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        #[cfg(not(target_os = "linux"))]
        let own = 0;
        self.nice().unwrap_or(own)
    }
}

/// The runtime background futures run on: unset until [`configure`] (then background work
/// runs where it is started, as in tests and programs that use the library without it),
/// `None` if it could not be built.
static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();

fn runtime() -> Option<&'static tokio::runtime::Runtime> {
    RUNTIME.get().and_then(Option::as_ref)
}

/// Sets up background work at `priority`: its runtime, and rayon's global pool unless
/// something built that first (then a warning says so and those threads stay at normal
/// priority). Call it once, early in `main`; later calls change nothing. Returns whether
/// rayon's pool was set up.
pub fn configure(priority: BackgroundPriority) -> bool {
    let mut first = false;
    let runtime = RUNTIME.get_or_init(|| {
        first = true;
        // Two workers: a maintenance pass and a vector-index build can run at once, and
        // neither should wait for the other's I/O.
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ragstream-background")
            .on_thread_start(move || {
                priority.apply_to_this_thread();
                mark_background_thread(priority.nice_of_this_thread());
            })
            .enable_all()
            .build()
            .inspect_err(|e| tracing::warn!(error = %e, "no runtime for background work; it runs beside queries at their priority"))
            .ok()
    });
    if !first || runtime.is_none() {
        return false;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("rayon-background-{i}"))
        .start_handler(move |_| priority.apply_to_this_thread())
        .build_global();
    match pool {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, "rayon's global pool was built before ragstream could lower its priority; vector-index builds run at normal priority");
            false
        }
    }
}

/// Runs `work` on the background runtime and waits for it; without one, in place. Dropping
/// the returned future cancels `work`, as it would in place.
pub async fn run<F>(work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);
    impl<T> Drop for AbortOnDrop<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    match runtime() {
        Some(rt) => {
            let mut task = AbortOnDrop(rt.spawn(work));
            match (&mut task.0).await {
                Ok(output) => output,
                // Only a drop aborts the task, so a join error is a panic in `work`: raise
                // it here, as if `work` had run in place.
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        None => work.await,
    }
}

/// Starts `work` on the background runtime (without one, on the caller's: call it from
/// within a tokio runtime) and returns.
pub fn spawn<F>(work: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    match runtime() {
        Some(rt) => drop(rt.spawn(work)),
        None => drop(tokio::spawn(work)),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The calling thread's (nice value, scheduling policy): fields 19 and 41 of its `stat`.
    fn this_thread() -> (i32, u32) {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // Fields after the parenthesised name start at field 3 (state).
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        (
            fields[19 - 3].parse().unwrap(),
            fields[41 - 3].parse().unwrap(),
        )
    }

    const SCHED_IDLE: u32 = libc::SCHED_IDLE as u32;

    #[tokio::test]
    async fn background_work_and_the_cpu_work_it_starts_run_only_on_idle_time() {
        let rayon_configured = super::configure(super::BackgroundPriority::Idle);
        let base = this_thread();
        assert_ne!(
            base.1, SCHED_IDLE,
            "the test must not already run at idle priority"
        );
        let in_place =
            lance_core::utils::tokio::spawn_cpu(|| Ok::<_, std::io::Error>(this_thread()))
                .await
                .unwrap();
        let (future, task) = super::run(async {
            let future = this_thread();
            let task =
                lance_core::utils::tokio::spawn_cpu(|| Ok::<_, std::io::Error>(this_thread()))
                    .await
                    .unwrap();
            (future, task)
        })
        .await;
        assert_eq!(
            in_place, base,
            "a query's Lance task keeps the caller's priority"
        );
        assert_eq!(
            future,
            (19, SCHED_IDLE),
            "the background future runs on idle time"
        );
        assert_eq!(task, (19, SCHED_IDLE), "so does the Lance task it starts");
        assert_eq!(this_thread(), base, "the caller's own thread is left alone");
        // Other tests of this binary may build rayon's global pool first (a vector index
        // build); `configure` says whether it built it.
        if rayon_configured {
            let (a, b) = rayon::join(this_thread, this_thread);
            assert_eq!(
                (a, b),
                ((19, SCHED_IDLE), (19, SCHED_IDLE)),
                "rayon's global pool too"
            );
        }
    }
}
