//! Supervision: a failed pipeline is restarted as a whole, after an exponential backoff.
//!
//! The ingest actors are restarted together, not one by one, because their state only makes
//! sense together: the batches in flight between them are not yet committed, and the only
//! safe place to resume from is the checkpoint stored in the indexes. A fresh incarnation
//! re-reads from there, so a restart loses nothing and duplicates nothing.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::actor::ActorError;

/// Delays between restarts: `initial`, doubling up to `max`; back to `initial` once an
/// incarnation has run for `healthy_after`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
    pub healthy_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
            healthy_after: Duration::from_secs(60),
        }
    }
}

/// Failures in a row after which a supervised unit counts as in a restart loop.
const LOOP_FAILURES: u64 = 3;

/// An incarnation that has run this long after a run of failures has recovered, as far as
/// health is concerned (it still counts as failing in a row until `healthy_after`).
const RECOVERED_AFTER: Duration = Duration::from_secs(30);

/// What the supervisor reports: restarts so far, the last failure, and whether the unit is
/// failing over and over (a restart loop, which `/healthz` reports).
#[derive(Debug, Default)]
pub struct RestartReport {
    restarts: AtomicU64,
    last_failure: Mutex<Option<String>>,
    /// Failures since an incarnation last ran for `healthy_after`, and when the last was.
    in_a_row: Mutex<(u64, Option<Instant>)>,
    /// When the running incarnation started (none while waiting to restart).
    running_since: Mutex<Option<Instant>>,
}

impl RestartReport {
    /// The unit has failed [`LOOP_FAILURES`] times or more without an incarnation running
    /// for `healthy_after` in between, the last failure is recent (within `healthy_after`
    /// plus the longest backoff), and no incarnation has been running for
    /// [`RECOVERED_AFTER`] since: restarting is not fixing it.
    pub fn restart_loop(&self, backoff: &Backoff) -> Option<String> {
        let (count, last) = *self.in_a_row.lock().expect("report lock");
        let recent = last.is_some_and(|t| t.elapsed() < backoff.healthy_after + backoff.max);
        let recovered = self
            .running_since
            .lock()
            .expect("report lock")
            .is_some_and(|t| t.elapsed() >= RECOVERED_AFTER);
        (count >= LOOP_FAILURES && recent && !recovered).then(|| {
            format!(
                "{count} failures in a row, the last: {}",
                self.last_failure().unwrap_or_default()
            )
        })
    }

    fn started(&self) {
        *self.running_since.lock().expect("report lock") = Some(Instant::now());
    }

    fn failed(&self, ran: Duration, backoff: &Backoff) {
        *self.running_since.lock().expect("report lock") = None;
        let mut in_a_row = self.in_a_row.lock().expect("report lock");
        if ran >= backoff.healthy_after {
            in_a_row.0 = 0;
        }
        in_a_row.0 += 1;
        in_a_row.1 = Some(Instant::now());
    }

    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    pub fn last_failure(&self) -> Option<String> {
        self.last_failure.lock().expect("report lock").clone()
    }

    fn record(&self, failure: &ActorError) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
        *self.last_failure.lock().expect("report lock") = Some(failure.to_string());
    }
}

/// Runs `start()` until an incarnation ends cleanly (`Ok`, after shutdown) or `shutdown`
/// turns true while waiting to restart. Each failure is logged, counted in `report`, and
/// followed by a backoff delay.
pub async fn supervise<F, Fut>(
    name: &str,
    mut start: F,
    backoff: Backoff,
    report: Arc<RestartReport>,
    mut shutdown: watch::Receiver<bool>,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), ActorError>>,
{
    let mut delay = backoff.initial;
    loop {
        let started = Instant::now();
        report.started();
        let failure = match start().await {
            Ok(()) => return,
            Err(e) => e,
        };
        if started.elapsed() >= backoff.healthy_after {
            delay = backoff.initial;
        }
        report.failed(started.elapsed(), &backoff);
        report.record(&failure);
        if let Some(m) = crate::telemetry::metrics() {
            m.actor_restarts_total.with_label_values(&[name]).inc();
        }
        tracing::error!(pipeline = name, error = %failure, restart_in = ?delay,
            restarts = report.restarts(), "pipeline failed; restarting from the stored checkpoint");
        if *shutdown.borrow() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shutdown.changed() => return,
        }
        delay = (delay * 2).min(backoff.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> Backoff {
        Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(300),
            healthy_after: Duration::from_secs(60),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn restarts_with_doubling_capped_backoff_until_an_incarnation_succeeds() {
        let report = Arc::new(RestartReport::default());
        let (_tx, rx) = watch::channel(false);
        let mut starts: Vec<Duration> = Vec::new();
        let t0 = Instant::now();
        supervise(
            "test",
            || {
                starts.push(t0.elapsed());
                let n = starts.len();
                async move {
                    if n <= 4 {
                        Err(ActorError::failed("stage", format!("attempt {n}")))
                    } else {
                        Ok(())
                    }
                }
            },
            quick(),
            report.clone(),
            rx,
        )
        .await;
        let ms: Vec<u128> = starts.iter().map(Duration::as_millis).collect();
        assert_eq!(
            ms,
            vec![0, 100, 300, 600, 900],
            "delays 100, 200, 300 (cap), 300"
        );
        assert_eq!(report.restarts(), 4);
        assert_eq!(
            report.last_failure().as_deref(),
            Some("stage failed: attempt 4")
        );
        let looping = report
            .restart_loop(&quick())
            .expect("four failures in a row");
        assert!(looping.contains("4 failures in a row"), "{looping}");
        assert!(looping.contains("attempt 4"), "{looping}");
        // Quiet for longer than healthy_after plus the longest backoff: no longer a loop.
        tokio::time::sleep(Duration::from_secs(61)).await;
        assert_eq!(report.restart_loop(&quick()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_while_waiting_to_restart_stops_supervision() {
        let report = Arc::new(RestartReport::default());
        let (tx, rx) = watch::channel(false);
        let mut attempts = 0;
        let stopper = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            tx.send(true).unwrap();
        });
        supervise(
            "test",
            || {
                attempts += 1;
                async { Err(ActorError::failed("stage", "always")) }
            },
            quick(),
            report.clone(),
            rx,
        )
        .await;
        stopper.await.unwrap();
        assert_eq!(
            attempts, 2,
            "first run, one restart at 100 ms, stop at 150 ms"
        );
        assert_eq!(report.restarts(), 2);
    }
}

#[cfg(test)]
mod restart_loop_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn failures_separated_by_a_healthy_run_are_not_a_loop() {
        let backoff = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(300),
            healthy_after: Duration::from_secs(100),
        };
        let report = RestartReport::default();
        let failure = ActorError::failed("stage", "boom");
        for _ in 0..2 {
            report.failed(Duration::from_millis(1), &backoff);
            report.record(&failure);
        }
        assert_eq!(report.restart_loop(&backoff), None, "two failures");
        report.failed(Duration::from_secs(101), &backoff);
        assert_eq!(
            report.restart_loop(&backoff),
            None,
            "the third came after a healthy run"
        );
        report.failed(Duration::from_millis(1), &backoff);
        report.failed(Duration::from_millis(1), &backoff);
        assert!(report.restart_loop(&backoff).is_some());
        // A new incarnation that keeps running has recovered, before healthy_after.
        report.started();
        assert!(report.restart_loop(&backoff).is_some(), "just started");
        tokio::time::sleep(RECOVERED_AFTER).await;
        assert_eq!(report.restart_loop(&backoff), None);
    }
}
