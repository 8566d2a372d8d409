//! Background work — maintenance passes, vector-index builds and their updates — at a low
//! scheduling priority.
//!
//! On a small machine such work shares the cores equally with queries, and the query tail
//! rises while it runs. Linux can run it only on time nobody else wants: a `SCHED_IDLE`
//! thread runs when a core would otherwise idle, and a core running only such threads counts
//! as idle when a query's thread wakes. Nice 19 (`low`) is the milder choice: such a thread
//! gets the smallest share of a contended core, but its core is busy to a waking thread.
//! Measured in `docs/benchmark-history.md`, "Background work on idle time".
//!
//! Background CPU work runs in four places, and all four run at `index.maintenance.background_priority`:
//! - the futures themselves (planning, reading codes): [`run`] and [`spawn`] put them on a
//!   runtime of their own;
//! - the Lance CPU tasks they start (`spawn_cpu`: encoding rewritten fragments, searching
//!   partitions while an index is updated): the patched `lance-core` sends the tasks of a
//!   thread marked by `mark_background_thread` to a second pool (vendor/README.md), whose
//!   threads are started by the marked threads and so inherit their policy and nice value;
//! - rayon's global pool, where Lance trains k-means and builds HNSW graphs (ragstream's
//!   own rayon work, embedding and chunking, runs on [`super::compute_pool`], and queries
//!   use no rayon pool);
//! - tantivy's merge threads, which tantivy starts without a hook: the keyword store moves
//!   them by name ([`demote_threads_named`]) as it starts a round of merges.
//!
//! Policies and nice values are per thread on Linux, and lowering one's own needs no
//! privilege. Elsewhere the work is only kept apart (its own runtime and Lance pool).

use std::future::Future;
use std::sync::OnceLock;

use lance_core::utils::tokio::mark_background_thread;

/// How background work is scheduled (`index.maintenance.background_priority`).
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
        #[cfg(target_os = "linux")]
        self.apply_to_thread(0);
    }

    /// Applies this priority to thread `tid` of this process (0: the calling thread).
    #[cfg(target_os = "linux")]
    fn apply_to_thread(self, tid: libc::pid_t) {
        if let Some(nice) = self.nice() {
            // SAFETY: on Linux, setpriority with PRIO_PROCESS and a thread id changes that
            // thread only; a failure (raising priority without the right) leaves it as it was.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
        }
        if self == BackgroundPriority::Idle {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: `tid` is a thread of this process (or 0, the calling one); `param` is a
            // valid sched_param. Moving to SCHED_IDLE lowers priority, which needs no
            // privilege, but a sandbox may refuse it: the thread then keeps nice 19.
            if unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) } != 0 {
                // Once: every background thread and each new keyword writer's merge
                // threads are moved, and each would warn again.
                static REFUSED: std::sync::Once = std::sync::Once::new();
                let error = std::io::Error::last_os_error();
                REFUSED.call_once(|| {
                    tracing::warn!(%error, "cannot run background work as SCHED_IDLE; it runs at nice 19");
                });
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

/// The priority [`configure`] set, for threads that others start (see
/// [`demote_threads_named`]).
static PRIORITY: OnceLock<BackgroundPriority> = OnceLock::new();

/// Sets up background work at `priority`: its runtime, and rayon's global pool unless
/// something built that first (then a warning says so and those threads stay at normal
/// priority). Call it once, early in `main`; later calls change nothing. Returns whether
/// rayon's pool was set up.
pub fn configure(priority: BackgroundPriority) -> bool {
    let mut first = false;
    PRIORITY.get_or_init(|| priority);
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

/// Moves this process's threads whose names start with `prefix` to the background
/// priority set by [`configure`] (without it, or off Linux, changes nothing); returns how
/// many threads it found. For background work on threads a library starts without a hook to
/// set their priority: tantivy's merge threads. Moving a thread already moved changes
/// nothing, so callers need not remember which they moved.
pub fn demote_threads_named(prefix: &str) -> usize {
    #[cfg(target_os = "linux")]
    if let Some(&priority) = PRIORITY.get() {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return 0;
        };
        let mut found = 0;
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            // A thread that ended since the listing has no `comm` left to read.
            let named = std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.trim_end().starts_with(prefix));
            if named {
                priority.apply_to_thread(tid);
                found += 1;
            }
        }
        return found;
    }
    let _ = prefix;
    0
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

/// A thread's (nice value, scheduling policy): fields 19 and 41 of its `stat` file (`None`
/// once the thread has ended).
#[cfg(all(test, target_os = "linux"))]
fn scheduling_in(stat: &std::path::Path) -> Option<(i32, u32)> {
    let stat = std::fs::read_to_string(stat).ok()?;
    // Fields after the parenthesised name start at field 3 (state).
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some((
        fields[19 - 3].parse().unwrap(),
        fields[41 - 3].parse().unwrap(),
    ))
}

/// The (nice value, scheduling policy) of each thread of this process whose name starts
/// with `prefix` (threads of other tests may end while it looks: those are left out).
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn scheduling_of_threads_named(prefix: &str) -> Vec<(i32, u32)> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.starts_with(prefix))
        })
        .filter_map(|task| scheduling_in(&task.path().join("stat")))
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
pub(crate) const SCHED_IDLE: u32 = libc::SCHED_IDLE as u32;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::SCHED_IDLE;

    /// The calling thread's (nice value, scheduling policy).
    fn this_thread() -> (i32, u32) {
        super::scheduling_in(std::path::Path::new("/proc/thread-self/stat")).unwrap()
    }

    #[test]
    fn threads_started_elsewhere_are_moved_by_name_and_no_others() {
        super::configure(super::BackgroundPriority::Idle);
        // Each thread reports its own scheduling when told to, then ends.
        let probe = |name: &str| {
            let (tell, told) = std::sync::mpsc::channel::<()>();
            let (named, reported) = std::sync::mpsc::channel();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    named.send(()).unwrap();
                    told.recv().unwrap();
                    this_thread()
                })
                .unwrap();
            // The thread sets its name as it starts: wait for that before looking it up.
            reported.recv().unwrap();
            (tell, thread)
        };
        let (tell_moved, moved) = probe("demote-probe-0");
        let (tell_kept, kept) = probe("kept-probe-0");
        let base = this_thread();
        assert_eq!(super::demote_threads_named("demote-probe-"), 1);
        tell_moved.send(()).unwrap();
        tell_kept.send(()).unwrap();
        assert_eq!(moved.join().unwrap(), (19, SCHED_IDLE));
        assert_eq!(kept.join().unwrap(), base, "a thread of another name stays");
        assert_eq!(this_thread(), base, "so does the caller");
    }

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
