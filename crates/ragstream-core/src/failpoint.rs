//! Crash points for the fault tests. With `RAGSTREAM_FAILPOINT=<name>` the process aborts at
//! the point of that name, as a SIGKILL there would stop it: no destructor runs, nothing is
//! flushed. The tests then restart on the same data and check that nothing acknowledged was
//! lost or applied twice. Unset (always, in production) a point costs one variable lookup.
//!
//! Points: `after-lance-commit`, `after-compaction-commit`, `after-keyword-merges-commit`,
//! `after-vector-index-commit`, `after-reembed-commit`, `after-dead-letter`.
//!
//! One point freezes instead: `freeze-before-second-commit` stops the process (SIGSTOP) as
//! a long pause would, with its second batch in hand and past its own partition check; the
//! test wakes it with SIGCONT.

/// Aborts the process when `RAGSTREAM_FAILPOINT` names `point`.
pub fn abort_at(point: &str) {
    if std::env::var("RAGSTREAM_FAILPOINT").is_ok_and(|v| v == point) {
        eprintln!("failpoint {point}: exiting");
        std::process::abort();
    }
}

/// Freezes the process (SIGSTOP) the second time it passes `point`, when
/// `RAGSTREAM_FAILPOINT` names it.
pub fn freeze_second_time_at(point: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static PASSED: AtomicU64 = AtomicU64::new(0);
    if std::env::var("RAGSTREAM_FAILPOINT").is_ok_and(|v| v == point)
        && PASSED.fetch_add(1, Ordering::SeqCst) == 1
    {
        eprintln!("failpoint {point}: freezing");
        // SAFETY: raising a signal has no memory-safety preconditions.
        unsafe {
            libc::raise(libc::SIGSTOP);
        }
    }
}
