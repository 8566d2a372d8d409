//! Crash points for the fault tests. With `RAGSTREAM_FAILPOINT=<name>` the process aborts at
//! the point of that name, as a SIGKILL there would stop it: no destructor runs, nothing is
//! flushed. The tests then restart on the same data and check that nothing acknowledged was
//! lost or applied twice. Unset (always, in production) a point costs one variable lookup.
//!
//! Points: `after-lance-commit`, `after-compaction-commit`, `after-vector-index-commit`,
//! `after-reembed-commit`, `after-dead-letter`.

/// Aborts the process when `RAGSTREAM_FAILPOINT` names `point`.
pub(crate) fn abort_at(point: &str) {
    if std::env::var("RAGSTREAM_FAILPOINT").is_ok_and(|v| v == point) {
        eprintln!("failpoint {point}: exiting");
        std::process::abort();
    }
}
