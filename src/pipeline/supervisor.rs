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

/// What the supervisor reports: restarts so far and the last failure.
#[derive(Debug, Default)]
pub struct RestartReport {
    restarts: AtomicU64,
    last_failure: Mutex<Option<String>>,
}

impl RestartReport {
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
        let failure = match start().await {
            Ok(()) => return,
            Err(e) => e,
        };
        if started.elapsed() >= backoff.healthy_after {
            delay = backoff.initial;
        }
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
